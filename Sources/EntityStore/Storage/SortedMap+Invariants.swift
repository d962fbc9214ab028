extension SortedMap {
    /// Traps unless the tree is well formed (see ``invariantViolations()``). For tests.
    ///
    /// - Complexity: O(n)
    @inlinable
    func _checkInvariants() {
        let problems = invariantViolations()
        precondition(problems.isEmpty, problems.joined(separator: "; "))
    }

    /// Describes every way the tree is malformed (debug checks): keys sorted and unique,
    /// separators partitioning their children, every non-root node within its fill
    /// bounds, stored counts correct and all leaves at the same depth.
    ///
    /// - Complexity: O(n)
    @inlinable
    func invariantViolations() -> [String] {
        guard let root else { return [] }
        var problems: [String] = []
        if root.count == 0 { problems.append("sorted map: a non-empty root must hold elements") }
        if !root.isLeaf, root.children.count < 2 { problems.append("sorted map: an inner root needs two children") }
        var leafDepth: Int?
        check(root, depth: 0, lower: nil, upper: nil, isRoot: true, leafDepth: &leafDepth, problems: &problems)
        return problems
    }

    @inlinable
    func check(
        _ node: SortedMapNode<Key, Value>,
        depth: Int,
        lower: Key?,
        upper: Key?,
        isRoot: Bool,
        leafDepth: inout Int?,
        problems: inout [String]
    ) {
        func require(_ condition: Bool, _ message: String) {
            if !condition { problems.append("sorted map: " + message) }
        }
        require(node.fill <= nodeCapacity, "node over capacity")
        if !isRoot {
            require(node.fill >= nodeCapacity / 2, "node under minimum fill")
        }
        for index in node.keys.indices.dropFirst() {
            require(node.keys[index - 1] < node.keys[index], "keys not strictly ascending")
        }
        if let first = node.keys.first, let lower {
            require(lower <= first, node.isLeaf ? "leaf key below its interval" : "separator below its interval")
        }
        if let last = node.keys.last, let upper {
            require(last < upper, node.isLeaf ? "leaf key above its interval" : "separator above its interval")
        }
        if node.isLeaf {
            require(node.children.isEmpty && node.counts.isEmpty, "leaf with children")
            require(node.values.count == node.keys.count, "leaf keys and values differ in count")
            require(node.count == node.keys.count, "leaf count wrong")
            if let leafDepth {
                require(leafDepth == depth, "leaves at different depths")
            } else {
                leafDepth = depth
            }
            return
        }
        require(node.values.isEmpty, "inner node with values")
        require(node.keys.count == node.children.count - 1, "separator count wrong")
        require(node.counts.count == node.children.count, "child count array wrong")
        require(node.count == node.counts.reduce(0, +), "inner count wrong")
        guard node.keys.count == node.children.count - 1, node.counts.count == node.children.count else { return }
        for (index, child) in node.children.enumerated() {
            require(node.counts[index] == child.count, "stored child count wrong")
            check(
                child,
                depth: depth + 1,
                lower: index == 0 ? lower : node.keys[index - 1],
                upper: index == node.keys.count ? upper : node.keys[index],
                isRoot: false,
                leafDepth: &leafDepth,
                problems: &problems
            )
        }
    }
}
