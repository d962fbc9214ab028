extension JSONValue: Hashable {
    /// Structural, kind-sensitive equality; doubles compare numerically and NaN equals NaN.
    ///
    /// - Complexity: O(size of the smaller value).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let left), .bool(let right)): left == right
        case (.integer(let left), .integer(let right)): left == right
        case (.double(let left), .double(let right)): left == right || (left.isNaN && right.isNaN)
        case (.string(let left), .string(let right)): left == right
        case (.array(let left), .array(let right)): left == right
        case (.object(let left), .object(let right)): left == right
        default: false
        }
    }

    /// Hashes consistently with `==`: all NaNs alike, `-0.0` like `0.0`.
    ///
    /// - Complexity: O(size of the value).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .integer(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .double(let value):
            hasher.combine(3 as UInt8)
            if value.isNaN {
                hasher.combine(Double.nan.bitPattern)
            } else {
                hasher.combine(value)
            }
        case .string(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        case .array(let value):
            hasher.combine(5 as UInt8)
            hasher.combine(value)
        case .object(let value):
            hasher.combine(6 as UInt8)
            hasher.combine(value)
        }
    }
}
