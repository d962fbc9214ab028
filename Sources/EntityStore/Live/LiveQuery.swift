import HashTreeCollections

/// The description of a live query over one table: a source (the whole table, equality on
/// a field, or a range of a field), optional extra filters, an order and an optional
/// limit. Start it with ``EntityStore/live(_:)->LiveList<E>``.
///
/// ```swift
/// let query = LiveQuery(books).where(\.authorID, equals: 1).sorted(by: \.year).limit(10)
/// let live = store.live(query)
/// ```
///
/// The first equality becomes the source (so the query wakes only for its key); without
/// one, the first range does. Every other condition filters the source's rows. Each part
/// keeps its field's identity (the key path), its operator and its key or bounds.
///
/// The builders are compiled where they are called (`@inlinable`), so the work a live
/// query does per commit runs specialized for the caller's entity and key types.
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
    @usableFromInline var source = LiveSource<E>()
    @usableFromInline var filters: [@Sendable (E) -> Bool] = []
    @usableFromInline var sort: LiveSort?
    @usableFromInline var limitValue: Int?
    /// Builds the row engine for this query's order.
    @usableFromInline var makeRowEngine: @Sendable (LiveQuery<E>, EntityState, UInt64) -> RowEngineHandle<E>

    /// A query of every row of `table`, in insertion order.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)->LiveList<E>``.
    @inlinable
    public init(_ table: Table<E>) {
        self.table = table
        self.makeRowEngine = { query, state, origin in
            // An equality alone, in insertion order, is the group of a grouped index on its
            // field when there is one: its rows are read from the index, not copied.
            if query.filters.isEmpty, query.limitValue == nil, let makeReader = query.source.groupReader,
               let matches = query.source.contains, let storage = state.storage(named: query.table.name, as: E.self),
               let reader = makeReader(storage) {
                return RowEngineHandle(IndexedGroupWindow(table: query.table.name, group: reader, matches: matches, state: state, origin: origin))
            }
            return RowEngineHandle(RowWindow(query: query, ordering: InsertionOrdering<E>(query: query), state: state, origin: origin))
        }
    }

    /// The source's operator.
    public var sourceOperator: Operator { source.kind }
    /// The source's field, nil for ``Operator/all``.
    public var sourceField: (any AnyKeyPath & Sendable)? { source.field }
    /// The source's key (``Operator/equals``) or range (``Operator/range``).
    public var sourceValue: (any Sendable)? { source.value }
    /// The field rows are sorted by, nil for insertion order.
    public var sortField: (any AnyKeyPath & Sendable)? { sort?.field }
    /// Whether rows are sorted by descending `sortField` (ties keep insertion order).
    public var isDescending: Bool { sort?.descending ?? false }
    /// The maximum number of rows (top-k), nil for all.
    public var limitCount: Int? { limitValue }

    /// Keeps the rows whose field `keyPath` equals `key`. The first equality becomes the
    /// source: the query then wakes only for commits whose changed rows have or had that
    /// key, and its rows are read from a unique or grouped index on the field when there
    /// is one. A range source it replaces becomes a filter; a later equality is a filter.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)->LiveList<E>``.
    @inlinable
    public func `where`<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> LiveQuery {
        adding(equality: keyPath, key) { storage in storage.groupedIDs(key, for: keyPath).map { $0.map { $0.value } } }
    }

    /// Keeps the rows whose field `keyPath` equals `key`, as the form above; an ordered
    /// index on the field reads the source's rows too.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)->LiveList<E>``.
    @inlinable
    public func `where`<Key: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> LiveQuery {
        adding(equality: keyPath, key) { storage in
            storage.groupedIDs(key, for: keyPath).map { $0.map { $0.value } } ?? orderedEqualIDs(key, keyPath: keyPath, in: storage)
        }
    }

    /// This query with the equality `keyPath == key`, as its source or as a filter.
    @inlinable
    func adding<Key: Hashable & Sendable>(
        equality keyPath: any KeyPath<E, Key> & Sendable, _ key: Key,
        candidates: @escaping @Sendable (TableStorage<E>) -> [E.ID]?
    ) -> LiveQuery {
        let read = fieldReader(keyPath)
        let matches: @Sendable (E) -> Bool = { read($0) == key }
        var copy = self
        switch source.kind {
        case .equals:
            copy.filters.append(matches)
        case .range:
            if let contains = source.contains { copy.filters.append(contains) }
            copy.source = .equality(keyPath, key, read: read, matches: matches, candidates: candidates)
        case .all:
            copy.source = .equality(keyPath, key, read: read, matches: matches, candidates: candidates)
        }
        return copy
    }

    /// Keeps the rows whose field `keyPath` lies in `range`. Without an equality, the
    /// first range becomes the source: its rows are read from an ordered index on the
    /// field when there is one (and a top-k sorted by the same field refills from it).
    /// Otherwise it is a filter.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)->LiveList<E>``.
    @inlinable
    public func `where`<Key: Comparable & Sendable>(
        _ keyPath: any KeyPath<E, Key> & Sendable, in range: some RangeExpression<Key> & Sendable
    ) -> LiveQuery {
        let read = fieldReader(keyPath)
        let matches: @Sendable (E) -> Bool = { range.contains(read($0)) }
        var copy = self
        guard source.kind == .all else {
            copy.filters.append(matches)
            return copy
        }
        copy.source = .range(keyPath, range, matches: matches)
        return copy
    }

    /// Also keeps only the rows for which `predicate` holds. It must read only the row.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)->LiveList<E>``.
    @inlinable
    public func filter(_ predicate: @escaping @Sendable (E) -> Bool) -> LiveQuery {
        var copy = self
        copy.filters.append(predicate)
        return copy
    }

    /// Sorts the rows by `keyPath` (ties in insertion order). With a limit, a member that
    /// leaves is replaced by walking an ordered index on the field when there is one and
    /// the source is the whole table or a range of the same field; otherwise from the
    /// source's rows.
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)->LiveList<E>``.
    @inlinable
    public func sorted<Key: Comparable & Sendable>(by keyPath: any KeyPath<E, Key> & Sendable, descending: Bool = false) -> LiveQuery {
        var copy = self
        copy.sort = LiveSort(field: keyPath, descending: descending)
        let read = fieldReader(keyPath)
        if descending {
            copy.makeRowEngine = { query, state, origin in
                let ordering = FieldOrdering<E, Key, DescendingPosition<Key>>(
                    query: query, keyPath: keyPath, read: read, storage: state.storage(named: query.table.name, as: E.self))
                return RowEngineHandle(RowWindow(query: query, ordering: ordering, state: state, origin: origin))
            }
        } else {
            copy.makeRowEngine = { query, state, origin in
                let ordering = FieldOrdering<E, Key, OrderedIndexKey<Key>>(
                    query: query, keyPath: keyPath, read: read, storage: state.storage(named: query.table.name, as: E.self))
                return RowEngineHandle(RowWindow(query: query, ordering: ordering, state: state, origin: origin))
            }
        }
        return copy
    }

    /// Keeps at most the first `count` rows (a negative count keeps none).
    /// - Complexity: O(1); the description is data, nothing runs until ``EntityStore/live(_:)->LiveList<E>``.
    @inlinable
    public func limit(_ count: Int) -> LiveQuery {
        var copy = self
        copy.limitValue = Swift.max(0, count)
        return copy
    }

    /// Whether a row belongs to the result, ignoring the limit, as one closure that
    /// engines keep (so a commit copies no query). O(filters) per call.
    @inlinable
    var qualifier: @Sendable (E) -> Bool {
        let contains = source.contains, filters = filters
        if filters.isEmpty { return contains ?? { _ in true } }
        return { entity in
            if let contains, !contains(entity) { return false }
            for filter in filters where !filter(entity) { return false }
            return true
        }
    }

    /// Whether `entity` belongs to the result, ignoring the limit. O(filters).
    @inlinable
    func qualifies(_ entity: E) -> Bool {
        if let contains = source.contains, !contains(entity) { return false }
        for filter in filters where !filter(entity) { return false }
        return true
    }
}

/// The sort of a live query, as data (the engine's ordering is built with it).
@usableFromInline
struct LiveSort: Sendable {
    @usableFromInline let field: any AnyKeyPath & Sendable
    @usableFromInline let descending: Bool

    @inlinable
    init(field: any AnyKeyPath & Sendable, descending: Bool) {
        self.field = field
        self.descending = descending
    }
}

/// A live query's source: what it selects, and the closures (compiled for the caller's
/// types by the inlinable builders) that test a row and read the source's rows from an
/// index.
@usableFromInline
struct LiveSource<E: Entity>: Sendable {
    @usableFromInline var kind: LiveQuery<E>.Operator = .all
    @usableFromInline var field: (any AnyKeyPath & Sendable)?
    @usableFromInline var value: (any Sendable)?
    /// Whether a row lies in the source; nil for every row.
    @usableFromInline var contains: (@Sendable (E) -> Bool)?
    /// The source's IDs read from an index (a key's group, a range), nil when no index
    /// answers (then the table is scanned). O(log n + k).
    @usableFromInline var candidates: (@Sendable (TableStorage<E>) -> [E.ID]?)?
    /// For an equality, where the watcher registry files the query.
    @usableFromInline var key: (field: KeyPathKey, key: WatchKey, reader: ChangedKeyReader)?
    /// For an equality, makes a reader of the key's group in a grouped index on the field
    /// of a table, or gives nil when the table has no such index.
    @usableFromInline var groupReader: (@Sendable (TableStorage<E>) -> (@Sendable (any AnyTableStorage) -> SortedMap<UInt64, E.ID>?)?)?
    /// For a range, its bounds as ordered-index keys (a `SortedMapRange<OrderedIndexKey<Key>>`).
    @usableFromInline var indexBounds: (any Sendable)?

    @inlinable
    init() {}

    /// Rows whose field equals `key`.
    @inlinable
    static func equality<Key: Hashable & Sendable>(
        _ keyPath: any KeyPath<E, Key> & Sendable, _ key: Key, read: @escaping @Sendable (E) -> Key,
        matches: @escaping @Sendable (E) -> Bool, candidates: @escaping @Sendable (TableStorage<E>) -> [E.ID]?
    ) -> LiveSource {
        var source = LiveSource()
        source.kind = .equals
        source.field = keyPath
        source.value = key
        source.contains = matches
        source.candidates = candidates
        source.key = (KeyPathKey(keyPath: keyPath), WatchKey(key), ChangedKeyReader(read))
        source.groupReader = { storage in storage.groupReader(key, for: keyPath) }
        return source
    }

    /// Rows whose field lies in `range`.
    @inlinable
    static func range<Key: Comparable & Sendable>(
        _ keyPath: any KeyPath<E, Key> & Sendable, _ range: some RangeExpression<Key> & Sendable,
        matches: @escaping @Sendable (E) -> Bool
    ) -> LiveSource {
        var source = LiveSource()
        source.kind = .range
        source.field = keyPath
        source.value = range
        source.contains = matches
        let bounds = sortedMapRange(of: range)
        source.indexBounds = bounds
        source.candidates = { storage in
            guard let bounds, let index = storage.orderedIndex(Key.self, at: storage.indexPositions(for: keyPath)) else { return nil }
            return index.entries.elements(in: bounds).map { $0.value }
        }
        return source
    }
}

/// The IDs whose field `keyPath` equals `key` read from an ordered index on it, in key
/// then insertion order, or nil without one. O(log n + k).
@inlinable
func orderedEqualIDs<E: Entity, Key: Comparable & Sendable>(
    _ key: Key, keyPath: AnyKeyPath, in storage: TableStorage<E>
) -> [E.ID]? {
    guard let index = storage.orderedIndex(Key.self, at: storage.indexPositions(for: keyPath)) else { return nil }
    let bounds = SortedMapRange(
        lowerBound: .included(OrderedIndexKey(key: key, sequence: 0)), upperBound: .included(OrderedIndexKey(key: key, sequence: .max)))
    return index.entries.elements(in: bounds).map { $0.value }
}

/// The standard library's ranges as an interval of ordered-index keys (value, then
/// insertion sequence); nil for another `RangeExpression` (the caller then scans).
@inlinable
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
