/// Entities handed to the indexes together during a bulk load, with their insertion
/// positions: ascending from `firstSequence`, or, for a chunk the table drains from its
/// end, descending to it (the last entity gets `firstSequence`).
///
/// The entities are borrowed from the table's buffer for the length of one call, so an
/// index can read them in place. Reading in place matters: during a restore, the
/// entities were decoded on other threads, and a copy would retain each of their
/// strings, a cache miss on memory another core wrote, which costs more than the rest
/// of the entry.
@usableFromInline
struct LoadBatch<E: Entity> {
    @usableFromInline let entities: UnsafeBufferPointer<E>
    @usableFromInline let firstSequence: UInt64
    @usableFromInline let drainedFromEnd: Bool

    @inlinable
    init(entities: UnsafeBufferPointer<E>, firstSequence: UInt64, drainedFromEnd: Bool) {
        self.entities = entities
        self.firstSequence = firstSequence
        self.drainedFromEnd = drainedFromEnd
    }

    /// Calls `body` with each entity in place and its insertion position, in insertion
    /// order. O(k).
    @inlinable
    func forEach<Failure: Error>(_ body: (UnsafePointer<E>, UInt64) throws(Failure) -> Void) throws(Failure) {
        guard let base = entities.baseAddress else { return }
        let count = entities.count
        for rank in 0..<count {
            let offset = drainedFromEnd ? count - 1 - rank : rank
            try body(base + offset, firstSequence + UInt64(rank))
        }
    }

    /// Calls `body` with the key `keyInPlace` reads from each entity, its ID and its
    /// insertion position, in insertion order, skipping entities without a key (see
    /// ``indexableKey(_:)``). O(k).
    @inlinable
    func forEachKey<Key: Equatable>(
        _ keyInPlace: (UnsafePointer<E>) -> Key?, _ body: (Key, E.ID, UInt64) -> Void
    ) {
        forEach { entity, sequence in
            guard let key = indexableKey(keyInPlace(entity)) else { return }
            body(key, entity.pointee.id, sequence)
        }
    }
}
