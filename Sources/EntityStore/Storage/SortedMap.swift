/// A persistent ordered map: an in-memory B+tree with copy-on-write nodes.
///
/// Copying a map is O(1). Mutating a map whose nodes are shared with another copy copies
/// only the nodes on the root-to-leaf path it touches (O(log n) nodes), never the whole
/// tree, so old versions (an observer's previous state, a snapshot being written) stay
/// alive cheaply. Inner nodes keep per-child element counts, which makes rank queries,
/// offset access and paging O(log n).
@usableFromInline
struct SortedMap<Key: Comparable, Value> {
    /// The node capacity used unless a map is created with another one.
    @usableFromInline
    static var defaultNodeCapacity: Int { 64 }

    /// The root node; nil for an empty map.
    @usableFromInline
    var root: SortedMapNode<Key, Value>?

    /// The maximum number of elements per leaf and children per inner node. Every node but
    /// the root holds at least half as many.
    @usableFromInline
    let nodeCapacity: Int

    /// Creates an empty map.
    ///
    /// - Complexity: O(1)
    @inlinable
    init() {
        self.init(nodeCapacity: Self.defaultNodeCapacity)
    }

    /// Creates an empty map whose nodes hold at most `nodeCapacity` entries (at least 4).
    /// Small capacities exist for tests that need deep trees from few elements.
    ///
    /// - Complexity: O(1)
    @inlinable
    init(nodeCapacity: Int) {
        self.root = nil
        self.nodeCapacity = Swift.max(4, nodeCapacity)
    }

    /// The number of elements.
    ///
    /// - Complexity: O(1)
    @inlinable
    var count: Int {
        root?.count ?? 0
    }

    /// Whether the map has no elements.
    ///
    /// - Complexity: O(1)
    @inlinable
    var isEmpty: Bool {
        count == 0
    }

    /// The value stored for `key`, or nil.
    ///
    /// - Complexity: O(log n)
    @inlinable
    subscript(key: Key) -> Value? {
        guard var node = root else { return nil }
        while !node.isLeaf {
            node = node.children[node.childIndex(for: key)]
        }
        let index = node.lowerBound(key)
        guard index < node.keys.count, node.keys[index] == key else { return nil }
        return node.values[index]
    }

    /// Whether the map stores a value for `key`.
    ///
    /// - Complexity: O(log n)
    @inlinable
    func contains(_ key: Key) -> Bool {
        offset(of: key) != nil
    }

    /// The element with the smallest key, or nil if the map is empty.
    ///
    /// - Complexity: O(log n)
    @inlinable
    var first: (key: Key, value: Value)? {
        guard var node = root, node.count > 0 else { return nil }
        while !node.isLeaf {
            node = node.children[0]
        }
        return (node.keys[0], node.values[0])
    }

    /// The element with the largest key, or nil if the map is empty.
    ///
    /// - Complexity: O(log n)
    @inlinable
    var last: (key: Key, value: Value)? {
        guard var node = root, node.count > 0 else { return nil }
        while !node.isLeaf {
            node = node.children[node.children.count - 1]
        }
        return (node.keys[node.keys.count - 1], node.values[node.values.count - 1])
    }
}

extension SortedMap: Sendable where Key: Sendable, Value: Sendable {}
