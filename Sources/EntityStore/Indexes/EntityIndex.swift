import HashTreeCollections

/// The storage of one secondary index, maintained inside transactions.
///
/// Writes are validated before they are applied (`validate…`), so a refused write leaves
/// the index and its table untouched even when the caller catches the error and goes on.
@usableFromInline
protocol EntityIndex<Element>: Sendable {
    associatedtype Element: Entity

    /// The index's name within its table.
    var name: String { get }

    /// Throws if inserting `entity` would break the index's constraint.
    func validateInsert(_ entity: Element, table: String) throws(EntityStoreError)
    /// Throws if replacing `old` by `new` would break the index's constraint.
    func validateUpdate(from old: Element, to new: Element, table: String) throws(EntityStoreError)

    /// Adds `entity`, whose row has insertion position `sequence`. O(log n).
    mutating func insert(_ entity: Element, sequence: UInt64)
    /// Removes `entity`. O(log n).
    mutating func remove(_ entity: Element, sequence: UInt64)
    /// Moves the entry of one row from `old`'s key to `new`'s; nothing when the key is unchanged.
    mutating func update(from old: Element, to new: Element, sequence: UInt64)

    /// Describes every disagreement between the index and the table's rows (debug checks).
    func invariantViolations(rows: TreeDictionary<Element.ID, Row<Element>>) -> [String]
}
