#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// Prepared statements outlive the transactions they were prepared in, and a preparation
/// the server refused (an aborted transaction) is made again once it can be.
@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct PreparedRollbackTests {
    @Test("a statement prepared in a transaction that rolls back, or refused in an aborted one, runs by name afterwards")
    func preparedAcrossRollbacks() async throws {
        let target = try await TestServer.target("prepared_rollback")
        defer { Task { await TestServer.drop(target) } }
        let schema = SQL.quote(target.schema)
        try await target.withSession { session in
            try session.execute("CREATE SCHEMA \(schema)")
            try session.execute("CREATE TABLE \(schema).t (v int8)")
            let insert = "INSERT INTO \(schema).t VALUES ($1::int8)"
            let count = "SELECT count(*)::text FROM \(schema).t"
            // Prepared inside a transaction that rolls back.
            session.enqueue("BEGIN")
            session.enqueue(insert, [.integer(1)], reusable: true)
            try session.execute(count, reusable: true)
            try session.execute("ROLLBACK")
            // Refused inside an aborted transaction: a statement of its own, then one in a pipeline.
            session.enqueue("BEGIN")
            #expect(throws: PostgresStoreError.self) { try session.execute("SELECT 1/0") }
            let third = "SELECT max(v)::text FROM \(schema).t"
            #expect(throws: PostgresStoreError.self) { try session.execute(third, reusable: true) }
            #expect(throws: PostgresStoreError.self) {
                try session.execute(pipeline: [.init(insert, [.integer(9)], reusable: true), .init(third + " WHERE v > $1::int8", [.integer(0)], reusable: true)])
            }
            try session.execute("ROLLBACK")
            #expect(!session.broken)
            for value in 2...4 {
                session.enqueue(insert, [.integer(Int64(value))], reusable: true)
                #expect(try session.execute(count, reusable: true).string(0, 0) == String(value - 1))
                #expect(try session.execute(third, reusable: true).string(0, 0) == String(value))
                #expect(try session.execute(third + " WHERE v > $1::int8", [.integer(0)], reusable: true).string(0, 0) == String(value))
            }
            let names = try session.execute("SELECT count(*)::text, count(DISTINCT statement)::text FROM pg_prepared_statements")
            #expect(names.string(0, 0) == "4" && names.string(0, 1) == "4")
        }
    }
}
#endif
