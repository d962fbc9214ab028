import HashTreeCollections

/// A grouped index: each key maps to the IDs of every entity with that key, in insertion
/// order. Entities whose key is `nil` are not indexed.
@usableFromInline
struct GroupedIndex<Element: Entity, Key: Hashable & Sendable>: KeyedEntityIndex {
    @usableFromInline
    let name: String
    @usableFromInline
    let key: @Sendable (Element) -> Key?
    @usableFromInline
    var groups = TreeDictionary<Key, SortedMap<UInt64, Element.ID>>()

    @inlinable
    init(name: String, key: @escaping @Sendable (Element) -> Key?) {
        self.name = name
        self.key = key
    }

    /// The IDs stored under `key`, in insertion order. O(1) to find the group, then O(1) per ID.
    @inlinable
    func lookup(_ key: Key) -> SortedMap<UInt64, Element.ID> {
        groups[key] ?? SortedMap()
    }

    /// The number of entities under `key`. O(1).
    @inlinable
    func count(of key: Key) -> Int { groups[key]?.count ?? 0 }

    /// Every distinct key with its group size. O(number of keys).
    @usableFromInline
    var keyCounts: [(key: Key, count: Int)] { groups.map { ($0.key, $0.value.count) } }

    @inlinable
    mutating func insert(_ entity: Element, sequence: UInt64) {
        guard let key = key(entity) else { return }
        groups[key, default: SortedMap()].updateValue(entity.id, forKey: sequence)
    }

    /// Builds every group at once: the entities are bucketed by key, then each group's
    /// B-tree is packed from its ascending positions. O(k), against O(k log k) for one
    /// insert at a time.
    @inlinable
    mutating func load(_ entities: [Element], firstSequence: UInt64, table: String) throws(EntityStoreError) {
        guard groups.isEmpty else {
            for (offset, entity) in entities.enumerated() { insert(entity, sequence: firstSequence + UInt64(offset)) }
            return
        }
        var members: [Key: (sequences: [UInt64], ids: [Element.ID])] = [:]
        // Through the buffer, so each entity is read in place rather than copied out.
        entities.withUnsafeBufferPointer { entities in
            for offset in entities.indices {
                guard let key = key(entities[offset]) else { continue }
                members[key, default: ([], [])].sequences.append(firstSequence + UInt64(offset))
                members[key, default: ([], [])].ids.append(entities[offset].id)
            }
        }
        groups = TreeDictionary(uniqueKeysWithValues: members.lazy.map { key, group in
            (key, SortedMap(sortedUniqueKeys: group.sequences, values: group.ids))
        })
    }

    @inlinable
    mutating func remove(_ entity: Element, sequence: UInt64) {
        guard let key = key(entity) else { return }
        var emptied = false
        if groups[key] != nil {
            groups[key, default: SortedMap()].removeValue(forKey: sequence)
            emptied = groups[key]?.isEmpty ?? false
        }
        if emptied { groups.removeValue(forKey: key) }
    }


}

extension GroupedIndex {
    @usableFromInline var kindName: String { "grouped" }
    @usableFromInline var entryCount: Int { groups.values.reduce(0) { $0 + $1.count } }
    @usableFromInline var structuralProblems: [String] {
        groups.values.contains(where: \.isEmpty) ? ["grouped index '\(name)': an empty group was kept"] : []
    }

    @usableFromInline
    func holds(_ id: Element.ID, under key: Key, sequence: UInt64) -> Bool { groups[key]?[sequence] == id }
}
