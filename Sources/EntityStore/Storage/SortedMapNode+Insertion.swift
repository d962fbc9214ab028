extension SortedMapNode {
    /// The right half produced when a node overflows, and the separator between the halves.
    @usableFromInline
    struct Split {
        /// The smallest key of `right`'s subtree; every key left of it is smaller.
        @usableFromInline
        var separator: Key
        /// The new right sibling.
        @usableFromInline
        var right: SortedMapNode

        @inlinable
        init(separator: Key, right: SortedMapNode) {
            self.separator = separator
            self.right = right
        }
    }

    /// Inserts `value` for `key`, or replaces the value already stored for `key`.
    /// Requires `self` to be uniquely referenced; copies shared descendants on the way down.
    ///
    /// - Returns: The replaced value (nil for an insertion) and the split if `self` overflowed.
    /// - Complexity: O(log n) nodes visited, O(capacity) work per node.
    @inlinable
    func insert(_ value: Value, forKey key: Key, capacity: Int) -> (old: Value?, split: Split?) {
        insert(forKey: key, capacity: capacity) { _ in value }
    }

    /// Stores `make(old)` for `key`, where `old` is the value already stored for `key` (nil
    /// when the key is new): one walk where a read and a write take two. Requires `self`
    /// to be uniquely referenced; copies shared descendants on the way down.
    ///
    /// - Returns: The replaced value (nil for an insertion) and the split if `self` overflowed.
    /// - Complexity: O(log n) nodes visited, O(capacity) work per node.
    @inlinable
    func insert(forKey key: Key, capacity: Int, _ make: (Value?) -> Value) -> (old: Value?, split: Split?) {
        if isLeaf {
            let index = lowerBound(key)
            if index < keys.count, keys[index] == key {
                let old = values[index]
                values[index] = make(old)
                return (old, nil)
            }
            keys.insert(key, at: index)
            values.insert(make(nil), at: index)
            count += 1
            return (nil, keys.count > capacity ? splitLeaf() : nil)
        }
        let index = childIndex(for: key)
        makeChildUnique(at: index)
        let (old, childSplit) = children[index].insert(forKey: key, capacity: capacity, make)
        if old == nil {
            counts[index] += 1
            count += 1
        }
        guard let childSplit else { return (old, nil) }
        counts[index] = children[index].count
        keys.insert(childSplit.separator, at: index)
        children.insert(childSplit.right, at: index + 1)
        counts.insert(childSplit.right.count, at: index + 1)
        return (old, children.count > capacity ? splitInner() : nil)
    }

    /// Moves the upper half of an overflowing leaf into a new right sibling.
    @inlinable
    func splitLeaf() -> Split {
        let middle = keys.count / 2
        let right = SortedMapNode(keys: Array(keys[middle...]), values: Array(values[middle...]))
        keys.removeSubrange(middle...)
        values.removeSubrange(middle...)
        count = keys.count
        return Split(separator: right.keys[0], right: right)
    }

    /// Moves the upper half of an overflowing inner node into a new right sibling; the
    /// separator between the halves moves up to the parent.
    @inlinable
    func splitInner() -> Split {
        let middle = children.count / 2
        let separator = keys[middle - 1]
        let right = SortedMapNode(
            separators: Array(keys[middle...]),
            children: Array(children[middle...]),
            counts: Array(counts[middle...])
        )
        keys.removeSubrange((middle - 1)...)
        children.removeSubrange(middle...)
        counts.removeSubrange(middle...)
        count -= right.count
        return Split(separator: separator, right: right)
    }
}
