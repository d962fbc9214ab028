import HashTreeCollections

/// A unique index: each key maps to at most one entity ID. Entities whose key is `nil`
/// are not indexed (as in SQL, `nil` never collides).
@usableFromInline
struct UniqueIndex<Element: Entity, Key: Hashable & Sendable>: KeyedEntityIndex {
    @usableFromInline
    let name: String
    @usableFromInline
    let key: @Sendable (Element) -> Key?
    @usableFromInline
    var entries = TreeDictionary<Key, Element.ID>()

    @inlinable
    init(name: String, key: @escaping @Sendable (Element) -> Key?) {
        self.name = name
        self.key = key
    }

    /// The ID stored under `key`. O(1) expected (hash trie lookup).
    @inlinable
    func lookup(_ key: Key) -> Element.ID? { entries[key] }

    @inlinable
    func validateInsert(_ entity: Element, table: String) throws(EntityStoreError) {
        guard let key = indexableKey(key(entity)), let existing = entries[key], existing != entity.id else { return }
        throw .uniqueViolation(
            table: table, index: name, key: describeID(key),
            existingID: describeID(existing), newID: describeID(entity.id))
    }

    @inlinable
    func validateUpdate(from old: Element, to new: Element, table: String) throws(EntityStoreError) {
        if indexableKey(key(old)) == indexableKey(key(new)) { return }
        try validateInsert(new, table: table)
    }

    @inlinable
    mutating func insert(_ entity: Element, sequence: UInt64) {
        guard let key = indexableKey(key(entity)) else { return }
        entries[key] = entity.id
    }

    @inlinable
    mutating func remove(_ entity: Element, sequence: UInt64) {
        guard let key = indexableKey(key(entity)), entries[key] == entity.id else { return }
        entries.removeValue(forKey: key)
    }


}

extension UniqueIndex {
    @usableFromInline var kindName: String { "unique" }
    @usableFromInline var entryCount: Int { entries.count }

    @usableFromInline
    func holds(_ id: Element.ID, under key: Key, sequence: UInt64) -> Bool { entries[key] == id }
}
