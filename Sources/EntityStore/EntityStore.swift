import HashTreeCollections
import StoreCore

/// A normalized, in-memory entity store: typed tables keyed by ID, transactional writes,
/// secondary indexes, relations with delete rules, queries, and derived values that
/// wake only for the IDs they watch.
///
/// ```swift
/// let store = try EntityStore {
///     authors
///     books
/// }
/// try store.write { tx in
///     try tx[authors].insert(Author(id: 1, name: "Ursula"))
///     try tx[books].insert(Book(id: 10, title: "The Dispossessed", authorID: 1))
/// }
/// let book = store.state[books].find(10)
/// ```
///
/// It is built on a StoreCore `Store` (``core``): the same observation, streams,
/// middleware, batching and events work on it.
public final class EntityStore: Sendable {
    /// The state store holding the tables.
    public let core: Store<EntityState>
    /// The tables of this store.
    public let schema: Schema
    /// Whether every commit checks that the references it writes resolve.
    public let checksReferences: Bool
    let watchers = WatcherRegistry()
    private let dispatch: Observation

    /// A store with empty tables for `schema`.
    /// - Parameters:
    ///   - schema: the tables, with their indexes and relations.
    ///   - checkReferences: abort any commit that leaves a reference to a missing entity
    ///     (``EntityStoreError/danglingReference(table:id:field:targetTable:targetID:)``).
    ///   - middleware: StoreCore middleware that sees every commit.
    public init(schema: Schema, checkReferences: Bool = false, middleware: [Middleware<EntityState>] = []) {
        self.schema = schema
        self.checksReferences = checkReferences
        let core = Store(EntityState(schema: schema), middleware: middleware)
        self.core = core
        let watchers = self.watchers
        self.dispatch = core.observe { changes in watchers.dispatch(changes) }
    }

    /// A store with empty tables for the tables listed in `tables`.
    /// - Throws: ``EntityStoreError/invalidSchema(_:)`` if the tables do not form a valid schema.
    public convenience init(
        checkReferences: Bool = false, middleware: [Middleware<EntityState>] = [],
        @SchemaBuilder tables: () -> [any AnyTable]
    ) throws(EntityStoreError) {
        self.init(schema: try Schema(tables()), checkReferences: checkReferences, middleware: middleware)
    }

    /// The current state: every table at the last commit. O(1).
    public var state: EntityState { core.state }

    /// The revision of the current state. O(1).
    public var revision: UInt64 { core.state.revision }

    /// Runs `body` as one atomic transaction over any tables and publishes one commit.
    ///
    /// If `body` throws (or reference checking fails), nothing is published: tables,
    /// indexes and versions stay exactly as before. A transaction that changes nothing
    /// publishes nothing. Observers then receive the commit's ``ChangeSet`` as
    /// `changes.current.changeSet`. Inside a StoreCore `batch`, successive writes are
    /// published together with their change sets merged.
    /// - Complexity: O(changed rows × log n), independent of the size of untouched tables
    ///   and of how many older states are still held.
    @discardableResult
    public func write<Result>(_ name: String = "write", _ body: (Transaction) throws -> Result) throws -> Result {
        var result: Result?
        try commitWrite(name) { transaction in result = try body(transaction) }
        // Unreachable: a commit that returns without throwing ran its body exactly once
        // (it throws before the body on a nested commit, and rethrows whatever the body or
        // a hook throws), so `result` is set. No input reaches this line.
        guard let result else { preconditionFailure("a commit returned without running its body") }
        return result
    }

    /// The commit behind ``write(_:_:)``, with nothing generic left: StoreCore's commit and
    /// delivery are compiled here for `EntityState`, instead of running generic code that
    /// looks up type metadata at run time several times per commit.
    private func commitWrite(_ name: String, _ body: (Transaction) throws -> Void) throws {
        let checkReferences = checksReferences
        try core.commit(name) { (state: inout EntityState, context: CommitContext) in
            let transaction = Transaction(state: state)
            defer { transaction.isOpen = false }
            try body(transaction)
            let changeSet = try transaction.finish(checkReferences: checkReferences)
            guard !changeSet.isEmpty else { return }
            var next = transaction.state
            next.revision = transaction.revision
            next.changeSet = context.isContinuation ? state.changeSet.merged(with: changeSet, in: next) : changeSet
            next.changeSet.baseRevision = context.isContinuation ? state.changeSet.baseRevision : state.revision
            next.identity.issue(next.revision)
            state = next
        }
    }

    /// Groups several writes (on this thread) into one published commit; see StoreCore's `batch`.
    @discardableResult
    public func batch<Result>(_ name: String = "batch", _ body: () throws -> Result) throws -> Result {
        try core.batch(name, body)
    }

    /// Registers `handler` for every later commit; `changes.current.changeSet` says what changed.
    public func observe(_ handler: @escaping @Sendable (Changes<EntityState>) -> Void) -> Observation {
        core.observe(handler)
    }

    /// The stream of every later commit, registered before this returns.
    public func changes(
        bufferingPolicy: AsyncStream<Changes<EntityState>>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Changes<EntityState>> {
        core.changes(bufferingPolicy: bufferingPolicy)
    }

    /// Replaces every table with those of `newState` (a restore), as one commit that
    /// every derived value re-reads. `newState` must follow the same schema: the same
    /// tables in the same order, holding the same entity types, with the same indexes and
    /// relations (live queries and derived values read it as the schema they were made for).
    /// Returns the revision the new state took.
    /// - Throws: ``EntityStoreError/invalidSchema(_:)`` naming the first difference if its
    ///   schema differs from the store's.
    /// - Complexity: O(tables + indexes) to check, plus re-reading every derived value.
    @discardableResult
    public func replaceAll(with newState: EntityState, name: String = "replaceAll") throws -> UInt64 {
        if let difference = state.schema.difference(from: newState.schema) {
            throw EntityStoreError.invalidSchema("the new state's schema differs from the store's: \(difference)")
        }
        return try core.commit(name) { (state: inout EntityState) -> UInt64 in
            var next = newState
            next.rebase(onto: state)
            state = next
            return next.revision
        }
    }

    /// ``replaceAll(with:name:)`` after `adjust` has changed `newState` through a
    /// transaction, reading the state being replaced: one commit, so no other commit
    /// slips between what `adjust` reads and the swap. Used to keep rows a restore must
    /// not overwrite. References are not checked.
    /// - Complexity: that of `replaceAll(with:name:)` plus the adjusted rows × log n.
    @discardableResult
    package func replaceAll(
        with newState: EntityState, name: String, adjusting adjust: (_ replaced: EntityState, _ transaction: Transaction) throws -> Void
    ) throws -> UInt64 {
        if let difference = state.schema.difference(from: newState.schema) {
            throw EntityStoreError.invalidSchema("the new state's schema differs from the store's: \(difference)")
        }
        return try core.commit(name) { (state: inout EntityState) -> UInt64 in
            let transaction = Transaction(state: newState)
            defer { transaction.isOpen = false }
            try adjust(state, transaction)
            _ = try transaction.finish(checkReferences: false)
            var next = transaction.state
            next.rebase(onto: state)
            state = next
            return next.revision
        }
    }
}
