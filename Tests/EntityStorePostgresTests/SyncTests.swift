#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

struct Counter: Entity {
    var id: String
    var value: Int
}

let counters = Table<Counter>("counters")

/// A store and its sync on `target`, opened.
func replica(_ target: PostgresTarget, wakeup: PostgresSync.Wakeup = .listen) async throws -> (EntityStore, PostgresSync) {
    let store = try EntityStore { customers; orders; counters }
    var options = PostgresSync.Options()
    options.wakeup = wakeup
    let sync = PostgresSync(store: store, target: target, options: options)
    try await sync.open()
    return (store, sync)
}

/// Waits until `condition` holds, up to `limit`.
func eventually(_ limit: Duration = .seconds(60), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct PostgresSyncTests {
    @Test("two stores in one process: push, pull, removals and relations travel")
    func pushAndPull() async throws {
        let target = try await TestServer.target("sync")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        let (b, syncB) = try await replica(target)
        try a.write { tx in
            try tx[customers].insert(Customer(id: "c1", name: "Ada", region: "eu"))
            try tx[orders].insert(Order(id: 1, customerID: "c1", total: 3, placed: Date(timeIntervalSince1970: 5)))
        }
        let pushed = try await syncA.push()
        #expect(pushed.rows == 2)
        let pulled = try await syncB.pull()
        #expect(pulled.rows == 2)
        #expect(b.state[orders].find(1) == a.state[orders].find(1))

        try b.write { tx in _ = try tx[customers].remove("c1") }  // cascades to the order
        try await syncB.push()
        try await syncA.pull()
        #expect(a.state[customers].count == 0)
        #expect(a.state[orders].count == 0)
        // Nothing left to push: the pull's commit is not pushed back.
        #expect(try await syncA.push().rows == 0)
        let counts = try await TestServer.rows(target, "SELECT name, row_count FROM \"\(target.schema)\".entitystore_tables ORDER BY name")
        #expect(counts == [["counters", "0"], ["customers", "0"], ["orders", "0"]])
        // A fresh restore agrees with the replicas.
        let fresh = try EntityStore { customers; orders; counters }
        try await fresh.restore(from: target)
        #expect(fresh.state[customers].count == 0)
    }

    @Test("a push is refused when another replica changed a row since: the conflict lists it, nothing is written")
    func conflict() async throws {
        let target = try await TestServer.target("conflict")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        let (b, syncB) = try await replica(target)
        try a.write { tx in try tx[counters].insert(Counter(id: "x", value: 1)) }
        try await syncA.push()
        try await syncB.pull()
        try a.write { tx in _ = try tx[counters].update("x") { $0.value = 10 } }
        try b.write { tx in
            _ = try tx[counters].update("x") { $0.value = 20 }
            try tx[counters].insert(Counter(id: "y", value: 5))
        }
        try await syncA.push()
        let error = await #expect(throws: PostgresStoreError.self) { try await syncB.push() }
        guard case let .conflict(rows)? = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        #expect(rows.map(\.description) == ["counters x"])
        let stored = try await TestServer.rows(target, "SELECT id, value FROM \"\(target.schema)\".counters ORDER BY id")
        #expect(stored == [["x", "10"]])
        // A pull keeps B's x (its push would report the conflict again); taking the
        // server's value settles it, and y is still to push.
        try await syncB.pull()
        #expect(b.state[counters].find("x")?.value == 20)
        try await syncB.acceptServerValues(for: rows)
        #expect(b.state[counters].find("x")?.value == 10)
        try await syncB.push()
        try await syncA.pull()
        #expect(a.state[counters].find("y")?.value == 5)
    }

    @Test("write(retrying:) loses no update: two replicas increment one counter 2 × 50 times")
    func noLostUpdate() async throws {
        let target = try await TestServer.target("counter")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        let (_, syncB) = try await replica(target)
        try await syncA.write(retrying: 1) { tx in try tx[counters].insert(Counter(id: "n", value: 0)) }
        try await syncB.pull()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sync in [syncA, syncB] {
                group.addTask {
                    for _ in 0..<50 {
                        try await sync.write { tx in _ = try tx[counters].update("n") { $0.value += 1 } }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await syncA.pull()
        #expect(a.state[counters].find("n")?.value == 100)
        let stored = try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".counters")
        #expect(stored == [["100"]])
    }

    @Test("start() wakes on NOTIFY: a change in one replica reaches the other's live query; cancellation ends it")
    func continuousListen() async throws {
        try await continuous(wakeup: .listen)
    }

    @Test("start() polls where LISTEN is unavailable")
    func continuousPoll() async throws {
        try await continuous(wakeup: .poll(every: .milliseconds(20)))
    }

    private func continuous(wakeup: PostgresSync.Wakeup) async throws {
        let target = try await TestServer.target("live")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        let (b, syncB) = try await replica(target, wakeup: wakeup)
        let europe = b.derived(customers, where: \.region, equals: "eu")
        let running = Task { await syncB.start() }
        try await Task.sleep(for: .milliseconds(100))
        try a.write { tx in try tx[customers].insert(Customer(id: "c9", name: "Lin", region: "eu")) }
        try await syncA.push()
        #expect(try await eventually { europe.value.map(\.id) == ["c9"] })
        running.cancel()
        await running.value
        // Stopped: later pushes are not pulled.
        try a.write { tx in try tx[customers].insert(Customer(id: "c10", name: "Max", region: "eu")) }
        try await syncA.push()
        try await Task.sleep(for: .milliseconds(200))
        #expect(b.state[customers].count == 1)
    }

    @Test("an ignored events stream keeps only the newest events")
    func eventsAreBounded() async throws {
        let target = try await TestServer.target("events")
        let sync = PostgresSync(store: try EntityStore { customers; orders; counters }, target: target)
        let total = PostgresSync.eventBuffer + 500
        for position in 0..<total { sync.report(.pushed(position: Int64(position), rows: 1)) }
        await sync.close()
        var kept: [Int64] = []
        for await case let .pushed(position, _) in sync.events.prefix(PostgresSync.eventBuffer) { kept.append(position) }
        #expect(kept.count == PostgresSync.eventBuffer)
        #expect(kept.first == Int64(total - PostgresSync.eventBuffer))
        #expect(kept.last == Int64(total - 1))
    }

    @Test("start() reports errors through its stream and goes on")
    func errorsAreReported() async throws {
        var target = try await TestServer.target("errors")
        let store = try EntityStore { customers; orders; counters }
        var options = PostgresSync.Options()
        options.retryDelay = .milliseconds(20)
        target.port = 1
        let sync = PostgresSync(store: store, target: target, options: options)
        let running = Task { await sync.start() }
        var events = sync.events.makeAsyncIterator()
        let first = await events.next()
        guard case let .failed(error)? = first else {
            Issue.record("expected a failure event, got \(String(describing: first))")
            running.cancel()
            return
        }
        #expect(error.isTransient)
        running.cancel()
        await running.value
    }

    @Test("a replica whose position was pruned from the change log reloads, and says so; so after a full snapshot")
    func prunedReloads() async throws {
        let target = try await TestServer.target("prune")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        let (b, syncB) = try await replica(target)
        for index in 0..<3 {
            try a.write { tx in try tx[counters].insert(Counter(id: "k\(index)", value: index)) }
            try await syncA.push()
        }
        #expect(syncA.position == 4)
        let removed = try await syncA.prune(keepingAfter: syncA.position - 1)
        #expect(removed == 2)
        var events = syncB.events.makeAsyncIterator()
        let summary = try await syncB.pull()
        #expect(summary.reloaded)
        #expect(b.state[counters].count == 3)
        if case .reloaded? = await events.next() {} else { Issue.record("no reload event") }
        // A full snapshot from elsewhere: every replica reloads.
        try a.write { tx in try tx[counters].insert(Counter(id: "z", value: 9)) }
        try await a.snapshot(to: target)
        #expect(try await syncB.pull().reloaded)
        #expect(b.state[counters].find("z")?.value == 9)
    }

    @Test("a push cut off mid-transaction fails in one line, writes nothing, and the next push succeeds")
    func failedPushKeepsChanges() async throws {
        let target = try await TestServer.target("keep")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        try a.write { tx in try tx[counters].insert(Counter(id: "p", value: 1)) }
        try await syncA.push()
        try a.write { tx in _ = try tx[counters].update("p") { $0.value = 2 } }
        // Hold the log head, so the push waits inside its transaction; then cut its connection.
        let holder = try await target.connect()
        try await holder.execute("BEGIN")
        try await holder.execute("SELECT value FROM \(SQL.qualified(target.schema, "entitystore_meta")) WHERE key = 'log_head' FOR UPDATE")
        let pushing = Task { try await syncA.push() }
        var cut = false
        for _ in 0..<6000 where !cut {
            try await Task.sleep(for: .milliseconds(10))
            // Inside a transaction PostgreSQL keeps the first activity snapshot it read:
            // drop it, or a push that starts waiting after the first look is never seen.
            try await holder.execute("SELECT pg_stat_clear_snapshot()")
            let waiting = try await holder.execute("""
                SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%log_head%'
                """, [.text(target.schema)])
            if let pid = waiting.first?.first ?? nil {
                try await holder.execute("SELECT pg_terminate_backend($1::int4)", [.text(pid)])
                cut = true
            }
        }
        #expect(cut)
        if !cut { try await holder.execute("ROLLBACK") }  // lets the push end, not hang the test
        let result = await pushing.result
        _ = try? await holder.execute("ROLLBACK")
        await holder.close()
        guard case let .failure(error) = result, let failure = error as? PostgresStoreError else {
            Issue.record("the push should have failed, got \(result)")
            return
        }
        #expect(failure.isTransient, "\(failure)")
        #expect(!failure.description.contains("\n"))
        #expect(a.state[counters].find("p")?.value == 2)
        let before = try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".counters")
        #expect(before == [["1"]])
        #expect(try await syncA.push().rows == 1)
        let after = try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".counters")
        #expect(after == [["2"]])
    }
}
#endif
