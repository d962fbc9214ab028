extension SortedMapNode {
    /// Removes the element for `key`, which must be present in this subtree, and restores
    /// the fill bounds of the children it passed through. Requires `self` to be uniquely
    /// referenced; copies shared descendants on the way down. `self` may be left underfull;
    /// its parent (or the map, for the root) repairs that.
    ///
    /// - Returns: The removed value, or nil if the key was absent after all.
    /// - Complexity: O(log n) nodes visited, O(capacity) work per node.
    @inlinable
    func remove(_ key: Key, capacity: Int) -> Value? {
        if isLeaf {
            let index = lowerBound(key)
            guard index < keys.count, keys[index] == key else { return nil }
            keys.remove(at: index)
            count -= 1
            return values.remove(at: index)
        }
        let index = childIndex(for: key)
        makeChildUnique(at: index)
        guard let removed = children[index].remove(key, capacity: capacity) else { return nil }
        counts[index] -= 1
        count -= 1
        repairUnderflow(at: index, minimumFill: capacity / 2)
        return removed
    }

    /// Brings `children[index]` back to at least `minimumFill` entries by borrowing from a
    /// sibling that can spare one, or else by merging it with a sibling.
    @inlinable
    func repairUnderflow(at index: Int, minimumFill: Int) {
        guard children[index].fill < minimumFill, children.count > 1 else { return }
        if index > 0, children[index - 1].fill > minimumFill {
            borrowFromLeft(into: index)
        } else if index + 1 < children.count, children[index + 1].fill > minimumFill {
            borrowFromRight(into: index)
        } else if index > 0 {
            mergeChild(at: index - 1)
        } else {
            mergeChild(at: index)
        }
    }

    /// Moves the last entry of `children[index - 1]` to the front of `children[index]`.
    @inlinable
    func borrowFromLeft(into index: Int) {
        makeChildUnique(at: index - 1)
        let left = children[index - 1]
        let child = children[index]
        let moved: Int
        if child.isLeaf {
            child.keys.insert(left.keys.removeLast(), at: 0)
            child.values.insert(left.values.removeLast(), at: 0)
            moved = 1
            keys[index - 1] = child.keys[0]
        } else {
            moved = left.counts.removeLast()
            child.children.insert(left.children.removeLast(), at: 0)
            child.counts.insert(moved, at: 0)
            child.keys.insert(keys[index - 1], at: 0)
            keys[index - 1] = left.keys.removeLast()
        }
        left.count -= moved
        child.count += moved
        counts[index - 1] -= moved
        counts[index] += moved
    }

    /// Moves the first entry of `children[index + 1]` to the end of `children[index]`.
    @inlinable
    func borrowFromRight(into index: Int) {
        makeChildUnique(at: index + 1)
        let right = children[index + 1]
        let child = children[index]
        let moved: Int
        if child.isLeaf {
            child.keys.append(right.keys.removeFirst())
            child.values.append(right.values.removeFirst())
            moved = 1
            keys[index] = right.keys[0]
        } else {
            moved = right.counts.removeFirst()
            child.children.append(right.children.removeFirst())
            child.counts.append(moved)
            child.keys.append(keys[index])
            keys[index] = right.keys.removeFirst()
        }
        right.count -= moved
        child.count += moved
        counts[index + 1] -= moved
        counts[index] += moved
    }

    /// Appends `children[index + 1]` to `children[index]` and drops the right one.
    @inlinable
    func mergeChild(at index: Int) {
        makeChildUnique(at: index)
        let left = children[index]
        let right = children[index + 1]
        if left.isLeaf {
            left.keys.append(contentsOf: right.keys)
            left.values.append(contentsOf: right.values)
        } else {
            left.keys.append(keys[index])
            left.keys.append(contentsOf: right.keys)
            left.children.append(contentsOf: right.children)
            left.counts.append(contentsOf: right.counts)
        }
        left.count += right.count
        counts[index] = left.count
        keys.remove(at: index)
        children.remove(at: index + 1)
        counts.remove(at: index + 1)
    }
}
