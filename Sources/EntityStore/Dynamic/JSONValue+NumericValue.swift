extension JSONValue {
    /// Compares two numbers by value, exactly (no rounding of a large integer through
    /// `Double`): negative, zero or positive; nil unless both are numbers (integers or
    /// doubles). `1` and `1.0` compare equal here, unlike with `==`. NaN is after every
    /// other number and equal to itself.
    ///
    /// This is how SQL compares an INTEGER with a REAL, so conditions read by value give
    /// the same answers in memory and in SQLite.
    /// - Complexity: O(1).
    public func numericComparison(to other: JSONValue) -> Int? {
        switch (self, other) {
        case (.integer(let left), .integer(let right)): left == right ? 0 : (left < right ? -1 : 1)
        case (.double(let left), .double(let right)): Self.compareDoubles(left, right)
        case (.integer(let left), .double(let right)): Self.compareExactly(left, right)
        case (.double(let left), .integer(let right)): -Self.compareExactly(right, left)
        default: nil
        }
    }
}
