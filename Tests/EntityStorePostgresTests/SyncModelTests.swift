#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

/// A random model of sync under faults, after Jepsen's: replicas that follow the store
/// (`start()`) run random increments of shared counters (`write(retrying:)`), inserts
/// pushed with `push()`, removals and pulls, through a proxy that delays, blackholes,
/// drops one side and resets connections, while the server terminates their backends.
/// At quiescence every replica equals a fresh load, each counter lies between the
/// increments whose writes returned success and those plus the ones whose outcome is
/// unknown, and every row whose push returned success is in the database.
@Suite("Sync model under faults", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct SyncModelTests {
    static let replicas = 3
    static let counterIDs = ["k0", "k1", "k2"]

    /// What the replicas' operations returned.
    struct Record: Sendable {
        var succeeded: [String: Int] = [:]
        var unknown: [String: Int] = [:]
        var pushedRows: Set<String> = []
        var removedRows: Set<String> = []
        /// Operations that failed (the faults bit).
        var failures = 0
    }

    @Test("random writes, increments, removals and pulls on 3 replicas under network and server faults", arguments: Soak.seeds(1...2, soak: 1...30))
    func randomSyncUnderFaults(seed: UInt64) async throws {
        let direct = try await TestServer.target("model")
        defer { Task { await TestServer.drop(direct) } }
        let proxy = try FaultProxy(upstreamPort: direct.port)
        defer { proxy.stop() }
        var proxied = direct
        proxied.host = "127.0.0.1"
        proxied.port = proxy.port
        proxied.operationTimeout = .seconds(2)
        proxied.connectTimeout = .seconds(2)

        let seedStore = try EntityStore { customers; orders; counters }
        try seedStore.write { tx in for id in Self.counterIDs { try tx[counters].insert(Counter(id: id, value: 0)) } }
        try await seedStore.snapshot(to: direct)

        var syncs: [PostgresSync] = []
        for _ in 0..<Self.replicas {
            var options = PostgresSync.Options()
            options.retryDelay = .milliseconds(50)
            options.heartbeat = .milliseconds(500)
            let sync = PostgresSync(store: try EntityStore { customers; orders; counters }, target: proxied, options: options)
            // The proxy passes everything yet, but a loaded machine can outlast the short
            // connect timeout: a transient failure to open is retried, as an app would.
            _ = try await Self.retryingTransient { try await sync.open() }
            syncs.append(sync)
        }
        let followers = syncs.map { sync in Task { await sync.start() } }
        let record = Lock(Record())
        let operations = Soak.pick(16, soak: 40)

        let done = Lock(false)
        let nemesis = Task { await Self.nemesis(proxy: proxy, direct: direct, seed: seed, until: done) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, sync) in syncs.enumerated() {
                group.addTask {
                    var random = SplitMix64(seed: seed &* 31 &+ UInt64(index))
                    for step in 0..<operations {
                        try await Self.step(sync, replica: index, step: step, random: &random, record: record)
                    }
                }
            }
            try await group.waitForAll()
        }
        done.withLock { $0 = true }
        await nemesis.value
        proxy.set(.pass)
        for follower in followers { follower.cancel() }
        for follower in followers { await follower.value }

        // Quiescence: every replica pushes what it still holds (settling reported
        // conflicts in the server's favour: those changes are reported, not lost), then pulls.
        for sync in syncs { try await Self.settle(sync) }
        for sync in syncs { _ = try await Self.retryingTransient { try await sync.pull() } }

        let fresh = try EntityStore { customers; orders; counters }
        try await fresh.restore(from: direct)
        let expected = fresh.state[counters].map { "\($0.id)=\($0.value)" }.sorted()
        for (index, sync) in syncs.enumerated() {
            let held = sync.store.state[counters].map { "\($0.id)=\($0.value)" }.sorted()
            #expect(held == expected, "seed \(seed): replica \(index) differs from a fresh load")
        }
        let outcome = record.withLock { $0 }
        for id in Self.counterIDs {
            let value = fresh.state[counters].find(id)?.value ?? -1
            let low = outcome.succeeded[id] ?? 0
            let high = low + (outcome.unknown[id] ?? 0)
            #expect((low...high).contains(value), "seed \(seed): counter \(id) is \(value), \(low) increments returned success, \(high - low) unknown")
        }
        for row in outcome.pushedRows.subtracting(outcome.removedRows) {
            #expect(fresh.state[counters].find(row) != nil, "seed \(seed): row \(row) was pushed with success and is missing")
        }
        for sync in syncs { await sync.close() }
    }

    /// One random operation of one replica.
    static func step(_ sync: PostgresSync, replica: Int, step: Int, random: inout SplitMix64, record: Lock<Record>) async throws {
        switch random.next() % 8 {
        case 0..<4:
            let id = counterIDs[Int(random.next() % UInt64(counterIDs.count))]
            do {
                try await sync.write { tx in _ = try tx[counters].update(id) { $0.value += 1 } }
                record.withLock { $0.succeeded[id, default: 0] += 1 }
            } catch let error as PostgresStoreError {
                if case let .conflict(rows) = error {
                    // Over rows of earlier writes of this replica (an insert whose push's
                    // outcome was unknown): reported, the increment undone, not written.
                    try? await sync.acceptServerValues(for: rows)
                    record.withLock { $0.failures += 1 }
                    return
                }
                // A connection error: the increment stays pending and may be written (now,
                // if the commit went through, or by a later push).
                record.withLock {
                    $0.unknown[id, default: 0] += 1
                    $0.failures += 1
                }
            }
        case 4..<6:
            let id = "r\(replica)-\(step)"
            try sync.store.write { tx in try tx[counters].insert(Counter(id: id, value: step)) }
            if (try? await sync.push()) != nil {
                record.withLock { _ = $0.pushedRows.insert(id) }
            } else {
                record.withLock { $0.failures += 1 }
            }
        case 6:
            let own = sync.store.state[counters].filter { $0.id.hasPrefix("r\(replica)-") }.map(\.id).sorted()
            guard let id = own.first else { return }
            record.withLock { _ = $0.removedRows.insert(id) }
            try sync.store.write { tx in _ = try tx[counters].remove(id) }
            if (try? await sync.push()) == nil { record.withLock { $0.failures += 1 } }
        default:
            if (try? await sync.pull()) == nil { record.withLock { $0.failures += 1 } }
        }
    }

    /// Faults at random moments until `until` is set; the proxy passes again at the end.
    static func nemesis(proxy: FaultProxy, direct: PostgresTarget, seed: UInt64, until: Lock<Bool>) async {
        var random = SplitMix64(seed: seed &+ 0x5EED)
        while !until.withLock({ $0 }) {
            try? await Task.sleep(for: .milliseconds(20 + Int(random.next() % 150)))
            let hold = Duration.milliseconds(100 + Int(random.next() % 400))
            switch random.next() % 5 {
            case 0:
                proxy.set(.blackhole)
                try? await Task.sleep(for: hold)
                proxy.set(.pass)
            case 1:
                proxy.resetAll()
            case 2:
                let ports = proxy.upstreamPorts
                if !ports.isEmpty {
                    _ = try? await TestServer.rows(
                        direct, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ANY($1::int8[])",
                        [.integers(ports.map(Int64.init))])
                }
            case 3:
                proxy.set(.delay(.milliseconds(20)))
                try? await Task.sleep(for: hold)
                proxy.set(.pass)
            default:
                proxy.set(.dropToServer)
                try? await Task.sleep(for: hold)
                proxy.set(.pass)
            }
        }
        proxy.set(.pass)
    }

    /// Pushes what a replica still holds; a reported conflict is settled for the server.
    static func settle(_ sync: PostgresSync) async throws {
        for _ in 0..<10 {
            do {
                try await sync.push()
                return
            } catch {
                if case let .conflict(rows) = error {
                    try await sync.acceptServerValues(for: rows)
                } else if !error.isTransient {
                    throw error
                }
            }
        }
        Issue.record("a replica could not push what it held after ten tries")
    }

    /// Runs `body` again while it fails with a transient error (up to ten times).
    static func retryingTransient<R>(_ body: () async throws -> R) async throws -> R {
        var tries = 0
        while true {
            do {
                return try await body()
            } catch let error as PostgresStoreError where error.isTransient && tries < 10 {
                tries += 1
            }
        }
    }
}
#endif
