#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

@Suite(.enabled(if: TestClusters.enabled, postgresSkipNote), .threadsOfItsOwn)
struct StandbyTests {
    @Test("reads from a hot standby: a replica loads and pulls there, pushes to the primary, wakes on the primary's NOTIFY, and never pulls past what the standby replayed")
    func readsFromStandby() async throws {
        let primaryURL = try await TestClusters.primaryURL()
        let standbyURL = try await TestClusters.standby.url()
        let target = try PostgresTarget(url: primaryURL, schema: "standby_\(UInt32.random(in: 0...UInt32.max))")
        defer { Task { await TestServer.drop(target) } }
        let standby = try PostgresTarget(url: standbyURL, schema: target.schema)
        let (writer, writerSync) = try await replica(target)
        try writer.write { tx in try tx[counters].insert(Counter(id: "seed", value: 0)) }
        try await writerSync.push()
        let replayed = "SELECT value FROM \(SQL.quote(target.schema)).entitystore_meta WHERE key = 'log_head'"
        let head = String(writerSync.position)
        #expect(try await eventuallyAsync(.seconds(20)) { await firstCell(standby, replayed) == head })
        let standbyHead = await firstCell(standby, replayed)
        #expect(standbyHead == head)

        let store = try EntityStore { customers; orders; counters }
        var options = PostgresSync.Options()
        options.readTarget = standby
        options.retryDelay = .milliseconds(50)
        options.replayWait = .milliseconds(500)
        let sync = PostgresSync(store: store, target: target, options: options)
        try await sync.open()
        #expect(store.state[counters].find("seed") != nil)
        let events = EventLog(sync)
        let following = Task { await sync.start() }
        defer { following.cancel() }

        var delays: [Duration] = []
        for value in 1...20 {
            let started = ContinuousClock.now
            try await writerSync.write { tx in _ = try tx[counters].update("seed") { $0.value = value } }
            #expect(try await eventually(.seconds(20)) { store.state[counters].find("seed")?.value == value })
            delays.append(ContinuousClock.now - started)
        }
        // From the writer's write to the value in the replica reading from the standby.
        reportTiming("standby reads: write and push to the replica, median of 20", delays.sorted()[delays.count / 2])
        // Its own push goes to the primary; the next pull waits for the standby to have it.
        try store.write { tx in try tx[counters].insert(Counter(id: "mine", value: 1)) }
        let pushed = try await sync.push()
        let pulled = try await sync.pull()
        #expect(pulled.position >= pushed.position)

        // Replay paused: the replica hears of a push the standby does not have, waits
        // (bounded), and reports the standby behind rather than moving past it.
        _ = try await TestServer.rows(standby, "SELECT pg_wal_replay_pause()")
        try await writerSync.pull()
        try writer.write { tx in _ = try tx[counters].update("seed") { $0.value = 100 } }
        let paused = try await writerSync.push()
        #expect(try await eventually(.seconds(20)) { events.failures.contains { $0.description.contains("standby has replayed") } })
        #expect(store.state[counters].find("seed")?.value == 20)
        let pauseState = await firstCell(standby, "SELECT pg_get_wal_replay_pause_state()")
        #expect(sync.position < paused.position, "replay: \(pauseState)")
        // A store created while replay is paused: the standby lacks its schema, so a
        // replica reading there opens it from the primary instead of failing.
        let created = try PostgresTarget(url: primaryURL, schema: "standby_\(UInt32.random(in: 0...UInt32.max))")
        defer { Task { await TestServer.drop(created) } }
        let (creator, creatorSync) = try await replica(created)
        try creator.write { tx in try tx[counters].insert(Counter(id: "new", value: 7)) }
        try await creatorSync.push()
        var lateOptions = options
        lateOptions.readTarget = try PostgresTarget(url: standbyURL, schema: created.schema)
        let late = try EntityStore { customers; orders; counters }
        let lateSync = PostgresSync(store: late, target: created, options: lateOptions)
        #expect(try await lateSync.open() == creatorSync.position)
        #expect(late.state[counters].find("new")?.value == 7)
        await lateSync.close()
        await creatorSync.close()
        _ = try await TestServer.rows(standby, "SELECT pg_wal_replay_resume()")
        #expect(try await eventually(.seconds(20)) { store.state[counters].find("seed")?.value == 100 && sync.position >= paused.position })
        for failure in events.failures {
            #expect(!failure.description.contains("\n"))
            #expect(!failure.description.contains(target.password ?? "-"))
        }
        following.cancel()
        await sync.close()
        await writerSync.close()
    }

    @Test("through pgbouncer in transaction pooling mode: create, push, pull, write(retrying:), and follow by polling or through a direct listening connection")
    func throughPgbouncer() async throws {
        guard TestClusters.pgbouncerEnabled else { return }
        let primaryURL = try await TestClusters.primaryURL()
        let bouncerURL = try await TestClusters.bouncer.url()
        let schema = "pooled_\(UInt32.random(in: 0...UInt32.max))"
        let direct = try PostgresTarget(url: primaryURL, schema: schema)
        defer { Task { await TestServer.drop(direct) } }
        // Without pool_mode the pooler refuses the session options: one clear line.
        let unpooled = try PostgresTarget(url: bouncerURL, schema: schema)
        do {
            _ = try await replica(unpooled)
            Issue.record("expected pgbouncer to refuse the session options")
        } catch {
            #expect(String(describing: error).contains("pool_mode=transaction"), "\(error)")
            #expect(!String(describing: error).contains(unpooled.password ?? "-"))
        }
        let pooled = try PostgresTarget(url: bouncerURL + "?pool_mode=transaction", schema: schema)
        let (a, syncA) = try await replica(pooled)
        // B listens on a direct connection; C, pooled only, polls.
        let b = try EntityStore { customers; orders; counters }
        var options = PostgresSync.Options()
        options.listenTarget = direct
        let syncB = PostgresSync(store: b, target: pooled, options: options)
        try await syncB.open()
        let (c, syncC) = try await replica(pooled)
        let followB = Task { await syncB.start() }
        let followC = Task { await syncC.start() }
        defer {
            followB.cancel()
            followC.cancel()
        }
        try a.write { tx in
            try tx[customers].insert(Customer(id: "c1", name: "Ada", region: "eu"))
            try tx[counters].insert(Counter(id: "n", value: 0))
        }
        try await syncA.push()
        #expect(try await eventually(.seconds(20)) { b.state[customers].count == 1 && c.state[customers].count == 1 })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sync in [syncA, syncB, syncC] {
                group.addTask {
                    for _ in 0..<10 { try await sync.write { tx in _ = try tx[counters].update("n") { $0.value += 1 } } }
                }
            }
            try await group.waitForAll()
        }
        try await syncA.pull()
        #expect(a.state[counters].find("n")?.value == 30)
        #expect(try await eventually(.seconds(20)) { b.state[counters].find("n")?.value == 30 && c.state[counters].find("n")?.value == 30 })
        let fresh = try EntityStore { customers; orders; counters }
        try await fresh.restore(from: pooled)
        #expect(fresh.state[counters].find("n")?.value == 30)
        followB.cancel()
        followC.cancel()
        await syncA.close()
        await syncB.close()
        await syncC.close()
    }
}
#endif
