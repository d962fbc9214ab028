import HashTreeCollections
import StoreCore

/// The incremental engine of a row live query, erased over its position type.
protocol RowEngine<E>: Sendable {
    associatedtype E: Entity
    /// The current rows. O(1).
    var rows: LiveRows<E> { get }
    /// Brings the rows up to the state after `changes`; returns the diff, or nil if the
    /// rows did not change.
    mutating func apply(_ changes: Changes<EntityState>) -> LiveDiff<E>?
}

extension RowOrdering {
    /// An engine for `query` sorted by this ordering, with the rows of `state`.
    func makeEngine(_ query: LiveQuery<E>, state: EntityState, origin: UInt64) -> any RowEngine<E> {
        RowWindow(query: query, ordering: self, state: state, origin: origin)
    }
}

/// The rows of a live query kept sorted by `Ordering`'s position; with a limit, the first
/// `limit` of them (a top-k window).
///
/// Per commit, each changed row of the table leaves the window and re-enters it if it
/// still qualifies and sorts at or before the window's last position (anywhere while the
/// window is not full, since it then holds every qualifying row). The window is then cut
/// back to the limit, or, if it was full and lost members, refilled with the qualifying
/// rows just after its old last position: from an index in position order when there is
/// one, otherwise from the source's candidates. Cost: O(changed rows × log k), plus the
/// refill (O(log n + rows skipped) through an ordered index).
struct RowWindow<E: Entity, Ordering: RowOrdering<E>>: RowEngine {
    typealias Position = Ordering.Position

    let query: LiveQuery<E>
    let ordering: Ordering
    let origin: UInt64
    private(set) var generation: UInt64 = 0
    private var snapshot = SortedRows<E, Position>()

    init(query: LiveQuery<E>, ordering: Ordering, state: EntityState, origin: UInt64) {
        self.query = query
        self.ordering = ordering
        self.origin = origin
        if let storage = state.storage(named: query.table.name, as: E.self) { fill(from: storage) }
    }

    var rows: LiveRows<E> { LiveRows(storage: snapshot, origin: origin, generation: generation) }

    private mutating func fill(from storage: TableStorage<E>) {
        snapshot = SortedRows()
        for (position, entity) in qualifyingRows(in: storage, after: nil, needed: query.limitCount) {
            snapshot.insert(entity, at: position)
        }
    }

    /// The first `needed` (all when nil) qualifying rows of `storage` after `boundary`, in
    /// order. Reads the source's index candidates when it has them (a key's group, a
    /// range), else walks an index in position order, else scans the table.
    private func qualifyingRows(in storage: TableStorage<E>, after boundary: Position?, needed: Int?) -> [(Position, E)] {
        if needed == 0 { return [] }
        let candidates = query.source.candidates(in: storage)
        if candidates == nil, needed != nil {
            var found: [(Position, E)] = []
            let walked = ordering.walk(storage, after: boundary) { id in
                guard let row = storage.rows[id], query.qualifies(row.value) else { return true }
                found.append((ordering.position(of: row), row.value))
                return needed.map { found.count < $0 } ?? true
            }
            if walked { return found }
        }
        var found: [(Position, E)] = []
        func consider(_ row: Row<E>) {
            guard query.qualifies(row.value) else { return }
            let position = ordering.position(of: row)
            if let boundary, !(boundary < position) { return }
            found.append((position, row.value))
        }
        if let candidates {
            for id in candidates { if let row = storage.rows[id] { consider(row) } }
        } else {
            for (_, id) in storage.order { if let row = storage.rows[id] { consider(row) } }
        }
        found.sort { $0.0 < $1.0 }
        if let needed, found.count > needed { found.removeLast(found.count - needed) }
        return found
    }

    mutating func apply(_ changes: Changes<EntityState>) -> LiveDiff<E>? {
        let table = query.table.name
        guard let storage = changes.current.storage(named: table, as: E.self) else { return nil }
        // A restore, or a raw core commit whose change set does not lead from the previous
        // state: re-evaluate once.
        if changes.current.changeSet.replacedAll || !changes.current.followsByChangeSet(changes.previous) {
            return replaceAll(from: storage)
        }
        guard let tableChanges = changes.current.changeSet.tables[table] as? TableChanges<E>, !tableChanges.isEmpty
        else { return nil }

        let old = snapshot
        let limit = query.limitCount
        let wasFull = limit.map { old.count >= $0 } ?? false
        let boundary = wasFull ? old.rows.last?.key : nil
        /// Each touched row's position before and after.
        var touched: [E.ID: (old: Position?, new: Position?)] = [:]

        func reconsider(_ id: E.ID) {
            let before = snapshot.remove(id)
            var after: Position?
            if let row = storage.rows[id], query.qualifies(row.value) {
                let position = ordering.position(of: row)
                if !wasFull || boundary.map({ position <= $0 }) ?? true {
                    snapshot.insert(row.value, at: position)
                    after = position
                }
            }
            if before != nil || after != nil { touched[id] = (before, after) }
        }
        for id in tableChanges.inserted { reconsider(id) }
        for id in tableChanges.updated.keys { reconsider(id) }
        for id in tableChanges.removed.keys { reconsider(id) }

        if let limit {
            while snapshot.count > limit, let last = snapshot.rows.last {
                snapshot.remove(last.value.id)
                touched[last.value.id, default: (last.key, nil)].new = nil
            }
            if wasFull, snapshot.count < limit {
                for (position, entity) in qualifyingRows(in: storage, after: boundary, needed: limit - snapshot.count) {
                    snapshot.insert(entity, at: position)
                    touched[entity.id, default: (nil, nil)].new = position
                }
            }
        }
        let diff = Self.diff(touched, old: old, new: snapshot)
        if diff.isEmpty { return nil }
        generation += 1
        return diff
    }

    /// Re-evaluates from scratch after a restore; the diff replaces every row.
    private mutating func replaceAll(from storage: TableStorage<E>) -> LiveDiff<E>? {
        let old = rows
        fill(from: storage)
        let new = LiveRows(storage: snapshot, origin: origin, generation: generation + 1)
        if old.count == new.count, old.elementsEqual(new) {
            snapshot = old.storage as? SortedRows<E, Position> ?? snapshot
            return nil
        }
        generation += 1
        return .replacing(old, with: new)
    }

    /// The diff of `touched` rows between `old` and `new`. O(touched × log k).
    private static func diff(
        _ touched: [E.ID: (old: Position?, new: Position?)], old: SortedRows<E, Position>, new: SortedRows<E, Position>
    ) -> LiveDiff<E> {
        var diff = LiveDiff<E>()
        for (id, positions) in touched {
            switch (positions.old, positions.new) {
            case let (before?, nil):
                if let offset = old.rows.offset(of: before) { diff.removed.append(.init(offset: offset, id: id)) }
            case let (nil, after?):
                if let offset = new.rows.offset(of: after), let entity = new.rows[after] {
                    diff.inserted.append(.init(offset: offset, entity: entity))
                }
            case let (before?, after?):
                guard let from = old.rows.offset(of: before), let to = new.rows.offset(of: after),
                      let entity = new.rows[after]
                else { continue }
                if before == after {
                    if old.rows[before] != entity { diff.updated.append(.init(offset: to, entity: entity)) }
                } else {
                    diff.moved.append(.init(from: from, to: to, entity: entity))
                }
            case (nil, nil):
                continue
            }
        }
        diff.removed.sort { $0.offset < $1.offset }
        diff.inserted.sort { $0.offset < $1.offset }
        diff.updated.sort { $0.offset < $1.offset }
        diff.moved.sort { $0.to < $1.to }
        return diff
    }
}
