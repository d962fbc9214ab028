import HashTreeCollections
/// An immutable, point-in-time value of every table of a store.
///
/// Taking a state is O(1) and holding it is cheap: tables are persistent structures, so a
/// later commit shares everything it does not touch. Read a table with `state[books]`.
public struct EntityState: Sendable, Equatable {
    /// The schema the tables follow.
    public let schema: Schema
    @usableFromInline
    var tables: [any AnyTableStorage]
    let identity: StoreIdentity
    /// Incremented by every commit that changed something; 0 for a new store.
    public internal(set) var revision: UInt64 = 0
    /// What the commit (or batch of commits) that produced this state changed.
    public internal(set) var changeSet = ChangeSet()

    /// An empty state with one empty table per schema table.
    public init(schema: Schema) {
        self.schema = schema
        self.tables = schema.operations.map { $0.makeStorage() }
        self.identity = StoreIdentity()
    }

    /// Two states are equal when they are the same revision of the same store. O(1).
    ///
    /// This identity-based equality is what lets the store skip a commit that changed
    /// nothing without comparing tables.
    public static func == (lhs: EntityState, rhs: EntityState) -> Bool {
        lhs.identity === rhs.identity && lhs.revision == rhs.revision
    }

    /// A read view of `table`. An undeclared table reads as empty; use ``table(_:)`` to
    /// get an error instead. O(1).
    @inlinable
    public subscript<E: Entity>(table: Table<E>) -> TableView<E> {
        TableView(storage: storage(named: table.name, as: E.self) ?? TableStorage(descriptor: table))
    }

    /// A read view of the table of `E` named `E.tableName`. O(1).
    public subscript<E: Entity>(type: E.Type) -> TableView<E> {
        self[Table<E>()]
    }

    /// A read view of `table`.
    /// - Throws: ``EntityStoreError/unknownTable(_:)`` if the schema does not declare it
    ///   with this entity type.
    public func table<E: Entity>(_ table: Table<E>) throws(EntityStoreError) -> TableView<E> {
        guard let storage = storage(named: table.name, as: E.self) else { throw .unknownTable(table.name) }
        return TableView(storage: storage)
    }

    /// The names of the tables, in schema order.
    public var tableNames: [String] { tables.map { $0.name } }

    /// The number of rows of the table named `name`, or nil if undeclared. O(1).
    public func count(ofTable name: String) -> Int? {
        schema.positions[name].map { tables[$0].count }
    }

    /// Whether this state's ``changeSet`` says exactly what changed since `previous`: true
    /// for every commit made through the store's `write`, `batch` and `replaceAll`, and when
    /// nothing changed; false when a commit through the raw `core` set the state to another
    /// one (an undo to an earlier state, say), whose change set then describes some other
    /// step. Someone who applies change sets elsewhere (an incremental save) must start over
    /// from the whole state when it is false. O(1).
    public func followsByChangeSet(_ previous: EntityState) -> Bool {
        guard identity === previous.identity else { return false }
        // The same revision is the same state (see `==`): nothing changed.
        if revision == previous.revision { return true }
        return revision > previous.revision && changeSet.baseRevision == previous.revision
    }

    /// The change set that says exactly, row by row, what changed since `previous`: empty
    /// for the same state, ``changeSet`` when it leads from `previous` and is not a
    /// restore's, nil otherwise (a restore, a raw core commit to another state). The one
    /// test every reader of commits uses before applying a change set. O(1).
    public func exactChanges(since previous: EntityState) -> ChangeSet? {
        guard followsByChangeSet(previous) else { return nil }
        if revision == previous.revision { return ChangeSet() }
        return changeSet.replacedAll ? nil : changeSet
    }

    /// The revision that last changed the table named `name`, or nil if undeclared. O(1).
    public func version(ofTable name: String) -> UInt64? {
        schema.positions[name].map { tables[$0].version }
    }

    /// Describes every internal inconsistency: indexes that disagree with their tables,
    /// order maps that miss rows, relations whose reverse maps do not match. Empty when
    /// sound. O(n): meant for tests and `verify`, not for hot paths.
    public func invariantViolations() -> [String] {
        tables.flatMap { $0.invariantViolations() }
    }

    @inlinable
    func storage<E: Entity>(named name: String, as type: E.Type) -> TableStorage<E>? {
        guard let position = schema.positions[name] else { return nil }
        return tables[position] as? TableStorage<E>
    }

    /// The rows of the table named `name` if its entities are of type `E`: for hot paths
    /// that read rows only, without the copy of every part of the table a cast of its
    /// storage makes. O(1).
    @inlinable
    func rows<E: Entity>(named name: String, as type: E.Type) -> RowMap<E.ID, Row<E>>? {
        guard let position = schema.positions[name] else { return nil }
        return tables[position].rows(as: E.self)
    }

    /// The table named `name`, erased. O(1).
    @inlinable
    func tableStorage(named name: String) -> (any AnyTableStorage)? {
        schema.positions[name].map { tables[$0] }
    }
}

extension EntityState {
    /// Adopts `current`'s identity and the next revision, with a change set that marks
    /// every table as replaced; used to swap a restored state in.
    mutating func rebase(onto current: EntityState) {
        let revision = current.identity.nextRevision(after: current.revision)
        current.identity.issue(revision)
        var changeSet = ChangeSet()
        changeSet.replacedAll = true
        changeSet.baseRevision = current.revision
        self = EntityState(schema: schema, tables: tables, identity: current.identity, revision: revision, changeSet: changeSet)
    }

    init(schema: Schema, tables: [any AnyTableStorage], identity: StoreIdentity, revision: UInt64, changeSet: ChangeSet) {
        self.schema = schema
        self.tables = tables
        self.identity = identity
        self.revision = revision
        self.changeSet = changeSet
    }
}
