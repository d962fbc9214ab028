import EntityStore

/// The records of one table whose relation field names a record its target table lacks,
/// as the store reads references: an integer or a string references the record with that
/// id (the string "5" is not the id 5); `null`, an absent field and any other value (a
/// double, say) reference nothing. `verify` counts the same way.
struct DanglingReferences {
    /// How many records reference a missing one.
    private(set) var count = 0
    /// The ids of the first few such records, in insertion order.
    private(set) var firstIDs: [RecordID] = []
    private let table: String, field: String, target: String

    /// Counts the dangling references of `table.field` to `target` in `state`. O(n) for n
    /// records, one probe each.
    init(_ state: EntityState, table: String, field: String, target: String) {
        self.table = table
        self.field = field
        self.target = target
        let targets = state[Table<DynamicRecord>(target)]
        for record in state[Table<DynamicRecord>(table)] {
            guard let value = record.fields[field], let id = RecordID(value), !targets.contains(id) else { continue }
            count += 1
            if firstIDs.count < 5 { firstIDs.append(record.id) }
        }
    }

    /// One line naming the relation, the count and the first ids, or nil if none dangles.
    var message: String? {
        guard count > 0 else { return nil }
        let ids = firstIDs.map { Echo.summary($0.jsonValue) }.joined(separator: ", ")
        let records = count == 1 ? "record references" : "records reference"
        return "\(Echo.grouped(count)) \(Echo.name(table)) \(records) a missing \(Echo.name(target)) record through \(Echo.name(field)) (first: \(ids))"
    }
}
