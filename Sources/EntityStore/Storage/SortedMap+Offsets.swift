extension SortedMap {
    /// The element at position `offset` in key order, or nil if `offset` is outside
    /// `0..<count`.
    ///
    /// - Complexity: O(log n)
    @inlinable
    func element(atOffset offset: Int) -> (key: Key, value: Value)? {
        guard var node = root, offset >= 0, offset < node.count else { return nil }
        var remaining = offset
        while !node.isLeaf {
            var index = 0
            while remaining >= node.counts[index] {
                remaining -= node.counts[index]
                index += 1
            }
            node = node.children[index]
        }
        return (node.keys[remaining], node.values[remaining])
    }

    /// The position of `key` in key order, or nil if the map has no element for `key`.
    ///
    /// - Complexity: O(log n)
    @inlinable
    func offset(of key: Key) -> Int? {
        offsetAndValue(of: key)?.offset
    }

    /// The position of `key` in key order and its value, or nil if the map has no element
    /// for `key`: one walk where `offset(of:)` and the subscript take two.
    ///
    /// - Complexity: O(log n)
    @inlinable
    func offsetAndValue(of key: Key) -> (offset: Int, value: Value)? {
        guard var node = root else { return nil }
        var offset = 0
        while !node.isLeaf {
            let index = node.childIndex(for: key)
            offset += node.counts[..<index].reduce(0, +)
            node = node.children[index]
        }
        let index = node.lowerBound(key)
        guard index < node.keys.count, node.keys[index] == key else { return nil }
        return (offset + index, node.values[index])
    }

    /// The number of elements whose key is less than `key`: the position `key` has or
    /// would have in key order.
    ///
    /// - Complexity: O(log n)
    @inlinable
    func lowerBoundOffset(_ key: Key) -> Int {
        boundOffset(key, includingEqual: false)
    }

    /// The number of elements whose key is less than or equal to `key`.
    ///
    /// - Complexity: O(log n)
    @inlinable
    func upperBoundOffset(_ key: Key) -> Int {
        boundOffset(key, includingEqual: true)
    }

    @inlinable
    func boundOffset(_ key: Key, includingEqual: Bool) -> Int {
        guard var node = root else { return 0 }
        var offset = 0
        while !node.isLeaf {
            // Children left of the key's interval hold only smaller keys.
            let index = node.childIndex(for: key)
            offset += node.counts[..<index].reduce(0, +)
            node = node.children[index]
        }
        return offset + (includingEqual ? node.upperBound(key) : node.lowerBound(key))
    }

    /// The range of offsets whose elements fall within `range`; empty when the bounds
    /// cross.
    ///
    /// - Complexity: O(log n)
    @inlinable
    func offsets(in range: SortedMapRange<Key>) -> Range<Int> {
        let start: Int
        switch range.lowerBound {
        case nil: start = 0
        case .included(let key)?: start = lowerBoundOffset(key)
        case .excluded(let key)?: start = upperBoundOffset(key)
        }
        let end: Int
        switch range.upperBound {
        case nil: end = count
        case .included(let key)?: end = upperBoundOffset(key)
        case .excluded(let key)?: end = lowerBoundOffset(key)
        }
        return start..<Swift.max(start, end)
    }
}
