#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

private struct Gauge: Entity, Equatable {
    var id: Int
    var reading: Int?
    var label: String
}

private let gauges = Table<Gauge>("gauges")

/// The statements every push and pull sends are prepared once per connection. These
/// attack what can make a prepared statement wrong: a column whose type changes under it,
/// a store replaced by a full snapshot, a preparation that fails, more statements than a
/// connection prepares.
@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct PreparedStatementTests {
    private let readings = Table<DynamicRecord>("readings")

    private func dynamicReplica(_ target: PostgresTarget) async throws -> (EntityStore, PostgresSync) {
        let store = try EntityStore { readings }
        let sync = PostgresSync(store: store, target: target)
        try await sync.open()
        return (store, sync)
    }

    private func kind(of column: String, table: String, _ target: PostgresTarget) async throws -> String? {
        try await TestServer.rows(
            target, "SELECT kind FROM \(SQL.qualified(target.schema, "entitystore_columns")) WHERE table_name = $1 AND name = $2",
            [.text(table), .text(column)]
        ).first?.first ?? nil
    }

    @Test("a follower's prepared pulls read a column whose type another replica's push set")
    func columnChangesType() async throws {
        let target = try await TestServer.target("prepared_retype")
        defer { Task { await TestServer.drop(target) } }
        func replica() async throws -> (EntityStore, PostgresSync) {
            let store = try EntityStore { gauges }
            let sync = PostgresSync(store: store, target: target)
            try await sync.open()
            return (store, sync)
        }
        let (a, syncA) = try await replica()
        let (b, syncB) = try await replica()
        // A column that held only NULLs (stored as text) takes the type of its first value
        // (pushes keep types otherwise). Each value is pushed by A and pulled by B at least
        // twice, so B's pulls run their prepared statements by name before and after.
        let values: [Int?] = [nil, nil, nil, 1, 2, 3]
        var kinds: [String] = []
        for value in values {
            try a.write { tx in try tx[gauges].upsert(Gauge(id: 1, reading: value, label: "g")) }
            try await syncA.push()
            try await syncB.pull()
            #expect(b.state[gauges].find(1)?.reading == value)
            kinds.append(try await kind(of: "reading", table: "gauges", target) ?? "none")
        }
        #expect(Set(kinds).count == 2, "the column's type did not change once: \(kinds)")
        // B's prepared pushes, and A's pulls, go the other way.
        for value in [8, 9, 10] {
            try b.write { tx in try tx[gauges].upsert(Gauge(id: 2, reading: value, label: "h")) }
            try await syncB.push()
            try await syncA.pull()
            #expect(a.state[gauges].find(2)?.reading == value)
        }
        let fresh = try EntityStore { gauges }
        try await fresh.restore(from: target)
        #expect(fresh.state[gauges].all() == a.state[gauges].all())
        #expect(b.state[gauges].all() == a.state[gauges].all())
    }

    @Test("prepared pushes and pulls go on after a full snapshot replaced the store, with other column types")
    func storeReplaced() async throws {
        let target = try await TestServer.target("prepared_replaced")
        defer { Task { await TestServer.drop(target) } }
        let (a, syncA) = try await dynamicReplica(target)
        let (b, syncB) = try await dynamicReplica(target)
        for round in 1...3 {
            try b.write { tx in try tx[readings].upsert(DynamicRecord(id: 1, fields: ["v": .integer(Int64(round))])) }
            try await syncB.push()
            try await syncA.pull()
        }
        // Another store, whose "v" holds text, replaces the whole store.
        let other = try EntityStore { readings }
        try other.write { tx in try tx[readings].insert(DynamicRecord(id: 5, fields: ["v": "replaced"])) }
        try await other.snapshot(to: target)
        let pulled = try await syncB.pull()
        #expect(pulled.reloaded)
        #expect(b.state[readings].all() == other.state[readings].all())
        try b.write { tx in try tx[readings].upsert(DynamicRecord(id: 6, fields: ["v": "after"])) }
        try await syncB.push()
        try await syncA.pull()
        #expect(a.state[readings].all() == b.state[readings].all())
        #expect(a.state[readings].find(6)?.fields["v"] == "after")
    }

    @Test("a reusable statement whose preparation fails is prepared again once it can be; past the limit, statements run unprepared")
    func preparationFailsAndLimit() async throws {
        let target = try await TestServer.target("prepared_session")
        defer { Task { await TestServer.drop(target) } }
        let schema = SQL.quote(target.schema)
        try await target.withSession { session in
            try session.execute("CREATE SCHEMA \(schema)")
            let select = "SELECT count(*)::text FROM \(schema).t WHERE v > $1::int8"
            // The table does not exist yet: the preparation fails, and nothing is recorded.
            #expect(throws: PostgresStoreError.self) { try session.execute(select, [.integer(0)], reusable: true) }
            #expect(!session.broken)
            try session.execute("CREATE TABLE \(schema).t (v int8)")
            try session.execute("INSERT INTO \(schema).t SELECT generate_series(1, 10)")
            for run in 0..<3 {
                #expect(try session.execute(select, [.integer(Int64(run))], reusable: true).string(0, 0) == String(10 - run))
            }
            // A failing statement ahead of a reusable one in one pipeline: the reusable one
            // is skipped, then runs on its own.
            #expect(throws: PostgresStoreError.self) {
                try session.execute(pipeline: [.init("SELECT 1/0"), .init(select + " AND v < $2::int8", [.integer(0), .integer(5)], reusable: true)])
            }
            #expect(try session.execute(select + " AND v < $2::int8", [.integer(0), .integer(5)], reusable: true).string(0, 0) == "4")
            // More distinct statements than a connection prepares, each run twice.
            for round in 0..<2 {
                for number in 0..<(PostgresSession.preparedLimit + 10) {
                    let rows = try session.execute("SELECT $1::int8 + \(number)", [.integer(Int64(round))], reusable: true)
                    #expect(rows.string(0, 0) == String(number + round))
                }
            }
            let prepared = try session.execute("SELECT count(*)::text FROM pg_prepared_statements").string(0, 0)
            #expect(prepared == String(PostgresSession.preparedLimit))
        }
    }

    @Test("a prepared statement whose result columns changed type renews the connection, in one line")
    func resultTypeChanged() async throws {
        let target = try await TestServer.target("prepared_result")
        defer { Task { await TestServer.drop(target) } }
        let schema = SQL.quote(target.schema)
        try await target.withSession { session in
            try session.execute("CREATE SCHEMA \(schema)")
            try session.execute("CREATE TABLE \(schema).t (v int8)")
            try session.execute("INSERT INTO \(schema).t VALUES (1)")
            let select = "SELECT v FROM \(schema).t"
            #expect(try session.execute(select, reusable: true).string(0, 0) == "1")
            try session.execute("ALTER TABLE \(schema).t ALTER COLUMN v TYPE text")
            do {
                _ = try session.execute(select, reusable: true)
                Issue.record("expected the stale prepared statement to fail")
            } catch let error as PostgresStoreError {
                guard case let .connectionLost(_, reason) = error else {
                    Issue.record("expected a lost connection, got \(error)")
                    return
                }
                #expect(reason.contains("prepared statement no longer fits"), "\(reason)")
                #expect(!String(describing: error).contains("\n"))
            }
            #expect(session.broken)
        }
        // A new connection prepares afresh.
        let value = try await target.withSession { session in
            try session.execute("SELECT v FROM \(schema).t", reusable: true).string(0, 0)
        }
        #expect(value == "1")
    }

    @Test("a store made before the change log's row index gets it at the first push; a role that may not create it still pushes")
    func rowIndexAdded() async throws {
        let target = try await TestServer.target("row_index")
        defer { Task { await TestServer.drop(target) } }
        let index = SQL.qualified(target.schema, MetadataTables.rowIndexName)
        let (a, syncA) = try await replica(target)
        func hasIndex() async throws -> Bool {
            try await TestServer.rows(target, "SELECT to_regclass($1) IS NOT NULL", [.text(index)]) == [["t"]]
        }
        #expect(try await hasIndex())
        // The table's columns exist once it held a row (a first row may add them, which
        // only the owner may).
        try a.write { tx in try tx[counters].insert(Counter(id: "first", value: 0)) }
        try await syncA.push()
        _ = try await TestServer.rows(target, "DROP INDEX \(index)")
        // A role that owns nothing: it may read and write the rows, not create the index.
        let role = "es_writer_\(UInt32.random(in: 0...UInt32.max))"
        let schema = SQL.quote(target.schema)
        _ = try await TestServer.rows(target, "CREATE ROLE \(role) LOGIN PASSWORD 'writer'")
        _ = try await TestServer.rows(target, "GRANT USAGE ON SCHEMA \(schema) TO \(role)")
        _ = try await TestServer.rows(target, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(role)")
        var limited = target
        limited.username = role
        limited.password = "writer"
        let (b, syncB) = try await replica(limited)
        try b.write { tx in try tx[counters].insert(Counter(id: "b", value: 1)) }
        try await syncB.push()
        #expect(try await !hasIndex())
        // The owner's next sync creates it at its first push (the first one checked before
        // the index was dropped); conflicts are still found through it.
        let (owner, ownerSync) = try await replica(target)
        try owner.write { tx in try tx[counters].insert(Counter(id: "a", value: 1)) }
        try await ownerSync.push()
        #expect(try await hasIndex())
        try b.write { tx in _ = try tx[counters].update("b") { $0.value = 2 } }
        try owner.write { tx in try tx[counters].upsert(Counter(id: "b", value: 3)) }
        try await syncB.push()
        let refused: [String]
        do {
            try await ownerSync.push()
            refused = []
        } catch {
            guard case let .conflict(conflicts) = error else { throw error }
            refused = conflicts.map(\.id)
        }
        #expect(refused == ["b"])
        // Awaited here, not left to a task that could still connect as the process exits.
        await syncB.close()
        _ = try await TestServer.rows(target, "DROP OWNED BY \(role)")
        _ = try await TestServer.rows(target, "DROP ROLE \(role)")
    }
}
#endif
