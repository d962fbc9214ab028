extension TableView {
    /// The entity of `target` that the field `keyPath` of the entity `id` references
    /// (a book's author), or nil when either is missing.
    /// - Complexity: O(1) expected: one probe in each table.
    @inlinable
    public func related<T: Entity>(_ target: TableView<T>, via keyPath: any KeyPath<E, T.ID> & Sendable, of id: E.ID) -> T? {
        find(id).flatMap { target.find($0[keyPath: keyPath]) }
    }

    /// As ``related(_:via:of:)`` through an optional reference; nil when it is nil.
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
    /// references (nil when that one is missing), in the query's order.
    /// - Complexity: the query's cost, plus one probe per result.
    public func joined<T: Entity>(_ target: TableView<T>, via keyPath: any KeyPath<E, T.ID> & Sendable) -> [(E, T?)] {
        results.map { ($0, target.find($0[keyPath: keyPath])) }
    }

    /// As ``joined(_:via:)`` through an optional reference.
    public func joined<T: Entity>(_ target: TableView<T>, via keyPath: any KeyPath<E, T.ID?> & Sendable) -> [(E, T?)] {
        results.map { entity in (entity, entity[keyPath: keyPath].flatMap { target.find($0) }) }
    }
}
