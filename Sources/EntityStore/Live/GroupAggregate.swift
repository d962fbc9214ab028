import HashTreeCollections

/// A value a live group-by can sum and order: integers (summed with wrapping arithmetic,
/// so a group's sum is exact whenever the true sum fits the type, however the running
/// sum moved on the way, and never traps) and floating-point numbers.
public protocol LiveAggregatable: Comparable, Sendable {
    /// Zero, the sum of no values.
    static var liveZero: Self { get }
    /// `lhs + rhs`, without trapping.
    static func liveAdding(_ lhs: Self, _ rhs: Self) -> Self
    /// `lhs - rhs`, without trapping.
    static func liveSubtracting(_ lhs: Self, _ rhs: Self) -> Self
    /// The value as a `Double`, for averages.
    var liveDouble: Double { get }
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
/// leaves disappears).
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
}

/// The groups of a live group-by at one revision: a persistent map from group key to its
/// aggregates (O(1) to hand out; a commit changes it in O(log g) per changed group).
public struct GroupValues<Key: Hashable & Sendable, Value: LiveAggregatable>: Sendable, Equatable, Sequence {
    var groups = TreeDictionary<Key, GroupAggregate<Value>>()

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
    }

    /// The changed groups, in no particular order.
    public internal(set) var changes: [Change] = []

    /// Whether no group changed.
    public var isEmpty: Bool { changes.isEmpty }

    /// `old` with the changes applied. O(changes).
    public func apply(to old: [Key: GroupAggregate<Value>]) -> [Key: GroupAggregate<Value>] {
        var groups = old
        for change in changes { groups[change.key] = change.new }
        return groups
    }
}
