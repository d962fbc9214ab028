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
        case existed(E)
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

    /// An existing row is about to be replaced.
    @inlinable
    mutating func noteReplace(_ row: Row<E>, revision: UInt64) {
        if row.version != revision { before[row.value.id] = .existed(row.value) }
    }

    /// An existing row is about to be removed.
    @inlinable
    mutating func noteRemove(_ row: Row<E>, revision: UInt64) {
        if row.version != revision {
            before[row.value.id] = .existed(row.value)
        } else if before[row.value.id] == nil {
            before[row.value.id] = .absent
        }
    }

    @usableFromInline
    var isEmpty: Bool { fresh.isEmpty && before.isEmpty }

    func changes(in state: EntityState, table: String) -> (any AnyTableChanges)? {
        guard let rows = state.storage(named: table, as: E.self)?.rows else { return nil }
        var changes = TableChanges<E>()
        if before.isEmpty {
            // Nothing was removed or replaced: every fresh insert is still there.
            changes.inserted = fresh
        } else {
            for id in fresh where before[id] == nil && rows[id] != nil { changes.inserted.append(id) }
        }
        for (id, original) in before {
            let now = rows[id]?.value
            switch (original, now) {
            case (.absent, .some): changes.inserted.append(id)
            case (.absent, .none): break
            case let (.existed(old), .none): changes.removed[id] = old
            case let (.existed(old), .some(new)): if old != new { changes.updated[id] = old }
            }
        }
        return changes.isEmpty ? nil : changes
    }
}

/// `ChangeTracker` with its entity type erased.
protocol AnyChangeTracker {
    var isEmpty: Bool { get }
    func changes(in state: EntityState, table: String) -> (any AnyTableChanges)?
}
