import HashTreeCollections
/// The handle a `write` closure receives: every operation on every table inside one
/// atomic commit.
///
/// Reads through the transaction see its own writes. Each operation is atomic: one that
/// throws changes nothing, so a caller may catch the error and go on. If the `write`
/// closure itself throws, nothing of the transaction is published. A transaction must
/// not be used after its closure returns, nor shared between threads.
public final class Transaction {
    var state: EntityState
    /// The revision this transaction's commit will carry; rows it writes are stamped with it.
    @usableFromInline
    let revision: UInt64
    private var trackers: [(any AnyChangeTracker)?]
    var isOpen = true

    init(state: EntityState) {
        self.state = state
        self.revision = state.identity.nextRevision(after: state.revision)
        self.trackers = Array(repeating: nil, count: state.tables.count)
    }

    /// The state as this transaction has written it so far. O(1).
    public var current: EntityState { state }

    /// The writer for `table`.
    public subscript<E: Entity>(table: Table<E>) -> TableWriter<E> {
        TableWriter(transaction: self, name: table.name)
    }

    /// The writer for the table of `E` named `E.tableName`.
    public subscript<E: Entity>(type: E.Type) -> TableWriter<E> {
        TableWriter(transaction: self, name: E.tableName)
    }

    /// Inserts `entity` into the table named `E.tableName`; see ``TableWriter/insert(_:)``.
    public func insert<E: Entity>(_ entity: E) throws(EntityStoreError) {
        try self[E.self].insert(entity)
    }

    /// Inserts or replaces `entity` in the table named `E.tableName`; see ``TableWriter/upsert(_:)``.
    @discardableResult
    public func upsert<E: Entity>(_ entity: E) throws(EntityStoreError) -> Bool {
        try self[E.self].upsert(entity)
    }

    /// Runs `body` on the typed storage and change tracker of the table `name`.
    ///
    /// The table is moved out of the state for the duration, so it is uniquely referenced
    /// and mutates in place (no copy-on-write of the whole table).
    @usableFromInline
    func withTable<E: Entity, R>(
        _ name: String, as type: E.Type,
        _ body: (inout TableStorage<E>, inout ChangeTracker<E>) throws(EntityStoreError) -> R
    ) throws(EntityStoreError) -> R {
        guard isOpen else { throw .transactionClosed }
        guard let position = state.schema.positions[name],
              var table = state.tables[position] as? TableStorage<E>
        else { throw .unknownTable(name) }
        var tracker = (trackers[position] as? ChangeTracker<E>) ?? ChangeTracker()
        state.tables[position] = PlaceholderTable.shared
        trackers[position] = nil
        defer {
            state.tables[position] = table
            trackers[position] = tracker
        }
        return try body(&table, &tracker)
    }

    /// Removes the rows `ids` of table `name` and applies every delete rule, transitively.
    ///
    /// Planned first, applied second: every restrict violation is found before anything
    /// changes, so a refused delete leaves no trace. Returns how many of `ids` (each
    /// counted once) existed and were removed; rows the delete rules reach are not counted,
    /// even in `name` itself (a tree whose children cascade).
    func removeWithRules(table name: String, ids: [any Hashable & Sendable]) throws(EntityStoreError) -> Int {
        guard isOpen else { throw .transactionClosed }
        let schema = state.schema
        guard let position = schema.positions[name] else { throw .unknownTable(name) }
        let operations = schema.operations[position]
        let existing = ids.filter { operations.rowExists($0, in: state) }
        if schema.incomingRelations.isEmpty || schema.incomingRelations[name] == nil {
            var removed = 0
            for id in existing where try operations.deleteRow(id, in: self) { removed += 1 }
            return removed
        }
        let plan = try DeletePlan(table: name, ids: existing, state: state)
        for (table, id) in plan.deletions {
            guard let tablePosition = schema.positions[table] else { continue }
            _ = try schema.operations[tablePosition].deleteRow(id, in: self)
        }
        for (rule, sourceID) in plan.nullifications {
            try rule.nullify(sourceID, in: self)
        }
        // Every planned row existed and is now gone, the requested ones first.
        return plan.requestedCount
    }

    /// Closes the transaction and computes its net change set, checking references if
    /// asked. O(changed rows × relations).
    func finish(checkReferences: Bool) throws(EntityStoreError) -> ChangeSet {
        isOpen = false
        var changeSet = ChangeSet()
        for (position, tracker) in trackers.enumerated() {
            guard let tracker, !tracker.isEmpty else { continue }
            let name = state.tables[position].name
            if let changes = state.schema.operations[position].changes(of: tracker, in: state) { changeSet.tables[name] = changes }
        }
        if checkReferences { try ReferenceCheck(state: state, changeSet: changeSet).run() }
        return changeSet
    }
}

/// Occupies a table's slot while the transaction mutates the table in place.
struct PlaceholderTable: AnyTableStorage {
    static let shared = PlaceholderTable()
    var name: String { "" }
    var count: Int { 0 }
    var version: UInt64 { 0 }
    func invariantViolations() -> [String] { ["a table was left checked out"] }
}
