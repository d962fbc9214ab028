#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// Every wait for the server has a deadline: a frozen path fails an operation within the
/// target's operation timeout, and a following replica whose connection silently died
/// notices it after a heartbeat of silence and catches up.
@Suite("Deadlines on a frozen path", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct DeadlineTests {
    /// A target through a new proxy, with a short operation timeout.
    static func proxied(_ direct: PostgresTarget) throws -> (FaultProxy, PostgresTarget) {
        let proxy = try FaultProxy(upstreamPort: direct.port)
        var target = direct
        target.host = "127.0.0.1"
        target.port = proxy.port
        target.operationTimeout = .seconds(1)
        target.connectTimeout = .seconds(1)
        return (proxy, target)
    }

    /// Runs `body`, recording an issue if it has not returned after `guardTime` (a hang
    /// guard, far above the deadline under test, not a measurement).
    static func withinGuard<R: Sendable>(_ guardTime: Duration = .seconds(60), _ body: @escaping @Sendable () async throws -> R) async throws -> R? {
        try await withThrowingTaskGroup(of: R?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: guardTime)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            if first == nil { Issue.record("no deadline: still waiting after \(guardTime)") }
            return first
        }
    }

    /// Retries `body` while it fails with a transient error, for up to `limit`: on a
    /// loaded machine a healthy round trip can outlast the test's short operation timeout,
    /// and a transient failure is the signal a caller retries on.
    @discardableResult
    static func retryingTransient<R: Sendable>(_ limit: Duration = .seconds(30), _ body: @escaping @Sendable () async throws -> R) async throws -> R {
        let deadline = ContinuousClock.now + limit
        while true {
            do {
                return try await body()
            } catch let error as PostgresStoreError where error.isTransient && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    @Test("a push on a blackholed path fails with a transient error, the change stays pending, and is pushed once the path heals")
    func blackholedPush() async throws {
        let direct = try await TestServer.target("frozen")
        defer { Task { await TestServer.drop(direct) } }
        let (proxy, target) = try Self.proxied(direct)
        defer { proxy.stop() }
        let store = try EntityStore { customers; orders; counters }
        let sync = PostgresSync(store: store, target: target)
        try await Self.retryingTransient { try await sync.open() }
        try store.write { tx in try tx[counters].insert(Counter(id: "late", value: 1)) }
        proxy.set(.blackhole)
        let failure = try await Self.withinGuard { () -> PostgresStoreError? in
            do {
                try await sync.push()
                return nil
            } catch let error as PostgresStoreError {
                return error
            }
        }
        proxy.set(.pass)
        guard let failure, let error = failure else {
            Issue.record("the push succeeded through a blackhole")
            return
        }
        #expect(error.isTransient, "\(error)")
        #expect(!error.description.contains("\n"))
        #expect(try await Self.retryingTransient { try await sync.push().rows } == 1)
        #expect(try await TestServer.rows(direct, "SELECT value FROM \"\(direct.schema)\".counters WHERE id = 'late'") == [["1"]])
    }

    @Test("a following replica whose connections silently died notices after a heartbeat and catches up")
    func silentlyDeadListener() async throws {
        let direct = try await TestServer.target("silent")
        defer { Task { await TestServer.drop(direct) } }
        let (writer, writerSync) = try await replica(direct)
        let (proxy, target) = try Self.proxied(direct)
        defer { proxy.stop() }
        var options = PostgresSync.Options()
        options.heartbeat = .milliseconds(300)
        options.retryDelay = .milliseconds(50)
        let follower = PostgresSync(store: try EntityStore { customers; orders; counters }, target: target, options: options)
        try await Self.retryingTransient { try await follower.open() }
        let running = Task { await follower.start() }
        defer { running.cancel() }
        try await Task.sleep(for: .milliseconds(200))
        proxy.freezeOpenConnections()
        try writer.write { tx in try tx[counters].insert(Counter(id: "after", value: 7)) }
        try await writerSync.push()
        let caughtUp = try await Self.withinGuard {
            try await eventually(.seconds(55)) { follower.store.state[counters].find("after")?.value == 7 }
        }
        #expect(caughtUp == true, "the follower never noticed its dead connection")
    }
}
#endif
