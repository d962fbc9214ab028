import StoreCore

/// A commit as the watcher registry hands it to the key readers and watchers it wakes:
/// its changes, and each changed table's changes read once, typed.
///
/// Every live query of a table needs the same things from a commit: the table's changes
/// (a cast out of the change set's existential), its rows after the commit (a lookup by
/// table name) and the new row of each changed ID (a row-map probe). Read once here, a
/// commit that wakes five queries of a table pays for them once instead of five times.
///
/// Made by ``WatcherRegistry/dispatch(_:)`` for one delivery and used on the delivering
/// thread only, never kept: it needs no lock.
@usableFromInline
final class DeliveredCommit {
    /// The transition being delivered.
    @usableFromInline let changes: Changes<EntityState>
    /// The store version of the commit (``StoreCore/Changes/version``) and the revision
    /// of the state after it, kept apart: reading them through `changes` copies the states
    /// (a retain of each of their parts) at every woken watcher.
    @usableFromInline let version: UInt64
    @usableFromInline let revision: UInt64
    /// Whether the change set does not say what changed: a restore, or a raw core commit
    /// to a state its change set does not lead from (an undo). Every watcher then
    /// re-evaluates from the state.
    @usableFromInline let replacesAll: Bool
    /// The tables read so far, one slot per changed table (a commit changes one or two,
    /// so a scan comparing names, whose equal strings compare their bits first, costs less
    /// than hashing one). Raw memory rather than an array in a stored `var`: the commit is
    /// confined to the delivering thread, and a class's stored `var` costs a dynamic
    /// exclusivity check on every access, several per woken watcher.
    private let slots: UnsafeMutableBufferPointer<Entry?>

    @usableFromInline
    struct Entry {
        @usableFromInline let name: String
        @usableFromInline let entityType: ObjectIdentifier
        @usableFromInline let table: AnyObject

        @inlinable
        init(name: String, entityType: ObjectIdentifier, table: AnyObject) {
            self.name = name
            self.entityType = entityType
            self.table = table
        }
    }

    @usableFromInline
    init(_ changes: Changes<EntityState>) {
        self.changes = changes
        self.version = changes.version
        self.revision = changes.current.revision
        let changeSet = changes.current.changeSet
        self.replacesAll = changes.current.exactChanges(since: changes.previous) == nil
        // A table is read only when it changed, so it has a slot.
        slots = .allocate(capacity: changeSet.tables.count)
        slots.initialize(repeating: nil)
    }

    deinit {
        _ = slots.deinitialize()
        slots.deallocate()
    }

    /// The state after the commit.
    @inlinable
    var current: EntityState { changes.current }

    /// What the commit changed in the table named `name` of `E`, read once per commit; nil
    /// when the table did not change (or is not a table of `E`). O(changed rows of the
    /// table) the first time, O(tables read) after.
    @inlinable
    func table<E: Entity>(_ name: String, as type: E.Type) -> TableCommit<E>? {
        if let entry = entry(named: name) {
            guard entry.entityType == ObjectIdentifier(E.self) else { return nil }
            // The entry was made below for `E` (checked just above).
            return unsafeDowncast(entry.table, to: TableCommit<E>.self)
        }
        guard let changes = current.changeSet.tables[name]?.typed(as: E.self), !changes.isEmpty,
              let storage = current.tableStorage(named: name), let rows = storage.rows(as: E.self)
        else { return nil }
        let table = TableCommit(changes: changes, rows: rows, storage: storage)
        record(Entry(name: name, entityType: ObjectIdentifier(E.self), table: table))
        return table
    }

    /// The table named `name` read so far, if any. O(tables read).
    @usableFromInline
    func entry(named name: String) -> Entry? {
        for slot in slots {
            guard let entry = slot else { return nil }
            if entry.name == name { return entry }
        }
        return nil
    }

    /// Keeps `entry` in the first free slot (there is one: only a changed table is read,
    /// once).
    @usableFromInline
    func record(_ entry: Entry) {
        guard let free = slots.firstIndex(where: { $0 == nil }) else { return }
        slots[free] = entry
    }
}

/// What one commit changed in one table of `E`, with the rows it changed read from the
/// table after the commit. Made by ``DeliveredCommit/table(_:as:)``.
@usableFromInline
final class TableCommit<E: Entity> {
    /// An updated row: its value before the commit and its row after.
    @usableFromInline
    struct Update {
        @usableFromInline let previous: E
        @usableFromInline let row: Row<E>

        @inlinable
        init(previous: E, row: Row<E>) {
            self.previous = previous
            self.row = row
        }
    }

    /// The table's change set.
    @usableFromInline let changes: TableChanges<E>
    /// The table's rows after the commit.
    @usableFromInline let rows: RowMap<E.ID, Row<E>>
    /// The table after the commit, for reading its indexes.
    @usableFromInline let storage: any AnyTableStorage
    /// The updated rows, in the change set's order.
    @usableFromInline let updated: [Update]
    /// The inserted rows, in insertion order.
    @usableFromInline let inserted: [Row<E>]

    /// Reads the changed rows: one row-map probe per updated or inserted ID.
    /// O(changed rows).
    @inlinable
    init(changes: TableChanges<E>, rows: RowMap<E.ID, Row<E>>, storage: any AnyTableStorage) {
        self.changes = changes
        self.rows = rows
        self.storage = storage
        var updated: [Update] = []
        updated.reserveCapacity(changes.updated.count)
        // Updated and inserted IDs exist after the commit; a missing one (a change set
        // that does not describe this state) is skipped rather than trusted.
        for (id, previous) in changes.updated {
            if let row = rows[id] { updated.append(Update(previous: previous, row: row)) }
        }
        var inserted: [Row<E>] = []
        inserted.reserveCapacity(changes.inserted.count)
        for id in changes.inserted {
            if let row = rows[id] { inserted.append(row) }
        }
        self.updated = updated
        self.inserted = inserted
    }

    /// The removed entities with their last value.
    @inlinable
    var removed: [E.ID: E] { changes.removed }
}
