import HashTreeCollections
/// Reads and writes one table inside a ``Transaction``: `tx[books]`.
///
/// Write semantics:
/// - `insert` adds a new entity and throws ``EntityStoreError/duplicateID(table:id:)`` if
///   the ID exists.
/// - `upsert` inserts, or replaces the entity with the same ID (keeping its position in
///   insertion order).
/// - `update` changes an existing entity in place; it throws
///   ``EntityStoreError/missingID(table:id:)`` if absent and
///   ``EntityStoreError/idChanged(table:from:to:)`` if the closure changes the ID.
/// - `remove` deletes and reports whether the entity existed, applying delete rules.
/// - Bulk forms apply their elements in order, exactly as the single form would, and are
///   atomic: if one element fails, none of the call's elements is applied. So a repeated
///   ID inside one `insert(contentsOf:)` is a duplicate-ID error, and inside one
///   `upsert(contentsOf:)` the last occurrence wins.
/// - Writing the stored value again changes nothing and is not reported. "The same"
///   is ``ValueIdentity``: `==`, but floating point by bits (-0.0 over
///   +0.0 is a change; a NaN over the same NaN is not).
public struct TableWriter<E: Entity> {
    @usableFromInline
    let transaction: Transaction
    /// The table's name.
    public let name: String

    @usableFromInline
    init(transaction: Transaction, name: String) {
        self.transaction = transaction
        self.name = name
    }

    // MARK: Reads (see the transaction's own writes)

    /// The table as the transaction has written it so far. O(1).
    public var view: TableView<E> { transaction.state[Table<E>(name)] }

    /// The entity with `id`, if any. O(1) expected.
    public func find(_ id: E.ID) -> E? {
        transaction.state.storage(named: name, as: E.self)?.rows[id].map { $0.value }
    }

    /// Whether an entity with `id` exists. O(1) expected.
    public func contains(_ id: E.ID) -> Bool { find(id) != nil }

    /// The number of entities. O(1).
    public var count: Int { transaction.state.storage(named: name, as: E.self)?.count ?? 0 }

    // MARK: Insert

    /// Inserts a new entity.
    /// - Throws: `duplicateID` if the ID exists, `uniqueViolation` if a unique index refuses it.
    /// - Complexity: O(log n) per index.
    @inlinable
    public func insert(_ entity: E) throws(EntityStoreError) {
        try transaction.withTable(name, as: E.self) { (table, tracker) throws(EntityStoreError) in
            try Self.insert(entity, into: &table, tracker: &tracker, revision: transaction.revision)
        }
    }

    /// Inserts every entity, in order; atomic (all or none).
    ///
    /// Into an empty table this is a bulk load: rows, insertion order and indexes are each
    /// built in one pass rather than one insert at a time.
    /// - Complexity: O(k log n) for k entities; O(k) into an empty table (plus
    ///   O(k log k) per ordered index).
    @inlinable
    public func insert(contentsOf entities: some Sequence<E>) throws(EntityStoreError) {
        try transaction.withTable(name, as: E.self) { (table, tracker) throws(EntityStoreError) in
            if table.count == 0 {
                let batch = Array(entities)
                if batch.isEmpty { return }
                do throws(EntityStoreError) {
                    try Self.load(into: &table, tracker: &tracker) { (table) throws(EntityStoreError) in
                        try table.load(batch, revision: transaction.revision)
                    }
                    return
                } catch {
                    // Refused and undone. Inserting one at a time reports the first offending
                    // entity in order, exactly as the single-row form would.
                    try Self.insert(batch, into: &table, tracker: &tracker, revision: transaction.revision)
                    return
                }
            }
            try Self.insert(entities, into: &table, tracker: &tracker, revision: transaction.revision)
        }
    }

    /// Inserts every entity of the chunks `nextChunk` hands over, as one
    /// `insert(contentsOf:)` of them all would, moving the entities out of the chunks
    /// instead of copying them: how a restore feeds rows it decodes on another thread.
    /// `nextChunk` replaces the array it is given, emptied by then (its buffer can be
    /// reused for a later chunk), with the next chunk, and returns false when there is
    /// none. Each chunk comes in reverse order (its last entity first), so that taking
    /// entities from its end, which moves them, yields them in order.
    /// Into an empty table this is one bulk load (see `insert(contentsOf:)`).
    /// - Parameter expectedCount: the number of entities expected, to size the table.
    /// - Complexity: as `insert(contentsOf:)`.
    @inlinable
    package func insert(expectedCount: Int, drainingChunks nextChunk: (inout [E]) -> Bool) throws(EntityStoreError) {
        try transaction.withTable(name, as: E.self) { (table, tracker) throws(EntityStoreError) in
            guard table.count == 0 else {
                var rest: [E] = []
                var chunk: [E] = []
                while nextChunk(&chunk) {
                    rest.append(contentsOf: chunk.reversed())
                    chunk.removeAll(keepingCapacity: true)
                }
                try Self.insert(rest, into: &table, tracker: &tracker, revision: transaction.revision)
                return
            }
            try Self.load(into: &table, tracker: &tracker) { (table) throws(EntityStoreError) in
                try table.load(expectedCount: expectedCount, drainingChunks: nextChunk, revision: transaction.revision)
            }
        }
    }

    /// Runs `fill`, a bulk load into the empty `table` returning the IDs it added, and
    /// records them as inserted; if `fill` throws, puts the table and tracker back as they
    /// were and rethrows.
    @inlinable
    static func load(
        into table: inout TableStorage<E>, tracker: inout ChangeTracker<E>,
        _ fill: (inout TableStorage<E>) throws(EntityStoreError) -> [E.ID]
    ) throws(EntityStoreError) {
        // Copies are O(1) (the table is empty); putting them back undoes everything.
        let (originalTable, originalTracker) = (table, tracker)
        do throws(EntityStoreError) {
            tracker.noteInserts(try fill(&table))
        } catch {
            (table, tracker) = (originalTable, originalTracker)
            throw error
        }
    }

    /// Inserts the entities one at a time; atomic through an undo log.
    @inlinable
    static func insert(
        _ entities: some Sequence<E>, into table: inout TableStorage<E>, tracker: inout ChangeTracker<E>, revision: UInt64
    ) throws(EntityStoreError) {
        table.rows.reserveCapacity(adding: entities.underestimatedCount)
        var undo = UndoLog<E>(table: table, tracker: tracker)
        do throws(EntityStoreError) {
            for entity in entities {
                try Self.insert(entity, into: &table, tracker: &tracker, revision: revision)
                undo.entries.append(.inserted(entity.id))
            }
        } catch {
            undo.rollBack(&table, &tracker, revision: revision)
            throw error
        }
    }

    @inlinable
    static func insert(
        _ entity: E, into table: inout TableStorage<E>, tracker: inout ChangeTracker<E>, revision: UInt64
    ) throws(EntityStoreError) {
        if !table.hasUniqueIndex {
            guard table.insertRowIfAbsent(entity, revision: revision) else {
                throw .duplicateID(table: table.name, id: describeID(entity.id))
            }
            tracker.noteInsert(entity.id)
            return
        }
        if table.rows[entity.id] != nil { throw .duplicateID(table: table.name, id: describeID(entity.id)) }
        try table.validateInsert(entity)
        tracker.noteInsert(entity.id)
        table.appendRow(entity, revision: revision)
    }

    // MARK: Upsert

    /// Inserts `entity`, or replaces the entity with its ID. Returns true if it inserted.
    /// - Throws: `uniqueViolation` if a unique index refuses the new value.
    /// - Complexity: O(log n) per index.
    @inlinable
    @discardableResult
    public func upsert(_ entity: E) throws(EntityStoreError) -> Bool {
        try transaction.withTable(name, as: E.self) { (table, tracker) throws(EntityStoreError) in
            try Self.upsert(entity, into: &table, tracker: &tracker, revision: transaction.revision) == nil
        }
    }

    /// Upserts every entity, in order (the last of repeated IDs wins); atomic.
    /// - Complexity: O(k log n) for k entities.
    @inlinable
    public func upsert(contentsOf entities: some Sequence<E>) throws(EntityStoreError) {
        try transaction.withTable(name, as: E.self) { (table, tracker) throws(EntityStoreError) in
            var undo = UndoLog<E>(table: table, tracker: tracker)
            do throws(EntityStoreError) {
                for entity in entities {
                    if let replaced = try Self.upsert(entity, into: &table, tracker: &tracker, revision: transaction.revision) {
                        undo.entries.append(.replaced(replaced))
                    } else {
                        undo.entries.append(.inserted(entity.id))
                    }
                }
            } catch {
                undo.rollBack(&table, &tracker, revision: transaction.revision)
                throw error
            }
        }
    }

    /// Returns the replaced row, or nil if the entity was inserted.
    @inlinable
    static func upsert(
        _ entity: E, into table: inout TableStorage<E>, tracker: inout ChangeTracker<E>, revision: UInt64
    ) throws(EntityStoreError) -> Row<E>? {
        guard let row = table.rows[entity.id] else {
            try insert(entity, into: &table, tracker: &tracker, revision: revision)
            return nil
        }
        try replace(row, with: entity, in: &table, tracker: &tracker, revision: revision)
        return row
    }

    @inlinable
    static func replace(
        _ row: Row<E>, with entity: E, in table: inout TableStorage<E>, tracker: inout ChangeTracker<E>, revision: UInt64
    ) throws(EntityStoreError) {
        // The same value (zeros of one sign, a NaN as it was) changes nothing.
        if ValueIdentity.same(row.value, entity) { return }
        try table.validateUpdate(from: row.value, to: entity)
        tracker.noteReplace(row, revision: revision)
        table.replaceRow(row, with: entity, revision: revision)
    }

    // MARK: Update

    /// Changes the entity with `id` in place and returns its new value.
    ///
    /// `body` runs while the table is checked out for the update: reads of this table
    /// through the transaction inside it see it empty, and writes to it throw.
    /// - Throws: `missingID`, `idChanged`, `uniqueViolation`, or what `body` throws; the
    ///   entity is then left as it was.
    /// - Complexity: O(log n) per index whose key changed.
    @discardableResult
    @inlinable
    public func update(_ id: E.ID, _ body: (inout E) throws(EntityStoreError) -> Void) throws(EntityStoreError) -> E {
        try updateOne(id, body).get()
    }

    /// Changes the entity with `id` in place and returns its new value; `body` may throw
    /// an error of the app's own.
    ///
    /// An error `body` throws is rethrown unchanged and leaves no trace: the entity stays as
    /// it was, and a `write` whose closure lets the error escape publishes nothing.
    /// - Throws: what `body` throws, or ``EntityStoreError`` (`missingID`, `idChanged`,
    ///   `uniqueViolation`).
    /// - Complexity: O(log n) per index whose key changed.
    @discardableResult
    @inlinable
    public func update<Failure: Error>(_ id: E.ID, _ body: (inout E) throws(Failure) -> Void) throws -> E {
        try updateOne(id, body).get()
    }

    /// Updates every entity in `ids`, in order; atomic: if one fails, none is changed.
    /// - Throws: `missingID`, `idChanged`, `uniqueViolation`, or what `body` throws.
    /// - Complexity: O(k log n) for k IDs.
    @inlinable
    public func update(
        _ ids: some Sequence<E.ID>, _ body: (inout E) throws(EntityStoreError) -> Void
    ) throws(EntityStoreError) {
        try updateAll(ids, body).get()
    }

    /// Updates every entity in `ids`, in order; atomic: if one fails, none is changed.
    /// `body` may throw an error of the app's own, rethrown unchanged.
    /// - Throws: what `body` throws, or ``EntityStoreError`` (`missingID`, `idChanged`,
    ///   `uniqueViolation`).
    /// - Complexity: O(k log n) for k IDs.
    @inlinable
    public func update<Failure: Error>(
        _ ids: some Sequence<E.ID>, _ body: (inout E) throws(Failure) -> Void
    ) throws {
        try updateAll(ids, body).get()
    }

    /// One update: the store's refusals are thrown, `body`'s own error is returned, so both
    /// keep their type.
    @inlinable
    func updateOne<Failure: Error>(
        _ id: E.ID, _ body: (inout E) throws(Failure) -> Void
    ) throws(EntityStoreError) -> Result<E, Failure> {
        try transaction.withTable(name, as: E.self) { (table, tracker) throws(EntityStoreError) -> Result<E, Failure> in
            let row = try Self.row(id, in: table)
            var value = row.value
            do throws(Failure) {
                try body(&value)
            } catch {
                return .failure(error)
            }
            try Self.apply(value, over: row, in: &table, tracker: &tracker, revision: transaction.revision)
            return .success(value)
        }
    }

    /// Updates in bulk, undone completely on any error (see `updateOne`).
    @inlinable
    func updateAll<Failure: Error>(
        _ ids: some Sequence<E.ID>, _ body: (inout E) throws(Failure) -> Void
    ) throws(EntityStoreError) -> Result<Void, Failure> {
        try transaction.withTable(name, as: E.self) { (table, tracker) throws(EntityStoreError) -> Result<Void, Failure> in
            var undo = UndoLog<E>(table: table, tracker: tracker)
            do throws(EntityStoreError) {
                for id in ids {
                    let row = try Self.row(id, in: table)
                    var value = row.value
                    do throws(Failure) {
                        try body(&value)
                    } catch {
                        undo.rollBack(&table, &tracker, revision: transaction.revision)
                        return .failure(error)
                    }
                    undo.entries.append(.replaced(row))
                    try Self.apply(value, over: row, in: &table, tracker: &tracker, revision: transaction.revision)
                }
            } catch {
                undo.rollBack(&table, &tracker, revision: transaction.revision)
                throw error
            }
            return .success(())
        }
    }

    /// The row `id` of `table`.
    /// - Throws: `missingID` if absent.
    @inlinable
    static func row(_ id: E.ID, in table: TableStorage<E>) throws(EntityStoreError) -> Row<E> {
        guard let row = table.rows[id] else { throw .missingID(table: table.name, id: describeID(id)) }
        return row
    }

    /// Writes `value`, the updated form of `row`, refusing a changed ID.
    @inlinable
    static func apply(
        _ value: E, over row: Row<E>, in table: inout TableStorage<E>, tracker: inout ChangeTracker<E>, revision: UInt64
    ) throws(EntityStoreError) {
        let id = row.value.id
        if value.id != id {
            throw .idChanged(table: table.name, from: describeID(id), to: describeID(value.id))
        }
        try replace(row, with: value, in: &table, tracker: &tracker, revision: revision)
    }

    // MARK: Remove

    /// Removes the entity with `id`, applying delete rules; returns whether it existed
    /// (rows the rules remove, even of this table, do not change the answer).
    /// - Throws: `restrictViolation` if a `.restrict` relation still references it.
    /// - Complexity: O(log n) plus the cost of the rows its rules reach.
    @discardableResult
    public func remove(_ id: E.ID) throws(EntityStoreError) -> Bool {
        try transaction.removeWithRules(table: name, ids: [id]) == 1
    }

    /// Removes every entity in `ids`, applying delete rules; atomic. Returns how many of
    /// `ids` existed (a repeated ID counts once); rows the rules remove are not counted,
    /// even those of this table (a given ID that a cascade from another one reaches counts,
    /// as it was asked for).
    /// - Complexity: O(k log n) plus the cost of the rows the rules reach.
    @discardableResult
    public func remove(_ ids: some Sequence<E.ID>) throws(EntityStoreError) -> Int {
        try transaction.removeWithRules(table: name, ids: ids.map { $0 })
    }

    /// Removes every entity matching `predicate`, applying delete rules; atomic. Returns how
    /// many matched (rows the rules remove are not counted).
    /// - Throws: what `predicate` throws, or a store error such as `restrictViolation`.
    /// - Complexity: O(n) to scan, plus the removals.
    @discardableResult
    public func removeAll(where predicate: (E) throws -> Bool) throws -> Int {
        guard let rows = transaction.state.storage(named: name, as: E.self)?.rows else {
            throw EntityStoreError.unknownTable(name)
        }
        var ids: [E.ID] = []
        for (id, row) in rows where try predicate(row.value) { ids.append(id) }
        return try remove(ids)
    }

    /// Deletes a row without delete rules (they were planned by the caller).
    func deleteWithoutRules(_ id: E.ID) throws(EntityStoreError) -> Bool {
        try transaction.withTable(name, as: E.self) { (table, tracker) throws(EntityStoreError) in
            guard let row = table.rows[id] else { return false }
            tracker.noteRemove(row, revision: transaction.revision)
            table.deleteRow(row, revision: transaction.revision)
            return true
        }
    }
}
