import CBenchPQ
import EntityStore
import EntityStorePostgres
import Foundation

/// The sync figures past two replicas: fan-out latency to 1, 4 and 8 listening replicas,
/// and the rate of single-row pushes from two writers.
extension PostgresFigures {
    /// Numbers of listening replicas of the fan-out figures.
    static let fanOutReplicas = [1, 4, 8]
    /// Measured rounds per fan-out size (each gives one sample per replica).
    static let fanOutRounds = 200
    /// Seconds of one timed run of the push-rate figure (and of its baseline).
    static let pushRateSeconds = 3.0

    /// `sync_fanout_N_p50_ms` and `sync_fanout_N_p99_ms` for N in ``fanOutReplicas``:
    /// `writer` (on `sync`) commits a one-row update and pushes; N replicas, each its own
    /// store and `PostgresSync` running `start()`, see it in a derived query.
    func fanOutFigures(writer: EntityStore, sync: PostgresSync, target: PostgresTarget) throws -> (figures: [Figure], notes: [String]) {
        var figures: [Figure] = []
        var notes: [String] = []
        for replicas in Self.fanOutReplicas {
            progress("  sync_fanout_\(replicas): \(Self.fanOutRounds) rounds to \(replicas) listening replica\(replicas == 1 ? "" : "s")")
            let measured = try withFollowers(replicas, target: target) { followers in
                try commitToObserverLatencies(
                    writer: writer, sync: sync, followers: followers, rounds: Self.fanOutRounds, seed: 1_000 + UInt64(replicas), warmUp: 10)
            }
            let latencies = measured.all
            let notify = try notifyLatencies(rounds: Self.fanOutRounds, listeners: replicas)
            let (p50, p99) = (quantile(latencies, 0.5), quantile(latencies, 0.99))
            let (notifyP50, notifyP99) = (quantile(notify, 0.5), quantile(notify, 0.99))
            figures.append(Figure(
                name: "sync_fanout_\(replicas)_p50_ms", value: p50, unit: "ms (p50)", baseline: notifyP50, ratio: p50 / notifyP50,
                ratioMeaning: "ours / bare NOTIFY", direction: .lowerIsBetter,
                baselineMeaning: "pg_notify to \(replicas) LISTEN connection\(replicas == 1 ? "" : "s"), p50"))
            figures.append(Figure(
                name: "sync_fanout_\(replicas)_p99_ms", value: p99, unit: "ms (p99)", baseline: notifyP99, ratio: p99 / notifyP99,
                ratioMeaning: "ours / bare NOTIFY", direction: .lowerIsBetter,
                baselineMeaning: "pg_notify to \(replicas) LISTEN connection\(replicas == 1 ? "" : "s"), p99"))
            func spread(_ values: [Double]) -> String {
                "p50 \(String(quantile(values, 0.5), decimals: 2)), p99 \(String(quantile(values, 0.99), decimals: 2))"
            }
            notes.append(
                "sync_fanout_\(replicas): \(latencies.count) samples (\(Self.fanOutRounds) rounds × \(replicas)), max \(String(latencies.max() ?? .nan, decimals: 2)) ms; "
                    + "per round, ms from the commit: the writer's push() returned \(spread(measured.pushed)); "
                    + "the first replica saw it \(spread(measured.first)), the last \(spread(measured.last)); "
                    + "the bare NOTIFY's max \(String(notify.max() ?? .nan, decimals: 2)) ms")
        }
        return (figures, notes)
    }

    /// `sync_pushes_per_s`: two replicas (`first` and a second one loaded from `target`)
    /// each commit one-row updates of rows of their own and push each one, as fast as they
    /// can; against the same transactions hand-written on libpq over two connections.
    func pushRateFigure(first: EntityStore, firstSync: PostgresSync, target: PostgresTarget) throws -> (figure: Figure, notes: [String]) {
        let second = try makeEmptyStore()
        var options = PostgresSync.Options()
        options.origin = "bench-writer-2"
        let secondSync = PostgresSync(store: second, target: target, options: options)
        defer { blockingIgnoringErrors { await secondSync.close() } }
        _ = try blocking { try await secondSync.open() }
        let writers = [(first, firstSync), (second, secondSync)]
        try prepareRawPushSchema(from: target.schema)

        var shape: [String] = []
        var plainRuns: [PushRateDetail] = []
        let runs = Repetitions(warmUp: 1, measured: 3)
        let (rawRate, ourRate) = try runs.pairedMedians(baseline: {
            try rawPushRate(seconds: Self.pushRateSeconds, shape: &shape)
        }, ours: {
            let run = try pushRate(writers: writers, seconds: Self.pushRateSeconds, following: false)
            plainRuns.append(run.detail)
            return run.rate
        })
        // The same writers while each also follows the store with start(): each push wakes
        // the other writer's pull.
        var followingRuns: [PushRateDetail] = []
        let followingRate = try runs.medianOf {
            let run = try pushRate(writers: writers, seconds: Self.pushRateSeconds, following: true)
            followingRuns.append(run.detail)
            return run.rate
        }
        let figure = Figure(
            name: "sync_pushes_per_s", value: ourRate, unit: "pushes/s", baseline: rawRate, ratio: ourRate / rawRate,
            ratioMeaning: "ours / libpq", direction: .higherIsBetter,
            baselineMeaning: "2 libpq connections: lock head, upsert, log+head+NOTIFY, commit")
        return (figure, [
            "sync_pushes_per_s: 2 replicas, each a one-row write of its own rows then push(), \(String(Self.pushRateSeconds, decimals: 0)) s per run, median of 3; "
                + "the baseline's transaction: \(shape.joined(separator: "; "))",
            "sync_pushes_per_s: the median run: \(PushRateDetail.median(of: plainRuns.dropFirst(runs.warmUp)).summary)",
            "sync_pushes_per_s: with both writers also following with start() (each push wakes the other's pull): "
                + "\(grouped(Int(followingRate.rounded()))) pushes/s (median of 3); the median run: \(PushRateDetail.median(of: followingRuns.dropFirst(runs.warmUp)).summary)",
        ])
    }

    /// What one run of ``pushRate(writers:seconds:following:)`` spent, per push.
    struct PushRateDetail {
        var pushes = 0
        var seconds = 0.0
        /// Sums over all pushes, in nanoseconds: the local write, then `push()`.
        var writeNanoseconds: UInt64 = 0
        var pushNanoseconds: UInt64 = 0
        var pushTimes: [Double] = []

        /// The run of median rate among `runs`.
        static func median(of runs: some Collection<PushRateDetail>) -> PushRateDetail {
            let sorted = runs.sorted { Double($0.pushes) / $0.seconds < Double($1.pushes) / $1.seconds }
            return sorted.isEmpty ? PushRateDetail() : sorted[sorted.count / 2]
        }

        var summary: String {
            guard pushes > 0 else { return "no push" }
            let count = Double(pushes)
            return "\(grouped(pushes)) pushes in \(String(seconds, decimals: 2)) s (\(grouped(Int((count / seconds).rounded())))/s); per push: "
                + "local write \(String(Double(writeNanoseconds) / count / 1e3, decimals: 1)) µs, "
                + "push() mean \(String(Double(pushNanoseconds) / count / 1e6, decimals: 2)) ms, "
                + "p50 \(String(quantile(pushTimes, 0.5), decimals: 2)) ms, p99 \(String(quantile(pushTimes, 0.99), decimals: 2)) ms"
        }
    }

    /// One timed run: each writer in a task of its own commits a one-row update of one of
    /// its rows (writer k takes the IDs equal to k modulo the number of writers, in turn from
    /// a random one) and pushes it, until `seconds` have passed. With `following`, each
    /// writer also runs `start()`.
    ///
    /// A writer changes each row at most once per run (it stops early if it runs out, in a
    /// tiny store): a following replica that pushes a row again after a pull moved it past
    /// its own earlier push of that row, with the other writer's push in between, gets a
    /// conflict on its own change from `push()`.
    func pushRate(writers: [(EntityStore, PostgresSync)], seconds: Double, following: Bool) throws -> (rate: Double, detail: PushRateDetail) {
        // Untimed: bring each writer to the head, so each run starts alike.
        for (_, sync) in writers { _ = try blocking { try await sync.pull() } }
        let followers = following ? writers.map { _, sync in Task.detached { await sync.start() } } : []
        defer {
            for task in followers { task.cancel() }
            blockingIgnoringErrors { for task in followers { await task.value } }
        }
        if following { Thread.sleep(forTimeInterval: 0.3) }
        let count = writers.count
        let rows = max(1, writers[0].0.state[items].count / count)
        let start = monotonicNanoseconds()
        let deadline = start + UInt64(seconds * 1e9)
        let runs = try blocking {
            try await withThrowingTaskGroup(of: PushRateDetail.self) { group in
                for (index, (store, sync)) in writers.enumerated() {
                    group.addTask {
                        var generator = SplitMix64(seed: 7_000 + UInt64(index))
                        let first = generator.int(in: 0...(rows - 1))
                        var detail = PushRateDetail()
                        // A row at most once per run (see the note on `pushRate`).
                        while monotonicNanoseconds() < deadline, detail.pushes < rows {
                            let id = (first + detail.pushes) % rows * count + index + 1
                            let began = monotonicNanoseconds()
                            try store.write { tx in _ = try tx[items].update(id) { $0.quantity += 1 } }
                            let written = monotonicNanoseconds()
                            try await sync.push()
                            let pushed = monotonicNanoseconds()
                            detail.pushes += 1
                            detail.writeNanoseconds += written - began
                            detail.pushNanoseconds += pushed - written
                            detail.pushTimes.append(Double(pushed - written) / 1e6)
                        }
                        return detail
                    }
                }
                var total = PushRateDetail()
                for try await detail in group {
                    total.pushes += detail.pushes
                    total.writeNanoseconds += detail.writeNanoseconds
                    total.pushNanoseconds += detail.pushNanoseconds
                    total.pushTimes += detail.pushTimes
                }
                return total
            }
        }
        var detail = runs
        detail.seconds = Double(monotonicNanoseconds() - start) / 1e9
        return (Double(detail.pushes) / detail.seconds, detail)
    }

    /// The baseline's schema `bench_rawpush`: copies of the store's entity table, metadata
    /// table and change log (same columns, keys and indexes), with the rows and the head.
    func prepareRawPushSchema(from schema: String) throws {
        let quoted = "\"" + schema.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        var statements = ["DROP SCHEMA IF EXISTS bench_rawpush CASCADE", "CREATE SCHEMA bench_rawpush"]
        for table in ["items", "entitystore_meta", "entitystore_changes"] {
            statements.append("CREATE TABLE bench_rawpush.\(table) (LIKE \(quoted).\(table) INCLUDING ALL)")
        }
        statements.append("INSERT INTO bench_rawpush.items SELECT * FROM \(quoted).items")
        statements.append("INSERT INTO bench_rawpush.entitystore_meta SELECT * FROM \(quoted).entitystore_meta")
        try psql(statements.flatMap { ["-c", $0] }, stdin: nil)
    }

    /// One timed run of the baseline: two threads, each on its own libpq connection,
    /// running the minimal push of one row of its own (writer k takes the IDs equal to k
    /// modulo 2) in a loop for `seconds`; pushes per second of both together. `shape`
    /// receives the statements of one push.
    func rawPushRate(seconds: Double, shape: inout [String]) throws -> Double {
        let lock = "SELECT value FROM bench_rawpush.entitystore_meta WHERE key = 'log_head' FOR UPDATE"
        let upsert = """
            INSERT INTO bench_rawpush.items (id, name, category, quantity, price, note, "ownerID", entitystore_revision) \
            VALUES ($1::int8, $2, $3, $4::int8, $5::float8, $6, $7::int8, $8::int8) ON CONFLICT (id) DO UPDATE SET \
            name = EXCLUDED.name, category = EXCLUDED.category, quantity = EXCLUDED.quantity, price = EXCLUDED.price, \
            note = EXCLUDED.note, "ownerID" = EXCLUDED."ownerID", entitystore_revision = EXCLUDED.entitystore_revision
            """
        let log = """
            WITH logged AS (INSERT INTO bench_rawpush.entitystore_changes (position, table_name, row_id, origin) VALUES ($1::int8, 'items', $2, $3)), \
            moved AS (UPDATE bench_rawpush.entitystore_meta SET value = $1::int8::text WHERE key = 'log_head') \
            SELECT pg_notify('bench_rawpush', $1::int8::text)
            """
        shape = ["BEGIN", "SELECT the head FOR UPDATE", "INSERT ... ON CONFLICT DO UPDATE of the row (8 bound values)",
                 "INSERT into the change log + UPDATE the head + pg_notify (one statement)", "COMMIT"]
        let entities = data.entities
        let writers = 2
        let rows = max(1, entities.count / writers)
        let counts = ThreadResults(count: writers)
        let url = self.url
        let start = monotonicNanoseconds()
        let deadline = start + UInt64(seconds * 1e9)
        let done = DispatchGroup()
        for index in 0..<writers {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                guard let connection = PQconnectdb(url), PQstatus(connection) == CONNECTION_OK else {
                    counts.fail("cannot connect to PostgreSQL for the baseline")
                    return
                }
                defer { PQfinish(connection) }
                var generator = SplitMix64(seed: 7_000 + UInt64(index))
                var quantities: [Int: Int] = [:]
                var pushes = 0
                func run(_ sql: String, _ values: [String?] = [], expecting status: ExecStatusType) -> OpaquePointer? {
                    let result = withParameters(values) { pointers in
                        PQexecParams(connection, sql, Int32(values.count), nil, pointers, nil, nil, 0)
                    }
                    guard let result, PQresultStatus(result) == status else {
                        counts.fail("baseline push failed: \(String(cString: PQerrorMessage(connection)))")
                        PQclear(result)
                        return nil
                    }
                    return result
                }
                while monotonicNanoseconds() < deadline {
                    let id = generator.int(in: 0...(rows - 1)) * writers + index + 1
                    let item = entities[id - 1]
                    let quantity = quantities[id, default: item.quantity] + 1
                    quantities[id] = quantity
                    guard let begin = run("BEGIN", expecting: PGRES_COMMAND_OK) else { return }
                    PQclear(begin)
                    guard let head = run(lock, expecting: PGRES_TUPLES_OK) else { return }
                    let position = (Int(String(cString: PQgetvalue(head, 0, 0))) ?? 0) + 1
                    PQclear(head)
                    let values: [String?] = [
                        String(id), item.name, item.category, String(quantity), String(item.price), item.note, String(item.ownerID), String(position),
                    ]
                    guard let upserted = run(upsert, values, expecting: PGRES_COMMAND_OK) else { return }
                    PQclear(upserted)
                    guard let logged = run(log, [String(position), String(id), "bench-raw-\(index)"], expecting: PGRES_TUPLES_OK) else { return }
                    PQclear(logged)
                    guard let commit = run("COMMIT", expecting: PGRES_COMMAND_OK) else { return }
                    PQclear(commit)
                    pushes += 1
                }
                counts.set(index, pushes)
            }
            thread.start()
        }
        done.wait()
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        return Double(try counts.total()) / elapsed
    }
}

/// Calls `body` with C strings of `values` (NULL for nil), valid during the call.
private func withParameters<R>(_ values: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    let copies = values.map { $0.map { strdup($0) } ?? nil }
    defer { for copy in copies { free(copy) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

/// Per-thread counts of the baseline's threads, and the first failure.
private final class ThreadResults: @unchecked Sendable {
    // `@unchecked Sendable` is safe: every property is only touched under `lock`.
    private let lock = NSLock()
    private var counts: [Int]
    private var failure: String?

    init(count: Int) { counts = Array(repeating: 0, count: count) }

    func set(_ index: Int, _ value: Int) { lock.withLock { counts[index] = value } }
    func fail(_ message: String) { lock.withLock { if failure == nil { failure = message } } }

    func total() throws -> Int {
        try lock.withLock {
            if let failure { throw BenchFailure(failure) }
            return counts.reduce(0, +)
        }
    }
}
