/// A condition that composes with `&&`, `||` and `!`, for ``Query/where(_:)``:
///
/// ```swift
/// let picks = state[books].query()
///     .where(.field(\.authorID, equals: 1) || .field(\.authorID, equals: 2) && !.field(\.year, in: ..<1970))
///     .results
/// ```
///
/// Index-aware as its parts are: an `&&` starts from a part an index answers, an `||`
/// from the union of its parts' index candidates when both have some (each row once).
public struct QueryPredicate<E: Entity>: Sendable {
    @usableFromInline let matches: @Sendable (E) -> Bool
    @usableFromInline let describe: @Sendable () -> String
    @usableFromInline let candidates: @Sendable (TableStorage<E>) -> QueryCandidates<E>?

    @inlinable
    init(
        matches: @escaping @Sendable (E) -> Bool, describe: @escaping @Sendable () -> String,
        candidates: @escaping @Sendable (TableStorage<E>) -> QueryCandidates<E>?
    ) {
        self.matches = matches
        self.describe = describe
        self.candidates = candidates
    }

    /// Entities whose field `keyPath` equals `value`; a unique or grouped index answers it.
    /// - Complexity: O(1) to build. Answered by an index: O(1) to find the key, then O(1)
    ///   per row; a filter otherwise (O(1) per candidate).
    @inlinable
    public static func field<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> QueryPredicate {
        QueryPredicate(
            matches: { $0[keyPath: keyPath] == value }, describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            candidates: { $0.candidatesEqual(value, for: keyPath) })
    }

    /// Entities whose field `keyPath` lies in `range`; an ordered index answers it.
    /// - Complexity: O(1) to build. Answered by an ordered index: O(log n) to find the
    ///   range, then O(1) per row; a filter otherwise (O(1) per candidate).
    @inlinable
    public static func field<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value> & Sendable, in range: Bounds
    ) -> QueryPredicate {
        let bounds = SortedMapRange(bounding: range)
        return QueryPredicate(
            matches: { bounds.contains($0[keyPath: keyPath]) }, describe: { "\(fieldPath(of: keyPath)) in \(range)" },
            candidates: { storage in
                guard let index = storage.orderedEntries(Value.self, for: keyPath) else { return nil }
                return QueryCandidates(count: nil, ids: index.walk(in: bounds, descending: false))
            })
    }

    /// Entities for which `predicate` holds (never an index).
    /// - Complexity: O(1) to build; `predicate` runs once per candidate.
    @inlinable
    public static func matching(_ description: String = "filter", _ predicate: @escaping @Sendable (E) -> Bool) -> QueryPredicate {
        QueryPredicate(matches: predicate, describe: { description }, candidates: { _ in nil })
    }

    /// Both hold; starts from the left part's index candidates, else the right's.
    /// - Complexity: O(1) to build. Run: the cost of the part whose candidates it reads
    ///   (both parts tested on each), or a filter when neither has any.
    @inlinable
    public static func && (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(
            matches: { lhs.matches($0) && rhs.matches($0) }, describe: { "(\(lhs.describe()) and \(rhs.describe()))" },
            candidates: { storage in
                // The part's candidates, but not its count: the other part filters them.
                guard let part = lhs.candidates(storage) ?? rhs.candidates(storage) else { return nil }
                return QueryCandidates(count: nil, group: part.group, isExact: false, ids: part.ids)
            })
    }

    /// Either holds; the union of both parts' index candidates (each ID once) when both
    /// have some, else a filter.
    /// - Complexity: O(1) to build. Run: with both parts indexed, O(a + b) over their
    ///   candidates, streamed (expected O(1) per ID to drop duplicates); a filter
    ///   otherwise.
    @inlinable
    public static func || (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(
            matches: { lhs.matches($0) || rhs.matches($0) }, describe: { "(\(lhs.describe()) or \(rhs.describe()))" },
            candidates: { storage in
                guard let left = lhs.candidates(storage), let right = rhs.candidates(storage) else { return nil }
                // Streamed: the left part's IDs, then the right part's not seen yet.
                return QueryCandidates(count: nil, isExact: left.isExact && right.isExact, ids: IDWalk { body in
                    var seen = Set<E.ID>()
                    var going = true
                    left.ids.walk { id in
                        if seen.insert(id).inserted { going = body(id) }
                        return going
                    }
                    guard going else { return }
                    right.ids.walk { id in
                        if seen.insert(id).inserted { going = body(id) }
                        return going
                    }
                })
            })
    }

    /// It does not hold (a filter).
    /// - Complexity: O(1) to build; a filter, O(1) per candidate.
    @inlinable
    public static prefix func ! (predicate: QueryPredicate) -> QueryPredicate {
        QueryPredicate(matches: { !predicate.matches($0) }, describe: { "not \(predicate.describe())" }, candidates: { _ in nil })
    }
}

extension Query {
    /// Keeps entities for which `predicate` holds, using an index where its parts allow
    /// (see ``QueryPredicate``).
    /// - Complexity: O(1) to add. Run: the cost of the predicate's index candidates (see
    ///   its parts), else a filter over the query's other source (O(n) for a scan).
    @inlinable
    public consuming func `where`(_ predicate: QueryPredicate<E>) -> Query {
        adding(Condition(describe: predicate.describe, matches: predicate.matches, candidates: predicate.candidates))
    }
}
