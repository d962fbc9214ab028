import EntityStore
import EntityStoreSQLite

/// The fields of one table of a snapshot, read from its metadata, for checking the field
/// names an option gives: a misspelt field is an error that lists the real ones, never a
/// query that silently matches nothing.
struct TableFields {
    /// The table's name, as the snapshot spells it.
    let table: String
    /// The field names in the snapshot's column order, `id` first.
    let names: [String]
    /// The kind of each field's column, the id's included (empty when not read from a
    /// snapshot).
    private(set) var kinds: [String: ColumnKind] = [:]

    /// The fields of `table` in `metadata`.
    /// - Throws: ``CommandFailure`` naming the snapshot's tables when it has no such table.
    init(_ table: String, in metadata: StoreMetadata, snapshot: String) throws {
        guard let stored = metadata.table(named: table) else {
            let tables = metadata.tables.map { Echo.name($0.name) }.joined(separator: ", ")
            throw CommandFailure("\(snapshot): no table \(Echo.name(table)) (tables: \(tables.isEmpty ? "none" : tables))")
        }
        // A canonically equivalent name finds the table; SQL needs the stored spelling.
        self.table = stored.name
        names = ["id"] + stored.fields.map(\.name)
        for column in stored.fields { kinds[column.name] = column.kind }
        kinds["id"] = stored.idKind
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
        _ = try resolve(field, option: option)
    }

    /// The table's spelling of `field` (a canonically equivalent name, say a decomposed
    /// `é`, finds it; SQL needs the stored bytes), or of `field` without surrounding
    /// spaces when no field has them.
    /// - Throws: ``CommandFailure`` listing the fields when there is no such field.
    func resolve(_ field: String, option: String) throws -> String {
        if let name = names.first(where: { $0 == field }) ?? names.first(where: { $0 == field.trimmingSpaces }) { return name }
        throw CommandFailure("\(option): table \(Echo.name(table)) has no field \(Echo.name(field)) (fields: \(listed))")
    }

    /// The names, escaped and capped for one line.
    private var listed: String {
        let shown = names.prefix(30).map { Echo.name($0, limit: 40) }.joined(separator: ", ")
        return names.count > 30 ? shown + ", ... and \(names.count - 30) more" : shown
    }
}
