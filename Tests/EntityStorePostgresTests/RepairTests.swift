#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

@Suite("Rows written by hand", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct RepairTests {
    @Test("a row inserted by hand fails every load with a hint; repairStore() recounts, and every replica reloads and sees it")
    func handWrittenRows() async throws {
        let target = try await TestServer.target("byhand")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        try await syncA.write(retrying: 1) { tx in try tx[counters].insert(Counter(id: "x", value: 1)) }
        let (b, syncB) = try await replica(target)
        let table = "\"\(target.schema)\".counters"
        _ = try await TestServer.rows(target, "INSERT INTO \(table) (id, value, entitystore_revision) VALUES ('psql', 42, 1)")
        _ = try await TestServer.rows(target, "UPDATE \(table) SET value = 2 WHERE id = 'x'")
        // The change log never heard of them: a pull sees nothing, a fresh load fails.
        #expect(try await syncB.pull().rows == 0)
        let fresh = PostgresSync(store: try EntityStore { customers; orders; counters }, target: target)
        let error = await #expect(throws: PostgresStoreError.self) { try await fresh.open() }
        #expect(error?.description.contains("entity-store repair") == true, "no hint: \(String(describing: error))")

        let summary = try await target.repairStore()
        #expect(summary.recounts == [.init(table: "counters", recorded: 1, actual: 2)])
        for (store, sync) in [(a, syncA), (b, syncB)] {
            #expect(try await sync.pull().reloaded)
            #expect(store.state[counters].find("psql")?.value == 42)
            #expect(store.state[counters].find("x")?.value == 2)
        }
        #expect(try await fresh.open() == summary.position)
        // Pushes go on from the repaired position.
        try await syncA.write { tx in _ = try tx[counters].update("psql") { $0.value += 1 } }
        try await syncB.pull()
        #expect(b.state[counters].find("psql")?.value == 43)
        // A consistent store: nothing to recount.
        #expect(try await target.repairStore().recounts.isEmpty)
    }

    @Test("repairStore() refuses a schema that holds no store")
    func repairRefusesOthers() async throws {
        let target = try await TestServer.target("norepair")
        let error = await #expect(throws: PostgresStoreError.self) { try await target.repairStore() }
        guard case .notAStore? = error else {
            Issue.record("expected notAStore, got \(String(describing: error))")
            return
        }
    }
}
#endif
