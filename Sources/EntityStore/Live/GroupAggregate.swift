import HashTreeCollections

/// A value a live group-by can sum and order: integers (summed with wrapping arithmetic,
/// so a group's sum is exact whenever the true sum fits the type, however the running
/// sum moved on the way, and never traps) and floating-point numbers (summed with a
/// compensation term, and with infinities and NaNs counted apart, so that rows leaving a
/// group do not leave rounding errors or a stuck infinity behind).
public protocol LiveAggregatable: Comparable, Sendable {
    /// Zero, the sum of no values.
    static var liveZero: Self { get }
    /// `lhs + rhs`, without trapping.
    static func liveAdding(_ lhs: Self, _ rhs: Self) -> Self
    /// `lhs - rhs`, without trapping.
    static func liveSubtracting(_ lhs: Self, _ rhs: Self) -> Self
    /// The value as a `Double`, for averages.
    var liveDouble: Double { get }
    /// Adds `value` to the running sum `sum` (subtracts it when `removing`). The default
    /// uses ``liveAdding(_:_:)`` and ``liveSubtracting(_:_:)``.
    static func liveAccumulate(_ value: Self, removing: Bool, into sum: inout LiveSum<Self>)
    /// The value of the running sum `sum`. The default adds its compensation.
    static func liveTotal(_ sum: LiveSum<Self>) -> Self
    /// Whether `lhs` orders before `rhs` for a group's minimum and maximum: `<`, except
    /// that a floating-point -0.0 orders before +0.0 (as IEEE 754's `minimum` and
    /// `maximum` order them), so the extremes of a group do not depend on which zero
    /// entered first. The default is `<`.
    static func liveOrders(_ lhs: Self, before rhs: Self) -> Bool
}

extension LiveAggregatable {
    /// `lhs < rhs`.
    @inlinable
    public static func liveOrders(_ lhs: Self, before rhs: Self) -> Bool { lhs < rhs }
}

/// A running sum of a live group-by: the sum itself, a compensation term that holds the
/// low-order part floating-point additions round away (Neumaier's summation), and the
/// infinities and NaNs among the values, counted apart so that the sum is right again
/// once they leave.
public struct LiveSum<Value: LiveAggregatable>: Sendable, Equatable {
    /// The sum of the finite values, less `compensation`.
    public var partial: Value
    /// What rounding took from `partial` (zero for integers).
    public var compensation: Value
    /// How many values are +infinity, -infinity and NaN.
    public var positiveInfinities = 0, negativeInfinities = 0, nans = 0

    /// An empty sum.
    @inlinable
    public init() {
        partial = Value.liveZero
        compensation = Value.liveZero
    }
}

extension LiveAggregatable {
    /// Adds or subtracts with ``liveAdding(_:_:)`` and ``liveSubtracting(_:_:)``.
    @inlinable
    public static func liveAccumulate(_ value: Self, removing: Bool, into sum: inout LiveSum<Self>) {
        sum.partial = removing ? liveSubtracting(sum.partial, value) : liveAdding(sum.partial, value)
    }
}

extension LiveSum {
    /// The sum: for floating-point values, NaN if a NaN or both infinities are among the
    /// values, an infinity if one is, else the partial sum plus its compensation. O(1).
    @inlinable
    public var total: Value { Value.liveTotal(self) }
}

extension LiveAggregatable {
    /// The partial sum plus its compensation.
    @inlinable
    public static func liveTotal(_ sum: LiveSum<Self>) -> Self { liveAdding(sum.partial, sum.compensation) }
}

extension LiveAggregatable where Self: FixedWidthInteger {
    /// Zero.
    public static var liveZero: Self { 0 }
    /// Wrapping addition.
    public static func liveAdding(_ lhs: Self, _ rhs: Self) -> Self { lhs &+ rhs }
    /// Wrapping subtraction.
    public static func liveSubtracting(_ lhs: Self, _ rhs: Self) -> Self { lhs &- rhs }
    /// The value as a `Double`.
    public var liveDouble: Double { Double(self) }
}

extension LiveAggregatable where Self: BinaryFloatingPoint {
    /// Zero.
    public static var liveZero: Self { 0 }
    /// Addition.
    public static func liveAdding(_ lhs: Self, _ rhs: Self) -> Self { lhs + rhs }
    /// Subtraction.
    public static func liveSubtracting(_ lhs: Self, _ rhs: Self) -> Self { lhs - rhs }
    /// The value as a `Double`.
    public var liveDouble: Double { Double(self) }

    /// Neumaier's compensated addition of a finite value; infinities and NaNs are counted.
    @inlinable
    public static func liveAccumulate(_ value: Self, removing: Bool, into sum: inout LiveSum<Self>) {
        let step = removing ? -1 : 1
        if value.isNaN { sum.nans += step; return }
        if value.isInfinite {
            if value > 0 { sum.positiveInfinities += step } else { sum.negativeInfinities += step }
            return
        }
        let x = removing ? -value : value
        let total = sum.partial + x
        if total.isFinite {
            sum.compensation += sum.partial.magnitude >= x.magnitude ? (sum.partial - total) + x : (x - total) + sum.partial
        }
        sum.partial = total
    }

    /// `lhs < rhs`, with -0.0 before +0.0.
    @inlinable
    public static func liveOrders(_ lhs: Self, before rhs: Self) -> Bool {
        lhs < rhs || (lhs == rhs && lhs.sign == .minus && rhs.sign == .plus)
    }

    /// NaN if a NaN or both infinities are among the values, an infinity if one is, else
    /// the partial sum plus its compensation.
    @inlinable
    public static func liveTotal(_ sum: LiveSum<Self>) -> Self {
        if sum.nans > 0 || (sum.positiveInfinities > 0 && sum.negativeInfinities > 0) { return .nan }
        if sum.positiveInfinities > 0 { return .infinity }
        if sum.negativeInfinities > 0 { return -.infinity }
        return sum.partial + sum.compensation
    }
}

extension Int: LiveAggregatable {}
extension Int64: LiveAggregatable {}
extension Int32: LiveAggregatable {}
extension UInt: LiveAggregatable {}
extension UInt64: LiveAggregatable {}
extension UInt32: LiveAggregatable {}
extension Double: LiveAggregatable {}
extension Float: LiveAggregatable {}

/// The aggregates of one group of a live group-by: never empty (a group whose last row
/// leaves disappears). A NaN value counts and makes the sum NaN; the minimum and maximum
/// are those of the other values (NaN when every value is). Between equal zeros, the
/// minimum is -0.0 and the maximum +0.0 whenever a row holds one. Two aggregates are
/// equal when their parts are, a NaN equalling a NaN and -0.0 unequal to +0.0.
public struct GroupAggregate<Value: LiveAggregatable>: Sendable, Equatable {
    /// The number of rows.
    public let count: Int
    /// The sum of their values.
    public let sum: Value
    /// The smallest value.
    public let min: Value
    /// The largest value.
    public let max: Value

    /// The mean of the values.
    public var average: Double { sum.liveDouble / Double(count) }

    /// Equal parts, a NaN equalling a NaN (so an unchanged group compares equal) and -0.0
    /// unequal to +0.0 (so a zero extreme changing sign is a change).
    @inlinable
    public static func == (lhs: Self, rhs: Self) -> Bool {
        func same(_ a: Value, _ b: Value) -> Bool {
            (a == b && !Value.liveOrders(a, before: b) && !Value.liveOrders(b, before: a)) || (a != a && b != b)
        }
        return lhs.count == rhs.count && same(lhs.sum, rhs.sum) && same(lhs.min, rhs.min) && same(lhs.max, rhs.max)
    }

    @inlinable
    init(count: Int, sum: Value, min: Value, max: Value) {
        self.count = count
        self.sum = sum
        self.min = min
        self.max = max
    }
}

/// The groups of a live group-by at one revision: a persistent map from group key to its
/// aggregates (O(1) to hand out; a commit changes it in O(log g) per changed group).
public struct GroupValues<Key: Hashable & Sendable, Value: LiveAggregatable>: Sendable, Equatable, Sequence {
    @usableFromInline var groups = TreeDictionary<Key, GroupAggregate<Value>>()

    @inlinable
    init() {}

    /// The aggregates of `key`'s group, nil if no row has that key. O(1) expected.
    public subscript(key: Key) -> GroupAggregate<Value>? { groups[key] }

    /// The number of groups. O(1).
    public var count: Int { groups.count }

    /// Whether there are no groups. O(1).
    public var isEmpty: Bool { groups.isEmpty }

    /// Iterates the groups in no particular order.
    public func makeIterator() -> some IteratorProtocol<(key: Key, value: GroupAggregate<Value>)> {
        groups.makeIterator()
    }

    /// The groups as a dictionary. O(g).
    public var dictionary: [Key: GroupAggregate<Value>] { Dictionary(uniqueKeysWithValues: groups.map { ($0.key, $0.value) }) }
}

/// What one commit changed in a live group-by: each group whose aggregates changed.
public struct GroupDiff<Key: Hashable & Sendable, Value: LiveAggregatable>: Sendable, Equatable {
    /// One group's change: nil `old` for a new group, nil `new` for a group emptied.
    public struct Change: Sendable, Equatable {
        /// The group's key.
        public let key: Key
        /// Its aggregates before the commit.
        public let old: GroupAggregate<Value>?
        /// Its aggregates after the commit.
        public let new: GroupAggregate<Value>?

        @inlinable
        init(key: Key, old: GroupAggregate<Value>?, new: GroupAggregate<Value>?) {
            self.key = key
            self.old = old
            self.new = new
        }
    }

    /// The changed groups, in no particular order.
    public internal(set) var changes: [Change] = []

    @usableFromInline
    init(changes: [Change] = []) {
        self.changes = changes
    }

    /// Whether no group changed.
    public var isEmpty: Bool { changes.isEmpty }

    /// `old` with the changes applied. O(changes).
    public func apply(to old: [Key: GroupAggregate<Value>]) -> [Key: GroupAggregate<Value>] {
        var groups = old
        for change in changes { groups[change.key] = change.new }
        return groups
    }
}
