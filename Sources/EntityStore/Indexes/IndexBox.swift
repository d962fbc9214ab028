/// The base of index boxes: one index's storage in a class, so a table can hold indexes
/// of different concrete types while each write runs code specialized for its own type
/// (through the closures of its ``IndexSpec``).
///
/// Boxes have value semantics by copy-on-write: a table mutates a box only after
/// `isKnownUniquelyReferenced` proved that no other table version holds it, and copies
/// it otherwise.
@usableFromInline
class IndexBoxBase: @unchecked Sendable {
    // `@unchecked Sendable` is safe: the only subclass, `IndexBox`, stores a Sendable index
    // and is mutated only while uniquely referenced (checked by `TableStorage` before each
    // write), so no box is ever mutated while another thread can see it.

    @usableFromInline
    init() {}
}

/// The box of an index of concrete type `Index`.
@usableFromInline
final class IndexBox<Index: EntityIndex>: IndexBoxBase, @unchecked Sendable {
    // Safe for the reason given on `IndexBoxBase`: mutated only while uniquely referenced.
    // For the same reason no access can overlap a write, so reads skip the dynamic
    // exclusivity check (a thread-local access set, a large part of an index lookup).
    @usableFromInline @exclusivity(unchecked)
    var index: Index

    @inlinable
    init(_ index: Index) {
        self.index = index
    }
}
