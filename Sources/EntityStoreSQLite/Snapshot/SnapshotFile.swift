import EntityStore
import StoreCore

/// A snapshot file kept in step with a store by incremental saves.
///
/// Creating one writes a full snapshot (unless `path` already holds a snapshot of this
/// store's tables you want to continue from: see `writeInitialSnapshot`) and starts
/// recording the change sets of later commits. ``save()`` then writes only what changed
/// since the last save (inserts, deletes, and updates of just the changed columns) in
/// one SQLite transaction: the file is a valid snapshot before, during and after every
/// save, and a save that returned is durable.
///
/// Each save writes exactly one published state, the one its summary reports
/// (``SnapshotSummary/revision``), and contains every commit published before the save
/// started, whichever threads commit meanwhile and whenever observers are told: commits
/// are recorded as they are published, not as they are delivered.
///
/// Between saves the file stays open in SQLite's write-ahead-log mode, so a save appends
/// the pages it changed to `path-wal` and syncs once, instead of journaling and syncing
/// every page twice. Any SQLite reader sees the saved data meanwhile; ``close()`` (or
/// releasing the object) folds the log back into the file, which is then again a single
/// self-contained file in rollback mode.
///
/// While it exists, a plain snapshot to its path from this process is refused
/// (``SnapshotError/fileInUse(path:)``): it would replace the saves made there. A file
/// replaced by other means is noticed, and the next save writes a full snapshot.
public final class SnapshotFile: Sendable {
    /// The snapshot file.
    public let path: String
    /// The store it follows.
    public let store: EntityStore
    private let options: SnapshotOptions
    /// The commits published since the last save.
    private let journal: CommitJournal
    /// Serializes saves and owns what they share.
    private let saver: Lock<Saver>
    /// The path as recorded among those open snapshot files keep.
    private let kept: OpenSnapshotFiles.Key?

    /// What saves share, only touched with the saver lock held.
    private struct Saver: Sendable {
        /// The open connection (nil until opened, or after close or a failure).
        var live: LiveConnection?
        /// Set when a failed save may or may not have reached the file: the next save
        /// writes a full snapshot instead of changes on top of an unknown state.
        var fileIsUncertain = false
        /// The state the last successful save (or the initial snapshot) wrote.
        var savedState: EntityState
    }

    /// Follows `store` into the snapshot at `path`.
    /// - Parameters:
    ///   - store: the store whose commits the file follows.
    ///   - path: the snapshot file.
    ///   - options: how rows are written (see ``SnapshotOptions``).
    ///   - writeInitialSnapshot: write a full snapshot now (the default). Pass false only
    ///     if `path` already holds this store's current state (for example right after
    ///     `store.restore(from: path)`).
    /// - Complexity: O(n) in the rows of every table for the initial snapshot.
    public init(
        store: EntityStore, path: String, options: SnapshotOptions = SnapshotOptions(), writeInitialSnapshot: Bool = true
    ) throws(SnapshotError) {
        self.path = path
        self.store = store
        self.options = options
        // Registered atomically with reading the committed state: every later commit is
        // recorded, in publish order, and none before it.
        let journal = CommitJournal(store)
        self.journal = journal
        let state = journal.start
        kept = OpenSnapshotFiles.retain(path)
        var saver = Saver(live: nil, savedState: state)
        do throws(SnapshotError) {
            if writeInitialSnapshot {
                _ = try Self.writeFull(state, to: path, options: options, saver: &saver)
            } else if FileSystem.exists(path) {
                saver.live = try LiveConnection(path: path)
            }
        } catch {
            if let kept { OpenSnapshotFiles.release(kept) }
            throw error
        }
        self.saver = Lock(saver)
    }

    deinit {
        try? close()
        if let kept { OpenSnapshotFiles.release(kept) }
    }

    /// Folds the write-ahead log into the file and closes it, leaving one self-contained
    /// file. Later saves reopen it. Called when the object is released.
    public func close() throws(SnapshotError) {
        try saver.withLock { (saver: inout Saver) throws(SnapshotError) in
            guard let open = saver.live.take() else { return }
            try open.close(path: path)
        }
    }

    /// The number of commits recorded since the last save.
    public var pendingCommits: Int { journal.count }

    /// The state the file holds: the one the last successful ``save()`` wrote, or, before
    /// any, the store's state when the file was opened. Waits for a save under way.
    /// - Complexity: O(1).
    public var savedState: EntityState { saver.withLock { $0.savedState } }

    /// Writes the changes since the last save, and returns what it wrote: the summary's
    /// ``SnapshotSummary/revision`` is the one state the file now holds.
    ///
    /// Falls back to a full snapshot when the file is missing or replaced, when a change
    /// cannot be written in place (a restore replaced every table, or a dynamic field
    /// changed its kind), and after a failed save. Saves are serialized; commits go on
    /// meanwhile. On failure the file still holds the last saved state (or, if the
    /// failure struck while SQLite committed, possibly this save's), the changes stay
    /// recorded, and the next save writes them. Do not call `save` from a `progress`
    /// callback of the same file.
    /// - Complexity: O(changed entities × log n) plus the SQLite work for them.
    @discardableResult
    public func save() throws(SnapshotError) -> SnapshotSummary {
        try saver.withLock { (saver: inout Saver) throws(SnapshotError) -> SnapshotSummary in
            // Every transition up to this state was recorded when it was published.
            let state = store.core.committedState
            let summary = try save(state, saver: &saver)
            saver.savedState = state
            return summary
        }
    }

    /// Writes `state` (the committed one) with the saver lock held.
    private func save(_ state: EntityState, saver: inout Saver) throws(SnapshotError) -> SnapshotSummary {
        let start = ContinuousClock.now
        // The transitions up to it: through the last one that led to it (revisions are
        // never reused, so a later one leading to it again led to the same state).
        let records = journal.take(through: state.revision)
        do {
            if let open = saver.live, !open.isCurrent(path: path) {
                // The file was removed or replaced: the connection writes a file no
                // longer at `path`.
                saver.live = nil
                try? open.close(path: path)
                saver.fileIsUncertain = true
            }
            guard !saver.fileIsUncertain, FileSystem.exists(path), let changeSets = CommitJournal.chain(records, from: saver.savedState.revision)
            else {
                return try Self.writeFull(state, to: path, options: options, saver: &saver)
            }
            if saver.live == nil { saver.live = try LiveConnection(path: path) }
            guard let connection = saver.live?.connection else {
                return try Self.writeFull(state, to: path, options: options, saver: &saver)
            }
            let counts = try IncrementalWriter(state: state, connection: connection, changeSets: changeSets).write()
            return SnapshotSummary(
                path: path, revision: state.revision, tables: counts, fileSize: FileSystem.size(of: path),
                duration: ContinuousClock.now - start)
        } catch is IncrementalWriter.NeedsFullSnapshot {
            do {
                return try Self.writeFull(state, to: path, options: options, saver: &saver)
            } catch {
                throw failed(error, records: records, saver: &saver)
            }
        } catch {
            throw failed(error, records: records, saver: &saver)
        }
    }

    /// After a failed save: the changes go back for the next attempt, the connection is
    /// dropped (SQLite may have left it mid-transaction), and the file counts as uncertain.
    private func failed(_ error: any Error, records: [CommitJournal.Entry], saver: inout Saver) -> SnapshotError {
        journal.putBack(records)
        if let open = saver.live.take() { try? open.close(path: path) }
        saver.fileIsUncertain = true
        return (error as? SnapshotError) ?? .io(path: path, message: String(describing: error))
    }

    /// Replaces the file with a full snapshot of `state`, closing the open connection
    /// first (its log belongs to the file being replaced) and reopening the new file.
    private static func writeFull(
        _ state: EntityState, to path: String, options: SnapshotOptions, saver: inout Saver
    ) throws(SnapshotError) -> SnapshotSummary {
        if let open = saver.live.take() { try? open.close(path: path) }
        saver.fileIsUncertain = true
        let summary = try SnapshotWriter(state: state, options: options, journalMode: .writeAheadLog).write(to: path)
        saver.fileIsUncertain = false
        saver.live = try LiveConnection(path: path)
        return summary
    }
}
