#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// A server may speak another language (`lc_messages`): what the client decides from an
/// error must not hang on its message's words.
@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct LocalizedMessageTests {
    @Test("a prepared statement whose result columns changed type renews the connection when the server's messages are in German")
    func staleStatementInGerman() async throws {
        let target = try await TestServer.target("prepared_german")
        defer { Task { await TestServer.drop(target) } }
        let schema = SQL.quote(target.schema)
        let outcome: String? = try await target.withSession { session in
            // Needs a superuser and the de_DE.UTF-8 locale on the server's machine.
            do { try session.execute("SET lc_messages = 'de_DE.UTF-8'") } catch { return nil }
            try session.execute("CREATE SCHEMA \(schema)")
            try session.execute("CREATE TABLE \(schema).t (v int8)")
            try session.execute("INSERT INTO \(schema).t VALUES (1)")
            let select = "SELECT v FROM \(schema).t"
            _ = try session.execute(select, reusable: true)
            try session.execute("ALTER TABLE \(schema).t ALTER COLUMN v TYPE text")
            var outcomes: [String] = []
            // The stale statement fails once, then the connection is renewed (not used again).
            for _ in 0..<2 where !session.broken {
                do {
                    _ = try session.execute(select, reusable: true)
                    outcomes.append("ran")
                } catch {
                    outcomes.append(String(describing: error))
                }
            }
            return outcomes.joined(separator: " | ") + (session.broken ? "" : " | the connection was kept")
        }
        guard let outcome else {
            print("LocalizedMessageTests: skipped, the server has no de_DE.UTF-8 locale")
            return
        }
        #expect(outcome.contains("prepared statement no longer fits") && !outcome.contains("kept"), "\(outcome)")
    }
}
#endif
