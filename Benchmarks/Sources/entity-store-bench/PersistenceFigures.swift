import EntityStore
import Foundation
import Synchronization

/// The raw SQLite baselines of the four persistence figures, measured on the rows of a
/// store of N entities.
///
/// The library's figures they will be compared with (once `EntityStoreSQLite` has its
/// snapshot API) are, each on the same store and the same kind of file:
/// - `snapshot`: rows/s of `store.snapshot(to:)`; baseline `snapshotRowsPerSecond`.
/// - `restore`: rows/s of `store.restore(from:)`; baseline `restoreRowsPerSecond`.
/// - `incremental_save_1pct`: ms of `SnapshotFile(store:path:).save()` after a commit
///   that changed 1% of the entities; baseline `incrementalSave1pctMilliseconds`.
/// - `commit_p99_during_snapshot_us`: commit p99 while `store.snapshot(to:)` runs in a
///   loop on another thread; baseline `commitP99DuringSnapshotMicroseconds`.
struct PersistenceBaselines {
    /// A dump of every row into a new file: one prepared INSERT per row, one transaction.
    var snapshotRowsPerSecond: Double
    /// A `SELECT` of every row stepped into a `[Int: BenchItem]`.
    var restoreRowsPerSecond: Double
    /// Writing back the 1% changed rows (INSERT OR REPLACE) in one transaction.
    var incrementalSave1pctMilliseconds: Double
    /// One-entity commit p99 (observer retaining previous states) while raw dumps of the
    /// store's current rows run back to back on another thread.
    var commitP99DuringSnapshotMicroseconds: Double
    /// How many background dumps completed while those commits ran.
    var backgroundSnapshots: Int

    /// One line per baseline, for standard error.
    var summary: String {
        """
        raw SQLite persistence baselines (temporary file, GRDB Database + prepared statements):
          snapshot                        \(formatted(snapshotRowsPerSecond)) rows/s
          restore                         \(formatted(restoreRowsPerSecond)) rows/s
          incremental_save_1pct           \(formatted(incrementalSave1pctMilliseconds)) ms
          commit_p99_during_snapshot_us   \(formatted(commitP99DuringSnapshotMicroseconds)) µs (\(backgroundSnapshots) dumps ran meanwhile)
        """
    }
}

/// A stop signal shared with a background thread.
final class StopFlag: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let runs = Atomic<Int>(0)

    var isStopped: Bool { stopped.load(ordering: .acquiring) }
    var completedRuns: Int { runs.load(ordering: .acquiring) }
    func stop() { stopped.store(true, ordering: .releasing) }
    func countRun() { runs.add(1, ordering: .releasing) }
}

extension StoreFigures {
    /// Measures the raw SQLite baselines of `snapshot`, `restore`, `incremental_save_1pct`
    /// and `commit_p99_during_snapshot_us` on `store` (which holds the N entities). The
    /// store receives commits (1% updates, then one-entity updates).
    func rawSQLitePersistenceBaselines(store: EntityStore) throws -> PersistenceBaselines {
        let count = Double(store.state[items].count)

        let snapshotSeconds = try repetitions.medianOf {
            let file = TemporaryFile(prefix: "dump")
            defer { file.remove() }
            let view = store.state[items]
            return try seconds { try RawSQLite.dump(view, to: file.path) }
        }

        let file = TemporaryFile(prefix: "snapshot")
        defer { file.remove() }
        try RawSQLite.dump(store.state[items], to: file.path)
        var loaded = 0
        let restoreSeconds = try repetitions.medianOf {
            var rows: [Int: BenchItem] = [:]
            let elapsed = try seconds { rows = try RawSQLite.load(from: file.path) }
            loaded = rows.count
            return elapsed
        }
        if loaded != Int(count) { progress("warning: raw restore loaded \(loaded) rows, expected \(Int(count))") }

        let changed = max(1, Int(count) / 100)
        var rng = SplitMix64(seed: 0x1BC7)
        let saveSeconds = try repetitions.medianOf {
            var ids = Set<Int>()
            while ids.count < changed { ids.insert(rng.int(in: 1...Int(count))) }
            try store.write { tx in for id in ids { _ = try tx[items].update(id) { $0.quantity += 1 } } }
            let view = store.state[items]
            let rows = ids.compactMap { view.find($0) }
            return try seconds { try RawSQLite.save(rows, into: file.path) }
        }

        let (_, p99, dumps) = try commitLatency(store: store, whileRunning: {
            let target = TemporaryFile(prefix: "background")
            defer { target.remove() }
            try RawSQLite.dump(store.state[items], to: target.path)
        })

        return PersistenceBaselines(
            snapshotRowsPerSecond: count / snapshotSeconds, restoreRowsPerSecond: count / restoreSeconds,
            incrementalSave1pctMilliseconds: saveSeconds * 1e3, commitP99DuringSnapshotMicroseconds: p99,
            backgroundSnapshots: dumps)
    }

    /// Commit latency (as `commitLatency(store:seed:)`) while `background` runs back to
    /// back on another thread; also returns how many background runs completed.
    func commitLatency(
        store: EntityStore, whileRunning background: @escaping @Sendable () throws -> Void
    ) throws -> (p50: Double, p99: Double, backgroundRuns: Int) {
        let flag = StopFlag()
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            while !flag.isStopped {
                do { try background() } catch {
                    progress("warning: background work failed: \(error)")
                    break
                }
                flag.countRun()
            }
            finished.signal()
        }
        thread.start()
        let latency: (p50: Double, p99: Double)
        do {
            latency = try commitLatency(store: store, seed: 0xBAC6, backgroundRuns: { flag.completedRuns })
        } catch {
            flag.stop()
            finished.wait()
            throw error
        }
        flag.stop()
        finished.wait()
        return (latency.p50, latency.p99, flag.completedRuns)
    }
}
