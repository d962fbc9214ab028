import HashTreeCollections

/// Type-erased access to one table's storage, for code that iterates over every table
/// (change sets, invariant checks, persistence).
@usableFromInline
protocol AnyTableStorage: Sendable {
    /// The table's name.
    var name: String { get }
    /// The number of rows. O(1).
    var count: Int { get }
    /// The store revision that last changed this table.
    var version: UInt64 { get }
    /// Describes every internal inconsistency (debug checks).
    func invariantViolations() -> [String]
}

/// The rows of one table and its secondary indexes.
///
/// Every part is a persistent structure (a hash trie for rows, B-trees for orders), so a
/// copy is O(1) and a write to a shared copy duplicates only the O(log n) path it touches:
/// an observer holding a previous state never makes the next commit O(n).
@usableFromInline
struct TableStorage<E: Entity>: AnyTableStorage {
    @usableFromInline
    let descriptor: Table<E>
    @usableFromInline
    var rows = TreeDictionary<E.ID, Row<E>>()
    /// Insertion order: row sequence -> ID.
    @usableFromInline
    var order = SortedMap<UInt64, E.ID>()
    @usableFromInline
    var nextSequence: UInt64 = 0
    @usableFromInline
    var version: UInt64 = 0
    @usableFromInline
    var indexes: [any EntityIndex<E>]

    init(descriptor: Table<E>) {
        self.descriptor = descriptor
        self.indexes = descriptor.indexes.map { $0.makeStorage() }
    }

    @usableFromInline
    var name: String { descriptor.name }
    @usableFromInline
    var count: Int { rows.count }

    // MARK: Validated single-row mutations (callers validate first)

    @inlinable
    func validateInsert(_ entity: E) throws(EntityStoreError) {
        for index in indexes { try index.validateInsert(entity, table: name) }
    }

    @inlinable
    func validateUpdate(from old: E, to new: E) throws(EntityStoreError) {
        for index in indexes { try index.validateUpdate(from: old, to: new, table: name) }
    }

    /// Adds a row for an ID not yet present. O(log n).
    @inlinable
    mutating func appendRow(_ entity: E, revision: UInt64) {
        let sequence = nextSequence
        nextSequence += 1
        rows[entity.id] = Row(value: entity, sequence: sequence, version: revision)
        order.updateValue(entity.id, forKey: sequence)
        for i in indexes.indices { indexes[i].insert(entity, sequence: sequence) }
        version = revision
    }

    /// Adds a row for `entity` if its ID is absent; returns false, changing nothing, if it
    /// is present. One hash-trie operation instead of a lookup then an insert. O(log n).
    @inlinable
    mutating func insertRowIfAbsent(_ entity: E, revision: UInt64) -> Bool {
        let sequence = nextSequence
        if let existing = rows.updateValue(Row(value: entity, sequence: sequence, version: revision), forKey: entity.id) {
            rows[entity.id] = existing
            return false
        }
        nextSequence += 1
        order.updateValue(entity.id, forKey: sequence)
        for i in indexes.indices { indexes[i].insert(entity, sequence: sequence) }
        version = revision
        return true
    }

    /// Replaces the entity of an existing row, keeping its position. O(log n).
    @inlinable
    mutating func replaceRow(_ old: Row<E>, with entity: E, revision: UInt64) {
        rows[entity.id] = Row(value: entity, sequence: old.sequence, version: revision)
        for i in indexes.indices { indexes[i].update(from: old.value, to: entity, sequence: old.sequence) }
        version = revision
    }

    /// Removes an existing row. O(log n).
    @inlinable
    mutating func deleteRow(_ row: Row<E>, revision: UInt64) {
        rows.removeValue(forKey: row.value.id)
        order.removeValue(forKey: row.sequence)
        for i in indexes.indices { indexes[i].remove(row.value, sequence: row.sequence) }
        version = revision
    }

    /// Puts back a row exactly as it was (undo of a replace). O(log n).
    @inlinable
    mutating func restoreRow(_ original: Row<E>, over current: Row<E>) {
        rows[original.value.id] = original
        for i in indexes.indices { indexes[i].update(from: current.value, to: original.value, sequence: original.sequence) }
    }

    /// The index storage named `name`, if the table declares it.
    @inlinable
    func index(named name: String) -> (any EntityIndex<E>)? {
        indexes.first { $0.name == name }
    }

    @inlinable
    func invariantViolations() -> [String] {
        var problems: [String] = []
        if order.count != rows.count { problems.append("table '\(name)': \(order.count) order entries for \(rows.count) rows") }
        for (sequence, id) in order {
            guard let row = rows[id] else { problems.append("table '\(name)': order lists missing id \(id)"); continue }
            if row.sequence != sequence { problems.append("table '\(name)': row \(id) has sequence \(row.sequence), order says \(sequence)") }
            if row.value.id != id { problems.append("table '\(name)': row keyed \(id) holds id \(row.value.id)") }
            if sequence >= nextSequence { problems.append("table '\(name)': sequence \(sequence) not below next \(nextSequence)") }
        }
        for index in indexes { problems += index.invariantViolations(rows: rows) }
        return problems
    }
}
