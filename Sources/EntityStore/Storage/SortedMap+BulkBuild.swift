extension SortedMap {
    /// Builds a map from elements in strictly ascending key order, packing nodes bottom-up.
    ///
    /// Input that turns out not to be strictly ascending (say, from a damaged file) still
    /// yields a correct map: the elements are then inserted one by one, and for a repeated
    /// key the last value wins.
    ///
    /// - Complexity: O(n) for ascending input; O(n log n) otherwise.
    @inlinable
    init(sortedUniqueElements elements: some Sequence<(Key, Value)>, nodeCapacity: Int = Self.defaultNodeCapacity) {
        var keys: [Key] = []
        var values: [Value] = []
        keys.reserveCapacity(elements.underestimatedCount)
        values.reserveCapacity(elements.underestimatedCount)
        for (key, value) in elements {
            keys.append(key)
            values.append(value)
        }
        self.init(sortedUniqueKeys: keys, values: values, nodeCapacity: nodeCapacity)
    }

    /// Builds a map from parallel arrays of keys in strictly ascending order and their
    /// values, packing nodes bottom-up; as ``init(sortedUniqueElements:nodeCapacity:)``,
    /// without first copying the elements apart.
    /// - Precondition: `keys.count == values.count`.
    /// - Complexity: O(n) for ascending keys; O(n log n) otherwise.
    @inlinable
    init(sortedUniqueKeys keys: [Key], values: [Value], nodeCapacity: Int = Self.defaultNodeCapacity) {
        precondition(keys.count == values.count, "one value per key")
        self.init(nodeCapacity: nodeCapacity)
        var ascending = true
        var index = 1
        while index < keys.count {
            if !(keys[index - 1] < keys[index]) { ascending = false; break }
            index += 1
        }
        guard ascending else {
            for index in keys.indices {
                updateValue(values[index], forKey: keys[index])
            }
            return
        }
        guard !keys.isEmpty else { return }
        if keys.count <= self.nodeCapacity {
            root = SortedMapNode(keys: keys, values: values)
            return
        }

        var level: [(node: SortedMapNode<Key, Value>, minimum: Key)] = Self.chunks(keys.count, capacity: self.nodeCapacity).map {
            (SortedMapNode(keys: Array(keys[$0]), values: Array(values[$0])), keys[$0.lowerBound])
        }
        while level.count > 1 {
            let below = level
            level = Self.chunks(below.count, capacity: self.nodeCapacity).map { range in
                let group = below[range]
                let node = SortedMapNode(
                    separators: group.dropFirst().map { $0.minimum },
                    children: group.map { $0.node },
                    counts: group.map { $0.node.count }
                )
                return (node, group[range.lowerBound].minimum)
            }
        }
        root = level[0].node
    }

    /// Splits `total` entries into the fewest groups of at most `capacity`, sized evenly so
    /// every group holds at least `capacity / 2` when there is more than one.
    @inlinable
    static func chunks(_ total: Int, capacity: Int) -> [Range<Int>] {
        let groups = (total + capacity - 1) / capacity
        let base = total / groups
        let extra = total % groups
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(groups)
        var start = 0
        for group in 0..<groups {
            let size = base + (group < extra ? 1 : 0)
            ranges.append(start..<start + size)
            start += size
        }
        return ranges
    }
}
