#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

@Suite("Full snapshots beside pushes, creations beside creations", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct SnapshotBesidePushTests {
    @Test("a full snapshot and pushes running at once never deadlock: each waits for the other")
    func noDeadlock() async throws {
        let target = try await TestServer.target("swap")
        defer { Task { await TestServer.drop(target) } }
        let (_, sync) = try await replica(target)
        try await sync.write(retrying: 1) { tx in try tx[counters].insert(Counter(id: "n", value: 0)) }
        let large = try EntityStore { customers; orders; counters }
        try large.write { tx in
            for index in 0..<20_000 { try tx[counters].insert(Counter(id: "c\(index)", value: index)) }
            try tx[counters].insert(Counter(id: "n", value: 0))
        }
        let snapshotsDone = Lock(false)
        let pushCount = Lock(0)
        let pusher = Task {
            repeat {
                try await sync.write { tx in _ = try tx[counters].update("n") { $0.value += 1 } }
                pushCount.withLock { $0 += 1 }
            } while !snapshotsDone.withLock({ $0 })
            return pushCount.withLock { $0 }
        }
        // The snapshots start once pushes are under way, so the two overlap however slow
        // the machine is.
        #expect(try await eventually { pushCount.withLock { $0 } > 0 })
        do {
            for _ in 0..<3 { try await large.snapshot(to: target) }
        } catch {
            Issue.record("a snapshot failed beside pushes: \(error)")
        }
        snapshotsDone.withLock { $0 = true }
        let pushes = try await pusher.value
        #expect(pushes > 0)
        try await sync.pull()
        let stored = try await TestServer.rows(target, "SELECT count(*) FROM \"\(target.schema)\".counters")
        #expect(stored == [["20001"]])
    }

    @Test("restores and a following replica beside full snapshots: every restore succeeds, the replica ends on the last one")
    func readersBesideSnapshots() async throws {
        let target = try await TestServer.target("readers")
        defer { Task { await TestServer.drop(target) } }
        let (_, follower) = try await replica(target)
        let running = Task { await follower.start() }
        defer { running.cancel() }
        let done = Lock(false)
        let reader = Task { () -> [String] in
            var failures: [String] = []
            while !done.withLock({ $0 }) {
                let copy = try EntityStore { customers; orders; counters }
                do { try await copy.restore(from: target) } catch { failures.append(String(describing: error)) }
            }
            return failures
        }
        for round in 1...3 {
            let large = try EntityStore { customers; orders; counters }
            try large.write { tx in for index in 0..<(3_000 * round) { try tx[counters].insert(Counter(id: "c\(index)", value: round)) } }
            try await large.snapshot(to: target)
        }
        done.withLock { $0 = true }
        let failures = try await reader.value
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(try await eventually { follower.store.state[counters].count == 9_000 }, "the follower stayed at \(follower.store.state[counters].count) rows")
    }

    @Test("processes opening a missing store at once: one creates it, the others load what it wrote", arguments: [false, true])
    func atomicCreation(schemaExists: Bool) async throws {
        let target = try await TestServer.target("create")
        defer { Task { await TestServer.drop(target) } }
        // An empty schema made beforehand (by a DBA, say) holds no store either.
        if schemaExists { _ = try await TestServer.rows(target, "CREATE SCHEMA \"\(target.schema)\"") }
        let stores = try (0..<3).map { replica in
            let store = try EntityStore { customers; orders; counters }
            try store.write { tx in
                for index in 0..<(2_000 * (replica + 1)) { try tx[counters].insert(Counter(id: "r\(replica)-\(index)", value: index)) }
            }
            return store
        }
        let syncs = stores.map { PostgresSync(store: $0, target: target) }
        let positions = try await withThrowingTaskGroup(of: Int64.self) { group in
            for sync in syncs { group.addTask { try await sync.open() } }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        #expect(Set(positions).count == 1, "replicas at different positions: \(positions)")
        let stored = try await TestServer.rows(target, "SELECT count(*) FROM \"\(target.schema)\".counters")
        let counts = stores.map { $0.state[counters].count }
        #expect(Set(counts).count == 1, "replicas hold different stores: \(counts)")
        #expect(stored == [[String(counts[0])]])
    }

    @Test("full snapshots into a missing schema at once: each succeeds, the last one's contents remain")
    func concurrentCreatingSnapshots() async throws {
        let target = try await TestServer.target("create2")
        defer { Task { await TestServer.drop(target) } }
        let sizes = [1_500, 3_000]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for size in sizes {
                group.addTask {
                    let store = try EntityStore { customers; orders; counters }
                    try store.write { tx in for index in 0..<size { try tx[counters].insert(Counter(id: "c\(index)", value: index)) } }
                    try await store.snapshot(to: target)
                }
            }
            try await group.waitForAll()
        }
        let stored = try await TestServer.rows(target, "SELECT count(*) FROM \"\(target.schema)\".counters")
        #expect(stored == [["1500"]] || stored == [["3000"]])
        let head = try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".entitystore_meta WHERE key = 'log_head'")
        #expect(head == [["2"]], "the second snapshot did not replace the first: head \(head)")
    }
}
#endif
