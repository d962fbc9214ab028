import EntityStore
import StoreCore
import Synchronization

/// A snapshot file kept in step with a store by incremental saves.
///
/// Creating one writes a full snapshot (unless `path` already holds a snapshot of this
/// store's tables you want to continue from: see `writeInitialSnapshot`) and starts
/// recording the change sets of later commits. ``save()`` then writes only what changed
/// since the last save (inserts, deletes, and updates of just the changed columns) in
/// one SQLite transaction: the file is a valid snapshot before, during and after every
/// save, and a save that returned is durable.
///
/// Between saves the file stays open in SQLite's write-ahead-log mode, so a save appends
/// the pages it changed to `path-wal` and syncs once, instead of journaling and syncing
/// every page twice. Any SQLite reader sees the saved data meanwhile; ``close()`` (or
/// releasing the object) folds the log back into the file, which is then again a single
/// self-contained file in rollback mode.
public final class SnapshotFile: Sendable {
    /// The snapshot file.
    public let path: String
    /// The store it follows.
    public let store: EntityStore
    private let options: SnapshotOptions
    private let pending = PendingChanges()
    /// Serializes saves and owns the open connection (nil until opened, or after close).
    private let saving = Mutex<LiveConnection?>(nil)
    private let observation: Observation

    private struct ChangeRecord: Sendable {
        let revision: UInt64
        let changeSet: ChangeSet
    }

    /// The commits recorded since the last save, shared with the store's observer.
    private final class PendingChanges: Sendable {
        private let records = Mutex<[ChangeRecord]>([])

        func withLock<R>(_ body: (inout [ChangeRecord]) -> R) -> R {
            records.withLock { body(&$0) }
        }
    }

    /// Follows `store` into the snapshot at `path`.
    /// - Parameter writeInitialSnapshot: write a full snapshot now (the default). Pass
    ///   false only if `path` already holds this store's current state (for example right
    ///   after `store.restore(from: path)`).
    public init(
        store: EntityStore, path: String, options: SnapshotOptions = SnapshotOptions(), writeInitialSnapshot: Bool = true
    ) throws(SnapshotError) {
        self.path = path
        self.store = store
        self.options = options
        let pending = self.pending
        // Registered before the initial snapshot: a commit racing with it is recorded and
        // rewritten by the next save (upserts are idempotent), never lost.
        self.observation = store.observe { changes in
            pending.withLock { $0.append(ChangeRecord(revision: changes.current.revision, changeSet: changes.current.changeSet)) }
        }
        if writeInitialSnapshot {
            let state = store.state
            try state.writeSnapshot(to: path, options: options)
            pending.withLock { $0.removeAll { $0.revision <= state.revision } }
        }
        if FileSystem.exists(path) {
            try saving.withLock { (live: inout LiveConnection?) throws(SnapshotError) in live = try LiveConnection(path: path) }
        }
    }

    deinit {
        try? close()
    }

    /// Folds the write-ahead log into the file and closes it, leaving one self-contained
    /// file. Later saves reopen it. Called when the object is released.
    public func close() throws(SnapshotError) {
        try saving.withLock { live throws(SnapshotError) in
            guard let open = live.take() else { return }
            try open.close()
        }
    }

    /// The number of commits recorded since the last save.
    public var pendingCommits: Int { pending.withLock { $0.count } }

    /// Writes the changes since the last save.
    ///
    /// Falls back to a full snapshot when the file is missing or a change cannot be
    /// written in place (a restore replaced every table, or a dynamic field changed its
    /// kind). Saves are serialized; commits go on meanwhile.
    /// - Complexity: O(changed entities × log n) plus the SQLite work for them.
    @discardableResult
    public func save() throws(SnapshotError) -> SnapshotSummary {
        try saving.withLock { live throws(SnapshotError) -> SnapshotSummary in
            let start = ContinuousClock.now
            let state = store.state
            let records = pending.withLock { records in
                let due = records.filter { $0.revision <= state.revision }
                records.removeAll { $0.revision <= state.revision }
                return due
            }
            do {
                if let open = live, !open.isCurrent(path: path) {
                    // The file was removed or replaced: the connection writes a file no
                    // longer at `path`.
                    live = nil
                    try? open.close()
                }
                if !FileSystem.exists(path) || records.contains(where: { $0.changeSet.replacedAll }) {
                    return try writeFullSnapshot(state, live: &live)
                }
                if live == nil { live = try LiveConnection(path: path) }
                guard let connection = live?.connection else { return try writeFullSnapshot(state, live: &live) }
                let counts = try IncrementalWriter(state: state, connection: connection, changeSets: records.map { $0.changeSet }).write()
                return SnapshotSummary(path: path, tables: counts, fileSize: FileSystem.size(of: path), duration: ContinuousClock.now - start)
            } catch let error as IncrementalWriter.NeedsFullSnapshot {
                _ = error
                return try writeFullSnapshot(state, live: &live)
            } catch {
                // Keep the changes for the next attempt: nothing of them reached the file.
                pending.withLock { $0.insert(contentsOf: records, at: 0) }
                if let open = live.take() { try? open.close() }
                throw (error as? SnapshotError) ?? .io(path: path, message: String(describing: error))
            }
        }
    }

    /// Replaces the file with a full snapshot of `state`, closing the open connection
    /// first (its log belongs to the file being replaced) and reopening the new file.
    private func writeFullSnapshot(_ state: EntityState, live: inout LiveConnection?) throws(SnapshotError) -> SnapshotSummary {
        if let open = live.take() { try? open.close() }
        let summary = try state.writeSnapshot(to: path, options: options)
        live = try LiveConnection(path: path)
        return summary
    }
}
