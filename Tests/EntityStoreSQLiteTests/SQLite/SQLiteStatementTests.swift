import EntityStoreSQLite
import Foundation
import Testing

@Suite("SQLiteStatement: binding, stepping and reading")
struct SQLiteStatementTests {
    static let roundTripValues: [SQLiteValue] = [
        .null,
        .integer(Int64.min), .integer(Int64.max), .integer(0), .integer(-1),
        .real(0.1), .real(1e300), .real(-1e-300), .real(.greatestFiniteMagnitude), .real(-.infinity),
        .text(""), .text("plain"), .text("Grüße, 世界 👩‍👩‍👧‍👦"), .text("before\0after"), .text("\0"),
        .blob([]), .blob([0]), .blob([0, 1, 2, 255, 0]),
    ]

    @Test(arguments: roundTripValues)
    func valueRoundTripsThroughATable(value: SQLiteValue) throws {
        try withTemporaryDatabase { connection, _ in
            // No declared type: the column keeps every storage class as is.
            try connection.execute("CREATE TABLE t (v)")
            try connection.prepare("INSERT INTO t (v) VALUES (?)").run([value])
            let select = try connection.prepare("SELECT v, typeof(v) FROM t")
            #expect(try select.step())
            #expect(select.value(at: 0) == value)
            #expect(select.columnType(0) == value.kind)
            #expect(select.isNull(at: 0) == (value == .null))
            #expect(try !select.step())
        }
    }

    @Test func typedBindersAndReadersRoundTrip() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB, n)")
            let insert = try connection.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
            try insert.bind(int64: Int64.min, at: 1)
            try insert.bind(double: 0.1, at: 2)
            try insert.bind(text: "a\0b 🎉", at: 3)
            try insert.bind(blob: [9, 8, 7] as [UInt8], at: 4)
            try insert.bindNull(at: 5)
            #expect(try !insert.step())
            try insert.reset()
            try insert.bind(int64: Int64.max, at: 1)
            try insert.bind(double: 1e300, at: 2)
            try insert.bind(text: "", at: 3)
            try insert.bind(blob: Data(), at: 4)
            try insert.bind(int64: 5, at: 5)
            #expect(try !insert.step())

            let select = try connection.prepare("SELECT i, d, s, b, n, length(CAST(s AS BLOB)) FROM t ORDER BY rowid")
            #expect(select.columnCount == 6)
            #expect(select.columnName(0) == "i")
            #expect(select.columnName(4) == "n")
            #expect(try select.step())
            #expect(select.int64(at: 0) == Int64.min)
            #expect(select.double(at: 1) == 0.1)
            #expect(select.text(at: 2) == "a\0b 🎉")
            #expect(select.int64(at: 5) == Int64("a\0b 🎉".utf8.count))
            #expect(select.blob(at: 3) == [9, 8, 7])
            #expect(select.isNull(at: 4))
            #expect(select.text(at: 4) == "")
            #expect(select.blob(at: 4) == [])
            #expect(try select.step())
            #expect(select.int64(at: 0) == Int64.max)
            #expect(select.double(at: 1) == 1e300)
            #expect(select.text(at: 2) == "")
            #expect(select.columnType(2) == .text, "an empty string must not become NULL")
            #expect(select.blob(at: 3) == [])
            #expect(select.columnType(3) == .blob, "an empty blob must not become NULL")
            #expect(try !select.step())
        }
    }

    @Test func negativeZeroKeepsItsSign() throws {
        try withTemporaryDatabase { connection, _ in
            let select = try connection.prepare("SELECT ?1")
            try select.bind(double: -0.0, at: 1)
            #expect(try select.step())
            #expect(select.columnType(0) == .real)
            #expect(select.double(at: 0) == 0)
            #expect(select.double(at: 0).sign == .minus)
        }
    }

    /// SQLite stores integral REAL values as integers, which drops the sign of -0.0 in
    /// a column with REAL affinity; a column without declared type keeps the double.
    @Test func negativeZeroSurvivesOnlyWithoutRealAffinity() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (r REAL, v)")
            try connection.prepare("INSERT INTO t VALUES (?1, ?1)").run([.real(-0.0)])
            let select = try connection.prepare("SELECT r, v FROM t")
            #expect(try select.step())
            #expect(select.double(at: 0).sign == .plus, "REAL affinity loses the sign")
            #expect(select.columnType(1) == .real)
            #expect(select.double(at: 1).sign == .minus)
        }
    }

    @Test func veryLongTextAndBlobRoundTrip() throws {
        try withTemporaryDatabase { connection, _ in
            let text = String(repeating: "ab🎉", count: 50_000)
            let blob = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
            let select = try connection.prepare("SELECT ?1, ?2")
            try select.bind([.text(text), .blob(blob)])
            #expect(try select.step())
            #expect(select.text(at: 0) == text)
            #expect(select.blob(at: 1) == blob)
        }
    }

    @Test func bridgedStringIsBoundCorrectly() throws {
        try withTemporaryDatabase { connection, _ in
            // A String backed by an NSString takes the non-contiguous path.
            let bridged = NSString(string: "bridged ünïcode") as String
            let select = try connection.prepare("SELECT ?1")
            try select.bind(text: bridged, at: 1)
            #expect(try select.step())
            #expect(select.text(at: 0) == "bridged ünïcode")
        }
    }

    @Test func bindingTheWrongNumberOfValuesFails() throws {
        try withTemporaryDatabase { connection, _ in
            let statement = try connection.prepare("SELECT ?1, ?2")
            #expect(statement.parameterCount == 2)
            let error = #expect(throws: SQLiteError.self) { try statement.bind([.integer(1)]) }
            #expect(error?.code == SQLiteError.range)
            #expect(error?.sql == "SELECT ?1, ?2")
            #expect(error?.message.contains("2 parameters") == true)
        }
    }

    @Test func bindingOutOfRangeFails() throws {
        try withTemporaryDatabase { connection, _ in
            let statement = try connection.prepare("SELECT ?1")
            let error = #expect(throws: SQLiteError.self) { try statement.bind(int64: 1, at: 2) }
            #expect(error?.code == SQLiteError.range)
            #expect(error?.sql == "SELECT ?1")
        }
    }

    @Test func runResetsSoTheStatementCanRunAgain() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x INTEGER)")
            let insert = try connection.prepare("INSERT INTO t VALUES (?)")
            for value in 1...3 { try insert.run([.integer(Int64(value))]) }
            #expect(connection.changes == 1)
            #expect(connection.lastInsertRowID == 3)
            let rows = try connection.prepare("SELECT x FROM t ORDER BY x").rows()
            #expect(rows == [[.integer(1)], [.integer(2)], [.integer(3)]])
        }
    }

    @Test func runResetsAfterAFailure() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
            let insert = try connection.prepare("INSERT INTO t VALUES (?)")
            try insert.run([.integer(1)])
            #expect(throws: SQLiteError.self) { try insert.run([.integer(1)]) }
            try insert.run([.integer(2)])
            #expect(try connection.prepare("SELECT count(*) FROM t").rows() == [[.integer(2)]])
        }
    }

    @Test func forEachRowVisitsEveryRowWithBoundValues() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3), (4)")
            let select = try connection.prepare("SELECT x FROM t WHERE x > ? ORDER BY x")
            var seen: [Int64] = []
            try select.forEachRow([.integer(1)]) { seen.append($0.int64(at: 0)) }
            #expect(seen == [2, 3, 4])
            // Reset afterwards: it can run again at once.
            seen.removeAll()
            try select.forEachRow([.integer(3)]) { seen.append($0.int64(at: 0)) }
            #expect(seen == [4])
        }
    }

    @Test func forEachRowPropagatesTheBodyError() throws {
        try withTemporaryDatabase { connection, _ in
            let select = try connection.prepare("SELECT 1 UNION ALL SELECT 2")
            var visited = 0
            #expect(throws: TestAbort.self) {
                try select.forEachRow { _ in
                    visited += 1
                    throw TestAbort()
                }
            }
            #expect(visited == 1)
            #expect(try select.rows().count == 2)
        }
    }

    @Test func cachedStatementIsReusedWithBindingsCleared() throws {
        try withTemporaryDatabase { connection, _ in
            let first = try connection.cachedStatement("SELECT ?1")
            try first.bind(int64: 7, at: 1)
            #expect(try first.step())
            #expect(first.int64(at: 0) == 7)
            // Handed out again mid-iteration: reset and unbound.
            let second = try connection.cachedStatement("SELECT ?1")
            #expect(first === second)
            #expect(try second.step())
            #expect(second.isNull(at: 0))
            let other = try connection.cachedStatement("SELECT ?1 + 1")
            #expect(other !== first)
        }
    }

    @Test func prepareRejectsSeveralStatementsButAcceptsTrailingComments() throws {
        try withTemporaryDatabase { connection, _ in
            let error = #expect(throws: SQLiteError.self) {
                _ = try connection.prepare("SELECT 1; SELECT 2")
            }
            #expect(error?.code == SQLiteError.misuse)
            #expect(error?.sql == "SELECT 1; SELECT 2")
            let statement = try connection.prepare("SELECT 1; -- trailing comment\n  ")
            #expect(try statement.step())
            let empty = #expect(throws: SQLiteError.self) { _ = try connection.prepare("   ") }
            #expect(empty?.code == SQLiteError.misuse)
            #expect(throws: SQLiteError.self) { _ = try connection.prepare("") }
        }
    }
}
