import HashTreeCollections
/// Records, during one transaction, what each touched row looked like before it, so the
/// commit can report its net changes in O(changed rows).
///
/// Rows the transaction wrote carry its revision, which tells a first touch from a later
/// one without a lookup; fresh inserts (by far the most common bulk write) only append
/// to an array.
@usableFromInline
struct ChangeTracker<E: Entity>: AnyChangeTracker {
    @usableFromInline
    enum Before {
        case absent
        /// The row's value and insertion position before the transaction.
        case existed(E, sequence: UInt64)
    }

    @usableFromInline
    var fresh: [E.ID] = []
    @usableFromInline
    var before: [E.ID: Before] = [:]

    /// An entity was inserted under an ID absent from the table.
    @inlinable
    mutating func noteInsert(_ id: E.ID) {
        if before.isEmpty || before[id] == nil { fresh.append(id) }
    }

    /// Entities were inserted under IDs absent from the table (a bulk load).
    @inlinable
    mutating func noteInserts(_ ids: [E.ID]) {
        if before.isEmpty {
            fresh.append(contentsOf: ids)
        } else {
            for id in ids { noteInsert(id) }
        }
    }

    /// An existing row is about to be replaced.
    @inlinable
    mutating func noteReplace(_ row: Row<E>, revision: UInt64) {
        if row.version != revision { before[row.value.id] = .existed(row.value, sequence: row.sequence) }
    }

    /// An existing row is about to be removed.
    @inlinable
    mutating func noteRemove(_ row: Row<E>, revision: UInt64) {
        if row.version != revision {
            before[row.value.id] = .existed(row.value, sequence: row.sequence)
        } else if before[row.value.id] == nil {
            before[row.value.id] = .absent
        }
    }

    @usableFromInline
    var isEmpty: Bool { fresh.isEmpty && before.isEmpty }

    /// The net changes of the table `table` in `state` (the transaction's result), or nil
    /// if there are none. O(changed rows). Inlinable, so each table's copy (made where it
    /// is declared, see `BulkOperations`) runs specialized for its entity type: generic, it
    /// spent most of its time looking up runtime type metadata.
    @inlinable
    func changes(in state: EntityState, table: String) -> (any AnyTableChanges)? {
        guard let rows = state.storage(named: table, as: E.self)?.rows else { return nil }
        var inserted: [E.ID] = []
        var updated: [E.ID: E] = [:]
        var removed: [E.ID: E] = [:]
        var reordered: Set<E.ID> = []
        if before.isEmpty {
            // Nothing was removed or replaced: every fresh insert is still there.
            inserted = fresh
        } else {
            for id in fresh where before[id] == nil && rows[id] != nil { inserted.append(id) }
        }
        for (id, original) in before {
            let now = rows[id]
            switch original {
            case .absent:
                if now != nil { inserted.append(id) }
            case .existed(let old, let sequence):
                if let now {
                    // Removed and inserted again: a new insertion position, whatever its value.
                    if now.sequence != sequence {
                        updated[id] = old
                        reordered.insert(id)
                    } else if !ValueIdentity.same(old, now.value) {
                        // A zero of the other sign is a change, though `==` calls it equal.
                        updated[id] = old
                    }
                } else {
                    removed[id] = old
                }
            }
        }
        if inserted.isEmpty && updated.isEmpty && removed.isEmpty { return nil }
        var changes = TableChanges(inserted: inserted, updated: updated, removed: removed)
        changes.reordered = reordered
        return changes
    }
}

/// `ChangeTracker` with its entity type erased.
@usableFromInline
protocol AnyChangeTracker {
    var isEmpty: Bool { get }
}
