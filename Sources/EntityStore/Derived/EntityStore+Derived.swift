import HashTreeCollections
import StoreCore

extension EntityStore {
    /// A derived value for the entity `id` of `table`: nil while it does not exist.
    ///
    /// It re-reads only when a commit inserts, updates or removes that entity (or a restore
    /// replaces every table); commits touching other entities never reach it.
    /// - Complexity: O(1) to create; O(1) per commit that touches `id`, zero otherwise.
    @inlinable
    public func derived<E: Entity>(_ table: Table<E>, id: E.ID) -> DerivedQuery<E?> {
        let name = table.name
        let derived = DerivedQuery<E?>(initial: state[table].find(id)) { changes, _ in
            changes.current[table].find(id)
        }
        watch(derived, table: name, ids: [WatchKey(id)])
        return derived
    }

    /// A derived value for the entity `id` of `table` that keeps its last value after the
    /// entity is removed (VergeORM's non-null derived).
    /// - Throws: ``EntityStoreError/missingID(table:id:)`` if the entity does not exist now.
    public func derivedKeepingLast<E: Entity>(_ table: Table<E>, id: E.ID) throws(EntityStoreError) -> DerivedQuery<E> {
        guard let initial = state[table].find(id) else { throw .missingID(table: table.name, id: describeID(id)) }
        let name = table.name
        let derived = DerivedQuery<E>(initial: initial) { changes, last in
            changes.current[table].find(id) ?? last
        }
        watch(derived, table: name, ids: [WatchKey(id)])
        return derived
    }

    /// A derived value for several entities, in the order of `ids`, skipping absent ones.
    /// - Complexity: O(k) to create and per commit that touches one of the k IDs.
    public func derived<E: Entity>(_ table: Table<E>, ids: [E.ID]) -> DerivedQuery<[E]> {
        let name = table.name
        let derived = DerivedQuery<[E]>(initial: ids.compactMap { state[table].find($0) }) { changes, _ in
            let view = changes.current[table]
            return ids.compactMap { view.find($0) }
        }
        watch(derived, table: name, ids: ids.map { WatchKey($0) })
        return derived
    }

    /// The entities whose field `keyPath` equals `key` (all books of author 42), in
    /// insertion order, maintained incrementally from each commit's change set.
    /// - Complexity: O(log n + k) to create (with an index); per commit that changes the
    ///   table, O(changed rows) to update membership, plus O(k) to rebuild the value when
    ///   a member changed. Commits to other tables never reach it.
    public func derived<E: Entity, Key: Hashable & Sendable>(
        _ table: Table<E>, where keyPath: any KeyPath<E, Key> & Sendable, equals key: Key
    ) -> DerivedQuery<[E]> {
        let members = Members<E, UInt64>()
        let view = state[table]
        for entity in view.query().where(keyPath, equals: key).results {
            if let sequence = view.storage.rows[entity.id]?.sequence { members.insert(entity.id, at: sequence) }
        }
        return derivedMembers(table, members: members, initial: members.values(in: view)) { row in
            row.value[keyPath: keyPath] == key ? row.sequence : nil
        }
    }

    /// The entities whose field `keyPath` lies in `range`, sorted by it (ties in insertion
    /// order), maintained incrementally from each commit's change set.
    /// - Complexity: as ``derived(_:where:equals:)``.
    public func derived<E: Entity, Key: Comparable & Sendable, Bounds: RangeExpression<Key> & Sendable>(
        _ table: Table<E>, where keyPath: any KeyPath<E, Key> & Sendable, in range: Bounds
    ) -> DerivedQuery<[E]> {
        let members = Members<E, OrderedIndexKey<Key>>()
        let view = state[table]
        for entity in view.query().where(keyPath, in: range).results {
            if let sequence = view.storage.rows[entity.id]?.sequence {
                members.insert(entity.id, at: OrderedIndexKey(key: entity[keyPath: keyPath], sequence: sequence))
            }
        }
        return derivedMembers(table, members: members, initial: members.values(in: view)) { row in
            let value = row.value[keyPath: keyPath]
            return range.contains(value) ? OrderedIndexKey(key: value, sequence: row.sequence) : nil
        }
    }

    /// Shared machinery of membership-based derived queries: `position` says where a row
    /// belongs in the result, or nil if it does not.
    private func derivedMembers<E: Entity, Position: Comparable & Sendable>(
        _ table: Table<E>, members: Members<E, Position>, initial: [E],
        position: @escaping @Sendable (Row<E>) -> Position?
    ) -> DerivedQuery<[E]> {
        let name = table.name
        let derived = DerivedQuery<[E]>(initial: initial) { changes, _ in
            let view = changes.current[table]
            if changes.current.changeSet.replacedAll {
                members.removeAll()
                for (_, id) in view.storage.order {
                    if let row = view.storage.rows[id], let at = position(row) { members.insert(id, at: at) }
                }
                return members.values(in: view)
            }
            var touched = false
            for id in changes.current.changeSet[table].changedIDs {
                let wasMember = members.remove(id)
                if let row = view.storage.rows[id], let at = position(row) {
                    members.insert(id, at: at)
                    touched = true
                } else if wasMember {
                    touched = true
                }
            }
            return touched ? members.values(in: view) : nil
        }
        let token = watchers.registerTable(derived, table: name)
        let registry = watchers
        derived.setUnregister { registry.unregister(token, table: name, ids: []) }
        return derived
    }

    @usableFromInline
    func watch<Value>(_ derived: DerivedQuery<Value>, table: String, ids: [WatchKey]) {
        let token = watchers.register(derived, table: table, ids: ids)
        let registry = watchers
        derived.setUnregister { registry.unregister(token, table: table, ids: ids) }
    }
}
