extension JSONValue: Comparable {
    /// A total order across kinds, for ordered indexes:
    /// `null < bool < number < string < array < object`.
    ///
    /// - `false < true`.
    /// - Integers and doubles form one kind and compare exactly by numeric value (no
    ///   rounding through `Double`); on a tie the integer comes first (`1 < 1.0`), so the
    ///   order agrees with `==`, which tells them apart. `-0.0` and `0.0` tie. NaN sorts after
    ///   every other number.
    /// - Strings compare as Swift `String`s (Unicode canonical order).
    /// - Arrays compare lexicographically, a proper prefix first.
    /// - Objects compare as their member lists sorted by key: key, then value, pair by pair,
    ///   a proper prefix first.
    ///
    /// - Complexity: O(size of the smaller value), plus sorting object keys.
    public static func < (lhs: JSONValue, rhs: JSONValue) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Three-way comparison: negative, zero or positive.
    static func compare(_ lhs: JSONValue, _ rhs: JSONValue) -> Int {
        let kinds = lhs.kindRank - rhs.kindRank
        if kinds != 0 { return kinds }
        switch (lhs, rhs) {
        case (.bool(let left), .bool(let right)):
            return left == right ? 0 : (left ? 1 : -1)
        case (.integer(let left), .integer(let right)):
            return left == right ? 0 : (left < right ? -1 : 1)
        case (.double(let left), .double(let right)):
            return compareDoubles(left, right)
        case (.integer(let left), .double(let right)):
            let order = compareExactly(left, right)
            return order != 0 ? order : -1
        case (.double(let left), .integer(let right)):
            let order = -compareExactly(right, left)
            return order != 0 ? order : 1
        case (.string(let left), .string(let right)):
            return left == right ? 0 : (left < right ? -1 : 1)
        case (.array(let left), .array(let right)):
            return compareSequences(left, right)
        case (.object(let left), .object(let right)):
            let leftMembers = left.sorted { $0.key < $1.key }
            let rightMembers = right.sorted { $0.key < $1.key }
            for (leftMember, rightMember) in zip(leftMembers, rightMembers) {
                if leftMember.key != rightMember.key {
                    return leftMember.key < rightMember.key ? -1 : 1
                }
                let order = compare(leftMember.value, rightMember.value)
                if order != 0 { return order }
            }
            return leftMembers.count - rightMembers.count
        default:
            return 0
        }
    }

    /// The kind's position in the cross-kind order; both number kinds share one.
    private var kindRank: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .integer, .double: 2
        case .string: 3
        case .array: 4
        case .object: 5
        }
    }

    static func compareDoubles(_ left: Double, _ right: Double) -> Int {
        if left.isNaN { return right.isNaN ? 0 : 1 }
        if right.isNaN { return -1 }
        return left < right ? -1 : (right < left ? 1 : 0)
    }

    /// Compares an integer with a double by exact numeric value; NaN counts as largest.
    static func compareExactly(_ integer: Int64, _ double: Double) -> Int {
        // 2^63 is exactly representable; every double in [-2^63, 2^63) truncates to an Int64.
        let twoToThe63 = 9_223_372_036_854_775_808.0
        if double.isNaN || double >= twoToThe63 { return -1 }
        if double < -twoToThe63 { return 1 }
        let whole = double.rounded(.towardZero)
        let wholeInteger = Int64(whole)
        if integer != wholeInteger { return integer < wholeInteger ? -1 : 1 }
        let fraction = double - whole
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    private static func compareSequences(_ left: [JSONValue], _ right: [JSONValue]) -> Int {
        for (leftElement, rightElement) in zip(left, right) {
            let order = compare(leftElement, rightElement)
            if order != 0 { return order }
        }
        return left.count - right.count
    }
}

extension JSONValue {
    /// The least value of this value's kind in the order: `null`, `false`, `-infinity`
    /// (for both number kinds), `""`, `[]` or `{}`.
    /// - Complexity: O(1).
    var leastOfKind: JSONValue {
        switch self {
        case .null: .null
        case .bool: .bool(false)
        case .integer, .double: .double(-.infinity)
        case .string: .string("")
        case .array: .array([])
        case .object: .object([:])
        }
    }

    /// The least value of the kind after this value's, or nil for an object (the last kind).
    /// - Complexity: O(1).
    var leastOfNextKind: JSONValue? {
        switch self {
        case .null: .bool(false)
        case .bool: .double(-.infinity)
        case .integer, .double: .string("")
        case .string: .array([])
        case .array: .object([:])
        case .object: nil
        }
    }
}
