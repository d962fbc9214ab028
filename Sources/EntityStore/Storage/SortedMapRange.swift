/// One end of a `SortedMapRange`.
@usableFromInline
enum SortedMapBound<Key: Comparable>: Equatable {
    /// The bound admits keys equal to it.
    case included(Key)
    /// The bound stops just short of keys equal to it.
    case excluded(Key)

    /// The key the bound compares against.
    @inlinable
    var key: Key {
        switch self {
        case .included(let key), .excluded(let key): key
        }
    }
}

extension SortedMapBound: Sendable where Key: Sendable {}

/// A key interval for `SortedMap` range queries; each end is optional (unbounded) and
/// inclusive or exclusive. An interval whose lower end lies above its upper end is empty.
@usableFromInline
struct SortedMapRange<Key: Comparable>: Equatable {
    /// The smallest admitted key, or nil for no lower limit.
    @usableFromInline
    var lowerBound: SortedMapBound<Key>?
    /// The largest admitted key, or nil for no upper limit.
    @usableFromInline
    var upperBound: SortedMapBound<Key>?

    /// Creates an interval from optional bounds.
    @inlinable
    init(lowerBound: SortedMapBound<Key>? = nil, upperBound: SortedMapBound<Key>? = nil) {
        self.lowerBound = lowerBound
        self.upperBound = upperBound
    }

    /// The interval admitting every key.
    @usableFromInline
    static var all: SortedMapRange { SortedMapRange() }

    /// The interval of the keys equal to `key`. Unlike `key...key`, it does not trap on a
    /// key not equal to itself (a NaN): that interval admits no key.
    @inlinable
    static func only(_ key: Key) -> SortedMapRange { SortedMapRange(lowerBound: .included(key), upperBound: .included(key)) }

    /// Whether `key` lies within the interval. Each bound is tested as the comparison
    /// that admits the key, as the standard library's ranges do, so a key unordered
    /// with a bound (a NaN) lies in no bounded interval.
    ///
    /// - Complexity: O(1)
    @inlinable
    func contains(_ key: Key) -> Bool {
        switch lowerBound {
        case .included(let low)?: guard low <= key else { return false }
        case .excluded(let low)?: guard low < key else { return false }
        case nil: break
        }
        switch upperBound {
        case .included(let high)?: guard key <= high else { return false }
        case .excluded(let high)?: guard key < high else { return false }
        case nil: break
        }
        return true
    }
}

extension SortedMapRange: Sendable where Key: Sendable {}

extension SortedMapRange {
    /// `lower..<upper`.
    @inlinable
    init(_ range: Range<Key>) {
        self.init(lowerBound: .included(range.lowerBound), upperBound: .excluded(range.upperBound))
    }

    /// `lower...upper`.
    @inlinable
    init(_ range: ClosedRange<Key>) {
        self.init(lowerBound: .included(range.lowerBound), upperBound: .included(range.upperBound))
    }

    /// `lower...`.
    @inlinable
    init(_ range: PartialRangeFrom<Key>) {
        self.init(lowerBound: .included(range.lowerBound))
    }

    /// `...upper`.
    @inlinable
    init(_ range: PartialRangeThrough<Key>) {
        self.init(upperBound: .included(range.upperBound))
    }

    /// `..<upper`.
    @inlinable
    init(_ range: PartialRangeUpTo<Key>) {
        self.init(upperBound: .excluded(range.upperBound))
    }
}
