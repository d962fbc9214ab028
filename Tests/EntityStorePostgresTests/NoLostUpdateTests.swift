#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// A local change is pushed or reported as a conflict, never silently replaced: not by a
/// pull of `start()` between a write and its push, not by a pull of a row changed since,
/// not by a reload after the log was pruned.
@Suite("No lost update", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct NoLostUpdateTests {
    @Test("write(retrying:) loses no update while every replica also follows the store with start()")
    func retryingWhileFollowing() async throws {
        let target = try await TestServer.target("follow")
        defer { Task { await TestServer.drop(target) } }
        var replicas = [try await replica(target)]
        try await replicas[0].1.write(retrying: 1) { tx in try tx[counters].insert(Counter(id: "n", value: 0)) }
        for _ in 1..<3 { replicas.append(try await replica(target)) }
        let followers = replicas.map { replica in Task { await replica.1.start() } }
        defer { for follower in followers { follower.cancel() } }
        let increments = 30
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (_, sync) in replicas {
                group.addTask {
                    for _ in 0..<increments {
                        try await sync.write { tx in _ = try tx[counters].update("n") { $0.value += 1 } }
                    }
                }
            }
            try await group.waitForAll()
        }
        let stored = try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".counters WHERE id = 'n'")
        #expect(stored == [[String(3 * increments)]])
        for (store, sync) in replicas {
            try await sync.pull()
            #expect(store.state[counters].find("n")?.value == 3 * increments)
        }
    }

    @Test("a pull keeps a row changed locally and not pushed; its push reports the conflict; acceptServerValues settles it")
    func pullKeepsPendingRows() async throws {
        let target = try await TestServer.target("pending")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        let (b, syncB) = try await replica(target)
        try await syncA.write(retrying: 1) { tx in
            try tx[counters].insert(Counter(id: "x", value: 0))
            try tx[counters].insert(Counter(id: "y", value: 0))
        }
        try await syncB.pull()
        try a.write { tx in _ = try tx[counters].update("x") { $0.value = 1 } }
        try b.write { tx in
            _ = try tx[counters].update("x") { $0.value = 2 }
            _ = try tx[counters].update("y") { $0.value = 2 }
        }
        try await syncB.push()
        try await syncA.pull()
        #expect(a.state[counters].find("x")?.value == 1, "the pull replaced a local change")
        #expect(a.state[counters].find("y")?.value == 2)
        let conflicts = await conflictRows { try await syncA.push() }
        #expect(conflicts.map(\.id) == ["x"])
        #expect(try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".counters WHERE id = 'x'") == [["2"]])
        try await syncA.acceptServerValues(for: conflicts)
        #expect(a.state[counters].find("x")?.value == 2)
        #expect(try await syncA.push().rows == 0)
    }

    @Test("a row changed again after this replica's own push, then a pull: its push is no conflict with itself")
    func noConflictWithOwnPush() async throws {
        let target = try await TestServer.target("ownpush")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        let (b, syncB) = try await replica(target)
        try a.write { tx in try tx[counters].insert(Counter(id: "a1", value: 1)) }
        try b.write { tx in try tx[counters].insert(Counter(id: "b1", value: 1)) }
        try await syncB.push()
        try await syncA.push()  // A's position stays before B's push; A's own is known as its own
        try a.write { tx in _ = try tx[counters].update("a1") { $0.value = 2 } }
        try await syncA.pull()  // past B's push and A's own
        #expect(try await syncA.push().rows == 1)
        try await syncB.pull()
        #expect(b.state[counters].find("a1")?.value == 2)
    }

    @Test("write(retrying:) over a row an earlier local change left pending reports the conflict and keeps that change")
    func retryingKeepsEarlierPendingChange() async throws {
        let target = try await TestServer.target("earlier")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        try await syncA.write(retrying: 1) { tx in try tx[counters].insert(Counter(id: "x", value: 0)) }
        let (b, syncB) = try await replica(target)
        try a.write { tx in _ = try tx[counters].update("x") { $0.value = 1 } }  // not pushed
        try b.write { tx in _ = try tx[counters].update("x") { $0.value = 2 } }
        try await syncB.push()
        let rows = await conflictRows { _ = try await syncA.write { tx in _ = try tx[counters].update("x") { $0.value += 10 } } }
        #expect(rows.map(\.id) == ["x"])
        #expect(a.state[counters].find("x")?.value == 1, "the earlier local change was dropped")
        #expect(try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".counters WHERE id = 'x'") == [["2"]])
    }

    @Test("after acceptServerValues, the change redone on the server's values pushes without another conflict")
    func acceptThenRedo() async throws {
        let target = try await TestServer.target("accept")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        try await syncA.write(retrying: 1) { tx in try tx[counters].insert(Counter(id: "x", value: 0)) }
        let (b, syncB) = try await replica(target)
        try a.write { tx in _ = try tx[counters].update("x") { $0.value += 1 } }
        try b.write { tx in _ = try tx[counters].update("x") { $0.value += 5 } }
        try await syncB.push()
        let rows = await conflictRows { try await syncA.push() }
        try await syncA.acceptServerValues(for: rows)
        try a.write { tx in _ = try tx[counters].update("x") { $0.value += 1 } }
        #expect(try await syncA.push().rows == 1)
        #expect(try await TestServer.rows(target, "SELECT value FROM \"\(target.schema)\".counters WHERE id = 'x'") == [["6"]])
    }

    @Test("after a local restore, a full snapshot from elsewhere reloads the replica and its pushes work again")
    func restoreThenReload() async throws {
        let target = try await TestServer.target("restored")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        try a.replaceAll(with: a.state)
        let other = try EntityStore { customers; orders; counters }
        try other.write { tx in try tx[counters].insert(Counter(id: "s", value: 1)) }
        try await other.snapshot(to: target)
        #expect(try await syncA.pull().reloaded)
        try a.write { tx in try tx[counters].insert(Counter(id: "t", value: 2)) }
        #expect(try await syncA.push().rows == 1)
    }

    @Test("a reload after the log was pruned keeps local changes not pushed, and their push reports the conflict")
    func reloadKeepsPendingRows() async throws {
        let target = try await TestServer.target("reloadpending")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        let (b, syncB) = try await replica(target)
        try await syncA.write(retrying: 1) { tx in try tx[counters].insert(Counter(id: "x", value: 0)) }
        try await syncB.pull()
        try a.write { tx in
            _ = try tx[counters].update("x") { $0.value = 1 }
            try tx[counters].insert(Counter(id: "mine", value: 7))
        }
        for value in 2...4 {
            try b.write { tx in _ = try tx[counters].update("x") { $0.value = value } }
            try await syncB.push()
        }
        _ = try await syncB.prune(keepingAfter: syncB.position)
        #expect(try await syncA.pull().reloaded)
        #expect(a.state[counters].find("x")?.value == 1, "the reload replaced a local change")
        #expect(a.state[counters].find("mine")?.value == 7, "the reload dropped a local insert")
        #expect(Set(await conflictRows { try await syncA.push() }.map(\.id)) == ["x", "mine"])
    }
}

/// The rows of the conflict `body` throws; records an issue if it throws anything else
/// or nothing.
func conflictRows(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> [PostgresConflict] {
    let error = await #expect(throws: PostgresStoreError.self, sourceLocation: sourceLocation) { try await body() }
    guard case let .conflict(rows)? = error else {
        Issue.record("expected a conflict, got \(String(describing: error))", sourceLocation: sourceLocation)
        return []
    }
    return rows
}
#endif
