import HashTreeCollections
/// A relation's behaviour, erased over its two entity types so that a delete in the
/// target table can run the rules of every table that references it.
protocol RelationRule: Sendable {
    var sourceTable: String { get }
    var targetTable: String { get }
    var field: String { get }
    var deleteRule: DeleteRule { get }
    var supportsNullify: Bool { get }

    /// The source rows that reference `targetID` (a `T.ID`), through the reverse index.
    /// O(log n + k).
    func referencingIDs(of targetID: any Hashable & Sendable, in state: EntityState) -> [any Hashable & Sendable]

    /// The reference held by the source row `sourceID`, if the row exists and holds one.
    func reference(from sourceID: any Hashable & Sendable, in state: EntityState) -> (any Hashable & Sendable)?

    /// Clears the reference of the source row `sourceID` (rule `.nullify`).
    func nullify(_ sourceID: any Hashable & Sendable, in transaction: Transaction) throws(EntityStoreError)

    /// Whether the target row `targetID` exists.
    func targetExists(_ targetID: any Hashable & Sendable, in state: EntityState) -> Bool
}

/// A relation from a field of `E` to the IDs of `T`.
struct Relation<E: Entity, T: Entity>: RelationRule {
    let sourceTable: String
    let targetTable: String
    let field: String
    let deleteRule: DeleteRule
    let reverseIndexName: String
    let reference: @Sendable (E) -> T.ID?
    let nullify: (@Sendable (inout E) -> Void)?

    var supportsNullify: Bool { nullify != nil }

    func referencingIDs(of targetID: any Hashable & Sendable, in state: EntityState) -> [any Hashable & Sendable] {
        guard let targetID = targetID as? T.ID,
              let table = state.storage(named: sourceTable, as: E.self),
              let index = table.index(named: reverseIndexName) as? GroupedIndex<E, T.ID>
        else { return [] }
        return index.lookup(targetID).map { $0.value }
    }

    func reference(from sourceID: any Hashable & Sendable, in state: EntityState) -> (any Hashable & Sendable)? {
        guard let sourceID = sourceID as? E.ID,
              let row = state.storage(named: sourceTable, as: E.self)?.rows[sourceID]
        else { return nil }
        return reference(row.value)
    }

    func nullify(_ sourceID: any Hashable & Sendable, in transaction: Transaction) throws(EntityStoreError) {
        guard let sourceID = sourceID as? E.ID, let nullify else { return }
        let writer = TableWriter<E>(transaction: transaction, name: sourceTable)
        if writer.find(sourceID) != nil {
            try writer.update(sourceID) { nullify(&$0) }
        }
    }

    func targetExists(_ targetID: any Hashable & Sendable, in state: EntityState) -> Bool {
        guard let targetID = targetID as? T.ID else { return false }
        return state.storage(named: targetTable, as: T.self)?.rows[targetID] != nil
    }
}
