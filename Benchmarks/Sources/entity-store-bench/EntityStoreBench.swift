import ArgumentParser
import EntityStore
import Foundation

/// Measures EntityStore against a plain Dictionary, raw SQLite and GRDB, in one process
/// on the same generated data, and reports every figure as a ratio to its baseline.
@main
struct EntityStoreBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entity-store-bench",
        abstract: "EntityStore benchmarks: every figure as a ratio to a baseline measured in the same run.")

    @Option(help: "Measure this number of entities only (default: 10,000, 100,000 and 1,000,000 in turn).")
    var size: Int?

    @Flag(help: "Print one JSON object per size on standard output instead of a table.")
    var json = false

    @Option(help: "Also write the JSON objects (one line per size) to this file, whatever the standard output holds.")
    var jsonOutput: String?

    @Option(help: "Measured repetitions per figure, after one warm-up run (default: 11 below 100,000 entities, 5 from 100,000, 3 from 1,000,000).")
    var repetitions: Int?

    @Flag(help: "Also measure raw SQLite counterparts of every persistence figure (printed on standard error); the figures' own baselines are always measured.")
    var sqliteBaselines = false

    @Option(help: ArgumentHelp("Measure only these figures (restore, snapshot, incremental, live, queries, testing, postgres, postgres-scoped: a scoped replica, fanout and standby-load: deployment figures on throwaway servers, commit: the commit latencies, lookup: insert and lookup, memory: bytes_per_entity, derived: derived_notify_us), for profiling and for the largest sizes.", visibility: .hidden))
    var only: String?

    @Option(help: "Also measure the PostgreSQL figures against this server (postgres:// URL; default: ENTITYSTORE_POSTGRES_URL, if set).")
    var postgresURL: String?

    @Option(help: "With --only fanout or standby-load: seconds of each measured window (default 10).")
    var window: Double = 10

    @Option(help: "With --only fanout: replica processes (default 32); with --only standby-load: replicas (default 8).")
    var replicas: Int?

    @Option(help: "With --only fanout: how replicas wake, comma-separated: 'listen', 'poll' (default: both); 'listen-primary' reads from the primary.")
    var wakeup: String = "listen,poll"

    @Option(help: "With --only fanout or standby-load: pushes per second of each of the two writers (default: as fast as each can for fanout, 25 for standby-load).")
    var pushRate: Double?

    @Option(help: ArgumentHelp("Run as a process of the deployment figures (replica or writer); internal.", visibility: .private))
    var fanoutChild: String?

    /// The server of the PostgreSQL figures, if any.
    var postgres: String? { postgresURL ?? ProcessInfo.processInfo.environment["ENTITYSTORE_POSTGRES_URL"] }

    func validate() throws {
        if let size, size < 1 { throw ValidationError("--size must be at least 1") }
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let replicas, replicas < 1 { throw ValidationError("--replicas must be at least 1") }
        if !(window > 0 && window <= 86_400) { throw ValidationError("--window must be between 0 and 86,400 seconds") }
        if let pushRate, !(pushRate > 0 && pushRate <= 1_000_000) { throw ValidationError("--push-rate must be positive (at most 1,000,000)") }
        for mode in wakeup.split(separator: ",") where !["listen", "poll", "listen-primary"].contains(mode) {
            throw ValidationError("--wakeup takes listen, poll, listen-primary, comma-separated")
        }
    }

    func run() throws {
        if let fanoutChild {
            try FanOutChild.run(role: fanoutChild)
            return
        }
        if only == "fanout" || only == "standby-load" {
            // Throwaway servers of their own; the store has --size rows (default 100).
            let deployment = DeploymentFigures(rows: size ?? 100, seconds: window, rounds: repetitions ?? 1)
            let report = only == "fanout"
                ? try deployment.fanOut(replicas: replicas ?? 32, writers: 2, rate: pushRate ?? 0, wakeups: wakeup.split(separator: ",").map(String.init))
                : try deployment.standbyLoad(replicas: replicas ?? 8, writers: 2, rate: pushRate ?? 25)
            print(json ? report.json() : report.table() + "\n")
            if let jsonOutput { try (report.json() + "\n").write(toFile: jsonOutput, atomically: true, encoding: .utf8) }
            return
        }
        let sizes = size.map { [$0] } ?? [10_000, 100_000, 1_000_000]
        var lines: [String] = []
        for size in sizes {
            let report = try benchmark(size: size)
            print(json ? report.json() : report.table() + "\n")
            lines.append(report.json())
            if let jsonOutput {
                try (lines.joined(separator: "\n") + "\n").write(toFile: jsonOutput, atomically: true, encoding: .utf8)
            }
        }
    }

    /// Every figure of one size, phase by phase.
    func benchmark(size: Int) throws -> SizeReport {
        let label = "[N=\(grouped(size))]"
        let started = monotonicNanoseconds()
        func phase<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
            progress("\(label) \(name)...")
            let start = monotonicNanoseconds()
            defer {
                let elapsed = Double(monotonicNanoseconds() - start) / 1e9
                progress("\(label) \(name) done in \(String(elapsed, decimals: 2)) s")
            }
            return try body()
        }

        let data = phase("generating data") { Dataset(size: size) }
        // Small sizes get more runs: a 10,000-row figure takes milliseconds, so one
        // scheduling hiccup moves a single run by tens of percent.
        let measured = repetitions ?? (size >= 1_000_000 ? 3 : size >= 100_000 ? 5 : 11)
        let figures = StoreFigures(data: data, repetitions: Repetitions(warmUp: 1, measured: measured))
        var report = SizeReport(size: size)
        if let only {
            // Built only for the figures that measure an existing store.
            var built: EntityStore?
            func store() throws -> EntityStore {
                if let built { return built }
                let made = try makeStore(data.entities)
                built = made
                return made
            }
            switch only {
            case "restore": report.add(try phase("restore") { try figures.restoreFigure(store: try store()) })
            case "snapshot": report.add(try phase("snapshot") { try figures.snapshotFigure(store: try store()).0 })
            case "live":
                let live = LiveFigures(data: data, repetitions: figures.repetitions)
                let (update, notes) = try phase("live_query_update_us") { try live.update() }
                for figure in update { report.add(figure) }
                report.add(try phase("live_query_memory") { try live.memory() })
                report.notes.append(contentsOf: notes)
            case "live-profile", "live-profile-plain":
                // The figure's commits alone, for an instruction profiler: collect on
                // `LiveFigures.profiledCommits`, with and without the live queries alive.
                let live = LiveFigures(data: data, repetitions: figures.repetitions)
                try phase("profiled commits") { try live.profile(withQueries: only == "live-profile") }
            case "commit":
                let commit = try phase("commit latency") { try figures.commit(store: try store()) }
                for figure in commit.figures { report.add(figure) }
                report.notes.append(contentsOf: commit.notes)
            case "lookup":
                let (insert, inserted, dictionary) = try phase("insert") { try figures.insert() }
                report.add(insert)
                report.add(phase("lookup") { figures.lookup(store: inserted, dictionary: dictionary) })
            case "queries":
                var dictionary: [Int: BenchItem] = [:]
                for entity in data.entities { dictionary[entity.id] = entity }
                for figure in try phase("index queries", { try figures.queryFigures(store: try store(), dictionary: dictionary) }) { report.add(figure) }
            case "incremental":
                let full = try phase("snapshot") { try figures.snapshotFigure(store: try store()) }
                report.add(try phase("incremental_save_1pct") {
                    try figures.incrementalFigure(store: try store(), fullSnapshotSeconds: full.seconds).0
                })
            case "memory":
                let (memory, note) = try phase("bytes_per_entity") { try figures.bytesPerEntity() }
                report.add(memory)
                report.notes.append(note)
            case "derived":
                let (derived, watched) = try phase("derived_notify_us") { try figures.derivedNotify(store: try store()) }
                report.add(derived)
                report.notes.append("derived_notify_us: \(grouped(watched)) live derived queries by ID")
            case "testing":
                let testing = TestingFigures(repetitions: figures.repetitions)
                report.add(try phase("testing_round_trip_ms") { try testing.roundTrip(store: try store()) })
                report.add(try phase("testing_assert_write_us") { try testing.assertWrite(store: try store(), size: size) })
                report.add(try phase("testing_assert_changes_chain_us") { try testing.assertChangesOfSeveralCommits(store: try store(), size: size) })
                let (crash, note) = try phase("testing_crash_safety_s") { try testing.crashSafety() }
                report.add(crash)
                report.notes.append(note)
            case "postgres":
                guard let postgres else { throw ValidationError("--only postgres needs --postgres-url or ENTITYSTORE_POSTGRES_URL") }
                let measured = try phase("PostgreSQL (pg_push, pg_pull, pg_push_1pct, sync_latency_ms, sync_fanout, sync_pushes_per_s)") {
                    try PostgresFigures(data: data, repetitions: figures.repetitions, url: postgres).figures(store: try store())
                }
                for figure in measured.figures { report.add(figure) }
                report.notes.append(contentsOf: measured.notes)
            case "postgres-scoped":
                guard let postgres else { throw ValidationError("--only postgres-scoped needs --postgres-url or ENTITYSTORE_POSTGRES_URL") }
                let measured = try phase("PostgreSQL scoped replica (scoped_load_ms, scoped_resident_bytes, scoped_latency_ms, scoped_pull_ms)") {
                    try PostgresFigures(data: data, repetitions: figures.repetitions, url: postgres).scopedFigures()
                }
                for figure in measured.figures { report.add(figure) }
                report.notes.append(contentsOf: measured.notes)
            default:
                throw ValidationError(
                    "--only takes restore, snapshot, incremental, live, live-profile, live-profile-plain, queries, testing, postgres, postgres-scoped, commit, lookup, memory or derived")
            }
            return report
        }

        let (memory, memoryNote) = try phase("bytes_per_entity") { try figures.bytesPerEntity() }
        let (insert, store, dictionary) = try phase("insert") { try figures.insert() }
        report.add(insert)
        report.add(phase("lookup") { figures.lookup(store: store, dictionary: dictionary) })
        for figure in try phase("index queries", { try figures.queryFigures(store: store, dictionary: dictionary) }) { report.add(figure) }
        let iteration = phase("full iteration") { figures.iterationRate(store: store) }
        let commit = try phase("commit latency", { try figures.commit(store: store) })
        for figure in commit.figures { report.add(figure) }
        report.notes.append(contentsOf: commit.notes)
        let (derived, watched) = try phase("derived_notify_us") { try figures.derivedNotify(store: store) }
        report.add(derived)
        report.add(memory)
        report.notes.append(memoryNote)
        report.notes.append("derived_notify_us: \(grouped(watched)) live derived queries by ID")

        let live = LiveFigures(data: data, repetitions: figures.repetitions)
        let (liveUpdate, liveNotes) = try phase("live_query_update_us") { try live.update() }
        for figure in liveUpdate { report.add(figure) }
        report.add(try phase("live_query_memory") { try live.memory() })
        report.notes.append(contentsOf: liveNotes)

        let peers = GRDBFigures(data: data, repetitions: figures.repetitions)
        let grdb = try phase("GRDB") {
            try peers.figures(oursInsert: insert.value, oursLookup: report.figures[1].value, oursIteration: iteration)
        }
        for figure in grdb { report.add(figure) }
        report.notes.append("GRDB: temporary SQLite file, DatabaseQueue with default configuration; "
            + "grdb_lookup uses \(grouped(min(data.lookupIDs.count, GRDBFigures.maxLookups))) fetches")

        let atRest = report.figures.first { $0.name == "commit_p99_us" }?.value ?? .nan
        let persistence = try phase("persistence (snapshot, restore, incremental save, commits during snapshot)") {
            try figures.persistence(store: store, commitP99AtRest: atRest)
        }
        for figure in persistence.figures { report.add(figure) }
        report.notes.append(contentsOf: persistence.notes)

        if let postgres {
            let measured = try phase("PostgreSQL (pg_push, pg_pull, pg_push_1pct, sync_latency_ms, sync_fanout, sync_pushes_per_s)") {
                try PostgresFigures(data: data, repetitions: figures.repetitions, url: postgres).figures(store: store)
            }
            for figure in measured.figures { report.add(figure) }
            report.notes.append(contentsOf: measured.notes)
        }

        if sqliteBaselines {
            let baselines = try phase("raw SQLite persistence baselines") {
                try figures.rawSQLitePersistenceBaselines(store: store)
            }
            progress(baselines.summary)
        }
        let total = Double(monotonicNanoseconds() - started) / 1e9
        progress("\(label) all figures in \(String(total, decimals: 1)) s")
        return report
    }
}
