extension Query {
    /// The field `keyPath` of each result, in the query's order and page. When the query's
    /// source is already in its order (an index lookup, an ordered index, or no sort) the
    /// values stream from it and no entity is kept; otherwise the matches are sorted first.
    /// - Complexity: the query's cost; O(1) per result to read the field.
    public func values<Value>(_ keyPath: any KeyPath<E, Value> & Sendable) -> [Value] {
        let run = plannedRun()
        // A source in the query's order streams the page's values without keeping entities.
        guard run.inOrder else { return results.map { $0[keyPath: keyPath] } }
        var values: [Value] = []
        var skipped = 0
        let limit = limitCount ?? .max
        if limit > 0 {
            forEachMatch(of: run) { entity in
                if skipped < offsetCount {
                    skipped += 1
                    return true
                }
                values.append(entity[keyPath: keyPath])
                return values.count < limit
            }
        }
        return values
    }

    /// Two fields of each result, in the query's order and page.
    /// - Complexity: the query's cost; O(1) per result.
    public func values<First, Second>(
        _ first: any KeyPath<E, First> & Sendable, _ second: any KeyPath<E, Second> & Sendable
    ) -> [(First, Second)] {
        results.map { ($0[keyPath: first], $0[keyPath: second]) }
    }
}
