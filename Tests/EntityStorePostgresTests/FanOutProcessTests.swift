#if PostgreSQL
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// The fan-out deployment of docs/Scaling.md, scaled down to run in every test run:
/// replica processes following one store through pgbouncer in transaction pooling mode
/// (they poll) and directly (they listen), some loading and pulling from a hot standby,
/// two writer processes pushing through the pooler.
/// The benchmark (`entity-store-bench --only fanout`) measures the same with 32 replicas.
@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct FanOutProcessTests {
    @Test("replica processes, polling through pgbouncer or listening directly, some reading from a standby, each see every note two writer processes push through the pooler")
    func everyReplicaSeesEveryPush() async throws {
        guard TestClusters.pgbouncerEnabled else { return }
        let primaryURL = try await TestClusters.primaryURL()
        let bouncerURL = try await TestClusters.bouncer.url()
        let standbyURL = try await TestClusters.standby.url()
        let schema = "fanout_\(UInt32.random(in: 0...UInt32.max))"
        let direct = try PostgresTarget(url: primaryURL, schema: schema)
        defer { Task { await TestServer.drop(direct) } }
        let pooledURL = bouncerURL + "?pool_mode=transaction&schema=" + schema
        let directURL = primaryURL + (primaryURL.contains("?") ? "&" : "?") + "schema=" + schema
        let standbyReads = ["--read", standbyURL + (standbyURL.contains("?") ? "&" : "?") + "schema=" + schema]
        let notes = try product("shared-notes")
        // The first replica creates the store; the others load it.
        var replicas = [try Child(notes, ["watch", directURL])]
        defer { for replica in replicas { replica.kill(SIGKILL) } }
        #expect(try await replicas[0].waitFor("watching"))
        // Polling through the pooler, listening directly; each also reading from the standby.
        for (url, reads) in [(pooledURL, false), (directURL, false), (pooledURL, false), (pooledURL, true), (directURL, true)] {
            replicas.append(try Child(notes, ["watch", url] + (reads ? standbyReads : [])))
        }
        for replica in replicas { #expect(try await replica.waitFor("watching"), "\(replica.text)") }
        let rounds = 15
        let writers = try (0..<2).map { _ in try Child(notes, ["probe", pooledURL, String(rounds)]) }
        for writer in writers {
            #expect(try await writer.finish(within: .seconds(120)) == 0, "\(writer.text)")
        }
        // Each writer's notes are named probe-<its author>-<round>: every replica prints each.
        for replica in replicas {
            #expect(try await eventuallyTrue(.seconds(60)) { Self.probes(in: replica.text) == 2 * rounds }, "\(replica.text.suffix(2_000))")
        }
    }

    /// The distinct probe notes a `watch` printed.
    private static func probes(in text: String) -> Int {
        Set(text.split(separator: "\n").filter { $0.hasPrefix("note probe-") }.map { $0.split(separator: ":").first ?? "" }).count
    }

    private func eventuallyTrue(_ limit: Duration, _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }
}
#endif
