import HashTreeCollections

/// One stored entity with the bookkeeping the table needs.
@usableFromInline
struct Row<E: Entity>: Sendable {
    /// The entity itself.
    @usableFromInline
    var value: E
    /// Its position in insertion order; kept when the entity is replaced.
    @usableFromInline
    let sequence: UInt64
    /// The store revision that last wrote this row.
    @usableFromInline
    var version: UInt64

    @inlinable
    init(value: E, sequence: UInt64, version: UInt64) {
        self.value = value
        self.sequence = sequence
        self.version = version
    }
}

/// The row map of a table of `E`.
@usableFromInline
typealias RowsOf<E: Entity> = RowMap<E.ID, Row<E>>
