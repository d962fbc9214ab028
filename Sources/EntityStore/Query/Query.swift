import HashTreeCollections
/// A query over one table: conditions, order, paging. Built with chained calls and run by
/// reading `results`, `ids`, `count`, `first` or `exists`.
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
/// Cost: building a query costs nothing per row and computes no text (``plan`` does, on
/// demand). Running it starts from the cheapest source an index offers, read lazily:
/// - an equality on a unique or grouped index (O(1) to find, then O(1) per row), or on
///   an ordered index (O(log n));
/// - a range on an ordered index (O(log n), then O(1) per row), streamed in the index's
///   order when the query sorts by that field, so a top-k of a range is O(log n + k);
/// - with no such condition, an ordered index on the sort field (top-k in O(log n + k));
/// - else a scan in insertion order (O(n)), which stops at the limit when unsorted.
/// Remaining conditions filter the candidates as they stream. Any other sort is
/// O(m log m) over the m matches. `count` of one indexed equality is O(1), of one indexed
/// range O(log n), and otherwise walks the candidates without building entities.
public struct Query<E: Entity>: Sendable {
    struct Condition: Sendable {
        /// The condition's text, for ``plan`` (computed only there).
        let describe: @Sendable () -> String
        let matches: @Sendable (E) -> Bool
        /// Candidate IDs from an index, or nil if no index answers.
        let candidates: @Sendable (TableStorage<E>) -> QueryCandidates<E>?
        /// The condition's range on an ordered index, streamed in key order (`descending`
        /// reverses it), when it restricts `field`; nil otherwise.
        var field: KeyPathKey? = nil
        var orderedRange: (@Sendable (TableStorage<E>, _ descending: Bool) -> AnySequenceOfIDs<E>?)? = nil
        var rangeCount: (@Sendable (TableStorage<E>) -> Int?)? = nil
        /// The same condition on a live query (its source when it has none yet); nil: a
        /// filter with ``matches``.
        var live: (@Sendable (LiveQuery<E>) -> LiveQuery<E>)? = nil

        init(
            describe: @escaping @Sendable () -> String, matches: @escaping @Sendable (E) -> Bool,
            candidates: @escaping @Sendable (TableStorage<E>) -> QueryCandidates<E>?
        ) {
            self.describe = describe
            self.matches = matches
            self.candidates = candidates
        }

        /// A condition whose candidates are an array of IDs (dynamic-record fields).
        init(description: String, matches: @escaping @Sendable (E) -> Bool, candidates: @escaping @Sendable (TableStorage<E>) -> [E.ID]?) {
            self.init(describe: { description }, matches: matches) { storage in
                candidates(storage).map { ids in QueryCandidates(count: ids.count, isInsertionOrder: false) { AnySequenceOfIDs(ids) } }
            }
        }
    }

    struct Ordering: Sendable {
        let describe: @Sendable () -> String
        let areInIncreasingOrder: @Sendable (E, E) -> Bool
        /// IDs in this order from an ordered index, or nil if none answers.
        let indexOrder: @Sendable (TableStorage<E>) -> AnySequenceOfIDs<E>?
        /// The field it sorts by, and whether descending.
        var field: KeyPathKey? = nil
        var descending = false
        /// The same order on a live query; nil when a live query cannot follow it.
        var live: (@Sendable (LiveQuery<E>) -> LiveQuery<E>)? = nil
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

    /// Keeps entities whose field `keyPath` equals `value`. O(1) to add.
    public func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.candidatesEqual(value, usingIndexesAt: $0.indexPositions(for: keyPath)) })
        condition.live = Self.liveEquality(keyPath, value)
        return adding(condition)
    }

    /// An equality as a live query's source, or as a filter once it has one.
    private static func liveEquality<Value: Hashable & Sendable>(
        _ keyPath: any KeyPath<E, Value> & Sendable, _ value: Value
    ) -> @Sendable (LiveQuery<E>) -> LiveQuery<E> {
        { live in live.sourceOperator == .all ? live.where(keyPath, equals: value) : live.filter { $0[keyPath: keyPath] == value } }
    }

    /// Keeps entities whose field `keyPath` equals `value`; an ordered index on the field
    /// answers too. O(1) to add.
    public func `where`<Value: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.comparableCandidatesEqual(value, usingIndexesAt: $0.indexPositions(for: keyPath)) })
        condition.live = Self.liveEquality(keyPath, value)
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` equals `value`. O(1) to add.
    public func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable, equals value: Value) -> Query {
        adding(Condition(
            describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.candidatesEqual(value, usingIndexesAt: $0.indexPositions(for: keyPath)) }))
    }

    /// Keeps entities whose optional field `keyPath` equals `value`; an ordered index on
    /// the field answers too. O(1) to add.
    public func `where`<Value: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable, equals value: Value) -> Query {
        adding(Condition(
            describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.comparableCandidatesEqual(value, usingIndexesAt: $0.indexPositions(for: keyPath)) }))
    }

    /// Keeps entities whose field `keyPath` lies in `range` (`a...b`, `a..<b`, `a...`, `..<b`, `...b`).
    public func `where`<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value> & Sendable, in range: Bounds
    ) -> Query {
        let bounds = SortedMapRange(bounding: range)
        var condition = Self.rangeCondition(keyPath, bounds, describe: { "\(fieldPath(of: keyPath)) in \(range)" }) {
            bounds.contains($0[keyPath: keyPath])
        }
        condition.live = { live in
            live.sourceOperator == .all ? live.where(keyPath, in: range) : live.filter { bounds.contains($0[keyPath: keyPath]) }
        }
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` is non-nil and lies in `range`.
    public func `where`<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value?> & Sendable, in range: Bounds
    ) -> Query {
        let bounds = SortedMapRange(bounding: range)
        return adding(Self.rangeCondition(keyPath, bounds, describe: { "\(fieldPath(of: keyPath)) in \(range)" }) {
            $0[keyPath: keyPath].map(bounds.contains) ?? false
        })
    }

    /// A range condition answered by an ordered index on `keyPath` when there is one.
    private static func rangeCondition<Value: Comparable & Sendable>(
        _ keyPath: any AnyKeyPath & Sendable, _ bounds: SortedMapRange<Value>, describe: @escaping @Sendable () -> String,
        matches: @escaping @Sendable (E) -> Bool
    ) -> Condition {
        var condition = Condition(describe: describe, matches: matches) { storage in
            guard let index = storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath)) else { return nil }
            return QueryCandidates(count: nil, isInsertionOrder: false) { index.lazyIDs(in: bounds, descending: false) }
        }
        condition.field = KeyPathKey(keyPath: keyPath)
        condition.orderedRange = { storage, descending in
            storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath))?.lazyIDs(in: bounds, descending: descending)
        }
        condition.rangeCount = { storage in
            storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath))?.count(in: bounds)
        }
        return condition
    }

    /// Keeps entities for which `predicate` is true (always a filter, never an index).
    public func filter(_ description: String = "filter", _ predicate: @escaping @Sendable (E) -> Bool) -> Query {
        adding(Condition(describe: { description }, matches: predicate, candidates: { _ in nil }))
    }

    /// Orders the results by `keyPath`; ties keep insertion order. O(1) to add.
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
            describe: { fieldPath(of: keyPath) + (descending ? " desc" : "") },
            areInIncreasingOrder: increasing, indexOrder: indexOrder, field: KeyPathKey(keyPath: keyPath), descending: descending,
            live: { $0.sorted(by: keyPath, descending: descending) })
        return copy
    }

    /// Skips the first `count` results. O(1) to add.
    public func offset(_ count: Int) -> Query {
        var copy = self
        copy.offsetCount = Swift.max(0, count)
        return copy
    }

    /// Returns at most `count` results. O(1) to add.
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
}
