#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

/// Pushes, retrying transient errors (a server gone, none promoted yet) until `limit`.
func pushRetrying(_ sync: PostgresSync, within limit: Duration = .seconds(30)) async throws {
    let deadline = ContinuousClock.now + limit
    while true {
        let failure: PostgresStoreError
        do {
            try await sync.push()
            return
        } catch {
            failure = error
        }
        guard failure.isTransient, ContinuousClock.now < deadline else { throw failure }
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// Waits until `condition` holds, up to `limit`.
func eventuallyAsync(_ limit: Duration, _ condition: () async -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}

/// The first cell of a query's result, or the error, as text (for a failure to show).
func firstCell(_ target: PostgresTarget, _ sql: String) async -> String {
    do {
        return try await TestServer.rows(target, sql).first?.first.map { $0 ?? "NULL" } ?? "no row"
    } catch {
        return "\(error)"
    }
}

/// Prints a measured duration when `ENTITYSTORE_TIMINGS` is set (scripts and docs quote them).
func reportTiming(_ name: String, _ duration: Duration) {
    guard ProcessInfo.processInfo.environment["ENTITYSTORE_TIMINGS"] != nil else { return }
    print("timing \(name): \(duration.milliseconds) ms")
}

/// A replica with quick retries, following (`start()`) when asked.
func failoverReplica(_ target: PostgresTarget, reloadsOnNewServer: Bool = true) async throws -> (EntityStore, PostgresSync) {
    let store = try EntityStore { customers; orders; counters }
    var options = PostgresSync.Options()
    options.retryDelay = .milliseconds(100)
    options.reloadsOnNewServer = reloadsOnNewServer
    let sync = PostgresSync(store: store, target: target, options: options)
    try await sync.open()
    return (store, sync)
}

/// The IDs of `store`'s counters, sorted.
func counterIDs(_ store: EntityStore) -> [String] {
    store.state[counters].ids.sorted()
}

@Suite(.enabled(if: TestClusters.enabled, postgresSkipNote), .threadsOfItsOwn)
struct FailoverTests {
    @Test("asynchronous standby promoted after the primary dies: writers and a following replica go on through a multi-host URL; pushes the standby never received are lost, and replicas that held them reload")
    func asynchronousFailover() async throws {
        let pair = try await ClusterPair.start()
        defer { Task { await pair.stop() } }
        var target = try PostgresTarget(url: try pair.failoverURL(), schema: "failover")
        target.connectTimeout = .seconds(2)
        target.operationTimeout = .seconds(10)
        #expect(target.endpoints.count == 2)
        #expect(!target.description.contains(target.password ?? "-"))
        let standby = try PostgresTarget(url: pair.standbyURL, schema: "failover")
        let (writer, writerSync) = try await failoverReplica(target)
        let (follower, followerSync) = try await failoverReplica(target)
        let followerEvents = EventLog(followerSync)
        let writerEvents = EventLog(writerSync)
        let following = Task { await followerSync.start() }
        defer { following.cancel() }

        func write(_ id: String) async throws {
            try writer.write { tx in try tx[counters].insert(Counter(id: id, value: 1)) }
            try await pushRetrying(writerSync)
        }
        for index in 0..<5 { try await write("a\(index)") }
        #expect(try await eventually(.seconds(20)) { follower.state[counters].count == 5 })
        // The standby has them too; then it stops receiving (its primary_conninfo emptied).
        let replayed = "SELECT value FROM failover.entitystore_meta WHERE key = 'log_head'"
        let head = String(writerSync.position)
        #expect(try await eventuallyAsync(.seconds(20)) { await firstCell(standby, replayed) == head })
        let standbyHead = await firstCell(standby, replayed)
        #expect(standbyHead == head)
        _ = try await TestServer.rows(standby, "ALTER SYSTEM SET primary_conninfo = ''")
        _ = try await TestServer.rows(standby, "SELECT pg_reload_conf()")
        #expect(try await eventuallyAsync(.seconds(20)) { await firstCell(standby, "SELECT count(*) FROM pg_stat_wal_receiver") == "0" })
        // Acknowledged by the primary, seen by the follower, never received by the standby.
        for index in 0..<3 { try await write("b\(index)") }
        #expect(try await eventually(.seconds(20)) { follower.state[counters].count == 8 })

        let killed = ContinuousClock.now
        try await pair.killPrimary()
        try await pair.promoteStandby()
        reportTiming("async failover: kill and promote", ContinuousClock.now - killed)
        // The writer goes on without a restart: its first push reaches the promoted
        // standby, whose log ends before the writer's position.
        for index in 0..<4 {
            try await write("c\(index)")
            if index == 0 { reportTiming("async failover: kill to the writer's first push", ContinuousClock.now - killed) }
        }
        let expected = (0..<5).map { "a\($0)" } + (0..<4).map { "c\($0)" }
        #expect(counterIDs(writer) == expected)
        #expect(try await eventually(.seconds(30)) { counterIDs(follower) == expected && followerSync.position == writerSync.position })
        reportTiming("async failover: kill to the follower current again", ContinuousClock.now - killed)
        let fresh = try EntityStore { customers; orders; counters }
        try await fresh.restore(from: target)
        #expect(counterIDs(fresh) == expected)
        #expect(!followerEvents.reloads.isEmpty, "the follower held lost pushes: it must reload")
        #expect(!writerEvents.reloads.isEmpty, "the writer's first connection to the promoted standby reloads")
        for failure in followerEvents.failures {
            #expect(!failure.description.contains("\n"))
            #expect(!failure.description.contains(target.password ?? "-"))
        }
        following.cancel()
        await writerSync.close()
        await followerSync.close()
    }

    @Test("synchronous standby promoted after the primary dies: every acknowledged push is there, and a replica that trusts the history goes on without reloading")
    func synchronousFailover() async throws {
        let pair = try await ClusterPair.start(synchronous: true)
        defer { Task { await pair.stop() } }
        var target = try PostgresTarget(url: try pair.failoverURL(), schema: "failover")
        target.connectTimeout = .seconds(2)
        target.operationTimeout = .seconds(10)
        let (writer, writerSync) = try await failoverReplica(target, reloadsOnNewServer: false)
        let (follower, followerSync) = try await failoverReplica(target, reloadsOnNewServer: false)
        let followerEvents = EventLog(followerSync)
        let following = Task { await followerSync.start() }
        defer { following.cancel() }
        for index in 0..<5 {
            try writer.write { tx in try tx[counters].insert(Counter(id: "s\(index)", value: index)) }
            try await pushRetrying(writerSync)
        }
        // Killed right after the last acknowledgement: synchronous replication has it.
        try await pair.killPrimary()
        try await pair.promoteStandby()
        try writer.write { tx in try tx[counters].insert(Counter(id: "t0", value: 0)) }
        try await pushRetrying(writerSync)
        let expected = (0..<5).map { "s\($0)" } + ["t0"]
        #expect(try await eventually(.seconds(30)) { counterIDs(follower) == expected && followerSync.position == writerSync.position })
        let fresh = try EntityStore { customers; orders; counters }
        try await fresh.restore(from: target)
        #expect(counterIDs(fresh) == expected)
        #expect(followerEvents.reloads.isEmpty, "\(followerEvents.reloads)")
        following.cancel()
        await writerSync.close()
        await followerSync.close()
    }

    @Test("multi-host URLs: each host its port, libpq's conninfo lists, one-line errors without the password")
    func multiHostURL() throws {
        let target = try PostgresTarget(
            url: "postgres://u:p%40ss@h1:5432,[::1]:5433,h3/db?target_session_attrs=read-write&schema=s", environment: [:])
        #expect(target.endpoints == [.init(host: "h1", port: 5432), .init(host: "::1", port: 5433), .init(host: "h3", port: 5432)])
        #expect(target.sessionRole == .readWrite)
        #expect(target.password == "p@ss")
        #expect(target.description == "u@h1:5432,[::1]:5433,h3:5432/db (schema s)")
        let parameters = Dictionary(target.libpqParameters(), uniquingKeysWith: { $1 })
        #expect(parameters["host"] == "h1,::1,h3")
        #expect(parameters["port"] == "5432,5433,5432")
        #expect(parameters["target_session_attrs"] == "read-write")
        let query = try PostgresTarget(url: "postgres://u@x/db?host=a,b&port=1,2&pool_mode=transaction", environment: [:])
        #expect(query.endpoints == [.init(host: "a", port: 1), .init(host: "b", port: 2)])
        #expect(query.transactionPooling)
        #expect(Dictionary(query.libpqParameters(), uniquingKeysWith: { $1 })["options"] == nil)
        #expect(throws: PostgresStoreError.self) { try PostgresTarget(url: "postgres://u:secret@h1:5432,h2:99999/db", environment: [:]) }
        do {
            _ = try PostgresTarget(url: "postgres://u:secret@h1,h2/db?target_session_attrs=sometimes", environment: [:])
            Issue.record("expected an error")
        } catch {
            #expect(!error.description.contains("secret"))
            #expect(error.description.contains("target_session_attrs"))
        }
    }
}
#endif
