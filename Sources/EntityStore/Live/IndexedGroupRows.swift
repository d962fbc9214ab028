import StoreCore

/// The rows of a live equality query that a grouped index answers: the index's group for
/// the key (IDs by insertion sequence) and the table's rows, both as of one revision.
///
/// Nothing is copied per query: the group is the index's own persistent map, and the
/// rows are the table's, so a value costs O(1) to make and to keep, however many rows it
/// has. Holding it keeps that revision of the group and of the table's changed parts
/// alive, as holding an ``EntityState`` does.
@usableFromInline
struct IndexedGroupRows<E: Entity>: RowSnapshot {
    @usableFromInline let group: SortedMap<UInt64, E.ID>
    @usableFromInline let rows: RowMap<E.ID, Row<E>>

    @inlinable
    init(group: SortedMap<UInt64, E.ID>, rows: RowMap<E.ID, Row<E>>) {
        self.group = group
        self.rows = rows
    }

    @inlinable
    var count: Int { group.count }

    /// The offset of `row` (a row of the table at this revision), if it is in the group.
    /// O(log k).
    @inlinable
    func offset(of row: Row<E>) -> Int? {
        guard let found = group.offsetAndValue(of: row.sequence), found.value == row.value.id else { return nil }
        return found.offset
    }

    /// The row of `id` and its offset, if it is in the group. O(log k).
    @inlinable
    func member(_ id: E.ID) -> (offset: Int, row: Row<E>)? {
        guard let row = rows[id], let found = group.offsetAndValue(of: row.sequence), found.value == id else { return nil }
        return (found.offset, row)
    }

    @inlinable
    func entity(at offset: Int) -> E? { group.element(atOffset: offset).flatMap { rows[$0.value]?.value } }
    @inlinable
    func entity(id: E.ID) -> E? { member(id)?.row.value }
    @inlinable
    func offset(id: E.ID) -> Int? { member(id)?.offset }
    @inlinable
    func makeEntityIterator() -> any IteratorProtocol<E> {
        let rows = rows
        return group.lazy.compactMap { rows[$0.value]?.value }.makeIterator()
    }
}

/// The engine of a live equality query with no other filter, no order and no limit,
/// whose field has a grouped index: its rows are the index's group (see
/// ``IndexedGroupRows``). Per commit, each changed row's place in the old and the new
/// group gives the diff: O(changed rows × log k) for a group of k rows, with no copy of
/// any row and no structure of its own to update.
@usableFromInline
struct IndexedGroupWindow<E: Entity>: Sendable {
    @usableFromInline let table: String
    /// The group of the query's key in a table's grouped index on the field; nil when the
    /// table has no such index (a restore keeps the schema, so it always has one here).
    @usableFromInline let group: @Sendable (any AnyTableStorage) -> SortedMap<UInt64, E.ID>?
    /// Whether a row has the query's key.
    @usableFromInline let matches: @Sendable (E) -> Bool
    @usableFromInline let origin: UInt64
    @usableFromInline var generation: UInt64 = 0
    @usableFromInline var value: IndexedGroupRows<E>

    @inlinable
    init(
        table: String, group: @escaping @Sendable (any AnyTableStorage) -> SortedMap<UInt64, E.ID>?,
        matches: @escaping @Sendable (E) -> Bool, state: EntityState, origin: UInt64
    ) {
        self.table = table
        self.group = group
        self.matches = matches
        self.origin = origin
        self.value = IndexedGroupRows(
            group: state.tableStorage(named: table).flatMap(group) ?? SortedMap(), rows: state.rows(named: table, as: E.self) ?? RowMap())
    }

    @inlinable
    var rows: LiveRows<E> { LiveRows(storage: value, origin: origin, generation: generation) }

    @inlinable
    mutating func apply(_ commit: DeliveredCommit) -> LiveDiff<E>? {
        // A restore, or a raw core commit whose change set does not lead from the previous
        // state: the whole group is compared once.
        if commit.replacesAll {
            guard let storage = commit.current.tableStorage(named: table), let tableRows = storage.rows(as: E.self) else { return nil }
            let new = IndexedGroupRows(group: group(storage) ?? SortedMap(), rows: tableRows)
            let old = rows
            let replaced = LiveRows(storage: new, origin: origin, generation: generation + 1)
            // Equal rows deliver nothing, but the group's sequences become the restored
            // state's, which later commits are placed against.
            value = new
            if old.count == replaced.count, old.elementsEqual(replaced, by: ValueIdentity.same) { return nil }
            generation += 1
            return .replacing(old, with: replaced)
        }
        guard let changed = commit.table(table, as: E.self) else { return nil }
        let new = IndexedGroupRows(group: group(changed.storage) ?? SortedMap(), rows: changed.rows)
        let old = value
        var removed: [LiveDiff<E>.Removal] = []
        var inserted: [LiveDiff<E>.Insertion] = []
        var updated: [LiveDiff<E>.Insertion] = []
        var moved: [LiveDiff<E>.Move] = []
        let matches = matches
        /// A changed row's old place: its previous value (from the change set) says whether
        /// it had the key; its sequence is the new row's unless it was removed and inserted
        /// again, and only then, or for a removed row, is it read from the value's own
        /// revision (a row of the group cannot have changed since without waking this
        /// query).
        func oldPlace(_ id: E.ID, previous: E, sequence: UInt64?) -> (offset: Int, sequence: UInt64)? {
            guard matches(previous) else { return nil }
            if let sequence, let found = old.group.offsetAndValue(of: sequence), found.value == id { return (found.offset, sequence) }
            return old.member(id).map { ($0.offset, $0.row.sequence) }
        }
        /// Compares the place of an updated row (`previous` before the commit, `row` after)
        /// in the old and new group.
        func compare(previous: E, row: Row<E>) {
            let id = row.value.id
            let before = oldPlace(id, previous: previous, sequence: row.sequence)
            guard let offset = new.offset(of: row) else {
                if let before { removed.append(.init(offset: before.offset, id: id)) }
                return
            }
            guard let before else {
                inserted.append(.init(offset: offset, entity: row.value))
                return
            }
            if before.sequence != row.sequence {
                moved.append(.init(from: before.offset, to: offset, entity: row.value))
            } else if !ValueIdentity.same(previous, row.value) {
                updated.append(.init(offset: offset, entity: row.value))
            }
        }
        // By index: an element's fields are read in place, where a `for-in` copies each
        // element out (a retain of every reference it holds) first.
        let changedRows = changed.updated, insertedRows = changed.inserted
        for index in changedRows.indices { compare(previous: changedRows[index].previous, row: changedRows[index].row) }
        for (id, previous) in changed.removed {
            if let before = oldPlace(id, previous: previous, sequence: nil) { removed.append(.init(offset: before.offset, id: id)) }
        }
        for index in insertedRows.indices {
            if let offset = new.offset(of: insertedRows[index]) { inserted.append(.init(offset: offset, entity: insertedRows[index].value)) }
        }
        if removed.isEmpty, inserted.isEmpty, updated.isEmpty, moved.isEmpty { return nil }
        if removed.count > 1 { removed.sort { $0.offset < $1.offset } }
        if inserted.count > 1 { inserted.sort { $0.offset < $1.offset } }
        if updated.count > 1 { updated.sort { $0.offset < $1.offset } }
        if moved.count > 1 { moved.sort { $0.to < $1.to } }
        value = new
        generation += 1
        return LiveDiff(removed: removed, inserted: inserted, updated: updated, moved: moved)
    }
}
