import HashTreeCollections
/// Why an entity store operation was refused.
///
/// Every error leaves the store exactly as it was before the transaction that raised it:
/// a failed write never publishes a partial state.
public enum EntityStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `insert` found an entity with the same ID already in the table.
    case duplicateID(table: String, id: String)
    /// `update` or a required lookup found no entity with this ID.
    case missingID(table: String, id: String)
    /// The closure given to `update` changed the entity's ID, which would re-key the row.
    case idChanged(table: String, from: String, to: String)
    /// A unique index already maps `key` to another entity.
    case uniqueViolation(table: String, index: String, key: String, existingID: String, newID: String)
    /// A delete was refused because rows of `referencingTable` still reference the entity
    /// through a relation declared with ``DeleteRule/restrict``.
    case restrictViolation(table: String, id: String, referencingTable: String, field: String, referencingID: String)
    /// Integrity checking found a reference to an entity that does not exist.
    case danglingReference(table: String, id: String, field: String, targetTable: String, targetID: String)
    /// The schema has no table with this name, or the table holds another entity type.
    case unknownTable(String)
    /// The schema itself is inconsistent (duplicate table or index names, a relation to a
    /// table the schema does not declare, ...).
    case invalidSchema(String)
    /// A transaction was used after its `write` closure returned.
    case transactionClosed

    public var description: String {
        switch self {
        case let .duplicateID(table, id):
            return "table '\(table)' already contains an entity with id \(id)"
        case let .missingID(table, id):
            return "table '\(table)' has no entity with id \(id)"
        case let .idChanged(table, from, to):
            return "update of \(from) in table '\(table)' changed its id to \(to); ids are immutable"
        case let .uniqueViolation(table, index, key, existingID, newID):
            return "unique index '\(index)' of table '\(table)': key \(key) is already used by id \(existingID), cannot also use it for id \(newID)"
        case let .restrictViolation(table, id, referencingTable, field, referencingID):
            return "cannot delete id \(id) from table '\(table)': '\(referencingTable)' id \(referencingID) still references it through '\(field)' (delete rule: restrict)"
        case let .danglingReference(table, id, field, targetTable, targetID):
            return "table '\(table)' id \(id): field '\(field)' references id \(targetID) of table '\(targetTable)', which does not exist"
        case let .unknownTable(name):
            return "the schema has no table named '\(name)' for this entity type"
        case let .invalidSchema(reason):
            return "invalid schema: \(reason)"
        case .transactionClosed:
            return "the transaction was used after its write closure returned"
        }
    }
}

/// Renders an ID for an error message: strings quoted, everything else as described.
@usableFromInline
func describeID(_ id: some Sendable) -> String {
    if let string = id as? String { return "\"\(string)\"" }
    return String(describing: id)
}
