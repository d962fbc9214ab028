import EntityStore
import EntityStoreSQLite

/// The fields of one table of a snapshot, read from its metadata, for checking the field
/// names an option gives: a misspelt field is an error that lists the real ones, never a
/// query that silently matches nothing.
struct TableFields {
    /// The table's name.
    let table: String
    /// The field names in the snapshot's column order, `id` first.
    let names: [String]

    /// The fields of `table` in `metadata`.
    /// - Throws: ``CommandFailure`` naming the snapshot's tables when it has no such table.
    init(_ table: String, in metadata: SnapshotMetadata, snapshot: String) throws {
        guard let stored = metadata.table(named: table) else {
            let tables = metadata.tables.map { Echo.name($0.name) }.joined(separator: ", ")
            throw CommandFailure("\(snapshot): no table \(Echo.name(table)) (tables: \(tables.isEmpty ? "none" : tables))")
        }
        self.table = table
        // The hidden column of missing fields is the format's, not a field.
        let columns = stored.columns.map(\.name).filter { $0 != NullMeaning.absentFieldsColumn }
        names = ["id"] + columns.filter { $0 != "id" }
    }

    /// The fields of the records of an in-memory table (`id` first, then the others in name
    /// order), for tables that are not read from a snapshot. O(n) over the records.
    init(records: some Sequence<DynamicRecord>, table: String) {
        var fields = Set<String>()
        for record in records { fields.formUnion(record.fields.keys) }
        self.table = table
        names = ["id"] + fields.sorted()
    }

    /// Fields given as they are.
    init(table: String, names: [String]) {
        self.table = table
        self.names = names
    }

    /// Throws unless `field` is one of the table's fields; `option` names what gave it.
    func check(_ field: String, option: String) throws {
        guard !names.contains(field) else { return }
        throw CommandFailure("\(option): table \(Echo.name(table)) has no field \(Echo.name(field)) (fields: \(listed))")
    }

    /// The names, escaped and capped for one line.
    private var listed: String {
        let shown = names.prefix(30).map { Echo.name($0, limit: 40) }.joined(separator: ", ")
        return names.count > 30 ? shown + ", ... and \(names.count - 30) more" : shown
    }
}
