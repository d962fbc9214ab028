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
        // A stored field is read at its offset rather than through the key-path runtime.
        let reference = fieldReader(keyPath)
        forEachResult { entity in
            let referenced = targets[reference(entity)].map { $0.value }
            pairs.append((entity, referenced))
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
        let reference = fieldReader(keyPath)
        forEachResult { entity in
            let referenced = reference(entity).flatMap { targets[$0].map { $0.value } }
            pairs.append((entity, referenced))
            return true
        }
        return pairs
    }

    /// The reverse join: the matching entities, each with the entities of `source` whose
    /// field `keyPath` references it (an author with their books), in the query's order
    /// and page; each list in insertion order, empty when nothing references the entity.
    /// The one-to-many counterpart of ``joined(_:via:)-(_,KeyPath<E,T.ID>Sendable)``, and of
    /// ``TableView/referencing(_:from:via:)`` for many entities at once.
    ///
    /// ```swift
    /// let shelves = state[authors].query().sorted(by: \.name).joined(referencedBy: state[books], via: \.authorID)
    /// ```
    /// - Complexity: the query's cost (as ``results``), plus O(1) per result to find its
    ///   group in the relation's grouped (or unique) index on `keyPath` and one probe per
    ///   entity of `source` returned; without such an index, one O(n) pass over `source`.
    @inlinable
    public func joined<S: Entity>(referencedBy source: TableView<S>, via keyPath: any KeyPath<S, E.ID> & Sendable) -> [(E, [S])] {
        reverseJoined(source, via: keyPath) { $0[keyPath: keyPath] }
    }

    /// As ``joined(referencedBy:via:)`` through an optional reference (an entity whose
    /// reference is nil belongs to no list).
    /// - Complexity: as ``joined(referencedBy:via:)``.
    @inlinable
    public func joined<S: Entity>(referencedBy source: TableView<S>, via keyPath: any KeyPath<S, E.ID?> & Sendable) -> [(E, [S])] {
        reverseJoined(source, via: keyPath) { $0[keyPath: keyPath] }
    }

    /// The reverse join through the index on `keyPath` when `source` has one, else one
    /// pass over `source` reading each entity's reference with `reference`.
    @inlinable
    func reverseJoined<S: Entity>(
        _ source: TableView<S>, via keyPath: AnyKeyPath, reference: (S) -> E.ID?
    ) -> [(E, [S])] {
        var pairs: [(E, [S])] = []
        let storage = source.storage, rows = storage.rows
        if let grouped = storage.groupedIndex(E.ID.self, for: keyPath) {
            forEachResult { entity in
                let group = grouped.lookup(entity.id)
                var referencing: [S] = []
                referencing.reserveCapacity(group.count)
                for (_, id) in group {
                    if let row = rows[id].map({ $0.value }) { referencing.append(row) }
                }
                pairs.append((entity, referencing))
                return true
            }
        } else if let unique = storage.uniqueKeyIndex(E.ID.self, for: keyPath) {
            forEachResult { entity in
                pairs.append((entity, unique.lookup(entity.id).flatMap { rows[$0].map { [$0.value] } } ?? []))
                return true
            }
        } else {
            var byReference: [E.ID: [S]] = [:]
            for entity in source {
                if let key = reference(entity) { byReference[key, default: []].append(entity) }
            }
            forEachResult { entity in
                pairs.append((entity, byReference[entity.id] ?? []))
                return true
            }
        }
        return pairs
    }
}
