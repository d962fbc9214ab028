import HashTreeCollections
import StoreCore

/// A row engine as two closures over one locked ``RowWindow``, made where the window's
/// concrete type is known: both run specialized for the caller's entity and ordering
/// (called through a protocol instead, the window's methods would run as unspecialized
/// generic code, which looks up type metadata and copies values through witness tables
/// on every step).
@usableFromInline
struct RowEngineHandle<E: Entity>: Sendable {
    /// The current rows. O(1).
    @usableFromInline let rows: @Sendable () -> LiveRows<E>
    /// Brings the rows up to the state after a commit; returns the diff, or nil if the
    /// rows did not change.
    @usableFromInline let apply: @Sendable (DeliveredCommit) -> LiveDiff<E>?
    /// `apply` and `rows` under one lock: the new rows with their diff, or nil.
    @usableFromInline let update: @Sendable (DeliveredCommit) -> LiveUpdate<LiveRows<E>, LiveDiff<E>>?

    @inlinable
    init<Ordering: RowOrdering<E>>(_ window: RowWindow<E, Ordering>) {
        let engine = Lock(window)
        rows = { engine.withLock { $0.rows } }
        apply = { commit in engine.withLock { $0.apply(commit) } }
        update = { commit in
            engine.withLock { engine in engine.apply(commit).map { LiveUpdate(value: engine.rows, diff: $0, revision: commit.revision) } }
        }
    }

    @inlinable
    init(_ window: IndexedGroupWindow<E>) {
        let engine = Lock(window)
        rows = { engine.withLock { $0.rows } }
        apply = { commit in engine.withLock { $0.apply(commit) } }
        update = { commit in
            engine.withLock { engine in engine.apply(commit).map { LiveUpdate(value: engine.rows, diff: $0, revision: commit.revision) } }
        }
    }
}

/// The rows of a live query kept sorted by `Ordering`'s position; with a limit, the first
/// `limit` of them (a top-k window).
///
/// Per commit, each changed row of the table leaves the window and re-enters it if it
/// still qualifies and sorts at or before the window's last position (anywhere while the
/// window is not full, since it then holds every qualifying row). The window is then cut
/// back to the limit, or, if it was full and lost members, refilled with the qualifying
/// rows just after its old last position: by walking an ordered index in position order
/// when the ordering can (O(log n + rows skipped)), otherwise from the source's rows
/// (O(s log s) for a source of s rows). Cost: O(changed rows × log k), plus the refill.
@usableFromInline
struct RowWindow<E: Entity, Ordering: RowOrdering<E>>: Sendable {
    @usableFromInline typealias Position = Ordering.Position

    /// The parts of the query the engine uses, kept apart so that a commit copies no query.
    @usableFromInline let table: String
    @usableFromInline let limit: Int?
    @usableFromInline let qualifies: @Sendable (E) -> Bool
    @usableFromInline let candidates: (@Sendable (TableStorage<E>) -> [E.ID]?)?
    @usableFromInline let ordering: Ordering
    @usableFromInline let origin: UInt64
    @usableFromInline var generation: UInt64 = 0
    @usableFromInline var snapshot = SortedRows<E, Position>()

    @inlinable
    init(query: LiveQuery<E>, ordering: Ordering, state: EntityState, origin: UInt64) {
        self.table = query.table.name
        self.limit = query.limitValue
        self.qualifies = query.qualifier
        self.candidates = query.source.candidates
        self.ordering = ordering
        self.origin = origin
        if let storage = state.storage(named: table, as: E.self) { fill(from: storage) }
    }

    @inlinable
    var rows: LiveRows<E> { LiveRows(storage: snapshot, origin: origin, generation: generation) }

    @inlinable
    mutating func fill(from storage: TableStorage<E>) {
        snapshot = SortedRows()
        for found in qualifyingRows(in: storage, after: nil, needed: limit) {
            snapshot.insert(found.entity, at: found.position)
        }
    }

    /// A qualifying row and its position.
    @usableFromInline
    struct Found {
        @usableFromInline let position: Position
        @usableFromInline let entity: E

        @inlinable
        init(position: Position, entity: E) {
            self.position = position
            self.entity = entity
        }
    }

    /// The first `needed` (all when nil) qualifying rows of `storage` after `boundary`, in
    /// order. With a limit, walks an index in position order when the ordering can;
    /// otherwise reads the source's candidates from its index, else scans the table, and
    /// sorts what qualifies.
    @inlinable
    func qualifyingRows(in storage: TableStorage<E>, after boundary: Position?, needed: Int?) -> [Found] {
        if needed == 0 { return [] }
        let qualifies = qualifies
        var found: [Found] = []
        if let needed {
            let walked = ordering.walk(storage, after: boundary) { id in
                guard let row = storage.rows[id], qualifies(row.value) else { return true }
                found.append(Found(position: ordering.position(of: row), entity: row.value))
                return found.count < needed
            }
            if walked { return found }
        }
        func consider(_ row: Row<E>) {
            guard qualifies(row.value) else { return }
            let position = ordering.position(of: row)
            if let boundary, !(boundary < position) { return }
            found.append(Found(position: position, entity: row.value))
        }
        if let candidates = candidates?(storage) {
            for id in candidates { if let row = storage.rows[id] { consider(row) } }
        } else {
            for (_, id) in storage.order { if let row = storage.rows[id] { consider(row) } }
        }
        found.sort { $0.position < $1.position }
        if let needed, found.count > needed { found.removeLast(found.count - needed) }
        return found
    }

    @inlinable
    mutating func apply(_ commit: DeliveredCommit) -> LiveDiff<E>? {
        // A restore, or a raw core commit whose change set does not lead from the previous
        // state: re-evaluate once.
        if commit.replacesAll {
            guard let storage = commit.current.storage(named: table, as: E.self) else { return nil }
            return replaceAll(from: storage)
        }
        guard let changed = commit.table(table, as: E.self) else { return nil }
        let table = table
        return applyInPlace(changed) { commit.current.storage(named: table, as: E.self) }
    }

    /// A row's place in the rows before the commit.
    @usableFromInline
    struct Before {
        @usableFromInline let position: Position
        @usableFromInline let offset: Int
        /// Its value; nil for an unchanged row a cut evicts (it cannot be an update).
        @usableFromInline let entity: E?

        @inlinable
        init(position: Position, offset: Int, entity: E?) {
            self.position = position
            self.offset = offset
            self.entity = entity
        }
    }

    /// A changed row that belongs to the rows after the commit (before any cut).
    @usableFromInline
    struct Entering {
        @usableFromInline let id: E.ID
        @usableFromInline let position: Position
        @usableFromInline let entity: E

        @inlinable
        init(id: E.ID, position: Position, entity: E) {
            self.id = id
            self.position = position
            self.entity = entity
        }
    }

    /// Brings the rows up to the commit in place: everything the diff needs from the old
    /// rows (the changed rows' offsets and values, and with a limit the offsets of the
    /// unchanged rows a cut will evict) is read first, then the rows change in place (the
    /// engine is their only holder between commits, unless an observer kept a delivered
    /// value), so no path of the persistent structures is copied. Each changed row of the
    /// table leaves and re-enters if it still qualifies and, in a full window, sorts at or
    /// before its old last position; the window is then cut back to the limit, or
    /// refilled after its old last position if it lost members. O(changed rows × log k),
    /// plus the refill.
    @inlinable
    mutating func applyInPlace(_ changed: TableCommit<E>, storage: () -> TableStorage<E>?) -> LiveDiff<E>? {
        let qualifies = qualifies, ordering = ordering
        let wasFull = limit.map { snapshot.count >= $0 } ?? false
        let boundary = wasFull ? snapshot.rows.last?.key : nil

        // Read: the changed rows' old places, and where they go.
        var before = SmallMap<E.ID, Before>()
        func record(_ id: E.ID) {
            guard let position = snapshot.positions[id], let offset = snapshot.rows.offset(of: position),
                  let entity = snapshot.rows[position]
            else { return }
            before.set(Before(position: position, offset: offset, entity: entity), for: id)
        }
        // By index: an element's fields are read in place, where a `for-in` copies each
        // element out (a retain of every reference it holds) first.
        let changedRows = changed.updated, insertedRows = changed.inserted
        for index in changedRows.indices { record(changedRows[index].row.value.id) }
        for id in changed.removed.keys { record(id) }
        var entering: [Entering] = []
        func consider(_ row: Row<E>) {
            guard qualifies(row.value) else { return }
            let position = ordering.position(of: row)
            if let boundary, !(position <= boundary) { return }
            entering.append(Entering(id: row.value.id, position: position, entity: row.value))
        }
        for index in changedRows.indices { consider(changedRows[index].row) }
        for index in insertedRows.indices { consider(insertedRows[index]) }
        // An unchanged row a cut evicts is among the old rows' last `cuts + before.count`
        // (only changed rows and rows cut with it can follow it): their old offsets are
        // read now, while the old rows are still there.
        var evictable = SmallMap<E.ID, Before>()
        if let limit {
            let cuts = snapshot.count - before.count + entering.count - limit
            if cuts > 0 {
                let count = snapshot.count
                for offset in Swift.max(0, count - cuts - before.count)..<count {
                    guard let element = snapshot.rows.element(atOffset: offset), before[element.value.id] == nil else { continue }
                    evictable.set(Before(position: element.key, offset: offset, entity: nil), for: element.value.id)
                }
            }
        }

        // Write: the changed rows leave and re-enter, then the cut or the refill.
        var touched = before.keys
        // A set only for large commits: for the usual few rows, a scan costs less.
        let enteringIDs = entering.count > 8 ? Set(entering.lazy.map(\.id)) : nil
        for id in before.keys where !(enteringIDs?.contains(id) ?? entering.contains { $0.id == id }) { snapshot.remove(id) }
        for row in entering {
            if let old = before[row.id], old.position == row.position {
                snapshot.rows.updateValue(row.entity, forKey: row.position)
                continue
            }
            if before[row.id] != nil { snapshot.remove(row.id) } else { touched.append(row.id) }
            snapshot.insert(row.entity, at: row.position)
        }
        if let limit {
            while snapshot.count > limit, let last = snapshot.rows.last {
                snapshot.remove(last.value.id)
                if evictable[last.value.id] != nil { touched.append(last.value.id) }
            }
            // The whole table is read only for a refill (its index or order).
            if wasFull, snapshot.count < limit, let storage = storage() {
                for found in qualifyingRows(in: storage, after: boundary, needed: limit - snapshot.count) {
                    snapshot.insert(found.entity, at: found.position)
                    // A changed row that now sorts after the old boundary is touched already.
                    if before[found.entity.id] == nil { touched.append(found.entity.id) }
                }
            }
        }

        // The diff: each touched row's old place against its new one.
        var removed: [LiveDiff<E>.Removal] = []
        var inserted: [LiveDiff<E>.Insertion] = []
        var updated: [LiveDiff<E>.Insertion] = []
        var moved: [LiveDiff<E>.Move] = []
        for id in touched {
            let old = before[id] ?? evictable[id]
            guard let position = snapshot.positions[id], let offset = snapshot.rows.offset(of: position),
                  let entity = snapshot.rows[position]
            else {
                if let old { removed.append(.init(offset: old.offset, id: id)) }
                continue
            }
            guard let old else {
                inserted.append(.init(offset: offset, entity: entity))
                continue
            }
            if old.position != position {
                moved.append(.init(from: old.offset, to: offset, entity: entity))
            } else if !ValueIdentity.same(old.entity, entity) {
                updated.append(.init(offset: offset, entity: entity))
            }
        }
        if removed.isEmpty, inserted.isEmpty, updated.isEmpty, moved.isEmpty { return nil }
        if removed.count > 1 { removed.sort { $0.offset < $1.offset } }
        if inserted.count > 1 { inserted.sort { $0.offset < $1.offset } }
        if updated.count > 1 { updated.sort { $0.offset < $1.offset } }
        if moved.count > 1 { moved.sort { $0.to < $1.to } }
        generation += 1
        return LiveDiff(removed: removed, inserted: inserted, updated: updated, moved: moved)
    }

    /// Re-evaluates from scratch after a restore; the diff replaces every row.
    @inlinable
    mutating func replaceAll(from storage: TableStorage<E>) -> LiveDiff<E>? {
        let old = rows
        fill(from: storage)
        let new = LiveRows(storage: snapshot, origin: origin, generation: generation + 1)
        // Equal rows deliver nothing, but the window keeps the new snapshot: its rows'
        // positions (insertion sequences) are the restored state's, which later commits
        // are placed against, not the ones the rows had before.
        if old.count == new.count, old.elementsEqual(new, by: ValueIdentity.same) { return nil }
        generation += 1
        return .replacing(old, with: new)
    }
}
