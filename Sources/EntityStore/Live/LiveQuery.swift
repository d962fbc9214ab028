import HashTreeCollections

/// The description of a live query over one table, as data: a source (the whole table,
/// equality on a field, or a range of a field), an optional extra filter, an order and an
/// optional limit. Start it with ``EntityStore/live(_:)``.
///
/// ```swift
/// let query = LiveQuery(books).where(\.authorID, equals: 1).sorted(by: \.year).limit(10)
/// let live = store.live(query)
/// ```
///
/// Each part keeps its field's identity (the key path), its operator and its key or
/// bounds, so other query descriptions can be converted to it.
public struct LiveQuery<E: Entity>: Sendable {
    /// What a live query's source selects.
    public enum Operator: Sendable, Equatable {
        /// Every row of the table.
        case all
        /// Rows whose field equals a key.
        case equals
        /// Rows whose field lies in a range.
        case range
    }

    /// The table queried.
    public let table: Table<E>
    /// The source's operator.
    public private(set) var sourceOperator: Operator = .all
    /// The source's field, nil for ``Operator/all``.
    public private(set) var sourceField: (any AnyKeyPath & Sendable)?
    /// The source's key (``Operator/equals``) or range (``Operator/range``).
    public private(set) var sourceValue: (any Sendable)?
    /// The field rows are sorted by, nil for insertion order.
    public private(set) var sortField: (any AnyKeyPath & Sendable)?
    /// Whether rows are sorted by descending `sortField` (ties keep insertion order).
    public private(set) var isDescending = false
    /// The maximum number of rows (top-k), nil for all.
    public private(set) var limitCount: Int?

    var source: SourcePlan<E> = .all
    var filters: [@Sendable (E) -> Bool] = []
    var ordering: any RowOrdering<E> = InsertionOrdering<E>()

    /// A query of every row of `table`, in insertion order.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)``.
    public init(_ table: Table<E>) {
        self.table = table
    }

    /// Keeps the rows whose field `keyPath` equals `key`. The query then wakes only for
    /// commits whose changed rows have or had that key; its first value is read from a
    /// unique or grouped index on the field when there is one.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)``.
    public func `where`<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> LiveQuery {
        var copy = self
        copy.sourceOperator = .equals
        copy.sourceField = keyPath
        copy.sourceValue = key
        copy.source = .equals(EqualitySource(keyPath: keyPath, key: key))
        return copy
    }

    /// Keeps the rows whose field `keyPath` lies in `range`; its first value is read from
    /// an ordered index on the field when there is one.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)``.
    public func `where`<Key: Comparable & Sendable>(
        _ keyPath: any KeyPath<E, Key> & Sendable, in range: some RangeExpression<Key> & Sendable
    ) -> LiveQuery {
        var copy = self
        copy.sourceOperator = .range
        copy.sourceField = keyPath
        copy.sourceValue = range
        copy.source = .range(RangeSource(keyPath: keyPath, range: range))
        return copy
    }

    /// Also keeps only the rows for which `predicate` holds. It must read only the row.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)``.
    public func filter(_ predicate: @escaping @Sendable (E) -> Bool) -> LiveQuery {
        var copy = self
        copy.filters.append(predicate)
        return copy
    }

    /// Sorts the rows by `keyPath` (ties in insertion order). With a limit, a member that
    /// leaves is replaced from an ordered index on the field when there is one.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)``.
    public func sorted<Key: Comparable & Sendable>(by keyPath: any KeyPath<E, Key> & Sendable, descending: Bool = false) -> LiveQuery {
        var copy = self
        copy.sortField = keyPath
        copy.isDescending = descending
        copy.ordering = descending
            ? FieldOrdering<E, Key, DescendingPosition<Key>>(keyPath: keyPath)
            : FieldOrdering<E, Key, OrderedIndexKey<Key>>(keyPath: keyPath)
        return copy
    }

    /// Keeps at most the first `count` rows (a negative count keeps none).
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)``.
    public func limit(_ count: Int) -> LiveQuery {
        var copy = self
        copy.limitCount = Swift.max(0, count)
        return copy
    }

    /// Whether `entity` belongs to the result, ignoring the limit. O(filters).
    func qualifies(_ entity: E) -> Bool {
        source.contains(entity) && filters.allSatisfy { $0(entity) }
    }
}

/// The typed behaviour of a live query's source.
enum SourcePlan<E: Entity>: Sendable {
    case all
    case equals(any EqualitySourcePlan<E>)
    case range(any RangeSourcePlan<E>)

    func contains(_ entity: E) -> Bool {
        switch self {
        case .all: true
        case let .equals(source): source.contains(entity)
        case let .range(source): source.contains(entity)
        }
    }

    /// The IDs the source can hold, read from an index; nil when no index answers (scan).
    func candidates(in storage: TableStorage<E>) -> [E.ID]? {
        switch self {
        case .all: nil
        case let .equals(source): source.candidates(in: storage)
        case let .range(source): source.candidates(in: storage)
        }
    }
}

/// An equality source, erased over its key type.
protocol EqualitySourcePlan<E>: Sendable {
    associatedtype E: Entity
    var field: KeyPathKey { get }
    var watchKey: WatchKey { get }
    var reader: any ChangedKeyReader { get }
    func contains(_ entity: E) -> Bool
    func candidates(in storage: TableStorage<E>) -> [E.ID]?
}

/// A range source, erased over its key type.
protocol RangeSourcePlan<E>: Sendable {
    associatedtype E: Entity
    func contains(_ entity: E) -> Bool
    func candidates(in storage: TableStorage<E>) -> [E.ID]?
}

struct EqualitySource<E: Entity, Key: Hashable & Sendable>: EqualitySourcePlan {
    let keyPath: any KeyPath<E, Key> & Sendable
    let key: Key

    var field: KeyPathKey { KeyPathKey(keyPath: keyPath) }
    var watchKey: WatchKey { WatchKey(key) }
    var reader: any ChangedKeyReader {
        let keyPath = keyPath
        return FieldKeyReader<E, Key> { $0[keyPath: keyPath] }
    }

    func contains(_ entity: E) -> Bool { entity[keyPath: keyPath] == key }

    func candidates(in storage: TableStorage<E>) -> [E.ID]? {
        for (position, spec) in storage.descriptor.indexes.enumerated() where spec.keyPath?.keyPath == keyPath as AnyKeyPath {
            switch spec.erased(storage.indexes[position]) {
            case let index as GroupedIndex<E, Key>: return index.groups[key].map { $0.map { $0.value } } ?? []
            case let index as UniqueIndex<E, Key>: return index.entries[key].map { [$0] } ?? []
            default: continue
            }
        }
        return nil
    }
}

struct RangeSource<E: Entity, Key: Comparable & Sendable, Bounds: RangeExpression<Key> & Sendable>: RangeSourcePlan {
    let keyPath: any KeyPath<E, Key> & Sendable
    let range: Bounds

    func contains(_ entity: E) -> Bool { range.contains(entity[keyPath: keyPath]) }

    func candidates(in storage: TableStorage<E>) -> [E.ID]? {
        guard let index = orderedIndex(E.self, Key.self, on: keyPath, in: storage),
              let bounds = sortedMapRange(of: range)
        else { return nil }
        return index.entries.elements(in: bounds).map { $0.value }
    }
}

/// The standard library's ranges as an interval of ordered-index keys (value, then
/// insertion sequence); nil for another `RangeExpression` (the caller then scans).
func sortedMapRange<Key: Comparable & Sendable>(of range: some RangeExpression<Key>) -> SortedMapRange<OrderedIndexKey<Key>>? {
    func lower(_ key: Key) -> SortedMapBound<OrderedIndexKey<Key>> { .included(OrderedIndexKey(key: key, sequence: 0)) }
    func upperIncluded(_ key: Key) -> SortedMapBound<OrderedIndexKey<Key>> { .included(OrderedIndexKey(key: key, sequence: .max)) }
    func upperExcluded(_ key: Key) -> SortedMapBound<OrderedIndexKey<Key>> { .excluded(OrderedIndexKey(key: key, sequence: 0)) }
    switch range {
    case let range as ClosedRange<Key>: return SortedMapRange(lowerBound: lower(range.lowerBound), upperBound: upperIncluded(range.upperBound))
    case let range as Range<Key>: return SortedMapRange(lowerBound: lower(range.lowerBound), upperBound: upperExcluded(range.upperBound))
    case let range as PartialRangeFrom<Key>: return SortedMapRange(lowerBound: lower(range.lowerBound))
    case let range as PartialRangeThrough<Key>: return SortedMapRange(upperBound: upperIncluded(range.upperBound))
    case let range as PartialRangeUpTo<Key>: return SortedMapRange(upperBound: upperExcluded(range.upperBound))
    default: return nil
    }
}

/// The ordered index on `keyPath` of `storage`, if declared.
func orderedIndex<E: Entity, Key: Comparable & Sendable>(
    _ entity: E.Type, _ key: Key.Type, on keyPath: AnyKeyPath, in storage: TableStorage<E>
) -> OrderedIndex<E, Key>? {
    for (position, spec) in storage.descriptor.indexes.enumerated() where spec.keyPath?.keyPath == keyPath {
        if let index = spec.erased(storage.indexes[position]) as? OrderedIndex<E, Key> { return index }
    }
    return nil
}
