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
        let key = [WatchKey(id)]
        return registered(filing: .ids(table: name, ids: key)) { state in
            DerivedQuery<E?>(initial: state[table].find(id), revision: state.revision) { commit, _ in
                commit.current[table].find(id)
            }
        }
    }

    /// A derived value for the entity `id` of `table` that keeps its last value after the
    /// entity is removed (VergeORM's non-null derived).
    /// - Throws: ``EntityStoreError/missingID(table:id:)`` if the entity does not exist now.
    /// - Complexity: O(1) to create; O(1) per commit that touches `id`, zero otherwise.
    public func derivedKeepingLast<E: Entity>(_ table: Table<E>, id: E.ID) throws(EntityStoreError) -> DerivedQuery<E> {
        guard let seen = core.committedState[table].find(id) else {
            throw .missingID(table: table.name, id: describeID(id))
        }
        // Removed by a commit published since it was seen: its last value is the one seen.
        return registered(filing: .ids(table: table.name, ids: [WatchKey(id)])) { state in
            DerivedQuery<E>(initial: state[table].find(id) ?? seen, revision: state.revision) { commit, last in
                commit.current[table].find(id) ?? last
            }
        }
    }

    /// A derived value for several entities, in the order of `ids`, skipping absent ones.
    /// - Complexity: O(k) to create and per commit that touches one of the k IDs.
    public func derived<E: Entity>(_ table: Table<E>, ids: [E.ID]) -> DerivedQuery<[E]> {
        let name = table.name
        return registered(filing: .ids(table: name, ids: ids.map { WatchKey($0) })) { state in
            let view = state[table]
            // Whether the rows changed is told from the commit's change set: a row it
            // does not list as updated is the one held, so only updated rows are compared
            // (`ValueIdentity`, which reflects on rows `==` calls equal), not all k.
            return DerivedQuery<[E]>(initial: ids.compactMap { view.find($0) }, revision: state.revision, isSame: { commit, new, old in
                // A commit that replaced everything lists no exact changes: compare all.
                if commit.replacesAll { return ValueIdentity.same(new, old) }
                guard new.count == old.count else { return false }
                let updated = commit.current.changeSet[table].updated
                for index in new.indices {
                    let row = new[index], before = old[index]
                    // Another ID here: one of them was inserted or removed.
                    guard row.id == before.id else { return false }
                    if updated[row.id] != nil, !ValueIdentity.same(row, before) { return false }
                }
                return true
            }) { commit, _ in
                let view = commit.current[table]
                return ids.compactMap { view.find($0) }
            }
        }
    }

    /// The entities whose field `keyPath` equals `key` (all books of author 42), in
    /// insertion order: the rows of the live query
    /// `LiveQuery(table).where(keyPath, equals: key)` (see ``live(_:)->LiveList<E>``).
    ///
    /// Filed under its key: a commit wakes it only when one of its changed rows has or
    /// had `key`. Its value is a persistent ``LiveRows``: nothing is rebuilt per commit.
    /// - Complexity: O(log n + k) to create with a unique or grouped index on the field,
    ///   O(n) without; O(changed rows × log k) per commit that changes a row of this key.
    public func derived<E: Entity, Key: Hashable & Sendable>(
        _ table: Table<E>, where keyPath: any KeyPath<E, Key> & Sendable, equals key: Key
    ) -> DerivedQuery<LiveRows<E>> {
        derivedRows(LiveQuery(table).where(keyPath, equals: key))
    }

    /// The entities whose field `keyPath` lies in `range`, sorted by it (ties in insertion
    /// order): the rows of `LiveQuery(table).where(keyPath, in: range).sorted(by: keyPath)`.
    /// - Complexity: O(log n + k) to create with an ordered index on the field, O(n log n)
    ///   without; O(changed rows × log k) per commit that changes the table.
    public func derived<E: Entity, Key: Comparable & Sendable, Bounds: RangeExpression<Key> & Sendable>(
        _ table: Table<E>, where keyPath: any KeyPath<E, Key> & Sendable, in range: Bounds
    ) -> DerivedQuery<LiveRows<E>> {
        derivedRows(LiveQuery(table).where(keyPath, in: range).sorted(by: keyPath))
    }
}
