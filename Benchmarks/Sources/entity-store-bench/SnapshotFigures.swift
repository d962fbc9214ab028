import EntityStore
import EntityStoreSQLite

/// The four persistence figures of `EntityStoreSQLite`, each against a baseline measured
/// in the same run on the same store.
extension StoreFigures {
    /// `snapshot`, `restore`, `incremental_save_1pct` and `commit_p99_during_snapshot_us`
    /// on `store` (which holds the N entities), plus notes. `commitP99AtRest` is the
    /// `commit_p99_us` figure of the same size. The store receives commits (1% updates,
    /// then one-entity updates).
    func persistence(store: EntityStore, commitP99AtRest: Double) throws -> (figures: [Figure], notes: [String]) {
        var notes: [String] = []

        let (snapshot, snapshotSeconds, snapshotNote) = try snapshotFigure(store: store)
        notes.append(snapshotNote)

        let restore = try restoreFigure(store: store)

        let (incremental, incrementalNote) = try incrementalFigure(store: store, fullSnapshotSeconds: snapshotSeconds)
        notes.append(incrementalNote)

        // commit_p99_during_snapshot_us: commits while store.snapshot(to:) runs back to back
        // on another thread.
        let (_, duringP99, snapshots) = try commitLatency(store: store, whileRunning: {
            let file = TemporaryFile(prefix: "background")
            defer { file.remove() }
            try store.snapshot(to: file.path)
        })
        notes.append("commit_p99_during_snapshot_us: \(snapshots) snapshots completed while the commits ran")

        return ([
            snapshot,
            restore,
            incremental,
            Figure(
                name: "commit_p99_during_snapshot_us", value: duringP99, unit: "µs", baseline: commitP99AtRest,
                ratio: duringP99 / commitP99AtRest, ratioMeaning: "during / at rest", direction: .lowerIsBetter,
                baselineMeaning: "commit_p99_us at rest"),
        ], notes)
    }

    /// `snapshot`: store.snapshot(to:) of `store` into a new temporary file, against raw
    /// SQLite prepared inserts of the same rows. Also returns the median seconds and a note.
    func snapshotFigure(store: EntityStore) throws -> (Figure, seconds: Double, note: String) {
        let count = store.state[items].count
        var fileSize = 0
        let (rawSeconds, snapshotSeconds) = try repetitions.pairedMedians(baseline: {
            try rawSnapshotSeconds(store: store)
        }, ours: {
            let file = TemporaryFile(prefix: "snapshot")
            defer { file.remove() }
            var summary: SnapshotSummary?
            let elapsed = try seconds { summary = try store.snapshot(to: file.path) }
            if let summary {
                fileSize = summary.fileSize
                if summary.rowCount != count { progress("warning: snapshot wrote \(summary.rowCount) rows, expected \(count)") }
            }
            return elapsed
        })
        let rawSnapshotRate = Double(count) / rawSeconds
        let snapshotRate = Double(count) / snapshotSeconds
        let note = "snapshot: file of \(grouped(fileSize)) bytes (\(String(format2: Double(fileSize) / Double(count))) B/entity)"
        let figure = Figure(
            name: "snapshot", value: snapshotRate, unit: "rows/s", baseline: rawSnapshotRate,
            ratio: snapshotRate / rawSnapshotRate, ratioMeaning: "ours / raw SQLite", direction: .higherIsBetter,
            baselineMeaning: "raw SQLite: prepared INSERT per row, one transaction, new file")
        return (figure, snapshotSeconds, note)
    }

    /// `incremental_save_1pct`: SnapshotFile.save() after one commit updating 1% of the
    /// entities, on a file that already holds the full snapshot, against the full
    /// snapshot's time. The store receives the commits.
    func incrementalFigure(store: EntityStore, fullSnapshotSeconds: Double) throws -> (Figure, note: String) {
        let count = store.state[items].count
        let changed = max(1, count / 100)
        var rng = SplitMix64(seed: 0x1BC7)
        let saveSeconds = try repetitions.medianOf {
            let file = TemporaryFile(prefix: "incremental")
            defer { file.remove() }
            let snapshotFile = try SnapshotFile(store: store, path: file.path)
            let ids = randomIDs(changed, of: count, rng: &rng)
            try store.write { tx in for id in ids { _ = try tx[items].update(id) { $0.quantity += 1 } } }
            var summary: SnapshotSummary?
            let elapsed = try seconds { summary = try snapshotFile.save() }
            if let summary, summary.rowCount != changed {
                progress("warning: incremental save wrote \(summary.rowCount) rows, expected \(changed)")
            }
            return elapsed
        }
        let saveMilliseconds = saveSeconds * 1e3
        let fullMilliseconds = fullSnapshotSeconds * 1e3
        let figure = Figure(
            name: "incremental_save_1pct", value: saveMilliseconds, unit: "ms", baseline: fullMilliseconds,
            ratio: saveMilliseconds / fullMilliseconds, ratioMeaning: "incremental / full", direction: .lowerIsBetter,
            baselineMeaning: "our full snapshot (snapshot figure), ms")
        return (figure, "incremental_save_1pct: \(grouped(changed)) entities changed in one commit before each save")
    }

    /// `restore`: store.restore(from:) of a snapshot of `store` into an empty store of the
    /// same schema, against raw SQLite stepping the same rows into a Dictionary.
    func restoreFigure(store: EntityStore) throws -> Figure {
        let count = store.state[items].count
        let dump = TemporaryFile(prefix: "dump")
        defer { dump.remove() }
        try RawSQLite.dump(store.state[items], to: dump.path)
        let source = TemporaryFile(prefix: "restore")
        defer { source.remove() }
        try store.snapshot(to: source.path)
        let expected = store.state[items]
        let (rawSeconds, restoreSeconds) = try repetitions.pairedMedians(baseline: {
            try rawLoadSeconds(from: dump.path, expecting: count)
        }, ours: {
            let target = try makeEmptyStore()
            let elapsed = try seconds { try target.restore(from: source.path) }
            let restored = target.state[items]
            if restored.count != count || restored.find(count) != expected.find(count)
                || restored.filter(\.ownerID, equals: 1).count != expected.filter(\.ownerID, equals: 1).count {
                progress("warning: the restored store differs from the snapshotted one")
            }
            return elapsed
        })
        let rawRestoreRate = Double(count) / rawSeconds
        let restoreRate = Double(count) / restoreSeconds
        return Figure(
            name: "restore", value: restoreRate, unit: "rows/s", baseline: rawRestoreRate,
            ratio: restoreRate / rawRestoreRate, ratioMeaning: "ours / raw SQLite", direction: .higherIsBetter,
            baselineMeaning: "raw SQLite: SELECT stepped into [Int: BenchItem]")
    }
}
