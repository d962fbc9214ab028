/// One node of a `SortedMap` B+tree.
///
/// A leaf holds up to `capacity` elements in two parallel arrays (`keys`, `values`), which
/// keeps binary search over keys compact. An inner node holds up to `capacity` children,
/// `children.count - 1` separator keys and the element count of each child, so rank and
/// offset queries never touch the children themselves. Child `i` holds exactly the keys `k`
/// with `keys[i - 1] <= k < keys[i]` (missing bounds are unbounded). Separators may go
/// stale after removals; they still partition the keys, which is all lookups need.
///
/// Nodes are shared between map versions. A node is mutated only while it is uniquely
/// referenced; a shared node is copied first (path copying), so a version never observes
/// another version's mutations.
///
/// The stored properties opt out of Swift's run-time exclusivity checks (a call into the
/// runtime's access set on every access to a class's `var`, about a tenth of a B-tree
/// update): a node is only mutated by the one map that references it uniquely, and
/// never while the same node is being read (the methods below take each array in turn),
/// which the checks would otherwise verify at run time.
@usableFromInline
final class SortedMapNode<Key: Comparable, Value> {
    /// Leaf: the element keys, ascending. Inner: the separators, ascending.
    @usableFromInline @exclusivity(unchecked)
    var keys: [Key]
    /// Leaf: the element values, parallel to `keys`. Inner: empty.
    @usableFromInline @exclusivity(unchecked)
    var values: [Value]
    /// Inner: the child nodes. Leaf: empty.
    @usableFromInline @exclusivity(unchecked)
    var children: [SortedMapNode]
    /// Inner: the element count of each child's subtree, parallel to `children`. Leaf: empty.
    @usableFromInline @exclusivity(unchecked)
    var counts: [Int]
    /// The number of elements in this subtree.
    @usableFromInline @exclusivity(unchecked)
    var count: Int
    /// Whether this node stores elements (as opposed to children).
    @usableFromInline
    let isLeaf: Bool

    /// Creates a leaf.
    @inlinable
    init(keys: [Key], values: [Value]) {
        self.keys = keys
        self.values = values
        self.children = []
        self.counts = []
        self.count = keys.count
        self.isLeaf = true
    }

    /// Creates an inner node; `counts` must be the children's element counts.
    @inlinable
    init(separators: [Key], children: [SortedMapNode], counts: [Int]) {
        self.keys = separators
        self.values = []
        self.children = children
        self.counts = counts
        self.count = counts.reduce(0, +)
        self.isLeaf = false
    }

    @inlinable
    init(copying other: SortedMapNode) {
        self.keys = other.keys
        self.values = other.values
        self.children = other.children
        self.counts = other.counts
        self.count = other.count
        self.isLeaf = other.isLeaf
    }

    /// A shallow copy: the arrays are shared copy-on-write and the children are shared.
    ///
    /// - Complexity: O(1); the first mutation of each array copies it, O(capacity).
    @inlinable
    func copy() -> SortedMapNode {
        SortedMapNode(copying: self)
    }

    /// The number of entries that count toward the fill bounds: elements or children.
    @inlinable
    var fill: Int {
        isLeaf ? keys.count : children.count
    }

    /// The index of the first key that is not less than `key`.
    ///
    /// - Complexity: O(log capacity)
    @inlinable
    func lowerBound(_ key: Key) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low &+ high) >> 1
            if keys[middle] < key { low = middle &+ 1 } else { high = middle }
        }
        return low
    }

    /// The index of the first key that is greater than `key`.
    ///
    /// - Complexity: O(log capacity)
    @inlinable
    func upperBound(_ key: Key) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low &+ high) >> 1
            if key < keys[middle] { high = middle } else { low = middle &+ 1 }
        }
        return low
    }

    /// In an inner node, the index of the child whose key interval contains `key`.
    ///
    /// - Complexity: O(log capacity)
    @inlinable
    func childIndex(for key: Key) -> Int {
        upperBound(key)
    }

    /// Makes `children[index]` uniquely referenced (copying it if shared) so it may be
    /// mutated in place. Requires `self` to be uniquely referenced.
    ///
    /// - Complexity: O(1), plus O(capacity) when the children array itself is shared.
    @inlinable
    func makeChildUnique(at index: Int) {
        if !isKnownUniquelyReferenced(&children[index]) {
            children[index] = children[index].copy()
        }
    }
}

// Safety: this is value-semantics copy-on-write. Every mutation of a node's stored
// properties happens only after `isKnownUniquelyReferenced` proved that the mutating map
// holds the one and only reference to it (see `SortedMap.makeRootUnique` and
// `makeChildUnique(at:)`); a node reachable from more than one map version, or handed to
// an iterator, is copied instead and never mutated again. So no two threads can ever
// observe a node while it is being mutated, and a shared node is effectively immutable.
// The conformance is conditional, so non-Sendable keys or values never cross threads.
extension SortedMapNode: @unchecked Sendable where Key: Sendable, Value: Sendable {}
