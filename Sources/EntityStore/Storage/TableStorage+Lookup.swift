import HashTreeCollections
/// Index lookups by key path or by field name, used by views and queries.
extension TableStorage {
    /// Positions of the indexes declared on `keyPath`.
    @usableFromInline
    func indexPositions(for keyPath: AnyKeyPath) -> [Int] {
        descriptor.indexes.indices.filter { descriptor.indexes[$0].keyPath?.keyPath == keyPath }
    }

    /// Positions of the indexes named `field` or reading the field path `field`.
    func indexPositions(forField field: String) -> [Int] {
        descriptor.indexes.indices.filter { descriptor.indexes[$0].name == field || descriptor.indexes[$0].field == field }
    }

    /// The IDs stored under `key` in a grouped (or unique) index on `keyPath`, in insertion
    /// order, or nil when the field has neither. O(1) plus O(indexes) to find the index.
    @inlinable
    func groupedIDs<Key: Hashable & Sendable>(_ key: Key, for keyPath: AnyKeyPath) -> SortedMap<UInt64, E.ID>? {
        for position in descriptor.indexes.indices where descriptor.indexes[position].keyPath?.matches(keyPath) ?? false {
            let box = indexes[position]
            if let grouped = box as? IndexBox<GroupedIndex<E, Key>> { return grouped.index.lookup(key) }
            if let unique = box as? IndexBox<UniqueIndex<E, Key>> {
                guard let id = unique.index.lookup(key) else { return SortedMap() }
                guard let sequence = rows[id]?.sequence else { return SortedMap() }
                var single = SortedMap<UInt64, E.ID>()
                single.updateValue(id, forKey: sequence)
                return single
            }
        }
        return nil
    }

    /// A reader of `key`'s group in this table's grouped index of key type `Key` on
    /// `keyPath` in a later version of the table, or nil without one. The index's position
    /// is found once, here (O(indexes)); the reader then costs one class cast and one
    /// lookup (O(1) expected), and returns nil for a table whose index at that position is
    /// another one.
    @inlinable
    func groupReader<Key: Hashable & Sendable>(
        _ key: Key, for keyPath: AnyKeyPath
    ) -> (@Sendable (any AnyTableStorage) -> SortedMap<UInt64, E.ID>?)? {
        guard let position = indexes.indices.first(where: { isIndex($0, on: keyPath) && indexes[$0] is IndexBox<GroupedIndex<E, Key>> })
        else { return nil }
        return { table in
            guard let box = table.indexBox(at: position) as? IndexBox<GroupedIndex<E, Key>> else { return nil }
            return box.index.groups[key]?.ids ?? SortedMap()
        }
    }

    /// The IDs whose key equals `key` in a unique or grouped index among `positions`, in
    /// insertion order; nil if none of them can answer. O(log n + k).
    func idsEqual<Key: Hashable & Sendable>(_ key: Key, usingIndexesAt positions: [Int]) -> [E.ID]? {
        for position in positions {
            switch descriptor.indexes[position].erased(indexes[position]) {
            case let index as UniqueIndex<E, Key>: return index.lookup(key).map { [$0] } ?? []
            case let index as GroupedIndex<E, Key>: return index.lookup(key).map { $0.value }
            default: continue
            }
        }
        return nil
    }

    /// The ordered index of key type `Key` among `positions`, if any.
    @inlinable
    func orderedIndex<Key: Comparable & Sendable>(_ type: Key.Type, at positions: [Int]) -> OrderedIndex<E, Key>? {
        for position in positions {
            // A class cast of the box: no copy of the index into an existential first.
            if let box = indexes[position] as? IndexBox<OrderedIndex<E, Key>> { return box.index }
        }
        return nil
    }

    /// The position of an ordered index of key type `Key` on `keyPath`, if any, for a
    /// caller that reads the index many times (``orderedEntries(_:atPosition:)``). O(indexes).
    @inlinable
    func orderedIndexPosition<Key: Comparable & Sendable>(_ type: Key.Type, for keyPath: AnyKeyPath) -> Int? {
        indexPositions(for: keyPath).first { indexes[$0] is IndexBox<OrderedIndex<E, Key>> }
    }

    /// The entries of the ordered index of key type `Key` at `position`, or nil when the
    /// index there is another one. O(1): a class cast, no copy of the index.
    @inlinable
    func orderedEntries<Key: Comparable & Sendable>(_ type: Key.Type, atPosition position: Int) -> OrderedEntries<E, Key>? {
        guard position < indexes.count, let box = indexes[position] as? IndexBox<OrderedIndex<E, Key>> else { return nil }
        return OrderedEntries(entries: box.index.entries, unordered: box.index.unordered)
    }

    /// The entities for `ids`, skipping any that are absent. O(k).
    func entities(for ids: some Sequence<E.ID>) -> [E] {
        ids.compactMap { rows[$0]?.value }
    }
}
