extension SortedMap: Equatable where Value: Equatable {
    /// Whether both maps hold the same keys with equal values; node capacity and tree shape
    /// do not matter.
    ///
    /// - Complexity: O(1) when both share their root (an unmodified copy), else O(n).
    @inlinable
    static func == (lhs: SortedMap, rhs: SortedMap) -> Bool {
        if lhs.root === rhs.root { return true }
        guard lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
