extension SortedMap: Sequence {
    /// Walks a run of consecutive elements, ascending or descending, leaf by leaf.
    ///
    /// It keeps the path from the root to the current leaf, so each step is O(1)
    /// amortized. It holds its nodes strongly: mutating the map afterwards copies them
    /// instead, so the iterator keeps seeing the version it started from.
    @usableFromInline
    struct Iterator: IteratorProtocol {
        @usableFromInline
        var path: [(node: SortedMapNode<Key, Value>, childIndex: Int)]
        @usableFromInline
        var leaf: SortedMapNode<Key, Value>?
        @usableFromInline
        var position: Int
        @usableFromInline
        var remaining: Int
        @usableFromInline
        let ascending: Bool

        /// Positions the iterator so that its first element is the one at `offset`, from
        /// where it yields `count` elements in the given direction.
        ///
        /// - Complexity: O(log n)
        @inlinable
        init(root: SortedMapNode<Key, Value>?, offset: Int, count: Int, ascending: Bool) {
            self.path = []
            self.leaf = nil
            self.position = 0
            self.remaining = 0
            self.ascending = ascending
            guard var node = root, count > 0, offset >= 0, offset < node.count else { return }
            let total = node.count
            var rest = offset
            while !node.isLeaf {
                var index = 0
                while rest >= node.counts[index] {
                    rest -= node.counts[index]
                    index += 1
                }
                path.append((node, index))
                node = node.children[index]
            }
            leaf = node
            position = rest
            remaining = ascending ? Swift.min(count, total - offset) : Swift.min(count, offset + 1)
        }

        /// The next element, or nil once the run is exhausted.
        ///
        /// - Complexity: O(1) amortized.
        @inlinable
        mutating func next() -> (key: Key, value: Value)? {
            guard remaining > 0, var current = leaf else { return nil }
            if position < 0 || position >= current.keys.count {
                guard let next = ascending ? stepForward() : stepBackward() else {
                    remaining = 0
                    return nil
                }
                current = next
            }
            let element = (key: current.keys[position], value: current.values[position])
            position += ascending ? 1 : -1
            remaining -= 1
            return element
        }

        /// Moves to the first element of the next leaf.
        @inlinable
        mutating func stepForward() -> SortedMapNode<Key, Value>? {
            while let (node, index) = path.last {
                if index + 1 < node.children.count {
                    path[path.count - 1].childIndex = index + 1
                    var child = node.children[index + 1]
                    while !child.isLeaf {
                        path.append((child, 0))
                        child = child.children[0]
                    }
                    leaf = child
                    position = 0
                    return child
                }
                path.removeLast()
            }
            return nil
        }

        /// Moves to the last element of the previous leaf.
        @inlinable
        mutating func stepBackward() -> SortedMapNode<Key, Value>? {
            while let (node, index) = path.last {
                if index > 0 {
                    path[path.count - 1].childIndex = index - 1
                    var child = node.children[index - 1]
                    while !child.isLeaf {
                        path.append((child, child.children.count - 1))
                        child = child.children[child.children.count - 1]
                    }
                    leaf = child
                    position = child.keys.count - 1
                    return child
                }
                path.removeLast()
            }
            return nil
        }
    }

    /// A run of consecutive elements in ascending or descending key order.
    @usableFromInline
    struct Elements: Sequence {
        @usableFromInline
        let root: SortedMapNode<Key, Value>?
        @usableFromInline
        let offsets: Range<Int>
        @usableFromInline
        let ascending: Bool

        @inlinable
        init(root: SortedMapNode<Key, Value>?, offsets: Range<Int>, ascending: Bool) {
            self.root = root
            self.offsets = offsets
            self.ascending = ascending
        }

        /// Starts walking the run.
        ///
        /// - Complexity: O(log n)
        @inlinable
        func makeIterator() -> Iterator {
            Iterator(
                root: root,
                offset: ascending ? offsets.lowerBound : offsets.upperBound - 1,
                count: offsets.count,
                ascending: ascending
            )
        }

        /// The exact number of elements in the run.
        @usableFromInline
        var underestimatedCount: Int { offsets.count }
    }

    /// Walks all elements in ascending key order.
    ///
    /// - Complexity: O(log n) to start, then O(1) amortized per element.
    @inlinable
    func makeIterator() -> Iterator {
        Iterator(root: root, offset: 0, count: count, ascending: true)
    }

    /// The exact number of elements.
    @usableFromInline
    var underestimatedCount: Int { count }

    /// The elements whose keys lie in `range`, in ascending key order.
    ///
    /// - Complexity: O(log n) to start, then O(1) amortized per element.
    @inlinable
    func elements(in range: SortedMapRange<Key>) -> Elements {
        Elements(root: root, offsets: offsets(in: range), ascending: true)
    }

    /// The elements whose keys lie in `range`, in descending key order (top-k queries).
    ///
    /// - Complexity: O(log n) to start, then O(1) amortized per element.
    @inlinable
    func reversedElements(in range: SortedMapRange<Key> = .all) -> Elements {
        Elements(root: root, offsets: offsets(in: range), ascending: false)
    }

    /// The elements from position `offset` on, in ascending key order (paging). An offset
    /// past the end yields nothing; a negative offset starts at the beginning.
    ///
    /// - Complexity: O(log n + k) for k elements taken.
    @inlinable
    func elements(fromOffset offset: Int) -> Elements {
        let start = Swift.min(Swift.max(0, offset), count)
        return Elements(root: root, offsets: start..<count, ascending: true)
    }
}
