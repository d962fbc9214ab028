#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation
import StoreCore

/// Something a ``PostgresSync`` did or met while running, for its ``PostgresSync/events`` stream.
public enum PostgresSyncEvent: Sendable, CustomStringConvertible {
    /// A pull applied others' changes: the position reached and the rows changed.
    case pulled(position: Int64, rows: Int)
    /// The replica reloaded everything (its position was pruned from the change log, or
    /// the schema was replaced by a full snapshot). Rows changed locally and not pushed
    /// keep their local values and stay pending: their next push reports them as conflicts.
    case reloaded(position: Int64, reason: String)
    /// A push wrote this many rows at this position.
    case pushed(position: Int64, rows: Int)
    /// An operation of ``PostgresSync/start()`` failed; it goes on (retrying after a pause).
    case failed(PostgresStoreError)

    /// One line.
    public var description: String {
        switch self {
        case let .pulled(position, rows): return "pulled \(rows) row(s), now at position \(position)"
        case let .reloaded(position, reason): return "reloaded everything at position \(position): \(reason)"
        case let .pushed(position, rows): return "pushed \(rows) row(s) at position \(position)"
        case let .failed(error): return "sync error: \(error)"
        }
    }
}

/// What one ``PostgresSync/push()`` or ``PostgresSync/pull()`` did.
public struct PostgresSyncSummary: Sendable, Equatable {
    /// The change-log position the replica is at afterwards (push: the push's own position).
    public let position: Int64
    /// Rows written (push) or changed locally (pull).
    public let rows: Int
    /// Whether a pull reloaded everything.
    public let reloaded: Bool
}

/// Keeps an `EntityStore` in sync with a store in PostgreSQL shared by several
/// processes: each process is a replica holding the whole store in memory, answering
/// queries locally, and exchanging changes through the database.
///
/// - ``push()`` writes the local change sets since the last push, in one transaction,
///   with optimistic concurrency per row: if another process changed one of the rows
///   since this replica last pulled, the whole push is refused
///   (``PostgresStoreError/conflict(_:)``, listing the rows) and nothing is written.
///   ``write(retrying:_:)`` redoes a write after pulling until its push goes through.
/// - ``pull()`` applies every change other processes pushed since this replica's
///   position, as one local commit: observers, derived and live queries wake as for any
///   commit.
/// - ``start()`` pulls continuously (woken by `NOTIFY`, or polling), until cancelled.
///
/// Every push appends the IDs it wrote to the change log (`entitystore_changes`) under
/// one new position (`entitystore_meta.log_head`, incremented under a row lock, so
/// positions follow commit order), and stamps the rows it writes with that position
/// (`entitystore_revision`). A replica whose position was pruned from the log
/// (``prune(keepingAfter:)``) reloads everything and reports it.
///
/// A pull never replaces a local change not yet pushed: the row keeps its local value and
/// its push reports the conflict (``acceptServerValues(for:)`` takes the server's value);
/// `write(retrying:)` redoes a change on the fresh values instead.
///
/// A scoped replica (``init(store:target:selection:options:)`` with a ``PostgresSelection``)
/// holds only some tables, or only the rows of a table matching a condition, and stays in
/// sync with exactly that: see ``selection``.
public final class PostgresSync: Sendable {
    /// How a running sync learns of others' pushes.
    public enum Wakeup: Sendable, Equatable {
        /// `LISTEN` on the schema's channel (pushes `NOTIFY` it at commit).
        case listen
        /// Poll the change log: for servers without `LISTEN` (CockroachDB).
        case poll(every: Duration)
    }

    /// Settings.
    public struct Options: Sendable {
        /// How ``PostgresSync/start()`` wakes up.
        public var wakeup: Wakeup = .listen
        /// The pause after a failed operation in ``PostgresSync/start()`` before the next try.
        public var retryDelay: Duration = .milliseconds(500)
        /// How long a listening ``PostgresSync/start()`` waits without hearing from the
        /// server before it checks its connection (a round trip) and its position (a pull):
        /// a connection that silently died is noticed within this and the operation timeout.
        public var heartbeat: Duration = .seconds(10)
        /// A name for this replica, recorded with its changes in the change log.
        public var origin: String = ProcessInfo.processInfo.hostName + "/" + String(ProcessInfo.processInfo.processIdentifier)
        /// Where loads and pulls read, when not the sync's ``PostgresSync/target``: a hot
        /// standby (or several, with `target_session_attrs=prefer-standby`). Pushes,
        /// ``PostgresSync/write(retrying:_:)`` and `LISTEN` stay on the target (standbys
        /// take no writes and hear no `NOTIFY`). Its schema is the target's. A pull never
        /// goes past what the standby replayed: it waits (up to ``replayWait``) until the
        /// standby has the positions this replica pushed or heard of. Opening a store the
        /// standby has not replayed yet (just created) loads it from the target instead.
        public var readTarget: PostgresTarget?
        /// Where ``PostgresSync/start()`` listens, when not the target: a direct connection
        /// to the primary when the target is a pooler in transaction mode
        /// (``PostgresTarget/transactionPooling``), which carries no `LISTEN`. Its schema is
        /// the target's. A transaction-pooled listening target without it is polled every
        /// ``pooledPollInterval`` instead.
        public var listenTarget: PostgresTarget?
        /// How often ``PostgresSync/start()`` polls when it cannot listen (a transaction pooler).
        public var pooledPollInterval: Duration = .milliseconds(100)
        /// The longest a pull from ``readTarget`` waits for the standby to replay the
        /// positions this replica knows the primary reached; past it the pull applies what
        /// the standby has and fails with a transient error.
        public var replayWait: Duration = .seconds(5)
        /// Whether the replica reloads everything when a new connection reaches another
        /// server than the last one did, or a restarted one (a failover, a crash): that
        /// server may lack pushes the old one acknowledged (asynchronous replication,
        /// `synchronous_commit=off`), which the replica holds. Turn it off only when no
        /// acknowledged commit can be lost (synchronous replication and durable commits);
        /// a replica then reloads only when the server's change log ends before its position.
        public var reloadsOnNewServer = true

        /// The defaults: `LISTEN`, 0.5 s between retries.
        public init() {}
    }

    /// The store this sync keeps current.
    public let store: EntityStore
    /// The server and schema.
    public let target: PostgresTarget
    /// What this replica holds (``PostgresSelection/all``: the whole store). A scoped
    /// replica loads, pulls and reloads only the selected tables, and of a table with a
    /// condition only the rows matching it: a row that moves into the selection (another
    /// process changes the field so that it matches) arrives with the pull that sees the
    /// change, and a row that moves out (or is removed) is removed locally by it. A local
    /// write of a row outside the selection is refused at its commit
    /// (``PostgresStoreError/invalidSelection(_:)``, naming the table, the row and the
    /// selection), so it never becomes a change to push.
    public let selection: PostgresSelection
    /// The settings.
    public let options: Options
    /// Everything ``start()`` does and meets, as it happens. Read it or ignore it: it keeps
    /// the newest ``eventBuffer`` events not read yet and drops older ones, so an ignored
    /// stream holds a bounded amount of memory.
    public let events: AsyncStream<PostgresSyncEvent>
    /// How many unread events ``events`` keeps.
    public static let eventBuffer = 1_000

    /// Adds `event` to ``events``, dropping the oldest unread one when full.
    func report(_ event: PostgresSyncEvent) {
        continuation.yield(event)
    }

    private let continuation: AsyncStream<PostgresSyncEvent>.Continuation
    private let shared: Lock<Shared>
    private let operations = AsyncLock()
    /// The sync's connection to its target, kept between operations (which `operations` serializes).
    private let primary: ServerLink
    /// The connection loads and pulls read on: ``Options/readTarget``'s, or `primary`.
    private let reader: ServerLink
    /// The local commits published since they were last folded into `pending`.
    private let journal: CommitJournal
    /// The check refusing local writes outside a scoped replica's selection (nil for a whole store).
    private let scopeCheck: Observation?

    /// The commit name of the commits a sync makes itself (pulls, undos): they are others'
    /// changes, never pushed back.
    static let ownCommitName = "entitystore.postgres.pull"

    // `@unchecked Sendable` is safe: it only lives behind `shared`'s lock, and the one
    // non-`Sendable` type in it, `AnyHashable`, only ever wraps entity IDs, which are `Sendable`.
    struct Shared: @unchecked Sendable {
        /// Every change up to this position is in the store.
        var position: Int64 = -1
        /// Positions of this replica's own pushes after `position`.
        var mine: Set<Int64> = []
        /// Whether this sync made sure the change log has its row index (``MetadataTables/ensureRowIndex(in:buildLimit:_:)``).
        var rowIndexChecked = false
        /// IDs changed locally and not pushed, per table, each with the change-log
        /// position its local value is based on: a push conflicts on a row another process
        /// changed after that position, even if a pull has since moved the replica past it
        /// (a pull never replaces a pending row).
        var pending: [String: [AnyHashable: Int64]] = [:]
        /// A local commit replaced everything (a restore): only a full snapshot can push it.
        var replacedLocally = false
        /// The highest position the primary is known to have reached (own pushes,
        /// notifications): a pull from a standby waits until the standby replayed it.
        var knownHead: Int64 = -1
    }

    /// A sync for `store` and the store in `target`'s schema, holding the rows `selection`
    /// names (by default all: see ``selection``). Local commits are recorded from now on;
    /// call ``open(createIfMissing:)`` before anything else.
    /// - Complexity: O(1); each later commit costs O(1) extra under the store's lock, and
    ///   for a scoped replica one check per row it writes (an encoding of the row, for a
    ///   table with a condition).
    public init(store: EntityStore, target: PostgresTarget, selection: PostgresSelection = .all, options: Options = Options()) {
        self.store = store
        self.target = target
        self.selection = selection
        self.options = options
        if selection.isAll {
            scopeCheck = nil
        } else {
            let scope = ScopeGuard(selection: selection, tables: store.schema.tables)
            scopeCheck = store.core.addCommitCheck { previous, next, context in
                // The sync's own commits (pulls, reloads, undos) hold the server's rows.
                guard context.name != Self.ownCommitName else { return }
                try scope.check(previous: previous, next: next)
            }
        }
        (events, continuation) = AsyncStream.makeStream(of: PostgresSyncEvent.self, bufferingPolicy: .bufferingNewest(Self.eventBuffer))
        shared = Lock(Shared())
        journal = CommitJournal(store, skipping: Self.ownCommitName)
        primary = ServerLink(target: target)
        if var readTarget = options.readTarget {
            readTarget.schema = target.schema
            reader = ServerLink(target: readTarget)
        } else {
            reader = primary
        }
    }

    deinit {
        continuation.finish()
        journal.stop()
        scopeCheck?.cancel()
        // The connection closes itself when released.
    }

    /// Closes the sync's connection (the next operation opens a new one) and stops
    /// recording local commits. Call it when done; releasing the sync does it too.
    public func close() async {
        journal.stop()
        scopeCheck?.cancel()
        await primary.close()
        if reader !== primary { await reader.close() }
    }

    /// The change-log position the store is at (-1 before ``open(createIfMissing:)``).
    public var position: Int64 { shared.withLock { $0.position } }

    /// Joins the store in the database: loads it into the store (replacing the store's
    /// tables) if the schema holds one, or writes the store there as a full snapshot if
    /// not (`createIfMissing`). Creation is atomic: of processes opening a missing store
    /// at once, one creates it and the others load what it wrote. Returns the position reached.
    /// A scoped replica loads only its ``selection`` (through the condition's SQL index)
    /// and never creates a missing store: it throws ``PostgresStoreError/notAStore(schema:reason:)``.
    /// - Complexity: a full restore or snapshot, O(n log n); for a scoped replica, a
    ///   restore of the selected rows, O(k log k) for k rows selected.
    @discardableResult
    public func open(createIfMissing: Bool = true) async throws(PostgresStoreError) -> Int64 {
        await operations.lock()
        do {
            let position = try await openLocked(createIfMissing: createIfMissing)
            await operations.unlock()
            return position
        } catch {
            await operations.unlock()
            throw error
        }
    }

    private func openLocked(createIfMissing: Bool) async throws(PostgresStoreError) -> Int64 {
        do {
            return try await reload(reason: nil)
        } catch {
            guard case .notAStore = error else { throw error }
            // A standby may not have replayed the store's creation yet: the primary decides.
            if reader !== primary {
                do {
                    return try await reload(reason: nil, from: primary)
                } catch {
                    guard case .notAStore = error else { throw error }
                }
            }
            // A scoped replica holds part of the store: it cannot create the whole.
            guard createIfMissing, selection.isAll else { throw error }
        }
        clearLocalChanges()
        // Create only: when another process created the store meanwhile (both found none),
        // load what it wrote (from the primary: a standby may not have it yet) rather than replace it.
        guard let summary = try await PostgresSnapshotWriter(state: store.state, target: target).create() else {
            return try await reload(reason: nil, from: primary)
        }
        shared.withLock {
            $0.position = summary.position
            $0.mine = []
        }
        return summary.position
    }

    private func clearLocalChanges() {
        _ = journal.take()
        shared.withLock {
            $0.pending = [:]
            $0.replacedLocally = false
        }
    }

    /// Loads everything (inside the operations lock). Opening replaces the store's tables
    /// and forgets local changes; a later reload (the replica fell behind a pruned log)
    /// keeps the local value of every row changed and not pushed, still pending on its old
    /// base, so its push reports the conflict instead of the reload dropping it.
    /// Reads from `link`, the ``reader`` unless given.
    private func reload(reason: String?, from link: ServerLink? = nil) async throws(PostgresStoreError) -> Int64 {
        let (state, metadata) = try await PostgresSnapshotReader(target: (link ?? reader).target, selection: selection).read(schema: store.schema)
        let tables = store.schema.tables
        do {
            // Inside the commit, so a local commit lands before it (and is kept or
            // forgotten with the others) or after it (on the loaded state, pending).
            try store.replaceAll(with: state, name: Self.ownCommitName) { replaced, transaction in
                if reason == nil {
                    clearLocalChanges()
                } else {
                    let pending = absorbTransitions().pending
                    for table in tables {
                        guard let ids = pending[table.name], let typed = table as? any TypedTable else { continue }
                        try keepLocal(typed, ids: ids, from: replaced, in: transaction)
                    }
                }
            }
        } catch {
            throw .invalidData(table: "?", detail: String(describing: error))
        }
        // After the commit (a middleware may refuse it). A local commit published between
        // is absorbed later on the older position: a stricter base, never a looser one.
        shared.withLock {
            $0.position = metadata.head
            $0.mine = []
            // What another server acknowledged may be gone: the head is this one's.
            $0.knownHead = metadata.head
            // The server's store replaced a local restore too.
            $0.replacedLocally = false
        }
        if let reason { report(.reloaded(position: metadata.head, reason: reason)) }
        return metadata.head
    }

    /// Writes the local values (from `replaced`) of the rows `ids` names over a reload.
    private func keepLocal<T: TypedTable>(_ table: T, ids: [AnyHashable: Int64], from replaced: EntityState, in transaction: Transaction) throws {
        let local = replaced[table.typed]
        let writer = transaction[table.typed]
        for id in ids.keys {
            guard let typedID = id.base as? T.Element.ID else { continue }
            if let entity = local.find(typedID) { _ = try writer.upsert(entity) } else { _ = try writer.remove(typedID) }
        }
    }

    // MARK: Push

    /// Writes every local change since the last push, in one transaction, with one new
    /// change-log position; returns it with the number of rows written (0 and the
    /// current position when there was nothing to push).
    ///
    /// - Throws: ``PostgresStoreError/conflict(_:)`` when another process changed any of
    ///   the rows since this replica's position (nothing is written; pull, then redo the
    ///   change, as ``write(retrying:_:)`` does); connection errors (nothing is written,
    ///   the local changes stay pending for the next push).
    /// - Complexity: O(changed rows) encoded and sent; two round trips (the head row stays
    ///   locked for about one and a half), plus two per table of more than 200 changed rows
    ///   (sent with `COPY`) and one per table that gains columns; after a new connection
    ///   reached another server (a failover), first a full reload, O(n log n).
    @discardableResult
    public func push() async throws(PostgresStoreError) -> PostgresSyncSummary {
        await operations.lock()
        do {
            let summary = try await pushLocked()
            await operations.unlock()
            return summary
        } catch {
            await operations.unlock()
            throw error
        }
    }

    /// Folds published transitions into the pending IDs; a row first changed now is based
    /// on the replica's position.
    private func absorbTransitions() -> (pending: [String: [AnyHashable: Int64]], replaced: Bool, position: Int64, mine: Set<Int64>) {
        let tables = store.schema.tables
        // Taken and folded under the sync's operations (or inside a commit), so no other
        // fold runs between the two.
        let entries = journal.take()
        return shared.withLock { state in
            for entry in entries {
                guard let changeSet = entry.changeSet else {
                    state.replacedLocally = true
                    continue
                }
                for table in tables where changeSet.changed(table: table.name) {
                    guard let typed = table as? any TypedTable else { continue }
                    for id in changedIDs(typed, changeSet) where state.pending[table.name]?[id] == nil {
                        state.pending[table.name, default: [:]][id] = state.position
                    }
                }
            }
            return (state.pending, state.replacedLocally, state.position, state.mine)
        }
    }

    private func pushLocked() async throws(PostgresStoreError) -> PostgresSyncSummary {
        var (batches, position, mine) = try pendingBatches()
        guard !batches.isEmpty else { return PostgresSyncSummary(position: position, rows: 0, reloaded: false) }
        // A reload keeps the pending rows and their bases; the position and own pushes move.
        if try await reloadIfServerChanged(on: primary) { (batches, position, mine) = try pendingBatches() }
        try await ensureRowIndex()
        let schema = target.schema
        let origin = options.origin
        let (newPosition, rows, previousHead) = try await withConnection(on: primary) { session in
            try SQL.transaction(session) {
                try PushTransaction(schema: schema, origin: origin, position: position, mine: mine).run(batches, session)
            }
        }
        return finishPush(position: newPosition, rows: rows, previousHead: previousHead, batches: batches)
    }

    /// Once per sync, before its first push: a store created before the change log had its
    /// row index gets it, so that conflict checks stay O(rows pushed × log n). A server that
    /// refuses (a role that may not create indexes), a change log held by a writer, or a
    /// build longer than half the operation timeout leave it as it is: checks are then
    /// O(changes since the replica's last pull), as before.
    private func ensureRowIndex() async throws(PostgresStoreError) {
        guard !shared.withLock({ $0.rowIndexChecked }) else { return }
        let schema = target.schema
        do {
            // Half the operation timeout: the push that waits for it still has the rest.
            let limit = target.rowIndexBuildLimit ?? target.operationTimeout / 2
            try await withConnection(on: primary) { session in try MetadataTables.ensureRowIndex(in: schema, buildLimit: limit, session) }
        } catch {
            if case .server = error {} else { throw error }
        }
        shared.withLock { $0.rowIndexChecked = true }
    }

    /// Records a committed push.
    private func finishPush(position newPosition: Int64, rows: Int, previousHead: Int64, batches: [any PushBatch]) -> PostgresSyncSummary {
        shared.withLock { state in
            if previousHead == state.position {
                // Nobody pushed between our position and this push: we are at its position.
                state.position = newPosition
            } else {
                state.mine.insert(newPosition)
            }
            state.knownHead = max(state.knownHead, newPosition)
            for batch in batches {
                for id in batch.ids.ids { state.pending[batch.tableName]?.removeValue(forKey: id) }
                if state.pending[batch.tableName]?.isEmpty == true { state.pending[batch.tableName] = nil }
            }
        }
        report(.pushed(position: newPosition, rows: rows))
        return PostgresSyncSummary(position: newPosition, rows: rows, reloaded: false)
    }

    /// The batches of the pending changes, read from the current state.
    private func pendingBatches() throws(PostgresStoreError) -> (batches: [any PushBatch], position: Int64, mine: Set<Int64>) {
        let (pending, replaced, position, mine) = absorbTransitions()
        guard position >= 0 else { throw .notAStore(schema: target.schema, reason: "the sync is not open (call open() first)") }
        if replaced {
            throw .conflict([PostgresConflict(table: "*", id: "*", expectedRevision: position, serverRevision: -1)])
        }
        let state = store.state
        var batches: [any PushBatch] = []
        for table in store.schema.tables {
            guard let bases = pending[table.name], !bases.isEmpty, let typed = table as? any TypedTable else { continue }
            batches.append(try makeBatch(typed, bases: bases, state: state))
        }
        // Commits outside the selection are refused, so this only holds when a row went
        // pending otherwise (a commit before the check): refuse the push, send nothing.
        if !selection.isAll {
            let scope = ScopeGuard(selection: selection, tables: [])
            for batch in batches {
                let outside = batch.idsOutside(selection)
                if let first = outside.first { throw scope.refusal(batch.tableName, first, outside.count - 1, "nothing was pushed") }
            }
        }
        return (batches, position, mine)
    }

    private func makeBatch<T: TypedTable>(_ table: T, bases: [AnyHashable: Int64], state: EntityState) throws(PostgresStoreError) -> any PushBatch {
        let view = state[table.typed]
        var upserts: [T.Element] = [], upsertBases: [Int64] = []
        var removals: [T.Element.ID] = [], removalBases: [Int64] = []
        for (id, base) in bases {
            guard let typedID = id.base as? T.Element.ID else { continue }
            if let entity = view.find(typedID) {
                upserts.append(entity)
                upsertBases.append(base)
            } else {
                removals.append(typedID)
                removalBases.append(base)
            }
        }
        return TypedPushBatch(
            table: table, upserts: upserts, removals: removals, ids: IDSet(Set(bases.keys)), upsertBases: upsertBases, removalBases: removalBases)
    }

    // MARK: Pull

    /// Applies every change others pushed since this replica's position, as one local
    /// commit (named `entitystore.postgres.pull`, and never pushed back). A replica whose position
    /// was pruned from the change log reloads everything instead (``PostgresSyncEvent/reloaded(position:reason:)``).
    /// A scoped replica reads only the changes to its selected tables, and of a table with
    /// a condition the changed rows that match it now: a changed row it holds that no
    /// longer matches, or was removed, is removed locally in the same commit.
    /// - Complexity: O(rows changed since the position), in one read-only transaction of
    ///   two round trips (for a scoped replica, O(rows of its selected tables changed since
    ///   the position), whether they match or not); from a lagging standby (``Options/readTarget``), that transaction
    ///   is repeated every 5 ms until the standby catches up or ``Options/replayWait``
    ///   passes. A full reload, O(n log n), when the server changed or its change log ends
    ///   before the position.
    @discardableResult
    public func pull() async throws(PostgresStoreError) -> PostgresSyncSummary {
        await operations.lock()
        do {
            let summary = try await pullLocked()
            await operations.unlock()
            return summary
        } catch {
            await operations.unlock()
            throw error
        }
    }

    private func pullLocked() async throws(PostgresStoreError) -> PostgresSyncSummary {
        try await reloadIfServerChanged(on: reader)
        _ = absorbTransitions()
        let (position, mine, knownHead) = shared.withLock { ($0.position, $0.mine, $0.knownHead) }
        guard position >= 0 else { throw .notAStore(schema: target.schema, reason: "the sync is not open (call open() first)") }
        let schema = store.schema
        let target = reader.target
        let fromStandby = reader !== primary
        // A standby may lag: never pull short of what this replica knows the primary has.
        let wanted = fromStandby ? max(position, knownHead) : position
        let deadline = ContinuousClock.now + options.replayWait
        var outcome: PullOutcome
        var head: Int64 = 0
        while true {
            outcome = try await withConnection(on: reader) { session in
                try SQL.transaction(session, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", bodyCommits: true) {
                    try PullTransaction(target: target, schema: schema, position: position, mine: mine, selection: selection).run(session, commit: true)
                }
            }
            guard case let .changes(found, _) = outcome else { break }
            head = found
            guard fromStandby, head < wanted, ContinuousClock.now < deadline else { break }
            try? await Task.sleep(for: .milliseconds(5))
        }
        if case .changes = outcome, head < position {
            guard fromStandby else {
                // The server's log ends before what this replica holds: pushes it saw
                // were lost (a failover to a standby that had not received them).
                return try await finishPull(.reload(
                    "the server's change log ends at position \(head), before this replica's position \(position): changes it acknowledged were lost (a failover or a restore); reloaded"))
            }
            throw .connectionFailed(server: target.server, reason: "the standby has replayed the change log up to position \(head) only, behind this replica's position \(position), after waiting \(PostgresSession.describe(options.replayWait))")
        }
        let summary = try await finishPull(outcome)
        if fromStandby && head < wanted {
            throw .connectionFailed(server: target.server, reason: "the standby has replayed the change log up to position \(head) only, behind the primary's \(wanted), after waiting \(PostgresSession.describe(options.replayWait))")
        }
        return summary
    }

    /// Reloads everything (keeping pending rows) when a new connection of `link` reached
    /// another server, or a restarted one, and ``Options/reloadsOnNewServer`` asks for it:
    /// that server may lack changes this replica holds. Returns whether it reloaded. Only
    /// the link the operation uses is opened: a standby that is down never stops a push.
    @discardableResult
    private func reloadIfServerChanged(on link: ServerLink) async throws(PostgresStoreError) -> Bool {
        guard options.reloadsOnNewServer, shared.withLock({ $0.position }) >= 0 else { return false }
        _ = try await link.connection()
        guard link.takeServerChange() else { return false }
        // Another server's store may lack the change log's row index: look again.
        shared.withLock { $0.rowIndexChecked = false }
        _ = try await reload(reason: "a new connection reached another server, or a restarted one (a failover or a restart), which may lack changes the old one acknowledged")
        return true
    }

    /// Applies what a pull found, as one commit of the sync's own.
    private func finishPull(_ outcome: PullOutcome) async throws(PostgresStoreError) -> PostgresSyncSummary {
        switch outcome {
        case let .reload(reason):
            let reached = try await reload(reason: reason)
            return PostgresSyncSummary(position: reached, rows: store.state.tableNames.reduce(0) { $0 + (store.state.count(ofTable: $1) ?? 0) }, reloaded: true)
        case let .changes(head, tables):
            return try applyPulled(head: head, tables: tables)
        }
    }

    /// Applies pulled rows as one commit of the sync's own, except rows changed locally and
    /// not pushed: those keep their local value and stay pending (their push reports the
    /// conflict). Local commits are folded in inside the same write, so none can slip
    /// between the look at what is pending and the pulled values.
    private func applyPulled(head: Int64, tables: [any PulledTable]) throws(PostgresStoreError) -> PostgresSyncSummary {
        var changed = 0
        if !tables.isEmpty {
            do {
                changed = try store.write(Self.ownCommitName) { transaction in
                    let pending = absorbTransitions().pending
                    var count = 0
                    for table in tables { count += try table.apply(to: transaction, holdingBack: pending[table.tableName] ?? [:]) }
                    return count
                }
            } catch {
                throw .invalidData(table: "?", detail: "cannot apply pulled changes: \(error)")
            }
        }
        shared.withLock { state in
            // A pending row this pull found unchanged since its base (the old position) is
            // unchanged up to the head: based there, a later prune cannot make it unknowable.
            let old = state.position
            for (table, bases) in state.pending {
                let pulled = tables.first { $0.tableName == table }?.ids.ids ?? []
                for (id, base) in bases where base == old && !pulled.contains(id) { state.pending[table]?[id] = max(base, head) }
            }
            state.position = max(state.position, head)
            // Own pushes stay known while a pending row's base is older than them: its
            // push must not take them for another process's changes.
            let oldestBase = state.pending.values.lazy.flatMap(\.values).min() ?? head
            state.mine = state.mine.filter { $0 > min(head, oldestBase) }
        }
        if changed > 0 { report(.pulled(position: head, rows: changed)) }
        return PostgresSyncSummary(position: head, rows: changed, reloaded: false)
    }

    // MARK: Write with retry

    /// Runs `body` as a local write, then pushes; when the push meets a conflict, undoes
    /// the write locally, pulls, and runs `body` again on the fresh values, up to
    /// `attempts` times. Returns `body`'s result from the write that was pushed.
    ///
    /// This is how to change shared data without losing others' updates: two processes
    /// that each increment a counter 1,000 times through it end with 2,000.
    /// - Throws: what `body` throws, ``PostgresStoreError/conflict(_:)`` after the last
    ///   attempt, or a connection error (the local write then stays, pending).
    public func write<Result: Sendable>(retrying attempts: Int = 100, _ body: (Transaction) throws -> Result) async throws -> Result {
        var attempt = 0
        while true {
            if attempt >= Self.optimisticAttempts {
                // A replica that keeps losing to busier ones takes its turn: it holds the log
                // head (other pushes wait), pulls, runs `body` and pushes in one transaction.
                do {
                    return try await lockedWrite(body)
                } catch PostgresStoreError.conflict(let rows) where attempt + 1 < attempts && rows.first?.table == "*reload" {
                    attempt += 1
                    try await pull()
                    continue
                }
            }
            // The local write and its push hold the sync's operations: no pull (of `start()`,
            // say) runs between them, so the push sends the value `body` computed.
            await operations.lock()
            let outcome: Result?
            do {
                outcome = try await optimisticWrite(body, lastAttempt: attempt + 1 >= attempts)
            } catch {
                await operations.unlock()
                throw error
            }
            await operations.unlock()
            if let outcome { return outcome }
            attempt += 1
            // Randomized backoff, so that two replicas do not collide in lockstep.
            try await Task.sleep(for: .microseconds(Int.random(in: 0...(500 * attempt))))
        }
    }

    /// One optimistic try of `write(retrying:)`, holding the operations: the local write,
    /// then its push. On a conflict over its own rows it undoes the write, takes the
    /// server's values of those rows, pulls, and returns nil to try again; a conflict over
    /// rows of earlier local writes is thrown (they are not this call's to redo).
    private func optimisticWrite<Result: Sendable>(_ body: (Transaction) throws -> Result, lastAttempt: Bool) async throws -> Result? {
        let pendingBefore = absorbTransitions().pending
        let name = "entitystore.postgres.write." + UUID().uuidString
        let result = try store.write(name, body)
        // Still in the journal: only the operations, which this holds, take from it.
        let written = journal.latest(named: name)
        do {
            _ = try await pushLocked()
            return result
        } catch {
            guard case let .conflict(rows) = error, let written, let changeSet = written.changeSet else { throw error }
            // Rows this call changed that were not pending before it: the call's own to
            // redo. A row an earlier local change left pending is not (redoing on the
            // server's value would drop that change): its conflict is the caller's.
            let pendingKeys = keys(of: pendingBefore)
            let own = rowKeys(of: changeSet).subtracting(pendingKeys)
            let others = rows.filter { !own.contains(Self.key($0.table, $0.id)) }
            // A commit after this call's (a plain write on another thread) may have
            // changed its rows again: undoing would overwrite it. Report instead.
            guard store.revision == written.revision else { throw error }
            try undo(changeSet, restoring: pendingBefore)
            if !others.isEmpty || lastAttempt { throw PostgresStoreError.conflict(others.isEmpty ? rows : others) }
            try await refreshLocked(rows)
            _ = try await pullLocked()
            return nil
        }
    }

    /// Takes the server's values of the rows of `conflicts` (a row the server lacks is
    /// removed), dropping the local changes to them: how to settle a conflict a `push()`
    /// reported by letting the other process win. Other local changes stay pending.
    /// - Complexity: one read-only transaction reading the rows.
    public func acceptServerValues(for conflicts: [PostgresConflict]) async throws(PostgresStoreError) {
        await operations.lock()
        do {
            try await refreshLocked(conflicts)
            // Past the values just taken, so a change redone on them is based after them.
            _ = try await pullLocked()
            await operations.unlock()
        } catch {
            await operations.unlock()
            throw error
        }
    }

    /// Reads the current server values of `rows` and applies them, not pending any more.
    private func refreshLocked(_ rows: [PostgresConflict]) async throws(PostgresStoreError) {
        var ids: [String: [String]] = [:]
        for row in rows where !row.table.hasPrefix("*") { ids[row.table, default: []].append(row.id) }
        guard !ids.isEmpty else { return }
        let schema = store.schema
        let target = self.target
        let tables = try await withConnection(on: primary) { session in
            try SQL.transaction(session, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                try PullTransaction(target: target, schema: schema, position: 0, mine: [], selection: selection).current(ids, session)
            }
        }
        var before: [String: [AnyHashable: Int64]] = [:]
        do {
            // Inside the write, so no local commit to these rows slips between.
            _ = try store.write(Self.ownCommitName) { transaction in
                before = absorbTransitions().pending
                for table in tables { _ = try table.apply(to: transaction, holdingBack: [:]) }
                shared.withLock { state in
                    for table in tables {
                        for id in table.ids.ids { state.pending[table.tableName]?.removeValue(forKey: id) }
                        if state.pending[table.tableName]?.isEmpty == true { state.pending[table.tableName] = nil }
                    }
                }
            }
        } catch {
            // Not applied (a reference check, a middleware): the rows stay pending.
            shared.withLock { state in
                for table in tables {
                    for id in table.ids.ids { if let base = before[table.tableName]?[id] { state.pending[table.tableName, default: [:]][id] = base } }
                }
            }
            throw .invalidData(table: "?", detail: "cannot apply the server's values: \(error)")
        }
    }

    /// The conflict keys of the rows of `pending`.
    private func keys(of pending: [String: [AnyHashable: Int64]]) -> Set<String> {
        var keys = Set<String>()
        for table in store.schema.tables {
            guard let bases = pending[table.name], let typed = table as? any TypedTable else { continue }
            for id in idTexts(typed, Array(bases.keys)) { keys.insert(Self.key(table.name, id)) }
        }
        return keys
    }

    /// The text of a row's key in conflicts: table and ID.
    private static func key(_ table: String, _ id: String) -> String { table + "\u{0}" + id }

    /// The conflict keys of the rows `changeSet` changed.
    private func rowKeys(of changeSet: ChangeSet) -> Set<String> {
        var keys = Set<String>()
        for table in store.schema.tables where changeSet.changed(table: table.name) {
            guard let typed = table as? any TypedTable else { continue }
            for id in changedIDTexts(typed, changeSet) { keys.insert(Self.key(table.name, id)) }
        }
        return keys
    }

    /// Optimistic tries of `write(retrying:)` before it takes the log head's lock.
    static let optimisticAttempts = 3

    /// Pull, `body` and push in one transaction holding the log head: it cannot conflict.
    private func lockedWrite<Result: Sendable>(_ body: (Transaction) throws -> Result) async throws -> Result {
        await operations.lock()
        do {
            let result = try await lockedWriteHeld(body)
            await operations.unlock()
            return result
        } catch {
            await operations.unlock()
            throw error
        }
    }

    private func lockedWriteHeld<Result: Sendable>(_ body: (Transaction) throws -> Result) async throws -> Result {
        try await reloadIfServerChanged(on: primary)
        try await ensureRowIndex()
        _ = absorbTransitions()
        let (position, mine) = shared.withLock { ($0.position, $0.mine) }
        let schema = store.schema
        let target = self.target
        let origin = options.origin
        let meta = SQL.qualified(target.schema, "entitystore_meta")
        let name = "entitystore.postgres.write." + UUID().uuidString
        // The local write and the pending rows before it, for an undo if the push conflicts.
        let written = Lock(WrittenLocally())
        let result: Result, batches: [any PushBatch], summary: (Int64, Int, Int64)?
        do {
            (result, batches, summary) = try await withConnectionPassingErrors(on: primary) { session in
                try SQL.transaction(session) {
                    try session.execute("SELECT value FROM \(meta) WHERE key = 'log_head' FOR UPDATE")
                    let outcome = try PullTransaction(target: target, schema: schema, position: position, mine: mine, selection: selection).run(session)
                    // A server behind this replica lost changes it holds: reload first.
                    guard case let .changes(head, tables) = outcome, head >= position else {
                        throw PostgresStoreError.conflict([PostgresConflict(table: "*reload", id: "*", expectedRevision: position, serverRevision: -1)])
                    }
                    _ = try applyPulled(head: head, tables: tables)
                    let pendingBefore = absorbTransitions().pending
                    let result = try store.write(name, body)
                    let entry = journal.latest(named: name)
                    written.withLock { $0 = WrittenLocally(entry: entry, pendingBefore: pendingBefore) }
                    let (batches, currentPosition, currentMine) = try pendingBatches()
                    var summary: (Int64, Int, Int64)?
                    if !batches.isEmpty {
                        summary = try PushTransaction(schema: target.schema, origin: origin, position: currentPosition, mine: currentMine)
                            .run(batches, session)
                    }
                    return (result, batches, summary)
                }
            }
        } catch let error as PostgresStoreError {
            // A conflict (over rows earlier local changes left pending) wrote nothing: the
            // write is undone, unless a later local commit followed it.
            let local = written.withLock { $0 }
            if case .conflict = error, let entry = local.entry, let changeSet = entry.changeSet, store.revision == entry.revision {
                try undo(changeSet, restoring: local.pendingBefore)
            }
            throw error
        }
        if let (newPosition, rows, previousHead) = summary {
            _ = finishPush(position: newPosition, rows: rows, previousHead: previousHead, batches: batches)
        }
        return result
    }

    // `@unchecked Sendable` is safe: as `Shared`, it only lives behind a lock, and its
    // `AnyHashable`s only ever wrap entity IDs, which are `Sendable`.
    /// A local write of `lockedWriteHeld` and the pending rows before it.
    private struct WrittenLocally: @unchecked Sendable {
        var entry: CommitJournal.Entry?
        var pendingBefore: [String: [AnyHashable: Int64]] = [:]
    }

    /// Puts back what `changeSet` changed, as a commit of the sync's own, and the pending
    /// entries of its rows as they were before it (`before`).
    private func undo(_ changeSet: ChangeSet, restoring before: [String: [AnyHashable: Int64]]) throws {
        try undo(changeSet)
        let tables = store.schema.tables
        shared.withLock { state in
            for table in tables where changeSet.changed(table: table.name) {
                guard let typed = table as? any TypedTable else { continue }
                for id in changedIDs(typed, changeSet) {
                    state.pending[table.name, default: [:]][id] = before[table.name]?[id]
                }
                if state.pending[table.name]?.isEmpty == true { state.pending[table.name] = nil }
            }
        }
    }

    /// Puts back what `changeSet` changed, as a commit of the sync's own.
    private func undo(_ changeSet: ChangeSet) throws {
        let tables = store.schema.tables
        try store.write(Self.ownCommitName) { transaction in
            for table in tables where changeSet.changed(table: table.name) {
                guard let typed = table as? any TypedTable else { continue }
                try undoTable(typed, changeSet, transaction)
            }
        }
    }

    // MARK: Continuous pulling

    /// Pulls whenever others push, until the calling task is cancelled; then returns.
    /// Errors never end it: each is reported through ``events`` as
    /// ``PostgresSyncEvent/failed(_:)`` and the loop goes on after ``Options/retryDelay``.
    /// With ``Wakeup/listen`` it holds one more connection, listening on the schema's
    /// channel; with ``Wakeup/poll(every:)`` it pulls at that interval.
    public func start() async {
        var wakeup = options.wakeup
        if wakeup == .listen && options.listenTarget == nil && target.transactionPooling {
            // A transaction pooler does not carry LISTEN (its server connection changes
            // between transactions): poll instead.
            wakeup = .poll(every: options.pooledPollInterval)
        }
        while !Task.isCancelled {
            switch wakeup {
            case let .poll(interval):
                await pullReporting()
                try? await Task.sleep(for: interval)
            case .listen:
                do {
                    try await listenOnce()
                } catch is CancellationError {
                    return
                } catch {
                    if Task.isCancelled { return }
                    report(.failed(PostgresStoreError.from(error, server: target.server)))
                    try? await Task.sleep(for: options.retryDelay)
                }
            }
        }
    }

    /// Pulls once; a failure is reported and not retried (the next wake-up pulls again).
    private func pullReporting() async {
        do { try await pull() } catch {
            if !Task.isCancelled { report(.failed(error)) }
        }
    }

    /// Pulls until a pull succeeds (or the task is cancelled), reporting each failure and
    /// pausing ``Options/retryDelay`` between tries: a listening replica must not stay
    /// behind until someone else's next push.
    private func pullUntilCurrent() async {
        while !Task.isCancelled {
            do {
                try await pull()
                return
            } catch {
                if Task.isCancelled { return }
                report(.failed(error))
                try? await Task.sleep(for: options.retryDelay)
            }
        }
    }

    /// One `LISTEN` session: pulls once listening (to catch up), then on each notification;
    /// after ``Options/heartbeat`` without one, checks the connection and pulls.
    private func listenOnce() async throws {
        var listening = options.listenTarget ?? target
        listening.schema = target.schema
        let connection = try await listening.connect()
        let channel = SQL.channel(for: target.schema)
        let heartbeat = options.heartbeat
        do {
            try await connection.run { session in try session.execute("LISTEN \(SQL.quote(channel))") }
            await pullUntilCurrent()
            while !Task.isCancelled {
                let payloads = try await connection.run { session in try session.notifications(waitingUpTo: heartbeat) }
                // Each payload is a pushed position: the primary has it (a pull from a
                // standby waits until the standby does).
                let heard = payloads.compactMap { Int64($0) }.max() ?? -1
                shared.withLock { $0.knownHead = max($0.knownHead, heard) }
                if payloads.isEmpty {
                    // Nothing heard for a while: is the connection alive (a round trip
                    // bounded by the operation timeout), and is the position current?
                    try await connection.run { session in try session.execute("SELECT 1") }
                }
                await pullUntilCurrent()
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
        throw CancellationError()
    }

    // MARK: Log pruning

    /// Deletes the change log's entries up to `position` (replicas behind it reload
    /// fully on their next pull). Returns how many entries went.
    /// - Complexity: O(entries removed), through the log's position index.
    @discardableResult
    public func prune(keepingAfter position: Int64) async throws(PostgresStoreError) -> Int {
        let schema = target.schema
        return try await withConnection(on: primary) { session in
            try SQL.transaction(session) {
                let head = try session.execute(
                    "SELECT value FROM \(SQL.qualified(schema, "entitystore_meta")) WHERE key = 'log_head' FOR UPDATE")
                let current = head.isEmpty ? 0 : Int64(head.string(0, 0) ?? "0") ?? 0
                let cut = min(position, current)
                let deleted = try session.execute(
                    "WITH d AS (DELETE FROM \(SQL.qualified(schema, "entitystore_changes")) WHERE position <= $1::int8 RETURNING 1) SELECT count(*) FROM d",
                    [.integer(cut)])
                try session.execute(
                    "UPDATE \(SQL.qualified(schema, "entitystore_meta")) SET value = GREATEST(value::bigint, $1::int8)::text WHERE key = 'log_start'",
                    [.integer(cut)])
                return Int(deleted.int64(0, 0) ?? 0)
            }
        }
    }

    // MARK: Connection

    /// Runs `body` on the connection of `link` (opened on first use, dropped once broken so
    /// the next operation reconnects); every error is a ``PostgresStoreError``.
    private func withConnection<R>(on link: ServerLink, _ body: (PostgresSession) throws -> R) async throws(PostgresStoreError) -> R {
        do {
            return try await link.run(body)
        } catch {
            throw PostgresStoreError.from(error, server: link.target.server)
        }
    }

    /// As ``withConnection(on:_:)``, but errors that are not the connection's (an app's
    /// own, thrown by its write) pass through unchanged.
    private func withConnectionPassingErrors<R>(on link: ServerLink, _ body: (PostgresSession) throws -> R) async throws -> R {
        try await link.run(body)
    }
}

/// `ids` of `table`, as the change log writes them.
private func idTexts<T: TypedTable>(_ table: T, _ ids: [AnyHashable]) -> [String] {
    ids.compactMap { id in (id.base as? T.Element.ID).flatMap { try? RowEncoder.encodeID($0, dialect: .postgres) }.map(idText) }
}

/// The IDs a change set changed in `table`, as the change log writes them.
private func changedIDTexts<T: TypedTable>(_ table: T, _ changeSet: ChangeSet) -> [String] {
    idTexts(table, changedIDs(table, changeSet))
}

/// The IDs a change set changed in `table`.
private func changedIDs<T: TypedTable>(_ table: T, _ changeSet: ChangeSet) -> [AnyHashable] {
    changeSet[table.typed].changedIDs.map { AnyHashable($0) }
}

/// Puts back the previous values `changeSet` holds for `table`.
private func undoTable<T: TypedTable>(_ table: T, _ changeSet: ChangeSet, _ transaction: Transaction) throws {
    let changes = changeSet[table.typed]
    let writer = transaction[table.typed]
    for id in changes.inserted { _ = try writer.remove(id) }
    for (_, old) in changes.updated { _ = try writer.upsert(old) }
    for (_, old) in changes.removed { _ = try writer.upsert(old) }
}
#endif
