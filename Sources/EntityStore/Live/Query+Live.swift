extension Query {
    /// This query as a live query, or nil when it uses what a live query cannot follow:
    /// an offset, or an order a live query cannot keep (a dynamic field's). The first
    /// equality or range becomes the live query's source (so it wakes only for its key or
    /// range); the other conditions become its filters. O(conditions).
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
        }
        if let limitCount { live = live.limit(limitCount) }
        return live
    }
}

extension EntityStore {
    /// Keeps `query`'s result up to date, as ``live(_:)`` does for its live
    /// form (``Query/live``), or nil when the query has an offset or an order a live
    /// query cannot keep. The query's own state is not used: the live query starts from
    /// the store's current one.
    /// - Complexity: as the live query's.
    public func live<E: Entity>(_ query: Query<E>) -> LiveList<E>? {
        query.live.map { live($0) }
    }
}
