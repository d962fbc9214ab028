import HashTreeCollections

/// One stored entity with the bookkeeping the table needs.
struct Row<E: Entity>: Sendable {
    /// The entity itself.
    var value: E
    /// Its position in insertion order; kept when the entity is replaced.
    let sequence: UInt64
    /// The store revision that last wrote this row.
    var version: UInt64
}

/// The row map of a table of `E`.
typealias TreeDictionaryRows<E: Entity> = TreeDictionary<E.ID, Row<E>>
