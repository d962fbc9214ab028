import HashTreeCollections
/// A query over one table: conditions, order, paging. Built with chained calls and run by
/// reading `results`, `ids`, `count` or `first`.
///
/// ```swift
/// let recent = store.state[books].query()
///     .where(\.authorID, equals: 42)
///     .where(\.published, in: 2000...)
///     .sorted(by: \.published, descending: true)
///     .limit(10)
///     .results
/// ```
///
/// Cost: the query starts from the most selective index it can use: an equality
/// condition on a unique or grouped index (O(log n + k)), else a range condition on an
/// ordered index (O(log n + k)), else a scan (O(n)). Remaining conditions filter those
/// candidates. A sort on an ordered index with no other source streams in index order
/// and stops at the limit (top-k in O(log n + k)); any other sort is O(m log m) over the m
/// candidates. ``plan`` says which path a query takes.
public struct Query<E: Entity>: Sendable {
    struct Condition: Sendable {
        let description: String
        let matches: @Sendable (E) -> Bool
        /// Candidate IDs from an index, or nil if no index answers.
        let candidates: @Sendable (TableStorage<E>) -> [E.ID]?
    }

    struct Ordering: Sendable {
        let description: String
        let areInIncreasingOrder: @Sendable (E, E) -> Bool
        /// IDs in this order from an ordered index, or nil if none answers.
        let indexOrder: @Sendable (TableStorage<E>) -> AnySequenceOfIDs<E>?
    }

    let storage: TableStorage<E>
    var conditions: [Condition] = []
    var ordering: Ordering?
    var offsetCount = 0
    var limitCount: Int?

    init(storage: TableStorage<E>) {
        self.storage = storage
    }

    // MARK: Building

    /// Keeps entities whose field `keyPath` equals `value`.
    public func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> Query {
        adding(Condition(
            description: "\(fieldPath(of: keyPath)) = \(value)",
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.idsEqual(value, usingIndexesAt: $0.indexPositions(for: keyPath)) }))
    }

    /// Keeps entities whose optional field `keyPath` equals `value`.
    public func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable, equals value: Value) -> Query {
        adding(Condition(
            description: "\(fieldPath(of: keyPath)) = \(value)",
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.idsEqual(value, usingIndexesAt: $0.indexPositions(for: keyPath)) }))
    }

    /// Keeps entities whose field `keyPath` lies in `range` (`a...b`, `a..<b`, `a...`, `..<b`, `...b`).
    public func `where`<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value> & Sendable, in range: Bounds
    ) -> Query {
        let bounds = SortedMapRange(bounding: range)
        return adding(Condition(
            description: "\(fieldPath(of: keyPath)) in \(range)",
            matches: { bounds.contains($0[keyPath: keyPath]) },
            candidates: { storage in
                storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath))?.ids(in: bounds)
            }))
    }

    /// Keeps entities whose optional field `keyPath` is non-nil and lies in `range`.
    public func `where`<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value?> & Sendable, in range: Bounds
    ) -> Query {
        let bounds = SortedMapRange(bounding: range)
        return adding(Condition(
            description: "\(fieldPath(of: keyPath)) in \(range)",
            matches: { $0[keyPath: keyPath].map(bounds.contains) ?? false },
            candidates: { storage in
                storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath))?.ids(in: bounds)
            }))
    }

    /// Keeps entities for which `predicate` is true (always a filter, never an index).
    public func filter(_ description: String = "filter", _ predicate: @escaping @Sendable (E) -> Bool) -> Query {
        adding(Condition(description: description, matches: predicate, candidates: { _ in nil }))
    }

    /// Orders the results by `keyPath`; ties keep insertion order.
    public func sorted<Value: Comparable & Sendable>(by keyPath: any KeyPath<E, Value> & Sendable, descending: Bool = false) -> Query {
        let increasing: @Sendable (E, E) -> Bool = { lhs, rhs in
            let left = lhs[keyPath: keyPath], right = rhs[keyPath: keyPath]
            return descending ? right < left : left < right
        }
        let indexOrder: @Sendable (TableStorage<E>) -> AnySequenceOfIDs<E>? = { storage in
            guard let index = storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath)) else { return nil }
            return index.allIDs(descending: descending)
        }
        var copy = self
        copy.ordering = Ordering(
            description: fieldPath(of: keyPath) + (descending ? " desc" : ""),
            areInIncreasingOrder: increasing, indexOrder: indexOrder)
        return copy
    }

    /// Skips the first `count` results.
    public func offset(_ count: Int) -> Query {
        var copy = self
        copy.offsetCount = Swift.max(0, count)
        return copy
    }

    /// Returns at most `count` results.
    public func limit(_ count: Int) -> Query {
        var copy = self
        copy.limitCount = Swift.max(0, count)
        return copy
    }

    /// Adds a condition built elsewhere (dynamic-record fields).
    func adding(_ condition: Condition) -> Query {
        var copy = self
        copy.conditions.append(condition)
        return copy
    }

    // MARK: Running

    /// How the query runs: the index it starts from, or a scan.
    public var plan: String {
        let source: String
        if let (position, _) = indexedSource() {
            source = "index lookup (\(conditions[position].description))"
        } else if let ordering, ordering.indexOrder(storage) != nil {
            source = "ordered index scan (\(ordering.description))"
        } else {
            source = "table scan"
        }
        return source
    }

    /// The matching entities, ordered and paged.
    public var results: [E] {
        if let (position, ids) = indexedSource() {
            var entities = storage.entities(for: ids)
            let rest = conditions.indices.filter { $0 != position }.map { conditions[$0].matches }
            if !rest.isEmpty { entities = entities.filter { entity in rest.allSatisfy { $0(entity) } } }
            return page(sortIfNeeded(entities))
        }
        let matches = conditions.map { $0.matches }
        let accept: (E) -> Bool = { entity in matches.allSatisfy { $0(entity) } }
        if let ordering, let ordered = ordering.indexOrder(storage) {
            // Stream in index order and stop as soon as the page is full.
            let wanted = limitCount.map { offsetCount + $0 }
            var collected: [E] = []
            for id in ordered {
                if let wanted, collected.count >= wanted { break }
                if let entity = storage.rows[id]?.value, accept(entity) { collected.append(entity) }
            }
            return Array(collected.dropFirst(offsetCount))
        }
        var entities: [E] = []
        for (_, id) in storage.order {
            if let entity = storage.rows[id]?.value, accept(entity) { entities.append(entity) }
        }
        return page(sortIfNeeded(entities))
    }

    /// The IDs of the matching entities, ordered and paged.
    public var ids: [E.ID] { results.map { $0.id } }

    /// The number of matching entities (ignoring offset and limit).
    public var count: Int {
        var unpaged = self
        unpaged.offsetCount = 0
        unpaged.limitCount = nil
        unpaged.ordering = nil
        if conditions.count == 1, let (_, ids) = indexedSource() { return ids.count }
        return unpaged.results.count
    }

    /// The first matching entity in the query's order.
    public var first: E? { limit(1).results.first }

    /// The first condition an index can answer, with its candidate IDs.
    private func indexedSource() -> (Int, [E.ID])? {
        for (position, condition) in conditions.enumerated() {
            if let ids = condition.candidates(storage) { return (position, ids) }
        }
        return nil
    }

    private func sortIfNeeded(_ entities: [E]) -> [E] {
        guard let ordering else { return entities }
        // Sorting the enumerated pairs keeps ties in their incoming (insertion) order.
        return entities.enumerated().sorted { lhs, rhs in
            if ordering.areInIncreasingOrder(lhs.element, rhs.element) { return true }
            if ordering.areInIncreasingOrder(rhs.element, lhs.element) { return false }
            return lhs.offset < rhs.offset
        }.map { $0.element }
    }

    private func page(_ entities: [E]) -> [E] {
        let dropped = entities.dropFirst(offsetCount)
        return Array(limitCount.map { dropped.prefix($0) } ?? dropped)
    }
}

/// A type-erased sequence of IDs (an ordered index walk).
struct AnySequenceOfIDs<E: Entity>: Sequence {
    private let makeIteratorBody: () -> AnyIterator<E.ID>

    init<S: Sequence>(_ sequence: S) where S.Element == E.ID {
        makeIteratorBody = { AnyIterator(sequence.makeIterator()) }
    }

    func makeIterator() -> AnyIterator<E.ID> { makeIteratorBody() }
}

extension SortedMapRange {
    /// The interval a standard range expression describes.
    init(bounding range: some RangeExpression<Key>) {
        switch range {
        case let range as Range<Key>: self.init(range)
        case let range as ClosedRange<Key>: self.init(range)
        case let range as PartialRangeFrom<Key>: self.init(range)
        case let range as PartialRangeThrough<Key>: self.init(range)
        case let range as PartialRangeUpTo<Key>: self.init(range)
        default: self.init()
        }
    }
}
