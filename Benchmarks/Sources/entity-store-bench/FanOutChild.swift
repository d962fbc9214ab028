import EntityStore
import EntityStorePostgres
import Foundation
import StoreCore

/// The processes of the deployment figures (``DeploymentFigures``): this executable run as
/// `entity-store-bench --fanout-child replica|writer`, configured by environment variables
/// (``Key``), speaking by lines on its standard input and output.
///
/// - A **replica** opens the store (from the standby when `READ` is set), keeps a live
///   query of the whole table and follows with `start()`; it prints `ready`, then, on
///   `stop FROM UNTIL` (wall-clock nanoseconds), `result CPU N D1 D2 ...`: its CPU seconds
///   and the delay in microseconds from each commit stamped in [FROM, UNTIL) to its live
///   query's delivery of it. Writers stamp each commit's row with the commit's wall-clock
///   time (in `quantity`), so the delay is measured across processes.
/// - A **writer** opens the store and prints `ready`; on `go FROM UNTIL RATE` it commits a
///   one-row update of one of its rows (ID equal to its `INDEX` modulo `WRITERS`) and pushes
///   it, from one second before FROM until UNTIL, at RATE pushes a second (0: as fast as it
///   can), pulling every 100 pushes (so its conflict check reads a short log); then prints
///   `result PUSHES P50_MS P99_MS CPU` for the pushes stamped in the window.
///
/// The child ends when its input closes.
enum FanOutChild {
    /// The environment variables of a child.
    enum Key: String {
        /// The primary (or a pooler in front of it), where pushes go: a URL.
        case target = "ENTITYSTORE_BENCH_TARGET"
        /// Where loads and pulls read (`Options.readTarget`), if set.
        case read = "ENTITYSTORE_BENCH_READ"
        /// Where `start()` listens (`Options.listenTarget`), if set.
        case listen = "ENTITYSTORE_BENCH_LISTEN"
        /// `listen` (the default) or `poll` (every 100 ms).
        case wakeup = "ENTITYSTORE_BENCH_WAKEUP"
        case schema = "ENTITYSTORE_BENCH_SCHEMA"
        case index = "ENTITYSTORE_BENCH_INDEX"
        case writers = "ENTITYSTORE_BENCH_WRITERS"
    }

    static func run(role: String) throws {
        let environment = ProcessInfo.processInfo.environment
        func value(_ key: Key) -> String? { environment[key.rawValue].flatMap { $0.isEmpty ? nil : $0 } }
        guard let url = value(.target), let schema = value(.schema) else { throw BenchFailure("a child needs \(Key.target.rawValue) and \(Key.schema.rawValue)") }
        let index = Int(value(.index) ?? "0") ?? 0
        var options = PostgresSync.Options()
        options.origin = "bench-\(role)-\(index)"
        options.readTarget = try value(.read).map { try PostgresTarget(url: $0, schema: schema) }
        options.listenTarget = try value(.listen).map { try PostgresTarget(url: $0, schema: schema) }
        if value(.wakeup) == "poll" { options.wakeup = .poll(every: .milliseconds(100)) }
        let target = try PostgresTarget(url: url, schema: schema)
        let store = try makeEmptyStore()
        let sync = PostgresSync(store: store, target: target, options: options)
        defer { blockingIgnoringErrors { await sync.close() } }
        // A loaded machine starts 34 processes at once: retry a failed open a few times.
        var attempt = 0
        while true {
            do {
                _ = try blocking { try await sync.open(createIfMissing: false) }
                break
            } catch {
                attempt += 1
                if attempt >= 5 { throw error }
                Thread.sleep(forTimeInterval: 1)
            }
        }
        switch role {
        case "replica": try replica(store: store, sync: sync)
        case "writer": try writer(store: store, sync: sync, index: index, writers: Int(value(.writers) ?? "1") ?? 1)
        default: throw BenchFailure("unknown child role \(role)")
        }
    }

    /// Prints `line` on standard output at once.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    private static func replica(store: EntityStore, sync: PostgresSync) throws {
        let seen = Deliveries()
        let live = store.live(LiveQuery(items))
        let observation = live.observe { update in
            let now = realtimeNanoseconds()
            for entity in update.diff.updated.map(\.entity) + update.diff.inserted.map(\.entity) + update.diff.moved.map(\.entity)
            where entity.quantity > 1_000_000_000_000_000_000 {
                seen.add(stamp: entity.quantity, seen: now)
            }
        }
        let failures = Deliveries()
        let following = Task.detached { await sync.start() }
        let events = sync.events
        let reporting = Task.detached {
            for await event in events {
                if case let .failed(error) = event {
                    failures.add(stamp: 0, seen: 0)
                    FileHandle.standardError.write(Data("replica failure: \(error)\n".utf8))
                }
            }
        }
        defer {
            following.cancel()
            reporting.cancel()
            blockingIgnoringErrors { await following.value }
            observation.cancel()
            withExtendedLifetime(live) {}
        }
        say("ready")
        while let line = Swift.readLine() {
            let words = line.split(separator: " ")
            guard words.first == "stop", words.count == 3, let from = Int(words[1]), let until = Int(words[2]) else { continue }
            // The first delivery of each commit (a reload would deliver it again).
            var first: [Int: Int] = [:]
            for pair in seen.all() where pair.stamp >= from && pair.stamp < until {
                first[pair.stamp] = min(first[pair.stamp] ?? .max, pair.seen)
            }
            let delays = first.map { ($0.value - $0.key) / 1_000 }
            say("result \(String(processCPUSeconds(), decimals: 3)) \(failures.count) \(delays.count) " + delays.map(String.init).joined(separator: " "))
            return
        }
    }

    private static func writer(store: EntityStore, sync: PostgresSync, index: Int, writers: Int) throws {
        say("ready")
        guard let line = Swift.readLine() else { return }
        let words = line.split(separator: " ")
        guard words.first == "go", words.count == 4, let from = Int(words[1]), let until = Int(words[2]), let rate = Double(words[3]), rate.isFinite
        else {
            throw BenchFailure("writer: expected 'go FROM UNTIL RATE', got '\(line)'")
        }
        let rows = max(1, store.state[items].count / writers)
        var next = 0
        var pushes = 0
        var pushTimes: [Double] = []
        let start = from - 1_000_000_000
        while realtimeNanoseconds() < start { usleep(1_000) }
        let cpuBefore = processCPUSeconds()
        var slot = start
        var done = 0
        // At least one push a thousand seconds: the interval fits an Int.
        let interval = rate > 0 ? Int(min(1e12, 1e9 / rate)) : 0
        while true {
            if rate > 0 {
                slot += interval
                while case let wait = min(slot, until) - realtimeNanoseconds(), wait > 0 { usleep(UInt32(min(wait / 1_000, 1_000_000))) }
            }
            let id = next % rows * writers + index + 1
            next += 1
            let stamp = realtimeNanoseconds()
            guard stamp < until else { break }
            try store.write { tx in _ = try tx[items].update(id) { $0.quantity = stamp } }
            let began = monotonicNanoseconds()
            _ = try blocking { try await sync.push() }
            let pushed = monotonicNanoseconds()
            done += 1
            if stamp >= from {
                pushes += 1
                pushTimes.append(Double(pushed - began) / 1e6)
            }
            if done % 100 == 0 { _ = try blocking { try await sync.pull() } }
        }
        say("result \(pushes) \(String(quantile(pushTimes, 0.5), decimals: 3)) \(String(quantile(pushTimes, 0.99), decimals: 3)) \(String(processCPUSeconds() - cpuBefore, decimals: 3))")
        // Stay until told: the parent ends the writers once it read their results.
        while Swift.readLine() != nil {}
    }
}

/// Timestamp pairs recorded from observers on other threads.
final class Deliveries: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `pairs` is only touched under `lock`.
    private let lock = NSLock()
    private var pairs: [(stamp: Int, seen: Int)] = []

    func add(stamp: Int, seen: Int) { lock.withLock { pairs.append((stamp, seen)) } }
    func all() -> [(stamp: Int, seen: Int)] { lock.withLock { pairs } }
    var count: Int { lock.withLock { pairs.count } }
}
