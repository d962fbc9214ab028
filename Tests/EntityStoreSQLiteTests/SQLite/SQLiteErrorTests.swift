import EntityStoreCodec
import EntityStoreSQLite
import Testing

@Suite("SQLiteError and identifier quoting")
struct SQLiteErrorTests {
    @Test func syntaxErrorCarriesSQLAndMessage() throws {
        try withTemporaryDatabase { connection, _ in
            let sql = "SELEKT 1"
            let error = #expect(throws: SQLiteError.self) { _ = try connection.prepare(sql) }
            #expect(error?.code == SQLiteError.error)
            #expect(error?.sql == sql)
            #expect(error?.message.contains("syntax error") == true)
            #expect(error?.description.contains(sql) == true)
            #expect(error?.description.contains("syntax error") == true)
        }
    }

    @Test func executeErrorCarriesTheScript() throws {
        try withTemporaryDatabase { connection, _ in
            let script = "CREATE TABLE a (x); INSERT INTO missing VALUES (1)"
            let error = #expect(throws: SQLiteError.self) { try connection.execute(script) }
            #expect(error?.sql == script)
            #expect(error?.message.contains("no such table: missing") == true)
            // The statements before the failure ran (execute is not a transaction).
            let created = try connection.tableExists("a")
            #expect(created)
        }
    }

    @Test func constraintViolationIsClassified() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
            let insert = try connection.prepare("INSERT INTO t (name) VALUES (?)")
            try insert.run([.text("a")])
            let unique = #expect(throws: SQLiteError.self) { try insert.run([.text("a")]) }
            #expect(unique?.isConstraint == true)
            #expect(unique?.extendedCode == 2067, "SQLITE_CONSTRAINT_UNIQUE")
            #expect(unique?.message.contains("UNIQUE constraint failed: t.name") == true)
            #expect(unique?.sql == "INSERT INTO t (name) VALUES (?)")
            let notNull = #expect(throws: SQLiteError.self) { try insert.run([.null]) }
            #expect(notNull?.isConstraint == true)
            #expect(notNull?.extendedCode == 1299, "SQLITE_CONSTRAINT_NOTNULL")
            #expect(notNull?.isCorrupt == false)
            #expect(notNull?.isBusy == false)
        }
    }

    @Test func helpersFollowThePrimaryCode() {
        let full = SQLiteError(extendedCode: SQLiteError.full, message: "database or disk is full")
        #expect(full.isFull && !full.isCorrupt && !full.isIOError)
        #expect(full.description == "SQLite error 13: database or disk is full")
        // SQLITE_IOERR_WRITE = SQLITE_IOERR | (3 << 8)
        let ioWrite = SQLiteError(extendedCode: SQLiteError.ioError | (3 << 8), message: "disk I/O error", sql: "COMMIT")
        #expect(ioWrite.code == SQLiteError.ioError)
        #expect(ioWrite.isIOError)
        #expect(ioWrite.description == "SQLite error 10 (extended 778): disk I/O error — in: COMMIT")
        #expect(SQLiteError(extendedCode: SQLiteError.corrupt, message: "").isCorrupt)
        #expect(SQLiteError(extendedCode: SQLiteError.notADatabase, message: "").isCorrupt)
        #expect(SQLiteError(extendedCode: SQLiteError.locked, message: "").isBusy)
    }

    @Test(arguments: [
        ("plain", "\"plain\""),
        ("", "\"\""),
        ("with space", "\"with space\""),
        ("a\"b", "\"a\"\"b\""),
        ("\"", "\"\"\"\""),
        ("Ünï 🎉", "\"Ünï 🎉\""),
    ])
    func quoteIdentifierDoublesQuotes(name: String, expected: String) {
        #expect(quoteIdentifier(name) == expected)
    }

    @Test func quotedIdentifiersWorkAsTableAndColumnNames() throws {
        try withTemporaryDatabase { connection, _ in
            let table = "weird \"table\"; DROP TABLE x; --"
            let column = "col\"umn"
            try connection.execute("CREATE TABLE \(quoteIdentifier(table)) (\(quoteIdentifier(column)) INTEGER)")
            try connection.prepare("INSERT INTO \(quoteIdentifier(table)) VALUES (5)").run()
            #expect(try connection.tableExists(table))
            let select = try connection.prepare("SELECT \(quoteIdentifier(column)) FROM \(quoteIdentifier(table))")
            #expect(select.columnName(0) == column)
            #expect(try select.rows() == [[.integer(5)]])
        }
    }
}
