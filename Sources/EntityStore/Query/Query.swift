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
/// - else a scan in insertion order (O(n)).
/// Remaining conditions filter the candidates as they stream. A query without a sort, or
/// whose source is already in its order, stops reading at its limit; any other sort is
/// O(m log m) over the m matches. `count` of one indexed equality is O(1) (O(log n) on an
/// ordered index), of one indexed range O(log n), and otherwise walks the candidates.
///
/// A query without a sort returns its matches in its source's order: insertion order for
/// a lookup in a unique or grouped index and for a scan, key order (ties in insertion
/// order) for an ordered index, the keys' order for ``where(_:oneOf:)``.
///
/// The builders and the run are compiled for the caller's entity and field types
/// (`@inlinable`), so the per-row work runs specialized code.
public struct Query<E: Entity>: Sendable {
    @usableFromInline
    struct Condition: Sendable {
        /// The condition's text, for ``plan`` (computed only there).
        @usableFromInline let describe: @Sendable () -> String
        @usableFromInline let matches: @Sendable (E) -> Bool
        /// Candidate IDs from an index, or nil if no index answers.
        @usableFromInline let candidates: @Sendable (TableStorage<E>) -> QueryCandidates<E>?
        /// The condition's range on an ordered index, walked in key order (`descending`
        /// reverses it), when it restricts `field`; nil otherwise.
        @usableFromInline var field: KeyPathKey? = nil
        @usableFromInline var orderedRange: (@Sendable (TableStorage<E>, _ descending: Bool) -> IDWalk<E>?)? = nil
        /// The number of matches, when an index knows it without walking them; nil
        /// otherwise (then the candidates' own count, if any, is used).
        @usableFromInline var indexCount: (@Sendable (TableStorage<E>) -> Int?)? = nil
        /// The same condition on a live query (its source when it has none yet); nil: a
        /// filter with ``matches``.
        @usableFromInline var live: (@Sendable (LiveQuery<E>) -> LiveQuery<E>)? = nil

        @inlinable
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
                candidates(storage).map { ids in QueryCandidates(count: ids.count, ids: IDWalk(ids)) }
            }
        }
    }

    @usableFromInline
    struct Ordering: Sendable {
        @usableFromInline let describe: @Sendable () -> String
        @usableFromInline let areInIncreasingOrder: @Sendable (E, E) -> Bool
        /// IDs in this order from an ordered index, or nil if none answers.
        @usableFromInline let indexOrder: @Sendable (TableStorage<E>) -> IDWalk<E>?
        /// The field it sorts by, and whether descending.
        @usableFromInline var field: KeyPathKey? = nil
        @usableFromInline var descending = false
        /// The same order on a live query; nil when a live query cannot follow it.
        @usableFromInline var live: (@Sendable (LiveQuery<E>) -> LiveQuery<E>)? = nil

        @inlinable
        init(
            describe: @escaping @Sendable () -> String, areInIncreasingOrder: @escaping @Sendable (E, E) -> Bool,
            indexWalk: @escaping @Sendable (TableStorage<E>) -> IDWalk<E>?, field: KeyPathKey?, descending: Bool,
            live: (@Sendable (LiveQuery<E>) -> LiveQuery<E>)?
        ) {
            self.describe = describe
            self.areInIncreasingOrder = areInIncreasingOrder
            self.indexOrder = indexWalk
            self.field = field
            self.descending = descending
            self.live = live
        }

        /// An order whose index walk is a sequence of IDs (dynamic-record fields).
        init(
            describe: @escaping @Sendable () -> String, areInIncreasingOrder: @escaping @Sendable (E, E) -> Bool,
            indexOrder: @escaping @Sendable (TableStorage<E>) -> AnySequenceOfIDs<E>?
        ) {
            self.init(
                describe: describe, areInIncreasingOrder: areInIncreasingOrder,
                indexWalk: { storage in indexOrder(storage).map { IDWalk($0) } }, field: nil, descending: false, live: nil)
        }
    }

    @usableFromInline let storage: TableStorage<E>
    @usableFromInline var conditions: [Condition] = []
    @usableFromInline var ordering: Ordering?
    @usableFromInline var offsetCount = 0
    @usableFromInline var limitCount: Int?

    @inlinable
    init(storage: TableStorage<E>) {
        self.storage = storage
    }

    // MARK: Building

    /// Keeps entities whose field `keyPath` equals `value`.
    /// - Complexity: O(1) to add. Run: O(1) to find the key in a unique or grouped index on
    ///   the field, then O(1) per row; O(n) without one.
    @inlinable
    public func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.candidatesEqual(value, for: keyPath) })
        condition.indexCount = { $0.hashedCount(of: value, for: keyPath) }
        condition.live = Self.liveEquality(keyPath, value)
        return adding(condition)
    }

    /// An equality as a live query's source, or as a filter once it has one.
    @inlinable
    static func liveEquality<Value: Hashable & Sendable>(
        _ keyPath: any KeyPath<E, Value> & Sendable, _ value: Value
    ) -> @Sendable (LiveQuery<E>) -> LiveQuery<E> {
        { live in live.sourceOperator == .all ? live.where(keyPath, equals: value) : live.filter { $0[keyPath: keyPath] == value } }
    }

    /// Keeps entities whose field `keyPath` equals `value`; an ordered index on the field
    /// answers too.
    /// - Complexity: O(1) to add. Run: O(1) to find the key in a unique or grouped index,
    ///   O(log n) in an ordered one, then O(1) per row; O(n) without an index. Its `count`
    ///   alone is O(1) or O(log n) with those indexes.
    @inlinable
    public func `where`<Value: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.comparableCandidatesEqual(value, for: keyPath) })
        condition.indexCount = { $0.comparableCount(of: value, for: keyPath) }
        condition.live = Self.liveEquality(keyPath, value)
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` equals `value`.
    /// - Complexity: O(1) to add. Run: O(1) to find the key in a unique or grouped index on
    ///   the field, then O(1) per row; O(n) without one.
    @inlinable
    public func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable, equals value: Value) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.candidatesEqual(value, for: keyPath) })
        condition.indexCount = { $0.hashedCount(of: value, for: keyPath) }
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` equals `value`; an ordered index on
    /// the field answers too.
    /// - Complexity: O(1) to add. Run: O(1) to find the key in a unique or grouped index,
    ///   O(log n) in an ordered one, then O(1) per row; O(n) without an index.
    @inlinable
    public func `where`<Value: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable, equals value: Value) -> Query {
        var condition = Condition(
            describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            matches: { $0[keyPath: keyPath] == value },
            candidates: { $0.comparableCandidatesEqual(value, for: keyPath) })
        condition.indexCount = { $0.comparableCount(of: value, for: keyPath) }
        return adding(condition)
    }

    /// Keeps entities whose field `keyPath` lies in `range` (`a...b`, `a..<b`, `a...`, `..<b`, `...b`).
    /// - Complexity: O(1) to add. Run: with an ordered index on the field, O(log n) to find
    ///   the range, then O(1) per row (a top-k of the range sorted by the field is
    ///   O(log n + k), and its `count` alone O(log n)); O(n) without one.
    @inlinable
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
    /// - Complexity: as ``where(_:in:)``.
    @inlinable
    public func `where`<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value?> & Sendable, in range: Bounds
    ) -> Query {
        let bounds = SortedMapRange(bounding: range)
        return adding(Self.rangeCondition(keyPath, bounds, describe: { "\(fieldPath(of: keyPath)) in \(range)" }) {
            $0[keyPath: keyPath].map(bounds.contains) ?? false
        })
    }

    /// A range condition answered by an ordered index on `keyPath` when there is one.
    @inlinable
    static func rangeCondition<Value: Comparable & Sendable>(
        _ keyPath: any AnyKeyPath & Sendable, _ bounds: SortedMapRange<Value>, describe: @escaping @Sendable () -> String,
        matches: @escaping @Sendable (E) -> Bool
    ) -> Condition {
        var condition = Condition(describe: describe, matches: matches) { storage in
            guard let index = storage.orderedIndex(Value.self, for: keyPath) else { return nil }
            return QueryCandidates(count: nil, ids: index.walk(in: bounds, descending: false))
        }
        condition.field = KeyPathKey(keyPath: keyPath)
        condition.orderedRange = { storage, descending in
            storage.orderedIndex(Value.self, for: keyPath)?.walk(in: bounds, descending: descending)
        }
        condition.indexCount = { storage in storage.orderedIndex(Value.self, for: keyPath)?.count(in: bounds) }
        return condition
    }

    /// Keeps entities for which `predicate` is true (always a filter, never an index).
    /// - Complexity: O(1) to add; `predicate` runs once per candidate the query's other
    ///   conditions leave (every row, O(n), when none is indexed).
    @inlinable
    public func filter(_ description: String = "filter", _ predicate: @escaping @Sendable (E) -> Bool) -> Query {
        adding(Condition(describe: { description }, matches: predicate, candidates: { _ in nil }))
    }

    /// Orders the results by `keyPath`; ties keep insertion order.
    /// - Complexity: O(1) to add. Run: streamed in order from an ordered index on the
    ///   field when the query's source is that index (O(log n + k) for a top-k); otherwise
    ///   O(m log m) over the m matches.
    @inlinable
    public func sorted<Value: Comparable & Sendable>(by keyPath: any KeyPath<E, Value> & Sendable, descending: Bool = false) -> Query {
        let increasing: @Sendable (E, E) -> Bool = { lhs, rhs in
            let left = lhs[keyPath: keyPath], right = rhs[keyPath: keyPath]
            return descending ? right < left : left < right
        }
        var copy = self
        copy.ordering = Ordering(
            describe: { fieldPath(of: keyPath) + (descending ? " desc" : "") }, areInIncreasingOrder: increasing,
            indexWalk: { storage in storage.orderedIndex(Value.self, for: keyPath)?.walkAll(descending: descending) },
            field: KeyPathKey(keyPath: keyPath), descending: descending,
            live: { $0.sorted(by: keyPath, descending: descending) })
        return copy
    }

    /// Skips the first `count` results. O(1) to add.
    @inlinable
    public func offset(_ count: Int) -> Query {
        var copy = self
        copy.offsetCount = Swift.max(0, count)
        return copy
    }

    /// Returns at most `count` results. O(1) to add.
    @inlinable
    public func limit(_ count: Int) -> Query {
        var copy = self
        copy.limitCount = Swift.max(0, count)
        return copy
    }

    /// Adds a condition built elsewhere (dynamic-record fields).
    @inlinable
    func adding(_ condition: Condition) -> Query {
        var copy = self
        copy.conditions.append(condition)
        return copy
    }
}
