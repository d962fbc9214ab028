#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// The change log's row index, added to an older store at a sync's first push, must not
/// stall writers: `CREATE INDEX` takes a `SHARE` lock on the log, which waits for every
/// transaction writing it, and every later push queues behind that wait.
@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct RowIndexLockTests {
    @Test("adding the row index waits for no writer: pushes go on while another transaction holds the change log")
    func rowIndexWaitsForNoWriter() async throws {
        var configured = try await TestServer.target("row_index_lock")
        configured.operationTimeout = .seconds(20)
        let target = configured
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        try a.write { tx in try tx[counters].insert(Counter(id: "a", value: 0)) }
        try await syncA.push()
        // A store made before the row index.
        _ = try await TestServer.rows(target, "DROP INDEX \(SQL.qualified(target.schema, MetadataTables.rowIndexName))")
        // Another transaction writing the change log (a maintenance job, a slow writer):
        // pushes are compatible with its lock, as they always were.
        let holder = try await target.connect()
        try await holder.execute("BEGIN")
        try await holder.execute("LOCK TABLE \(SQL.qualified(target.schema, "entitystore_changes")) IN ROW EXCLUSIVE MODE")
        var failures: [String] = []
        try a.write { tx in _ = try tx[counters].update("a") { $0.value = 1 } }
        do { try await syncA.push() } catch { failures.append("a running replica's push before: \(error)") }
        // A replica started now (a new process, an upgraded client): its first push.
        let (c, syncC) = try await replica(target)
        try c.write { tx in try tx[counters].insert(Counter(id: "c", value: 1)) }
        do { try await syncC.push() } catch { failures.append("a new replica's first push: \(error)") }
        // The replica that was already running pushes again.
        try a.write { tx in _ = try tx[counters].update("a") { $0.value = 2 } }
        do { try await syncA.push() } catch { failures.append("a running replica's push after: \(error)") }
        try await holder.execute("ROLLBACK")
        await holder.close()
        #expect(failures.isEmpty, "\(failures)")
    }
    @Test("adding the row index to a store with a long change log neither fails pushes nor starts a build per retry")
    func rowIndexOnLongLog() async throws {
        var configured = try await TestServer.target("row_index_long")
        // A build limit far below the build's time, and an operation timeout no loaded
        // machine reaches: the test depends on no timing but the build outlasting its limit.
        configured.rowIndexBuildLimit = .milliseconds(100)
        let target = configured
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await replica(target)
        try a.write { tx in try tx[counters].insert(Counter(id: "a", value: 0)) }
        try await syncA.push()
        // A store made before the row index, whose log grew long (here by hand: 300,000
        // changes to rows of another table, past the log's head: about 0.7 s to index here,
        // past the 100 ms the build is allowed).
        let log = SQL.qualified(target.schema, "entitystore_changes")
        _ = try await TestServer.rows(target, "DROP INDEX \(SQL.qualified(target.schema, MetadataTables.rowIndexName))")
        _ = try await TestServer.rows(
            target, "INSERT INTO \(log) (position, table_name, row_id, origin) SELECT -g, 'elsewhere', g::text, 'old' FROM generate_series(1, 300000) g")
        // A replica started now pushes, retrying transient failures a few times.
        let (c, syncC) = try await replica(target)
        try c.write { tx in try tx[counters].insert(Counter(id: "c", value: 1)) }
        var failures: [String] = []
        for _ in 0..<3 {
            do {
                try await syncC.push()
                break
            } catch {
                failures.append("\(error)")
            }
        }
        let builds = try await TestServer.rows(
            target, "SELECT count(*)::text FROM pg_stat_activity WHERE query LIKE 'SET LOCAL lock_timeout%' OR query LIKE 'CREATE INDEX IF NOT EXISTS%'")
        let built = try await TestServer.rows(target, "SELECT (to_regclass($1) IS NOT NULL)::text", [.text(SQL.qualified(target.schema, MetadataTables.rowIndexName))])
        #expect(failures.isEmpty, "failed attempts: \(failures); index builds running on the server: \(builds)")
        #expect(built.first?.first == "false", "the build was not cut off at its limit: \(built)")
    }
}
#endif
