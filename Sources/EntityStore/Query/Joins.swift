extension TableView {
    /// The entity of `target` that the field `keyPath` of the entity `id` references
    /// (a book's author), or nil when either is missing.
    /// - Complexity: O(1) expected: one probe in each table.
    @inlinable
    public func related<T: Entity>(_ target: TableView<T>, via keyPath: any KeyPath<E, T.ID> & Sendable, of id: E.ID) -> T? {
        find(id).flatMap { target.find($0[keyPath: keyPath]) }
    }

    /// As ``related(_:via:of:)`` through an optional reference; nil when it is nil.
    /// - Complexity: O(1) expected: one probe in each table.
    @inlinable
    public func related<T: Entity>(_ target: TableView<T>, via keyPath: any KeyPath<E, T.ID?> & Sendable, of id: E.ID) -> T? {
        find(id).flatMap { $0[keyPath: keyPath] }.flatMap { target.find($0) }
    }

    /// The entities of `source` whose field `keyPath` references the entity `id` of this
    /// table (an author's books), in insertion order.
    /// - Complexity: O(1) to find the group in the relation's grouped index, then one
    ///   probe per entity returned; O(n) over `source` without an index.
    @inlinable
    public func referencing<S: Entity>(_ id: E.ID, from source: TableView<S>, via keyPath: any KeyPath<S, E.ID> & Sendable) -> [S] {
        source.filter(keyPath, equals: id)
    }
}

extension Query {
    /// The matching entities, each with the entity of `target` its field `keyPath`
    /// references (nil when that one is missing), in the query's order and page.
    /// - Complexity: the query's cost (as ``results``), plus one probe in `target` per
    ///   result; streamed from a source in the query's order.
    @inlinable
    public func joined<T: Entity>(_ target: TableView<T>, via keyPath: any KeyPath<E, T.ID> & Sendable) -> [(E, T?)] {
        var pairs: [(E, T?)] = []
        let targets = target.storage.rows
        forEachResult { entity in
            pairs.append((entity, targets[entity[keyPath: keyPath]].map { $0.value }))
            return true
        }
        return pairs
    }

    /// As ``joined(_:via:)`` through an optional reference (nil when it is nil).
    /// - Complexity: the query's cost (as ``results``), plus one probe in `target` per
    ///   result with a reference.
    @inlinable
    public func joined<T: Entity>(_ target: TableView<T>, via keyPath: any KeyPath<E, T.ID?> & Sendable) -> [(E, T?)] {
        var pairs: [(E, T?)] = []
        let targets = target.storage.rows
        forEachResult { entity in
            pairs.append((entity, entity[keyPath: keyPath].flatMap { targets[$0].map { $0.value } }))
            return true
        }
        return pairs
    }
}
