import EntityStore
import EntityStorePostgres
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The figures of real deployments, each on throwaway servers of its own started by
/// `scripts/postgres-cluster`, with replicas and writers as processes of their own
/// (``FanOutChild``):
///
/// - `--only fanout`: 32 replica processes and 2 writer processes, all through pgbouncer
///   (transaction pooling) to a primary with one hot standby; replicas read from the
///   standby and wake through a direct `LISTEN` on the primary (`listen`) or by polling
///   through the pooler (`poll`); `listen-primary` (on request) reads from the primary
///   instead, for comparison. From each commit to every replica's live query, and the
///   writers' pushes per second, and the server connections held.
/// - `--only standby-load`: the primary's work under the same paced push load with 8
///   replicas reading from a standby, against the 8 reading from the primary.
struct DeploymentFigures {
    /// Rows of the shared store.
    let rows: Int
    /// Seconds of one measured window.
    let seconds: Double
    /// Measured windows per setup (standby-load alternates the two setups this many times).
    let rounds: Int

    static let schema = "bench_deploy"

    /// How one round runs its children.
    struct Setup {
        var name: String
        var replicas: Int
        var writers: Int
        /// Pushes per second per writer; 0: as fast as each can.
        var rate: Double
        var replicaEnvironment: [FanOutChild.Key: String]
        var writerEnvironment: [FanOutChild.Key: String]
    }

    /// What one round measured.
    struct Round {
        var delaysMs: [Double] = []
        var pushes = 0
        var windowSeconds = 0.0
        var writerPushP50: [Double] = []
        var writerPushP99: [Double] = []
        var writerCPU = 0.0
        var replicaCPU = 0.0
        var replicaFailures = 0
    }

    /// Runs `setup`'s children once: starts the replicas (each loads the store), then the
    /// writers; a window of ``seconds`` after a second of warm-up; `sample` runs every two
    /// seconds in the window, `window` brackets it (its first closure at the start, its
    /// second at the end). Every child is stopped on return, error or not.
    func round(
        _ setup: Setup, sample: () -> Void = {}, window: (start: () throws -> Void, end: () throws -> Void)? = nil
    ) throws -> Round {
        var children: [ChildProcess] = []
        defer { for child in children { child.stop() } }
        func environment(_ values: [FanOutChild.Key: String], index: Int) -> [String: String] {
            var result = [FanOutChild.Key.schema.rawValue: Self.schema, FanOutChild.Key.index.rawValue: String(index),
                          FanOutChild.Key.writers.rawValue: String(setup.writers)]
            for (key, value) in values { result[key.rawValue] = value }
            return result
        }
        let began = monotonicNanoseconds()
        var replicas: [ChildProcess] = []
        for index in 0..<setup.replicas {
            let child = try ChildProcess(
                name: "replica \(index)", arguments: ["--fanout-child", "replica"], environment: environment(setup.replicaEnvironment, index: index))
            children.append(child)
            replicas.append(child)
        }
        for replica in replicas { _ = try replica.expect("ready", seconds: 300) }
        progress("  \(setup.name): \(setup.replicas) replicas ready in \(String(Double(monotonicNanoseconds() - began) / 1e9, decimals: 1)) s")
        var writers: [ChildProcess] = []
        for index in 0..<setup.writers {
            let child = try ChildProcess(
                name: "writer \(index)", arguments: ["--fanout-child", "writer"], environment: environment(setup.writerEnvironment, index: index))
            children.append(child)
            writers.append(child)
        }
        for writer in writers { _ = try writer.expect("ready", seconds: 120) }
        Thread.sleep(forTimeInterval: 1)

        let from = realtimeNanoseconds() + 1_500_000_000
        let until = from + Int(seconds * 1e9)
        for writer in writers { try writer.send("go \(from) \(until) \(setup.rate)") }
        func sleep(until instant: Int) {
            let wait = instant - realtimeNanoseconds()
            if wait > 0 { usleep(UInt32(min(wait / 1_000, 10_000_000))) }
        }
        sleep(until: from)
        try window?.start()
        var next = from + 1_000_000_000
        while next < until {
            sleep(until: next)
            sample()
            next += 2_000_000_000
        }
        sleep(until: until)
        try window?.end()

        var result = Round(windowSeconds: seconds)
        for writer in writers {
            let words = try writer.expect("result", seconds: 60)
            guard words.count == 4, let pushes = Int(words[0]), let p50 = Double(words[1]), let p99 = Double(words[2]), let cpu = Double(words[3]) else {
                throw BenchFailure("\(writer.name): bad result \(words)")
            }
            result.pushes += pushes
            result.writerPushP50.append(p50)
            result.writerPushP99.append(p99)
            result.writerCPU += cpu
        }
        // Late deliveries of the window's last commits.
        Thread.sleep(forTimeInterval: 2)
        for replica in replicas { try replica.send("stop \(from) \(until)") }
        for replica in replicas {
            let words = try replica.expect("result", seconds: 60)
            guard words.count >= 3, let cpu = Double(words[0]), let failures = Int(words[1]), let count = Int(words[2]), words.count == 3 + count else {
                throw BenchFailure("\(replica.name): bad result")
            }
            result.replicaCPU += cpu
            result.replicaFailures += failures
            result.delaysMs += words.dropFirst(3).compactMap { Double($0) }.map { $0 / 1_000 }
        }
        return result
    }

    /// The clusters: a primary, a hot standby, and (`poolers`) a pgbouncer in front of each;
    /// the store of ``rows`` rows created on the primary and replayed on the standby.
    struct Deployment {
        let clusters: BenchClusters
        let primary: String
        let standby: String
        var primaryPooler: String?
        var standbyPooler: String?
    }

    func deploy(poolers: Bool) throws -> Deployment {
        let clusters = try BenchClusters()
        do {
            progress("  starting a primary, a hot standby\(poolers ? " and a pgbouncer in front of each" : "")")
            let primary = try clusters.primary("primary")
            _ = try pqRows(primary, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            let standby = try clusters.standby(of: "primary", "standby")
            var deployment = Deployment(clusters: clusters, primary: primary, standby: standby)
            if poolers {
                deployment.primaryPooler = try clusters.pgbouncer(for: "primary", "pooler-primary")
                deployment.standbyPooler = try clusters.pgbouncer(for: "standby", "pooler-standby")
            }
            let store = try makeStore(Dataset(size: rows).entities)
            let sync = PostgresSync(store: store, target: try PostgresTarget(url: primary, schema: Self.schema))
            _ = try blocking { try await sync.open() }
            blockingIgnoringErrors { await sync.close() }
            let deadline = monotonicNanoseconds() + 30_000_000_000
            while (try? pqRows(standby, "SELECT count(*) FROM \(Self.schema).items"))?.first?.first != String(rows) {
                guard monotonicNanoseconds() < deadline else { throw BenchFailure("the standby did not replay the store within 30 s") }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return deployment
        } catch {
            clusters.stopAll()
            throw error
        }
    }

    // MARK: Fan-out

    /// `deploy_fanout_*`: 32 replica processes, 2 writers (pushing `rate` times a second
    /// each; 0: as fast as they can), through pgbouncer; each of `wakeups` (`listen`,
    /// `poll`, `listen-primary`) in a round of its own.
    func fanOut(replicas: Int, writers: Int, rate: Double, wakeups: [String]) throws -> SizeReport {
        var report = SizeReport(size: rows)
        report.notes.append("load average before: \(loadAverage())")
        let deployment = try deploy(poolers: true)
        defer { deployment.clusters.stopAll() }
        guard let primaryPooler = deployment.primaryPooler, let standbyPooler = deployment.standbyPooler else { throw BenchFailure("no pooler") }
        let pooled = "?pool_mode=transaction"
        for wakeup in wakeups {
            // `listen-primary`: for comparison, replicas read from the primary (through its
            // pooler) rather than the standby.
            var replicaEnvironment: [FanOutChild.Key: String] = [
                .target: primaryPooler + pooled, .wakeup: wakeup == "poll" ? "poll" : "listen",
            ]
            if wakeup != "listen-primary" { replicaEnvironment[.read] = standbyPooler + pooled }
            if wakeup != "poll" { replicaEnvironment[.listen] = deployment.primary }
            let setup = Setup(
                name: "fanout (\(wakeup))", replicas: replicas, writers: writers, rate: rate,
                replicaEnvironment: replicaEnvironment, writerEnvironment: [.target: primaryPooler + pooled])
            var connections = ConnectionCounts()
            let measured = try round(setup, sample: {
                connections.sample(deployment: deployment)
            })
            let delays = measured.delaysMs
            let pushesPerSecond = Double(measured.pushes) / measured.windowSeconds
            let expected = measured.pushes * replicas
            let p50 = quantile(delays, 0.5), p99 = quantile(delays, 0.99)
            func figure(_ name: String, _ value: Double, _ unit: String) -> Figure {
                Figure(name: name, value: value, unit: unit, baseline: .nan, ratio: .nan, ratioMeaning: "-", direction: .lowerIsBetter,
                       baselineMeaning: "none: \(replicas) replica processes, \(writers) writers, pgbouncer, \(wakeup == "listen-primary" ? "primary" : "standby") reads, \(wakeup)")
            }
            report.add(figure("deploy_fanout_\(replicas)_\(wakeup)_p50_ms", p50, "ms (p50)"))
            report.add(figure("deploy_fanout_\(replicas)_\(wakeup)_p99_ms", p99, "ms (p99)"))
            report.add(Figure(
                name: "deploy_fanout_\(replicas)_\(wakeup)_pushes_per_s", value: pushesPerSecond, unit: "pushes/s", baseline: .nan, ratio: .nan,
                ratioMeaning: "-", direction: .higherIsBetter,
                baselineMeaning: "none: \(writers) writer processes, " + (rate > 0 ? "each paced at \(String(rate, decimals: 0))/s" : "as fast as they can")))
            report.notes.append(
                "deploy_fanout (\(wakeup)): \(grouped(delays.count)) deliveries of \(grouped(expected)) (\(grouped(measured.pushes)) pushes × \(replicas) replicas; "
                    + "a row changed again before a replica pulled shows only its newest commit); max \(String(delays.max() ?? .nan, decimals: 1)) ms, "
                    + "p90 \(String(quantile(delays, 0.9), decimals: 1)) ms; writers' push() p50 \(measured.writerPushP50.map { String($0, decimals: 2) }.joined(separator: "/")) ms, "
                    + "p99 \(measured.writerPushP99.map { String($0, decimals: 2) }.joined(separator: "/")) ms; CPU in the window and the replicas' load: "
                    + "writers \(String(measured.writerCPU, decimals: 1)) s, replicas \(String(measured.replicaCPU, decimals: 1)) s in all (whole life); "
                    + "replica failures reported: \(measured.replicaFailures)")
            report.notes.append("deploy_fanout (\(wakeup)) connections, most seen in the window: \(connections.summary)")
        }
        report.notes.append("load average after: \(loadAverage())")
        return report
    }

    // MARK: Standby load

    /// `deploy_standby_primary_*`: the primary's work with 8 replicas reading from a
    /// standby, against the same 8 reading from the primary, under 2 writers pushing at
    /// `rate` pushes a second each; every replica listens on the primary.
    func standbyLoad(replicas: Int, writers: Int, rate: Double) throws -> SizeReport {
        var report = SizeReport(size: rows)
        report.notes.append("load average before: \(loadAverage())")
        let deployment = try deploy(poolers: false)
        defer { deployment.clusters.stopAll() }
        let primaryPID = try deployment.clusters.postmaster("primary")
        let standbyPID = try deployment.clusters.postmaster("standby")
        var onPrimary: [PrimaryWork] = []
        var onStandby: [PrimaryWork] = []
        for _ in 0..<rounds {
            for readsStandby in [false, true] {
                var replicaEnvironment: [FanOutChild.Key: String] = [.target: deployment.primary]
                if readsStandby { replicaEnvironment[.read] = deployment.standby }
                let setup = Setup(
                    name: "standby-load (replicas read the \(readsStandby ? "standby" : "primary"))", replicas: replicas, writers: writers, rate: rate,
                    replicaEnvironment: replicaEnvironment, writerEnvironment: [.target: deployment.primary])
                var before = WorkSnapshot()
                var work = PrimaryWork()
                let measured = try round(setup, window: (
                    start: { before = try WorkSnapshot(url: deployment.primary, postmaster: primaryPID, standbyPostmaster: standbyPID) },
                    end: {
                        let after = try WorkSnapshot(url: deployment.primary, postmaster: primaryPID, standbyPostmaster: standbyPID)
                        work = after.minus(before)
                    }))
                work.pushes = measured.pushes
                work.delaysMs = measured.delaysMs
                if readsStandby { onStandby.append(work) } else { onPrimary.append(work) }
            }
        }
        func medianOf(_ runs: [PrimaryWork], _ value: (PrimaryWork) -> Double) -> Double { median(runs.map(value)) }
        func add(_ name: String, _ unit: String, _ value: (PrimaryWork) -> Double, _ what: String) {
            let standby = medianOf(onStandby, value), primary = medianOf(onPrimary, value)
            report.add(Figure(
                name: name, value: standby, unit: unit, baseline: primary, ratio: standby / primary,
                ratioMeaning: "standby reads / primary reads", direction: .lowerIsBetter,
                baselineMeaning: "\(what), the \(replicas) replicas reading from the primary"))
        }
        add("deploy_standby_primary_cpu_ms_per_push", "ms/push", { $0.cpuSeconds * 1_000 / Double(max(1, $0.pushes)) },
            "the primary's processes' CPU per push")
        add("deploy_standby_primary_xacts_per_push", "xacts/push", { $0.transactions / Double(max(1, $0.pushes)) }, "committed transactions per push")
        add("deploy_standby_primary_stmt_ms_per_push", "ms/push", { $0.statementMs / Double(max(1, $0.pushes)) },
            "pg_stat_statements' execution time per push")
        add("deploy_standby_primary_tuples_per_push", "tuples/push", { $0.tuples / Double(max(1, $0.pushes)) },
            "rows returned and fetched per push (pg_stat_database)")
        add("deploy_standby_primary_blocks_per_push", "blocks/push", { $0.blocks / Double(max(1, $0.pushes)) },
            "shared blocks hit and read per push (pg_stat_database)")
        for (label, runs) in [("replicas on the primary", onPrimary), ("replicas on the standby", onStandby)] {
            for run in runs { report.notes.append("deploy_standby (\(label)): \(run.summary)") }
        }
        report.notes.append("load average after: \(loadAverage())")
        return report
    }

    /// The 1, 5 and 15-minute load averages.
    func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// The most server connections seen at once in a window: on the primary and the standby
/// (`pg_stat_activity`, by backend type; `LISTEN` sessions apart) and in each pgbouncer
/// (`SHOW POOLS`, `SHOW CLIENTS`).
struct ConnectionCounts {
    var most: [String: Int] = [:]
    var order: [String] = []

    mutating func note(_ key: String, _ value: Int) {
        if most[key] == nil { order.append(key) }
        most[key] = max(most[key] ?? 0, value)
    }

    mutating func sample(deployment: DeploymentFigures.Deployment) {
        for (label, url) in [("primary", deployment.primary), ("standby", deployment.standby)] {
            let rows = (try? pqRows(url, """
                SELECT backend_type, count(*), count(*) FILTER (WHERE query LIKE 'LISTEN%') FROM pg_stat_activity \
                WHERE pid <> pg_backend_pid() AND backend_type IN ('client backend', 'walsender', 'walreceiver') GROUP BY 1 ORDER BY 1
                """)) ?? []
            for row in rows where row.count == 3 {
                note("\(label) \(row[0])s", Int(row[1]) ?? 0)
                if row[0] == "client backend" { note("\(label) LISTEN sessions", Int(row[2]) ?? 0) }
            }
        }
        for (label, pooler) in [("pgbouncer (primary)", deployment.primaryPooler), ("pgbouncer (standby)", deployment.standbyPooler)] {
            guard let pooler, let slash = pooler.lastIndex(of: "/") else { continue }
            let admin = pooler[..<slash] + "/pgbouncer"
            if let pools = try? pqNamedRows(String(admin), "SHOW POOLS") {
                for pool in pools where pool.first(where: { $0.0 == "database" })?.1 == "postgres" {
                    let value = { (name: String) in Int(pool.first(where: { $0.0 == name })?.1 ?? "0") ?? 0 }
                    note("\(label) clients active", value("cl_active"))
                    note("\(label) clients waiting", value("cl_waiting"))
                    note("\(label) server connections", value("sv_active") + value("sv_idle") + value("sv_used") + value("sv_tested") + value("sv_login"))
                    note("\(label) servers active", value("sv_active"))
                }
            }
            if let clients = try? pqNamedRows(String(admin), "SHOW CLIENTS") {
                note("\(label) SHOW CLIENTS", clients.filter { row in row.first(where: { $0.0 == "database" })?.1 != "pgbouncer" }.count)
            }
        }
    }

    var summary: String { order.map { "\($0) \(most[$0] ?? 0)" }.joined(separator: ", ") }
}

/// Counters of the primary's work at one instant: its processes' CPU (from /proc, by
/// kind), `pg_stat_database` and `pg_stat_statements` totals; the standby's CPU too.
struct WorkSnapshot {
    /// Clock ticks of user and system CPU per process ID of the primary, with its kind.
    var primaryTicks: [Int32: (kind: String, ticks: Int)] = [:]
    var standbyTicks: [Int32: (kind: String, ticks: Int)] = [:]
    var database: [Double] = []
    var statements: [Double] = []

    init() {}

    init(url: String, postmaster: Int32, standbyPostmaster: Int32) throws {
        primaryTicks = Self.ticks(of: postmaster)
        standbyTicks = Self.ticks(of: standbyPostmaster)
        database = try pqRows(url, """
            SELECT xact_commit + xact_rollback, tup_returned + tup_fetched, blks_hit + blks_read, blks_read FROM pg_stat_database WHERE datname = 'postgres'
            """).first?.compactMap { Double($0) } ?? []
        statements = try pqRows(url, """
            SELECT coalesce(sum(calls), 0), coalesce(sum(total_exec_time), 0), coalesce(sum(shared_blks_hit + shared_blks_read), 0) \
            FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%'
            """).first?.compactMap { Double($0) } ?? []
    }

    /// The postmaster's and its children's CPU ticks, by process.
    static func ticks(of postmaster: Int32) -> [Int32: (kind: String, ticks: Int)] {
        var result: [Int32: (kind: String, ticks: Int)] = [:]
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return result }
        for entry in entries {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")")
            else { continue }
            // Fields after the command's closing parenthesis: state (3), ppid (4), ... utime (14), stime (15).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let parent = Int32(fields[1]), pid == postmaster || parent == postmaster,
                  let user = Int(fields[11]), let system = Int(fields[12])
            else { continue }
            let command = ((try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8)) ?? "").replacingOccurrences(of: "\0", with: " ")
            let kind = pid == postmaster ? "postmaster"
                : command.contains("walsender") ? "walsender"
                : command.contains("postgres: entitystore") ? "client backends" : "background"
            result[pid] = (kind, user + system)
        }
        return result
    }

    /// What happened between `earlier` and this snapshot.
    func minus(_ earlier: WorkSnapshot) -> PrimaryWork {
        let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
        func cpu(_ now: [Int32: (kind: String, ticks: Int)], _ then: [Int32: (kind: String, ticks: Int)]) -> [String: Double] {
            var byKind: [String: Double] = [:]
            for (pid, value) in now {
                byKind[value.kind, default: 0] += Double(value.ticks - (then[pid]?.ticks ?? 0)) / tick
            }
            return byKind
        }
        var work = PrimaryWork()
        work.cpuByKind = cpu(primaryTicks, earlier.primaryTicks)
        work.cpuSeconds = work.cpuByKind.values.reduce(0, +)
        work.standbyCPUSeconds = cpu(standbyTicks, earlier.standbyTicks).values.reduce(0, +)
        if database.count == 4, earlier.database.count == 4 {
            work.transactions = database[0] - earlier.database[0]
            work.tuples = database[1] - earlier.database[1]
            work.blocks = database[2] - earlier.database[2]
            work.blocksRead = database[3] - earlier.database[3]
        }
        if statements.count == 3, earlier.statements.count == 3 {
            work.statementCalls = statements[0] - earlier.statements[0]
            work.statementMs = statements[1] - earlier.statements[1]
            work.statementBlocks = statements[2] - earlier.statements[2]
        }
        return work
    }
}

/// The primary's work over one window.
struct PrimaryWork {
    var cpuSeconds = 0.0
    var cpuByKind: [String: Double] = [:]
    var standbyCPUSeconds = 0.0
    var transactions = 0.0
    var tuples = 0.0
    var blocks = 0.0
    var blocksRead = 0.0
    var statementCalls = 0.0
    var statementMs = 0.0
    var statementBlocks = 0.0
    var pushes = 0
    var delaysMs: [Double] = []

    var summary: String {
        "\(pushes) pushes; primary CPU \(String(cpuSeconds, decimals: 2)) s ("
            + cpuByKind.sorted { $0.key < $1.key }.map { "\($0.key) \(String($0.value, decimals: 2))" }.joined(separator: ", ")
            + "), standby CPU \(String(standbyCPUSeconds, decimals: 2)) s; primary: \(Int(transactions)) transactions, \(Int(tuples)) tuples returned+fetched, "
            + "\(Int(blocks)) blocks (\(Int(blocksRead)) read); pg_stat_statements: \(Int(statementCalls)) calls, \(String(statementMs, decimals: 1)) ms, "
            + "\(Int(statementBlocks)) blocks; commit to replica p50 \(String(quantile(delaysMs, 0.5), decimals: 1)) ms, p99 \(String(quantile(delaysMs, 0.99), decimals: 1)) ms"
    }
}
