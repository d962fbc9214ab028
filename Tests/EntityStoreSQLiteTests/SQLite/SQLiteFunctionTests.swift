import EntityStoreSQLite
import Foundation
import Testing

private struct Refused: Error, CustomStringConvertible {
    var description: String { "refused on purpose" }
}

@Suite("SQLiteConnection: scalar SQL functions and in-place text reads")
struct SQLiteFunctionTests {
    @Test("a function defined for a body is called with every storage class and removed afterwards")
    func functionLifetime() throws {
        try withTemporaryDatabase { connection, _ in
            let echo = try connection.withFunction(named: "echo", argumentCount: 1, { $0[0] }) {
                try SQLiteStatementTests.roundTripValues.map { value in
                    try connection.prepare("SELECT echo(?)").rows([value]).first?.first
                }
            }
            #expect(echo == SQLiteStatementTests.roundTripValues)
            let missing = #expect(throws: SQLiteError.self) { try connection.prepare("SELECT echo(1)") }
            #expect(missing?.message.contains("no such function") == true)
        }
    }

    @Test("an error thrown by the function fails the statement, with its description")
    func functionError() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (v); INSERT INTO t VALUES (1), (2);")
            let error = try connection.withFunction(named: "refuse", argumentCount: 1, { _ in throw Refused() }) {
                #expect(throws: SQLiteError.self) { try connection.execute("UPDATE t SET v = refuse(v)") }
            }
            #expect(error?.message == "refused on purpose")
            #expect(try connection.prepare("SELECT v FROM t ORDER BY v").rows() == [[.integer(1)], [.integer(2)]])
        }
    }

    @Test("the schema cannot call a function defined this way")
    func directOnly() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.withFunction(named: "twice", argumentCount: 1, { arguments in
                guard case let .integer(value) = arguments[0] else { return .null }
                return .integer(value * 2)
            }) {
                #expect(try connection.prepare("SELECT twice(21)").rows() == [[.integer(42)]])
                try connection.execute("CREATE TABLE t (v); CREATE VIEW doubled AS SELECT twice(v) FROM t; INSERT INTO t VALUES (1);")
                #expect(throws: SQLiteError.self) { try connection.prepare("SELECT * FROM doubled").rows() }
            }
        }
    }

    @Test("text is read in place, embedded NULs included")
    func unsafeText() throws {
        try withTemporaryDatabase { connection, _ in
            let statement = try connection.prepare("SELECT ?, NULL")
            try statement.bind(text: "a\0b ✨", at: 1)
            #expect(try statement.step())
            #expect(statement.withUnsafeText(at: 0) { Array($0) } == Array("a\0b ✨".utf8))
            #expect(statement.withUnsafeText(at: 1) { $0.count } == 0)
        }
    }

    @Test("total changes count rows, not schema changes")
    func totalChanges() throws {
        try withTemporaryDatabase { connection, _ in
            let before = connection.totalChanges
            try connection.execute("CREATE TABLE t (v); ALTER TABLE t ADD COLUMN w;")
            #expect(connection.totalChanges == before)
            try connection.execute("INSERT INTO t (v) VALUES (1), (2); UPDATE t SET w = v;")
            #expect(connection.totalChanges == before + 4)
        }
    }
}
