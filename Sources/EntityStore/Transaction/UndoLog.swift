import HashTreeCollections
/// What a bulk call has applied so far, so that a failure part-way can put the table and
/// its change tracker back exactly as they were, in O(applied elements).
@usableFromInline
struct UndoLog<E: Entity> {
    @usableFromInline
    enum Entry {
        case inserted(E.ID)
        case replaced(Row<E>)
    }

    @usableFromInline
    var entries: [Entry] = []
    @usableFromInline
    let freshCount: Int
    @usableFromInline
    let version: UInt64
    @usableFromInline
    let nextSequence: UInt64

    @inlinable
    init(table: TableStorage<E>, tracker: ChangeTracker<E>) {
        freshCount = tracker.fresh.count
        version = table.version
        nextSequence = table.nextSequence
    }

    @inlinable
    func rollBack(_ table: inout TableStorage<E>, _ tracker: inout ChangeTracker<E>, revision: UInt64) {
        for entry in entries.reversed() {
            switch entry {
            case let .inserted(id):
                if let row = table.rows[id] { table.deleteRow(row, revision: revision) }
            case let .replaced(original):
                if let current = table.rows[original.value.id] { table.restoreRow(original, over: current) }
                // A first touch recorded the row's prior value; forget it again.
                if original.version != revision { tracker.before.removeValue(forKey: original.value.id) }
            }
        }
        if tracker.fresh.count > freshCount { tracker.fresh.removeSubrange(freshCount...) }
        table.version = version
        table.nextSequence = nextSequence
    }
}
