import HashTreeCollections

/// A read-only view of one table at one point in time: `state[books]`.
///
/// Views are values: O(1) to take, immune to later commits. Iteration follows insertion
/// order (a replaced entity keeps its place).
public struct TableView<E: Entity>: Sendable, Sequence {
    @usableFromInline
    let storage: TableStorage<E>

    @inlinable
    init(storage: TableStorage<E>) {
        self.storage = storage
    }

    /// The table's name.
    @inlinable public var name: String { storage.name }
    /// The number of entities. O(1).
    @inlinable public var count: Int { storage.count }
    /// Whether the table is empty. O(1).
    @inlinable public var isEmpty: Bool { storage.count == 0 }
    /// The store revision that last changed this table. O(1).
    @inlinable public var version: UInt64 { storage.version }

    /// The entity with `id`, if any. O(1) expected: one hash probe (two while recent changes sit in the row map's overlay).
    @inlinable public func find(_ id: E.ID) -> E? {
        // `map` rather than `?.value`: once inlined into another module, optional chaining
        // makes the caller copy the whole row (retaining every string of the entity), while
        // `map` lets it read only the fields it uses, as from a plain `Dictionary`.
        storage.rows[id].map { $0.value }
    }

    /// The entity with `id`, if any. O(1) expected.
    @inlinable public subscript(id: E.ID) -> E? { storage.rows[id].map { $0.value } }

    /// Whether an entity with `id` exists. O(1) expected.
    @inlinable public func contains(_ id: E.ID) -> Bool { storage.rows[id] != nil }

    /// The store revision that last wrote the entity `id`, or nil if absent. Comparing it
    /// across two states answers "did this entity change?" in O(1).
    @inlinable public func version(of id: E.ID) -> UInt64? { storage.rows[id].map { $0.version } }

    /// Iterates the entities in insertion order. O(1) per entity.
    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(order: storage.order.makeIterator(), rows: storage.rows)
    }

    /// The number of entities, for `Sequence` algorithms. O(1).
    @inlinable public var underestimatedCount: Int { storage.count }

    /// Iterates a table in insertion order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline
        var order: SortedMap<UInt64, E.ID>.Iterator
        @usableFromInline
        let rows: RowsOf<E>

        @inlinable
        init(order: SortedMap<UInt64, E.ID>.Iterator, rows: RowsOf<E>) {
            self.order = order
            self.rows = rows
        }

        /// The next entity in insertion order.
        @inlinable
        public mutating func next() -> E? {
            while let (_, id) = order.next() {
                if let row = rows[id] { return row.value }
            }
            return nil
        }
    }

    /// The IDs in insertion order. O(n).
    public var ids: [E.ID] { storage.order.map { $0.value } }

    /// A page of entities in insertion order: `limit` entities starting at `offset`.
    /// - Complexity: O(log n + k) for k entities returned.
    public func all(offset: Int = 0, limit: Int? = nil) -> [E] {
        let page = storage.order.elements(fromOffset: offset)
        let ids = limit.map { Array(page.prefix(Swift.max(0, $0))) } ?? Array(page)
        return ids.compactMap { storage.rows[$0.value]?.value }
    }

    /// A query over this table; see ``Query``.
    public func query() -> Query<E> { Query(storage: storage) }

    /// The entity whose unique field `keyPath` equals `key`, using its unique index.
    /// - Complexity: O(1) expected with a unique index; O(n) scan without one.
    public func first<Key: Hashable & Sendable>(where keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> E? {
        query().where(keyPath, equals: key).first
    }

    /// The entities whose field `keyPath` equals `key`, in insertion order.
    /// - Complexity: O(1) to find the key in a unique or grouped index, then one hash
    ///   probe per entity returned (compiled for the caller's types, as a hand-written
    ///   `[Key: [ID]]` lookup would be); O(n) without an index.
    @inlinable
    public func filter<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> [E] {
        if let group = storage.groupedIDs(key, for: keyPath) {
            var entities: [E] = []
            entities.reserveCapacity(group.count)
            let rows = storage.rows
            for (_, id) in group {
                if let entity = rows[id].map({ $0.value }) { entities.append(entity) }
            }
            return entities
        }
        return query().where(keyPath, equals: key).results
    }

    /// The number of entities whose field `keyPath` equals `key`.
    /// - Complexity: O(1) with a unique or grouped index; O(n) without one.
    @inlinable
    public func count<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> Int {
        storage.groupedIDs(key, for: keyPath)?.count ?? query().where(keyPath, equals: key).count
    }

    /// Entities sorted by `keyPath`, ascending unless `descending`, at most `limit` of them.
    /// - Complexity: O(log n + k) with an ordered index; O(n log n) without one.
    public func sorted<Key: Comparable & Sendable>(
        by keyPath: any KeyPath<E, Key> & Sendable, descending: Bool = false, limit: Int? = nil
    ) -> [E] {
        var query = query().sorted(by: keyPath, descending: descending)
        if let limit { query = query.limit(limit) }
        return query.results
    }

    /// Checks the table's internal consistency; empty when sound. O(n).
    public func invariantViolations() -> [String] { storage.invariantViolations() }
}
