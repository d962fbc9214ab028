import HashTreeCollections
/// Everything one commit changed, per table: inserted, updated and removed IDs, with the
/// previous values of updated and removed entities.
///
/// Observers receive it as `changes.current.changeSet`.
public struct ChangeSet: Sendable {
    @usableFromInline var tables: [String: any AnyTableChanges] = [:]

    /// True when the commit replaced every table at once (a restore): per-ID lists are
    /// then empty and every table must be considered changed.
    public internal(set) var replacedAll = false

    /// The revision of the state this change set leads from (for a batch, the state
    /// before its first write); nil for a state no commit made.
    var baseRevision: UInt64?

    /// An empty change set.
    public init() {}

    /// Whether the commit changed nothing.
    public var isEmpty: Bool { tables.isEmpty && !replacedAll }

    /// The names of the tables that changed, sorted.
    public var changedTables: [String] { tables.keys.sorted() }

    /// The changes to `table`; empty if it did not change. O(1).
    public subscript<E: Entity>(table: Table<E>) -> TableChanges<E> {
        (tables[table.name] as? TableChanges<E>) ?? TableChanges()
    }

    /// Whether the table named `name` changed. O(1).
    public func changed(table name: String) -> Bool { replacedAll || tables[name] != nil }

    /// How many entities of the table named `name` were inserted, updated and removed.
    public func counts(forTable name: String) -> (inserted: Int, updated: Int, removed: Int) {
        guard let changes = tables[name] else { return (0, 0, 0) }
        return (changes.insertedCount, changes.updatedCount, changes.removedCount)
    }

    /// The total number of changed entities over all tables.
    public var count: Int { tables.values.reduce(0) { $0 + $1.count } }

    /// This change set followed by `next`, as one commit. `state` is the state after `next`.
    package func merged(with next: ChangeSet, in state: EntityState) -> ChangeSet {
        var result = self
        result.replacedAll = replacedAll || next.replacedAll
        for (name, changes) in next.tables {
            if let earlier = result.tables[name] {
                let merged = earlier.merged(with: changes, in: state, table: name)
                result.tables[name] = merged.count == 0 ? nil : merged
            } else {
                result.tables[name] = changes
            }
        }
        return result
    }
}
