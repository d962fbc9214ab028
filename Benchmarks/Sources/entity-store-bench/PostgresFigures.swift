import CBenchPQ
import EntityStore
import EntityStorePostgres
import Foundation
import StoreCore

/// The PostgreSQL figures, against a server given by URL (`--postgres-url`, or
/// `ENTITYSTORE_POSTGRES_URL`): each in schemas of its own, dropped afterwards.
struct PostgresFigures {
    let data: Dataset
    let repetitions: Repetitions
    let url: String

    /// `pg_push`, `pg_pull`, `pg_push_1pct`, `sync_latency_ms`, `sync_latency_p99_ms`, the
    /// fan-out latencies `sync_fanout_N_p50_ms` and `sync_fanout_N_p99_ms` (N = 1, 4, 8) and
    /// `sync_pushes_per_s` on `store`.
    func figures(store: EntityStore) throws -> (figures: [Figure], notes: [String]) {
        let count = store.state[items].count
        var notes: [String] = []
        let pushTarget = try PostgresTarget(url: url, schema: "bench_push")
        defer { dropSchemas(["bench_push", "bench_csv", "bench_rawpush"]) }

        // pg_push: a full snapshot, against the same rows as CSV through psql's \copy.
        let csv = TemporaryFile(prefix: "items-csv")
        defer { csv.remove() }
        try writeCSV(store: store, to: csv.path)
        let (copySeconds, pushSeconds) = try repetitions.pairedMedians(baseline: {
            try psqlCopySeconds(csv: csv.path)
        }, ours: {
            let state = store.state
            return try seconds { _ = try blocking { try await state.writeSnapshot(to: pushTarget) } }
        })
        let push = Figure(
            name: "pg_push", value: Double(count) / pushSeconds, unit: "rows/s", baseline: Double(count) / copySeconds,
            ratio: copySeconds / pushSeconds, ratioMeaning: "ours / psql \\copy", direction: .higherIsBetter,
            baselineMeaning: "psql \\copy of the rows as CSV, then the same primary key and index")

        // pg_pull: a restore into a ready (empty) store, against a SELECT into a Dictionary.
        let (selectSeconds, pullSeconds) = try repetitions.pairedMedians(baseline: {
            try selectAllSeconds(expected: count)
        }, ours: {
            let empty = try makeEmptyStore()
            return try seconds { _ = try blocking { try await empty.restore(from: pushTarget) } }
        })
        let pull = Figure(
            name: "pg_pull", value: Double(count) / pullSeconds, unit: "rows/s", baseline: Double(count) / selectSeconds,
            ratio: selectSeconds / pullSeconds, ratioMeaning: "ours / SELECT", direction: .higherIsBetter,
            baselineMeaning: "libpq SELECT of every row decoded into [Int: BenchItem]")

        // pg_push_1pct: a sync push of 1% changed rows, against the full push.
        let sync = PostgresSync(store: store, target: pushTarget)
        _ = try blocking { try await sync.open() }
        var generator = SplitMix64(seed: 15)
        let changed = max(1, count / 100)
        let incrementalSeconds = try repetitions.medianOf {
            let ids = Set((0..<changed * 2).map { _ in generator.int(in: 1...count) }).prefix(changed)
            try store.write { tx in
                for id in ids { _ = try tx[items].update(id) { $0.quantity += 1 } }
            }
            return try seconds { _ = try blocking { try await sync.push() } }
        }
        let incremental = Figure(
            name: "pg_push_1pct", value: incrementalSeconds * 1000, unit: "ms", baseline: pushSeconds * 1000,
            ratio: incrementalSeconds / pushSeconds, ratioMeaning: "1% push / full push", direction: .lowerIsBetter,
            baselineMeaning: "pg_push's full snapshot")
        notes.append("pg_push_1pct: \(grouped(changed)) rows updated per push, through PostgresSync.push()")

        // sync_latency_ms: replica A commits and pushes; replica B, listening, pulls and its
        // derived query of the row wakes.
        let (latencies, notifyLatencies) = try syncLatencies(store: store, sync: sync, target: pushTarget, rounds: 200)
        let p50 = quantile(latencies, 0.5)
        let p99 = quantile(latencies, 0.99)
        let notifyP50 = quantile(notifyLatencies, 0.5)
        let notifyP99 = quantile(notifyLatencies, 0.99)
        notes.append("sync_latency_ms: two replicas in one process on separate connections, 200 rounds; a bare NOTIFY to LISTEN takes p50 \(String(notifyP50, decimals: 3)) ms, p99 \(String(notifyP99, decimals: 3)) ms")

        // sync_fanout_*: the same with 1, 4 and 8 listening replicas; sync_pushes_per_s:
        // single-row pushes from two writers.
        let fanOut = try fanOutFigures(writer: store, sync: sync, target: pushTarget)
        notes.append(contentsOf: fanOut.notes)
        progress("  sync_pushes_per_s: two writers, \(String(Self.pushRateSeconds, decimals: 0)) s per run")
        let pushRate = try pushRateFigure(first: store, firstSync: sync, target: pushTarget)
        notes.append(contentsOf: pushRate.notes)
        blockingIgnoringErrors { await sync.close() }
        return ([
            push, pull, incremental,
            Figure(
                name: "sync_latency_ms", value: p50, unit: "ms (p50)", baseline: notifyP50, ratio: p50 / notifyP50,
                ratioMeaning: "ours / bare NOTIFY", direction: .lowerIsBetter, baselineMeaning: "pg_notify to a LISTEN connection, p50"),
            Figure(
                name: "sync_latency_p99_ms", value: p99, unit: "ms (p99)", baseline: notifyP99, ratio: p99 / notifyP99,
                ratioMeaning: "ours / bare NOTIFY", direction: .lowerIsBetter, baselineMeaning: "pg_notify to a LISTEN connection, p99"),
        ] + fanOut.figures + [pushRate.figure], notes)
    }

    private func writeCSV(store: EntityStore, to path: String) throws {
        var text = ""
        text.reserveCapacity(store.state[items].count * 80)
        func quoted(_ value: String) -> String { "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        for item in store.state[items] {
            text += "\(item.id),\(quoted(item.name)),\(quoted(item.category)),\(item.quantity),\(item.price),\(item.note.map(quoted) ?? ""),\(item.ownerID)\n"
        }
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Seconds of `psql \copy` of the CSV file into a new table, then its primary key and index.
    private func psqlCopySeconds(csv: String) throws -> Double {
        try psql([
            "-c", "DROP SCHEMA IF EXISTS bench_csv CASCADE", "-c", "CREATE SCHEMA bench_csv",
            "-c", "CREATE TABLE bench_csv.items (id BIGINT, name TEXT, category TEXT, quantity BIGINT, price DOUBLE PRECISION, note TEXT, owner_id BIGINT)",
        ], stdin: nil)
        return try seconds {
            try psql([
                "-c", "\\copy bench_csv.items from stdin with (format csv)",
                "-c", "ALTER TABLE bench_csv.items ADD PRIMARY KEY (id)",
                "-c", "CREATE INDEX ON bench_csv.items (owner_id)",
            ], stdin: csv)
        }
    }

    func psql(_ arguments: [String], stdin: String?) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = [url, "-q", "-v", "ON_ERROR_STOP=1"] + arguments
        if let stdin { process.standardInput = FileHandle(forReadingAtPath: stdin) }
        process.standardOutput = FileHandle.nullDevice
        process.environment = ProcessInfo.processInfo.environment.merging(["PGOPTIONS": "-c client_min_messages=warning"]) { $1 }
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchFailure("psql failed with status \(process.terminationStatus)") }
    }

    /// Seconds of a plain SELECT of every row decoded into a Dictionary, with libpq alone.
    private func selectAllSeconds(expected: Int) throws -> Double {
        let connection = try connect()
        defer { PQfinish(connection) }
        let start = monotonicNanoseconds()
        var dictionary: [Int: BenchItem] = [:]
        guard let result = PQexec(connection, "SELECT id, name, category, quantity, price, note, \"ownerID\" FROM bench_push.items"),
              PQresultStatus(result) == PGRES_TUPLES_OK
        else { throw BenchFailure("SELECT failed: \(String(cString: PQerrorMessage(connection)))") }
        defer { PQclear(result) }
        func text(_ row: Int32, _ column: Int32) -> String { String(cString: PQgetvalue(result, row, column)) }
        for row in 0..<PQntuples(result) {
            let id = Int(text(row, 0)) ?? 0
            dictionary[id] = BenchItem(
                id: id, name: text(row, 1), category: text(row, 2), quantity: Int(text(row, 3)) ?? 0, price: Double(text(row, 4)) ?? 0,
                note: PQgetisnull(result, row, 5) != 0 ? nil : text(row, 5), ownerID: Int(text(row, 6)) ?? 0)
        }
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        if dictionary.count != expected { progress("warning: SELECT read \(dictionary.count) rows, expected \(expected)") }
        return elapsed
    }

    /// Commit+push on one replica to the notification of a derived query on another, and a
    /// bare NOTIFY to LISTEN, in milliseconds.
    private func syncLatencies(store: EntityStore, sync: PostgresSync, target: PostgresTarget, rounds: Int) throws -> ([Double], [Double]) {
        let latencies = try withFollowers(1, target: target) { followers in
            try commitToObserverLatencies(writer: store, sync: sync, followers: followers, rounds: rounds, seed: 99).all
        }
        let notify = try notifyLatencies(rounds: rounds, listeners: 1)
        return (latencies, notify)
    }

    /// Runs `body` with `count` replicas of the store in `target`, each a store and a
    /// `PostgresSync` of its own (so its own connections) loaded with `open()` and following
    /// with `start()`; stops and closes them afterwards.
    func withFollowers<R>(_ count: Int, target: PostgresTarget, _ body: ([EntityStore]) throws -> R) throws -> R {
        var stores: [EntityStore] = []
        var syncs: [PostgresSync] = []
        var running: [Task<Void, Never>] = []
        defer {
            for task in running { task.cancel() }
            let (tasks, opened) = (running, syncs)
            blockingIgnoringErrors {
                for task in tasks { await task.value }
                for sync in opened { await sync.close() }
            }
        }
        for index in 0..<count {
            let store = try makeEmptyStore()
            var options = PostgresSync.Options()
            options.origin = "bench-follower-\(index)"
            let sync = PostgresSync(store: store, target: target, options: options)
            syncs.append(sync)
            _ = try blocking { try await sync.open() }
            stores.append(store)
        }
        for sync in syncs { running.append(Task.detached { await sync.start() }) }
        Thread.sleep(forTimeInterval: 0.2 + 0.05 * Double(count))
        return try body(stores)
    }

    /// What ``commitToObserverLatencies(writer:sync:followers:rounds:seed:warmUp:)`` measured,
    /// in milliseconds from before each round's commit.
    struct ObserverLatencies {
        /// Every follower's delay of every round.
        var all: [Double] = []
        /// Per round: when the writer's `push()` returned, and the first and the last
        /// follower's delay.
        var pushed: [Double] = []
        var first: [Double] = []
        var last: [Double] = []
    }

    /// `rounds` times: `writer` commits a one-row update and `sync` pushes it; each of
    /// `followers` (following the same store) has a derived query of the row, whose observer
    /// notes when it sees the new value. The first `warmUp` rounds are not kept (they also
    /// let the followers' LISTEN sessions settle).
    func commitToObserverLatencies(
        writer store: EntityStore, sync: PostgresSync, followers: [EntityStore], rounds: Int, seed: UInt64, warmUp: Int = 0
    ) throws -> ObserverLatencies {
        var generator = SplitMix64(seed: seed)
        var measured = ObserverLatencies()
        measured.all.reserveCapacity(rounds * followers.count)
        let count = max(1, store.state[items].count)
        for round in 0..<(warmUp + rounds) {
            let id = generator.int(in: 1...count)
            let arrivals = Arrivals(count: followers.count)
            let watched = followers.map { $0.derived(items, id: id) }
            let observations = watched.enumerated().map { index, query in
                let before = query.value?.quantity
                return query.observe { _, new in
                    if new?.quantity != before { arrivals.record(index) }
                }
            }
            let start = monotonicNanoseconds()
            try store.write { tx in _ = try tx[items].update(id) { $0.quantity += 1 } }
            _ = try blocking { try await sync.push() }
            let pushed = monotonicNanoseconds()
            guard let times = arrivals.wait(seconds: 5) else {
                throw BenchFailure("\(arrivals.missing) of \(followers.count) followers did not see a change within 5 s")
            }
            if round >= warmUp {
                let delays = times.map { Double($0 - start) / 1e6 }
                measured.all.append(contentsOf: delays)
                measured.pushed.append(Double(pushed - start) / 1e6)
                measured.first.append(delays.min() ?? .nan)
                measured.last.append(delays.max() ?? .nan)
            }
            for observation in observations { observation.cancel() }
            withExtendedLifetime(watched) {}
            Thread.sleep(forTimeInterval: 0.005)
        }
        return measured
    }

    /// A bare NOTIFY from one libpq connection to `listeners` connections in LISTEN, in
    /// milliseconds from before the NOTIFY is sent to each listener having read it (all of
    /// them per round, read by one thread polling their sockets).
    func notifyLatencies(rounds: Int, listeners count: Int) throws -> [Double] {
        var listeners: [OpaquePointer] = []
        defer { for listener in listeners { PQfinish(listener) } }
        for _ in 0..<count { listeners.append(try connect()) }
        let sender = try connect()
        defer { PQfinish(sender) }
        for listener in listeners { PQclear(PQexec(listener, "LISTEN bench_latency")) }
        var results: [Double] = []
        results.reserveCapacity(rounds * count)
        for round in 0..<rounds {
            var heard = [Bool](repeating: false, count: count)
            var remaining = count
            let start = monotonicNanoseconds()
            PQclear(PQexec(sender, "SELECT pg_notify('bench_latency', '\(round)')"))
            while remaining > 0 {
                let waiting = heard.indices.filter { !heard[$0] }
                var descriptors = waiting.map { pollfd(fd: PQsocket(listeners[$0]), events: Int16(POLLIN), revents: 0) }
                guard poll(&descriptors, nfds_t(descriptors.count), 5000) > 0 else { throw BenchFailure("no notification within 5 s") }
                for (slot, index) in waiting.enumerated() where descriptors[slot].revents != 0 {
                    PQconsumeInput(listeners[index])
                    while let notification = PQnotifies(listeners[index]) {
                        if !heard[index] {
                            heard[index] = true
                            remaining -= 1
                            results.append(Double(monotonicNanoseconds() - start) / 1e6)
                        }
                        PQfreemem(notification)
                    }
                }
            }
        }
        return results
    }

    /// A blocking libpq connection to the figures' server.
    func connect() throws -> OpaquePointer {
        guard let connection = PQconnectdb(url), PQstatus(connection) == CONNECTION_OK else {
            throw BenchFailure("cannot connect to PostgreSQL for the baseline")
        }
        return connection
    }

    func dropSchemas(_ names: [String]) {
        for name in names { try? psql(["-c", "DROP SCHEMA IF EXISTS \(name) CASCADE"], stdin: nil) }
    }

}


func quantile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// Runs async work from the synchronous harness, waiting for it.
func blocking<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
    let box = BlockingResult<R>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    guard let result = box.result else { throw BenchFailure("the operation did not complete") }
    return try result.get()
}

func blockingIgnoringErrors(_ body: @escaping @Sendable () async -> Void) {
    _ = try? blocking { await body() }
}

/// The first time each of `count` observers saw its change, and a wait for all of them.
final class Arrivals: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `times` is only touched under `lock`.
    private let lock = NSLock()
    private var times: [UInt64?]
    private let arrived = DispatchSemaphore(value: 0)

    init(count: Int) { times = Array(repeating: nil, count: count) }

    /// Notes now as observer `index`'s time, unless it already has one.
    func record(_ index: Int) {
        let now = monotonicNanoseconds()
        let first = lock.withLock {
            guard times[index] == nil else { return false }
            times[index] = now
            return true
        }
        if first { arrived.signal() }
    }

    /// Every observer's time, once all have one; nil after `seconds` without.
    func wait(seconds: Double) -> [UInt64]? {
        let deadline = DispatchTime.now() + seconds
        for _ in times.indices {
            guard arrived.wait(timeout: deadline) == .success else { return nil }
        }
        return lock.withLock { times.compactMap { $0 } }
    }

    /// How many observers have no time yet.
    var missing: Int { lock.withLock { times.filter { $0 == nil }.count } }
}

private final class BlockingResult<R: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `result` is written once by the task before it
    // signals the semaphore, and read only after the wait on it returns.
    var result: Result<R, any Error>?
}
