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
    @usableFromInline let apply: @Sendable (Changes<EntityState>) -> LiveDiff<E>?

    @inlinable
    init<Ordering: RowOrdering<E>>(_ window: RowWindow<E, Ordering>) {
        let engine = Lock(window)
        rows = { engine.withLock { $0.rows } }
        apply = { changes in engine.withLock { $0.apply(changes) } }
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

    /// A changed row's position in the window before and after a commit.
    @usableFromInline
    struct Touch {
        @usableFromInline var old: Position?
        @usableFromInline var new: Position?

        @inlinable
        init(old: Position?, new: Position?) {
            self.old = old
            self.new = new
        }
    }

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
    mutating func apply(_ changes: Changes<EntityState>) -> LiveDiff<E>? {
        guard let storage = changes.current.storage(named: table, as: E.self) else { return nil }
        // A restore, or a raw core commit whose change set does not lead from the previous
        // state: re-evaluate once.
        if changes.current.changeSet.replacedAll || !changes.current.followsByChangeSet(changes.previous) {
            return replaceAll(from: storage)
        }
        guard let tableChanges = changes.current.changeSet.tables[table] as? TableChanges<E>, !tableChanges.isEmpty
        else { return nil }
        guard let limit else { return applyInPlace(tableChanges, storage) }

        let old = snapshot
        let qualifies = qualifies, ordering = ordering
        let wasFull = old.count >= limit
        let boundary = wasFull ? old.rows.last?.key : nil
        var touched: [E.ID: Touch] = [:]

        func reconsider(_ id: E.ID) {
            let before = snapshot.remove(id)
            var after: Position?
            if let row = storage.rows[id], qualifies(row.value) {
                let position = ordering.position(of: row)
                if !wasFull || boundary.map({ position <= $0 }) ?? true {
                    snapshot.insert(row.value, at: position)
                    after = position
                }
            }
            if before != nil || after != nil { touched[id] = Touch(old: before, new: after) }
        }
        for id in tableChanges.inserted { reconsider(id) }
        for id in tableChanges.updated.keys { reconsider(id) }
        for id in tableChanges.removed.keys { reconsider(id) }

        do {
            while snapshot.count > limit, let last = snapshot.rows.last {
                snapshot.remove(last.value.id)
                touched[last.value.id, default: Touch(old: last.key, new: nil)].new = nil
            }
            if wasFull, snapshot.count < limit {
                for found in qualifyingRows(in: storage, after: boundary, needed: limit - snapshot.count) {
                    snapshot.insert(found.entity, at: found.position)
                    touched[found.entity.id, default: Touch(old: nil, new: nil)].new = found.position
                }
            }
        }
        guard let diff = Self.diff(touched, old: old, new: snapshot) else { return nil }
        generation += 1
        return diff
    }

    /// A changed row's place in the rows before the commit.
    @usableFromInline
    struct Before {
        @usableFromInline let position: Position
        @usableFromInline let offset: Int
        @usableFromInline let entity: E

        @inlinable
        init(position: Position, offset: Int, entity: E) {
            self.position = position
            self.offset = offset
            self.entity = entity
        }
    }

    /// `apply` for a query without a limit, whose changed rows are exactly the table's:
    /// the old offsets are read first, then the rows change in place (the engine is their
    /// only holder between commits, unless an observer kept a delivered value), so no
    /// path of the persistent structures is copied. O(changed rows × log k).
    @inlinable
    mutating func applyInPlace(_ tableChanges: TableChanges<E>, _ storage: TableStorage<E>) -> LiveDiff<E>? {
        var before: [E.ID: Before] = [:]
        func record(_ id: E.ID) {
            guard let position = snapshot.positions[id], let offset = snapshot.rows.offset(of: position),
                  let entity = snapshot.rows[position]
            else { return }
            before[id] = Before(position: position, offset: offset, entity: entity)
        }
        for id in tableChanges.updated.keys { record(id) }
        for id in tableChanges.removed.keys { record(id) }

        let qualifies = qualifies, ordering = ordering
        var after: [E.ID: Position] = [:]
        for id in tableChanges.removed.keys where before[id] != nil { snapshot.remove(id) }
        func enter(_ id: E.ID) {
            guard let row = storage.rows[id], qualifies(row.value) else {
                if before[id] != nil { snapshot.remove(id) }
                return
            }
            let position = ordering.position(of: row)
            if let old = before[id], old.position == position {
                snapshot.rows.updateValue(row.value, forKey: position)
            } else {
                if before[id] != nil { snapshot.remove(id) }
                snapshot.insert(row.value, at: position)
            }
            after[id] = position
        }
        for id in tableChanges.updated.keys { enter(id) }
        for id in tableChanges.inserted { enter(id) }

        var removed: [LiveDiff<E>.Removal] = []
        var inserted: [LiveDiff<E>.Insertion] = []
        var updated: [LiveDiff<E>.Insertion] = []
        var moved: [LiveDiff<E>.Move] = []
        for (id, old) in before where after[id] == nil { removed.append(.init(offset: old.offset, id: id)) }
        for (id, position) in after {
            guard let offset = snapshot.rows.offset(of: position), let entity = snapshot.rows[position] else { continue }
            if let old = before[id] {
                if old.position != position {
                    moved.append(.init(from: old.offset, to: offset, entity: entity))
                } else if old.entity != entity {
                    updated.append(.init(offset: offset, entity: entity))
                }
            } else {
                inserted.append(.init(offset: offset, entity: entity))
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
        let oldSnapshot = snapshot
        fill(from: storage)
        let new = LiveRows(storage: snapshot, origin: origin, generation: generation + 1)
        if old.count == new.count, old.elementsEqual(new) {
            snapshot = oldSnapshot
            return nil
        }
        generation += 1
        return .replacing(old, with: new)
    }

    /// The diff of `touched` rows between `old` and `new`, nil when empty. O(touched × log k).
    @inlinable
    static func diff(_ touched: [E.ID: Touch], old: SortedRows<E, Position>, new: SortedRows<E, Position>) -> LiveDiff<E>? {
        var removed: [LiveDiff<E>.Removal] = []
        var inserted: [LiveDiff<E>.Insertion] = []
        var updated: [LiveDiff<E>.Insertion] = []
        var moved: [LiveDiff<E>.Move] = []
        for (id, positions) in touched {
            switch (positions.old, positions.new) {
            case let (before?, nil):
                if let offset = old.rows.offset(of: before) { removed.append(.init(offset: offset, id: id)) }
            case let (nil, after?):
                if let offset = new.rows.offset(of: after), let entity = new.rows[after] {
                    inserted.append(.init(offset: offset, entity: entity))
                }
            case let (before?, after?):
                guard let from = old.rows.offset(of: before), let to = new.rows.offset(of: after),
                      let entity = new.rows[after]
                else { continue }
                if before == after {
                    if old.rows[before] != entity { updated.append(.init(offset: to, entity: entity)) }
                } else {
                    moved.append(.init(from: from, to: to, entity: entity))
                }
            case (nil, nil):
                continue
            }
        }
        if removed.isEmpty, inserted.isEmpty, updated.isEmpty, moved.isEmpty { return nil }
        if removed.count > 1 { removed.sort { $0.offset < $1.offset } }
        if inserted.count > 1 { inserted.sort { $0.offset < $1.offset } }
        if updated.count > 1 { updated.sort { $0.offset < $1.offset } }
        if moved.count > 1 { moved.sort { $0.to < $1.to } }
        return LiveDiff(removed: removed, inserted: inserted, updated: updated, moved: moved)
    }
}
