import HashTreeCollections

/// A grouped index: each key maps to the IDs of every entity with that key, in insertion
/// order. Entities whose key is `nil` are not indexed.
@usableFromInline
struct GroupedIndex<Element: Entity, Key: Hashable & Sendable>: KeyedEntityIndex {
    @usableFromInline
    let name: String
    @usableFromInline
    let key: @Sendable (Element) -> Key?
    /// The same key, read from an entity in place (bulk loads).
    @usableFromInline
    let keyInPlace: @Sendable (UnsafePointer<Element>) -> Key?
    @usableFromInline
    var groups = TreeDictionary<Key, Members>()
    /// The groups being staged by a bulk load; nil otherwise.
    @usableFromInline
    var staged: [Key: GroupRun]?

    /// One key's group: its IDs by insertion position, and their number kept beside them,
    /// so a count reads the trie's entry alone, not the B-tree's root as well.
    @usableFromInline
    struct Members: Sendable {
        @usableFromInline var ids: SortedMap<UInt64, Element.ID>
        @usableFromInline var count: Int

        @inlinable
        init(ids: SortedMap<UInt64, Element.ID> = SortedMap()) {
            self.ids = ids
            self.count = ids.count
        }

        @inlinable
        mutating func insert(_ id: Element.ID, sequence: UInt64) {
            if ids.updateValue(id, forKey: sequence) == nil { count += 1 }
        }

        @inlinable
        mutating func remove(sequence: UInt64) {
            if ids.removeValue(forKey: sequence) != nil { count -= 1 }
        }
    }

    /// One group's entries staged by a bulk load, in the order they came.
    @usableFromInline
    struct GroupRun: Sendable {
        @usableFromInline var sequences: [UInt64] = []
        @usableFromInline var ids: [Element.ID] = []

        @inlinable
        init() {}

        @inlinable
        mutating func append(_ sequence: UInt64, _ id: Element.ID) {
            sequences.append(sequence)
            ids.append(id)
        }

        /// The group as a B-tree (runs are staged in insertion order). O(k).
        @inlinable
        func sortedMap() -> SortedMap<UInt64, Element.ID> {
            assert(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "a bulk load staged positions out of order")
            return SortedMap(sortedUniqueKeys: sequences, values: ids)
        }
    }

    /// An index named `name` over `key`; `keyInPlace` reads the same key from an entity in
    /// place, by default through `key`.
    @inlinable
    init(
        name: String, key: @escaping @Sendable (Element) -> Key?,
        keyInPlace: (@Sendable (UnsafePointer<Element>) -> Key?)? = nil
    ) {
        self.name = name
        self.key = key
        self.keyInPlace = keyInPlace ?? { key($0.pointee) }
    }

    /// The IDs stored under `key`, in insertion order. O(1) to find the group, then O(1) per ID.
    @inlinable
    func lookup(_ key: Key) -> SortedMap<UInt64, Element.ID> {
        groups[key]?.ids ?? SortedMap()
    }

    /// The number of entities under `key`. O(1).
    @inlinable
    func count(of key: Key) -> Int { groups[key]?.count ?? 0 }

    /// Every distinct key with its group size. O(number of keys).
    @usableFromInline
    var keyCounts: [(key: Key, count: Int)] { groups.map { ($0.key, $0.value.count) } }

    @inlinable
    mutating func insert(_ entity: Element, sequence: UInt64) {
        guard let key = indexableKey(key(entity)) else { return }
        groups[key, default: Members()].insert(entity.id, sequence: sequence)
    }

    /// Starts staging: while loading into an empty index, entries are bucketed by key and
    /// each group's B-tree is packed once at the end (O(k) in all, against O(k log k) for
    /// one insert at a time).
    @inlinable
    mutating func beginLoad(expectedCount: Int) {
        staged = groups.isEmpty ? [:] : nil
    }

    /// Stages the batch's entries; reads each key and ID in place. O(k).
    @inlinable
    mutating func loadAdd(_ batch: LoadBatch<Element>, table: String) throws(EntityStoreError) {
        guard var runs = staged.take() else {
            return batch.forEach { entity, sequence in insert(entity.pointee, sequence: sequence) }
        }
        // Passed from a local: called through the stored property, the closure's context
        // would be retained and released for every entity.
        let keyInPlace = self.keyInPlace
        batch.forEachKey(keyInPlace) { key, id, sequence in runs[key, default: GroupRun()].append(sequence, id) }
        staged = runs
    }

    @inlinable
    mutating func endLoad() {
        guard let runs = staged.take() else { return }
        groups = TreeDictionary(uniqueKeysWithValues: runs.lazy.map { key, run in (key, Members(ids: run.sortedMap())) })
    }

    @inlinable
    mutating func remove(_ entity: Element, sequence: UInt64) {
        guard let key = indexableKey(key(entity)) else { return }
        var emptied = false
        if groups[key] != nil {
            groups[key, default: Members()].remove(sequence: sequence)
            emptied = groups[key]?.count == 0
        }
        if emptied { groups.removeValue(forKey: key) }
    }


}

extension GroupedIndex {
    @usableFromInline var kindName: String { "grouped" }
    @usableFromInline var entryCount: Int { groups.values.reduce(0) { $0 + $1.ids.count } }
    @usableFromInline var structuralProblems: [String] {
        var problems = groups.values.contains(where: \.ids.isEmpty) ? ["grouped index '\(name)': an empty group was kept"] : []
        for (key, group) in groups {
            problems += group.ids.invariantViolations().map { "grouped index '\(name)', group \(key): \($0)" }
            if group.count != group.ids.count {
                problems.append("grouped index '\(name)', group \(key): counts \(group.count) of \(group.ids.count) entries")
            }
        }
        return problems
    }

    @usableFromInline
    func holds(_ id: Element.ID, under key: Key, sequence: UInt64) -> Bool { groups[key]?.ids[sequence] == id }
}
