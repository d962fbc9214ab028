#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

@Suite("Full snapshots beside pushes", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
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
        let pusher = Task {
            var pushes = 0
            while !snapshotsDone.withLock({ $0 }) {
                try await sync.write { tx in _ = try tx[counters].update("n") { $0.value += 1 } }
                pushes += 1
            }
            return pushes
        }
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
}
#endif
