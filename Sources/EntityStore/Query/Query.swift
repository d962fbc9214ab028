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
        /// The order of this condition's index candidates as a live query's sort (its
        /// field ascending), so that an unsorted query read from them keeps its order when
        /// made live; nil when a live query cannot follow that order.
        @usableFromInline var liveIndexOrder: (@Sendable (LiveQuery<E>) -> LiveQuery<E>)? = nil

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
    public consuming func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> Query {
        // One box for all the condition's closures (see `Captured`).
        let term = Captured((keyPath: keyPath, value: value))
        var condition = Condition(
            describe: { "\(fieldPath(of: term.value.keyPath)) = \(term.value.value)" },
            matches: { $0[keyPath: term.value.keyPath] == term.value.value },
            candidates: { $0.candidatesEqual(term.value.value, for: term.value.keyPath) })
        condition.indexCount = { $0.hashedCount(of: term.value.value, for: term.value.keyPath) }
        condition.live = Self.liveEquality(term)
        return adding(condition)
    }

    /// An equality as a live query's source, or as a filter once it has one.
    @inlinable
    static func liveEquality<Value: Hashable & Sendable>(
        _ term: Captured<(keyPath: any KeyPath<E, Value> & Sendable, value: Value)>
    ) -> @Sendable (LiveQuery<E>) -> LiveQuery<E> {
        { live in
            let (keyPath, value) = term.value
            return live.sourceOperator == .all ? live.where(keyPath, equals: value) : live.filter { $0[keyPath: keyPath] == value }
        }
    }

    /// Keeps entities whose field `keyPath` equals `value`; an ordered index on the field
    /// answers too.
    /// - Complexity: O(1) to add. Run: O(1) to find the key in a unique or grouped index,
    ///   O(log n) in an ordered one, then O(1) per row; O(n) without an index. Its `count`
    ///   alone is O(1) or O(log n) with those indexes.
    @inlinable
    public consuming func `where`<Value: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> Query {
        let term = Captured((keyPath: keyPath, value: value))
        var condition = Condition(
            describe: { "\(fieldPath(of: term.value.keyPath)) = \(term.value.value)" },
            matches: { $0[keyPath: term.value.keyPath] == term.value.value },
            candidates: { $0.comparableCandidatesEqual(term.value.value, for: term.value.keyPath) })
        condition.indexCount = { $0.comparableCount(of: term.value.value, for: term.value.keyPath) }
        condition.live = Self.liveEquality(term)
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` equals `value`.
    /// - Complexity: O(1) to add. Run: O(1) to find the key in a unique or grouped index on
    ///   the field, then O(1) per row; O(n) without one.
    @inlinable
    public consuming func `where`<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable, equals value: Value) -> Query {
        let term = Captured((keyPath: keyPath, value: value))
        var condition = Condition(
            describe: { "\(fieldPath(of: term.value.keyPath)) = \(term.value.value)" },
            matches: { $0[keyPath: term.value.keyPath] == term.value.value },
            candidates: { $0.candidatesEqual(term.value.value, for: term.value.keyPath) })
        condition.indexCount = { $0.hashedCount(of: term.value.value, for: term.value.keyPath) }
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` equals `value`; an ordered index on
    /// the field answers too.
    /// - Complexity: O(1) to add. Run: O(1) to find the key in a unique or grouped index,
    ///   O(log n) in an ordered one, then O(1) per row; O(n) without an index.
    @inlinable
    public consuming func `where`<Value: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Value?> & Sendable, equals value: Value) -> Query {
        let term = Captured((keyPath: keyPath, value: value))
        var condition = Condition(
            describe: { "\(fieldPath(of: term.value.keyPath)) = \(term.value.value)" },
            matches: { $0[keyPath: term.value.keyPath] == term.value.value },
            candidates: { $0.comparableCandidatesEqual(term.value.value, for: term.value.keyPath) })
        condition.indexCount = { $0.comparableCount(of: term.value.value, for: term.value.keyPath) }
        return adding(condition)
    }

    /// Keeps entities whose field `keyPath` lies in `range` (`a...b`, `a..<b`, `a...`, `..<b`, `...b`).
    /// - Complexity: O(1) to add. Run: with an ordered index on the field, O(log n) to find
    ///   the range, then O(1) per row (a top-k of the range sorted by the field is
    ///   O(log n + k), and its `count` alone O(log n)); O(n) without one.
    @inlinable
    public consuming func `where`<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value> & Sendable, in range: Bounds
    ) -> Query {
        let term = Captured((keyPath: keyPath, bounds: SortedMapRange(bounding: range), range: range))
        var condition = Self.rangeCondition(term, describe: { "\(fieldPath(of: term.value.keyPath)) in \(term.value.range)" }) {
            term.value.bounds.contains($0[keyPath: term.value.keyPath])
        }
        condition.live = { live in
            let (keyPath, bounds, range) = term.value
            return live.sourceOperator == .all
                ? live.where(keyPath, in: range) : live.filter { bounds.contains($0[keyPath: keyPath]) }
        }
        condition.liveIndexOrder = { $0.sorted(by: term.value.keyPath) }
        return adding(condition)
    }

    /// Keeps entities whose optional field `keyPath` is non-nil and lies in `range`.
    /// - Complexity: as ``where(_:in:)``.
    @inlinable
    public consuming func `where`<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value?> & Sendable, in range: Bounds
    ) -> Query {
        let term = Captured((keyPath: keyPath, bounds: SortedMapRange(bounding: range), range: range))
        return adding(Self.rangeCondition(term, describe: { "\(fieldPath(of: term.value.keyPath)) in \(term.value.range)" }) {
            $0[keyPath: term.value.keyPath].map(term.value.bounds.contains) ?? false
        })
    }

    /// A range condition answered by an ordered index on the term's key path when there is one.
    @inlinable
    static func rangeCondition<Path: AnyKeyPath & Sendable, Value: Comparable & Sendable, Bounds: Sendable>(
        _ term: Captured<(keyPath: Path, bounds: SortedMapRange<Value>, range: Bounds)>,
        describe: @escaping @Sendable () -> String, matches: @escaping @Sendable (E) -> Bool
    ) -> Condition {
        var condition = Condition(describe: describe, matches: matches) { storage in
            guard let index = storage.orderedEntries(Value.self, for: term.value.keyPath) else { return nil }
            return QueryCandidates(count: nil, ids: index.walk(in: term.value.bounds, descending: false))
        }
        condition.field = KeyPathKey(keyPath: term.value.keyPath)
        condition.orderedRange = { storage, descending in
            storage.orderedEntries(Value.self, for: term.value.keyPath)?.walk(in: term.value.bounds, descending: descending)
        }
        condition.indexCount = { storage in storage.orderedEntries(Value.self, for: term.value.keyPath)?.count(in: term.value.bounds) }
        return condition
    }

    /// Keeps entities for which `predicate` is true (always a filter, never an index).
    /// - Complexity: O(1) to add; `predicate` runs once per candidate the query's other
    ///   conditions leave (every row, O(n), when none is indexed).
    @inlinable
    public consuming func filter(_ description: String = "filter", _ predicate: @escaping @Sendable (E) -> Bool) -> Query {
        adding(Condition(describe: { description }, matches: predicate, candidates: { _ in nil }))
    }

    /// Orders the results by `keyPath`; ties keep insertion order. Rows whose key is not
    /// equal to itself (a floating-point NaN) come last, in insertion order, ascending or
    /// descending.
    /// - Complexity: O(1) to add. Run: streamed in order from an ordered index on the
    ///   field when the query's source is that index (O(log n + k) for a top-k); otherwise
    ///   O(m log m) over the m matches.
    @inlinable
    public consuming func sorted<Value: Comparable & Sendable>(by keyPath: any KeyPath<E, Value> & Sendable, descending: Bool = false) -> Query {
        let term = Captured((keyPath: keyPath, descending: descending))
        let increasing: @Sendable (E, E) -> Bool = { lhs, rhs in
            let left = lhs[keyPath: term.value.keyPath], right = rhs[keyPath: term.value.keyPath]
            // A key not equal to itself (NaN) sorts after every other in either direction,
            // as an ordered index walks it.
            if left != left || right != right { return left == left }
            return term.value.descending ? right < left : left < right
        }
        self.ordering = Ordering(
            describe: { fieldPath(of: term.value.keyPath) + (term.value.descending ? " desc" : "") }, areInIncreasingOrder: increasing,
            indexWalk: { storage in storage.orderedEntries(Value.self, for: term.value.keyPath)?.walkAll(descending: term.value.descending) },
            field: KeyPathKey(keyPath: keyPath), descending: descending,
            live: { $0.sorted(by: term.value.keyPath, descending: term.value.descending) })
        return self
    }

    /// Skips the first `count` results. O(1) to add.
    @inlinable
    public consuming func offset(_ count: Int) -> Query {
        self.offsetCount = Swift.max(0, count)
        return self
    }

    /// Returns at most `count` results. O(1) to add.
    @inlinable
    public consuming func limit(_ count: Int) -> Query {
        self.limitCount = Swift.max(0, count)
        return self
    }

    /// Adds a condition built elsewhere (dynamic-record fields).
    @inlinable
    consuming func adding(_ condition: Condition) -> Query {
        self.conditions.append(condition)
        return self
    }
}

/// Values captured once for the several closures of one condition or order. A closure
/// that captures a single class reference uses it as its context, so the closures share
/// this one allocation instead of each boxing its own copy of the values.
@usableFromInline
final class Captured<Value: Sendable>: Sendable {
    @usableFromInline let value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
