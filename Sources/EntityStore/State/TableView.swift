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
    /// - Complexity: O(1); running it costs what ``Query`` says.
    @inlinable
    public consuming func query() -> Query<E> { Query(storage: storage) }

    /// The first entity, in insertion order, whose field `keyPath` equals `key` (the
    /// entity, for a unique field).
    /// - Complexity: O(1) expected with a unique or grouped index on the field; O(n) scan
    ///   without one.
    @inlinable
    public func first<Key: Hashable & Sendable>(where keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> E? {
        if let group = storage.groupedIDs(key, for: keyPath) { return group.first.flatMap { storage.rows[$0.value].map { $0.value } } }
        return scanned(keyPath, equals: key).first
    }

    /// The first entity, in insertion order, whose field `keyPath` equals `key`; an ordered
    /// index on the field answers too.
    /// - Complexity: O(1) expected with a unique or grouped index on the field, O(log n)
    ///   with an ordered one; O(n) scan without an index.
    @inlinable
    public func first<Key: Hashable & Comparable & Sendable>(where keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> E? {
        if let group = storage.groupedIDs(key, for: keyPath) { return group.first.flatMap { storage.rows[$0.value].map { $0.value } } }
        if let ordered = storage.orderedEntries(Key.self, for: keyPath) {
            var found: E?
            ordered.walk(in: SortedMapRange.only(key), descending: false).walk { id in
                found = storage.rows[id].map { $0.value }
                return found == nil
            }
            return found
        }
        return scanned(keyPath, equals: key).first
    }

    /// The entities whose field `keyPath` equals `key`, in insertion order.
    /// - Complexity: O(1) to find the key in a unique or grouped index, then one hash
    ///   probe per entity returned (compiled for the caller's types, as a hand-written
    ///   `[Key: [ID]]` lookup would be); O(n) without an index.
    @inlinable
    public func filter<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> [E] {
        if let group = storage.groupedIDs(key, for: keyPath) { return entities(in: group) }
        return scanned(keyPath, equals: key).results
    }

    /// The entities whose field `keyPath` equals `key`, in insertion order; an ordered index
    /// on the field answers when it has no unique or grouped one.
    /// - Complexity: O(1) to find the key in a unique or grouped index, O(log n) in an
    ///   ordered one, then one hash probe per entity returned; O(n) without an index.
    @inlinable
    public func filter<Key: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> [E] {
        if let group = storage.groupedIDs(key, for: keyPath) { return entities(in: group) }
        if let ordered = storage.orderedEntries(Key.self, for: keyPath) {
            // Equal keys are ordered by insertion position: the run is in insertion order.
            var entities: [E] = []
            entities.reserveCapacity(ordered.count(in: SortedMapRange.only(key)))
            let rows = storage.rows
            ordered.walk(in: SortedMapRange.only(key), descending: false).walk { id in
                if let entity = rows[id].map({ $0.value }) { entities.append(entity) }
                return true
            }
            return entities
        }
        return scanned(keyPath, equals: key).results
    }

    /// The query that scans for `key` when no index answers. Out of line, so that the
    /// index paths inlined into a caller never build it.
    @usableFromInline @inline(never)
    func scanned<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> Query<E> {
        query().where(keyPath, equals: key)
    }

    /// The entities of a grouped index's group, in its (insertion) order.
    @inlinable
    func entities(in group: SortedMap<UInt64, E.ID>) -> [E] {
        var entities: [E] = []
        entities.reserveCapacity(group.count)
        let rows = storage.rows
        group.forEachValue(at: 0..<group.count) { id in
            if let row = rows[id] { entities.append(row.value) }
            return true
        }
        return entities
    }

    /// The number of entities whose field `keyPath` equals `key`.
    /// - Complexity: O(1) with a unique or grouped index; O(n) without one.
    @inlinable
    public func count<Key: Hashable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> Int {
        if let counted = storage.hashedCount(of: key, for: keyPath) { return counted }
        return scanned(keyPath, equals: key).count
    }

    /// The number of entities whose field `keyPath` equals `key`; an ordered index on the
    /// field answers when it has no unique or grouped one.
    /// - Complexity: O(1) with a unique or grouped index, O(log n) with an ordered one (from
    ///   the B-tree's subtree sizes, whatever the number of matches); O(n) without an index.
    @inlinable
    public func count<Key: Hashable & Comparable & Sendable>(_ keyPath: any KeyPath<E, Key> & Sendable, equals key: Key) -> Int {
        if let counted = storage.comparableCount(of: key, for: keyPath) { return counted }
        return scanned(keyPath, equals: key).count
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
