extension SortedMap {
    /// Stores `value` for `key`, inserting or replacing.
    ///
    /// - Returns: The value previously stored for `key`, or nil if the key is new.
    /// - Complexity: O(log n); copies the O(log n) nodes on the path that are shared with
    ///   other copies of the map.
    @discardableResult
    @inlinable
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        updateValue(forKey: key) { _ in value }
    }

    /// Stores `make(old)` for `key`, where `old` is the value stored for `key` before (nil
    /// when the key is new): a read and a write in one walk (a counter's increment, say).
    ///
    /// - Returns: The value previously stored for `key`, or nil if the key is new.
    /// - Complexity: O(log n); copies the O(log n) nodes on the path that are shared with
    ///   other copies of the map.
    @discardableResult
    @inlinable
    mutating func updateValue(forKey key: Key, _ make: (Value?) -> Value) -> Value? {
        guard let root = makeRootUnique() else {
            self.root = SortedMapNode(keys: [key], values: [make(nil)])
            return nil
        }
        let (old, split) = root.insert(forKey: key, capacity: nodeCapacity, make)
        if let split {
            self.root = SortedMapNode(
                separators: [split.separator],
                children: [root, split.right],
                counts: [root.count, split.right.count]
            )
        }
        return old
    }

    /// Removes the element for `key`.
    ///
    /// - Returns: The removed value, or nil if the key was absent (the map is then untouched
    ///   and shares all its nodes as before).
    /// - Complexity: O(log n); copies the O(log n) nodes on the path that are shared with
    ///   other copies of the map.
    @discardableResult
    @inlinable
    mutating func removeValue(forKey key: Key) -> Value? {
        // Checking first keeps a miss from copying the path of a shared map.
        guard contains(key), let root = makeRootUnique() else { return nil }
        let removed = root.remove(key, capacity: nodeCapacity)
        if root.isLeaf, root.keys.isEmpty {
            self.root = nil
        } else if !root.isLeaf, root.children.count == 1 {
            self.root = root.children[0]
        }
        return removed
    }

    /// Removes every element.
    ///
    /// - Complexity: O(1); nodes still shared with other copies stay alive there.
    @inlinable
    mutating func removeAll() {
        root = nil
    }

    /// Returns the root after making sure this map holds the only reference to it, or nil
    /// for an empty map.
    @inlinable
    mutating func makeRootUnique() -> SortedMapNode<Key, Value>? {
        if root != nil, !isKnownUniquelyReferenced(&root) {
            root = root?.copy()
        }
        return root
    }
}
