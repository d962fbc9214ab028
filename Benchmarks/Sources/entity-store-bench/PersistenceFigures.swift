import EntityStore
import Foundation
import Synchronization

/// The raw SQLite counterparts of the four persistence figures, measured on the rows of
/// a store of N entities (all of them with `--sqlite-baselines`, printed on standard
/// error). The reported figures (`SnapshotFigures.swift`) use the raw `snapshot` and
/// `restore` rates as baselines, measured in every run; `incremental_save_1pct` is
/// compared with our own full snapshot, `commit_p99_during_snapshot_us` with
/// `commit_p99_us` at rest.
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

/// `count` distinct random IDs in 1...size.
func randomIDs(_ count: Int, of size: Int, rng: inout SplitMix64) -> [Int] {
    var ids = Set<Int>()
    while ids.count < min(count, size) { ids.insert(rng.int(in: 1...size)) }
    return Array(ids)
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
    /// Seconds of one raw SQLite dump of every row of `store` into a new file (one run of
    /// the `snapshot` baseline).
    func rawSnapshotSeconds(store: EntityStore) throws -> Double {
        let file = TemporaryFile(prefix: "dump")
        defer { file.remove() }
        let view = store.state[items]
        return try seconds { try RawSQLite.dump(view, to: file.path) }
    }

    /// Seconds of one raw SQLite `SELECT` of every row of the dump at `path` stepped into a
    /// `[Int: BenchItem]` (one run of the `restore` baseline); warns if the row count differs.
    func rawLoadSeconds(from path: String, expecting count: Int) throws -> Double {
        var rows: [Int: BenchItem] = [:]
        let elapsed = try seconds { rows = try RawSQLite.load(from: path) }
        if rows.count != count { progress("warning: raw restore loaded \(rows.count) rows, expected \(count)") }
        return elapsed
    }

    /// Rows per second of a raw SQLite dump of every row of `store` into a new file
    /// (the `snapshot` baseline).
    func rawSnapshotRate(store: EntityStore) throws -> Double {
        let elapsed = try repetitions.medianOf { try rawSnapshotSeconds(store: store) }
        return Double(store.state[items].count) / elapsed
    }

    /// Rows per second of a raw SQLite `SELECT` of every row of a dump of `store`, stepped
    /// into a `[Int: BenchItem]` (the `restore` baseline).
    func rawRestoreRate(store: EntityStore) throws -> Double {
        let count = store.state[items].count
        let file = TemporaryFile(prefix: "snapshot")
        defer { file.remove() }
        try RawSQLite.dump(store.state[items], to: file.path)
        let elapsed = try repetitions.medianOf { try rawLoadSeconds(from: file.path, expecting: count) }
        return Double(count) / elapsed
    }

    /// Measures the raw SQLite baselines of `snapshot`, `restore`, `incremental_save_1pct`
    /// and `commit_p99_during_snapshot_us` on `store` (which holds the N entities). The
    /// store receives commits (1% updates, then one-entity updates).
    func rawSQLitePersistenceBaselines(store: EntityStore) throws -> PersistenceBaselines {
        let count = Double(store.state[items].count)
        let snapshotRate = try rawSnapshotRate(store: store)
        let restoreRate = try rawRestoreRate(store: store)

        let file = TemporaryFile(prefix: "snapshot")
        defer { file.remove() }
        try RawSQLite.dump(store.state[items], to: file.path)
        let changed = max(1, Int(count) / 100)
        var rng = SplitMix64(seed: 0x1BC7)
        let saveSeconds = try repetitions.medianOf {
            let ids = randomIDs(changed, of: Int(count), rng: &rng)
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
            snapshotRowsPerSecond: snapshotRate, restoreRowsPerSecond: restoreRate,
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
