extension Query {
    /// This query as a live query, or nil when it uses what a live query cannot follow:
    /// an offset, or an order a live query cannot keep. The first equality or range
    /// becomes the live query's source (so it wakes only for its key or range); the other
    /// conditions become its filters.
    ///
    /// An unsorted query comes in the order of the index it reads: a key's group and a
    /// scan in insertion order, which a live query keeps; a range of an ordered index by
    /// that field, which its live form sorts by. Other index orders (several keys of
    /// `oneOf`, an `||`, a prefix, non-nil values) have no live equivalent: sort such a
    /// query to make it live.
    /// - Complexity: O(conditions), plus finding the query's source (O(log n) at most).
    public var live: LiveQuery<E>? {
        guard offsetCount == 0 else { return nil }
        var live = LiveQuery(storage.descriptor)
        for condition in conditions {
            let matches = condition.matches
            live = condition.live?(live) ?? live.filter(matches)
        }
        if let ordering {
            guard let sort = ordering.live else { return nil }
            live = sort(live)
        } else if case let .candidates(position, candidates) = source(), candidates.group == nil, candidates.count.map({ $0 > 1 }) ?? true {
            guard let order = conditions[position].liveIndexOrder else { return nil }
            live = order(live)
        }
        if let limitCount { live = live.limit(limitCount) }
        return live
    }
}

extension EntityStore {
    /// Keeps `query`'s result up to date, as ``live(_:)->LiveList<E>`` does for its live
    /// form (``Query/live``), or nil when the query has an offset or an order a live
    /// query cannot keep. The query's own state is not used: the live query starts from
    /// the store's current one.
    /// - Complexity: as the live query's.
    public func live<E: Entity>(_ query: Query<E>) -> LiveList<E>? {
        query.live.map { live($0) }
    }
}
