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
    let matches: @Sendable (E) -> Bool
    let describe: @Sendable () -> String
    let candidates: @Sendable (TableStorage<E>) -> QueryCandidates<E>?

    /// Entities whose field `keyPath` equals `value`; a unique or grouped index answers it.
    public static func field<Value: Hashable & Sendable>(_ keyPath: any KeyPath<E, Value> & Sendable, equals value: Value) -> QueryPredicate {
        QueryPredicate(
            matches: { $0[keyPath: keyPath] == value }, describe: { "\(fieldPath(of: keyPath)) = \(value)" },
            candidates: { $0.candidatesEqual(value, usingIndexesAt: $0.indexPositions(for: keyPath)) })
    }

    /// Entities whose field `keyPath` lies in `range`; an ordered index answers it.
    public static func field<Value: Comparable & Sendable, Bounds: RangeExpression<Value> & Sendable>(
        _ keyPath: any KeyPath<E, Value> & Sendable, in range: Bounds
    ) -> QueryPredicate {
        let bounds = SortedMapRange(bounding: range)
        return QueryPredicate(
            matches: { bounds.contains($0[keyPath: keyPath]) }, describe: { "\(fieldPath(of: keyPath)) in \(range)" },
            candidates: { storage in
                guard let index = storage.orderedIndex(Value.self, at: storage.indexPositions(for: keyPath)) else { return nil }
                return QueryCandidates(count: nil, isInsertionOrder: false) { index.lazyIDs(in: bounds, descending: false) }
            })
    }

    /// Entities for which `predicate` holds (never an index).
    public static func matching(_ description: String = "filter", _ predicate: @escaping @Sendable (E) -> Bool) -> QueryPredicate {
        QueryPredicate(matches: predicate, describe: { description }, candidates: { _ in nil })
    }

    /// Both hold; starts from the left part's index candidates, else the right's.
    public static func && (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(
            matches: { lhs.matches($0) && rhs.matches($0) }, describe: { "(\(lhs.describe()) and \(rhs.describe()))" },
            candidates: { storage in
                // The part's candidates, but not its count: the other part filters them.
                guard let part = lhs.candidates(storage) ?? rhs.candidates(storage) else { return nil }
                return QueryCandidates(count: nil, isInsertionOrder: part.isInsertionOrder, group: part.group, isExact: false) { part.ids }
            })
    }

    /// Either holds; the union of both parts' index candidates (each ID once) when both
    /// have some, else a filter.
    public static func || (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(
            matches: { lhs.matches($0) || rhs.matches($0) }, describe: { "(\(lhs.describe()) or \(rhs.describe()))" },
            candidates: { storage in
                guard let left = lhs.candidates(storage), let right = rhs.candidates(storage) else { return nil }
                return QueryCandidates(count: nil, isInsertionOrder: false, isExact: left.isExact && right.isExact) {
                    var seen = Set<E.ID>()
                    var union: [E.ID] = []
                    for id in left.ids where seen.insert(id).inserted { union.append(id) }
                    for id in right.ids where seen.insert(id).inserted { union.append(id) }
                    return AnySequenceOfIDs(union)
                }
            })
    }

    /// It does not hold (a filter).
    public static prefix func ! (predicate: QueryPredicate) -> QueryPredicate {
        QueryPredicate(matches: { !predicate.matches($0) }, describe: { "not \(predicate.describe())" }, candidates: { _ in nil })
    }
}

extension Query {
    /// Keeps entities for which `predicate` holds, using an index where its parts allow
    /// (see ``QueryPredicate``). O(1) to add.
    public func `where`(_ predicate: QueryPredicate<E>) -> Query {
        adding(Condition(describe: predicate.describe, matches: predicate.matches, candidates: predicate.candidates))
    }
}
