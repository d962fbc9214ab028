extension SortedMap {
    /// Traps unless the tree is well formed: keys sorted and unique, separators partition
    /// their children, every non-root node within its fill bounds, stored counts correct and
    /// all leaves at the same depth. For tests.
    ///
    /// - Complexity: O(n)
    @inlinable
    func _checkInvariants() {
        guard let root else { return }
        precondition(root.count > 0, "a non-empty root must hold elements")
        if !root.isLeaf {
            precondition(root.children.count >= 2, "an inner root needs two children")
        }
        var leafDepth: Int?
        check(root, depth: 0, lower: nil, upper: nil, isRoot: true, leafDepth: &leafDepth)
    }

    @inlinable
    func check(
        _ node: SortedMapNode<Key, Value>,
        depth: Int,
        lower: Key?,
        upper: Key?,
        isRoot: Bool,
        leafDepth: inout Int?
    ) {
        precondition(node.fill <= nodeCapacity, "node over capacity")
        if !isRoot {
            precondition(node.fill >= nodeCapacity / 2, "node under minimum fill")
        }
        for index in node.keys.indices.dropFirst() {
            precondition(node.keys[index - 1] < node.keys[index], "keys not strictly ascending")
        }
        if node.isLeaf {
            precondition(node.children.isEmpty && node.counts.isEmpty, "leaf with children")
            precondition(node.values.count == node.keys.count, "leaf keys and values differ in count")
            precondition(node.count == node.keys.count, "leaf count wrong")
            if let first = node.keys.first, let lower {
                precondition(lower <= first, "leaf key below its interval")
            }
            if let last = node.keys.last, let upper {
                precondition(last < upper, "leaf key above its interval")
            }
            if let leafDepth {
                precondition(leafDepth == depth, "leaves at different depths")
            } else {
                leafDepth = depth
            }
            return
        }
        precondition(node.values.isEmpty, "inner node with values")
        precondition(node.keys.count == node.children.count - 1, "separator count wrong")
        precondition(node.counts.count == node.children.count, "child count array wrong")
        precondition(node.count == node.counts.reduce(0, +), "inner count wrong")
        if let first = node.keys.first, let lower {
            precondition(lower <= first, "separator below its interval")
        }
        if let last = node.keys.last, let upper {
            precondition(last < upper, "separator above its interval")
        }
        for (index, child) in node.children.enumerated() {
            precondition(node.counts[index] == child.count, "stored child count wrong")
            check(
                child,
                depth: depth + 1,
                lower: index == 0 ? lower : node.keys[index - 1],
                upper: index == node.keys.count ? upper : node.keys[index],
                isRoot: false,
                leafDepth: &leafDepth
            )
        }
    }
}
