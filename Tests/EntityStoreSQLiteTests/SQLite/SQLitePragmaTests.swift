import EntityStoreSQLite
import Foundation
import Testing

@Suite("SQLiteConnection: pragmas, header fields and schema")
struct SQLitePragmaTests {
    @Test func readsAndSetsPragmas() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.setPragma("journal_mode", "WAL")
            #expect(try connection.pragma("journal_mode") == .text("wal"))
            try connection.setPragma("main.synchronous", "1")
            #expect(try connection.pragma("main.synchronous") == .integer(1))
            #expect(try connection.pragma("page_size")?.kind == .integer)
        }
    }

    @Test func headerFieldsPersistAcrossConnections() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("header.sqlite").path
            let writer = try SQLiteConnection(path: path, mode: .readWriteCreate)
            #expect(try writer.applicationID == 0)
            #expect(try writer.userVersion == 0)
            try writer.setApplicationID(entityStoreApplicationID)
            try writer.setUserVersion(-7)
            try writer.close()

            let reader = try SQLiteConnection(path: path, mode: .readOnly)
            #expect(try reader.applicationID == entityStoreApplicationID)
            #expect(try reader.userVersion == -7)
        }
    }

    @Test func applicationIDSpellsEnSt() {
        let bytes = withUnsafeBytes(of: entityStoreApplicationID.bigEndian) { Array($0) }
        #expect(String(decoding: bytes, as: UTF8.self) == "EnSt")
    }

    @Test(arguments: ["", "1abc", "journal_mode; DROP TABLE t", "a.b.c", "main.", "jöurnal"])
    func invalidPragmaNamesAreRejected(name: String) throws {
        try withTemporaryDatabase { connection, _ in
            let readError = #expect(throws: SQLiteError.self) { _ = try connection.pragma(name) }
            #expect(readError?.code == SQLiteError.misuse)
            #expect(readError?.message.contains("invalid pragma name") == true)
            let writeError = #expect(throws: SQLiteError.self) { try connection.setPragma(name, "1") }
            #expect(writeError?.code == SQLiteError.misuse)
        }
    }

    @Test func pragmaValuesCannotInjectSQL() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x)")
            // Quoted as a string literal; SQLite then ignores the unknown mode.
            try connection.setPragma("journal_mode", "WAL; DROP TABLE t")
            let stillThere = try connection.tableExists("t")
            #expect(stillThere)
        }
    }

    @Test func connectionsDoNotTrustTheSchema() throws {
        try withTemporaryDatabase { connection, _ in
            let trusted = try connection.pragma("trusted_schema")
            #expect(trusted == .integer(0))
        }
    }

    @Test func unknownPragmaReadsAsNil() throws {
        try withTemporaryDatabase { connection, _ in
            let value = try connection.pragma("no_such_pragma")
            #expect(value == nil)
        }
    }

    @Test func tableExistsMatchesTablesOnly() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE items (x); CREATE VIEW items_view AS SELECT x FROM items")
            let table = try connection.tableExists("items")
            let caseInsensitive = try connection.tableExists("ITEMS")
            let view = try connection.tableExists("items_view")
            let missing = try connection.tableExists("nothing")
            #expect(table && caseInsensitive)
            #expect(!view && !missing)
        }
    }

    @Test func integrityCheckOfAGoodFileIsEmpty() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("""
                CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                INSERT INTO t (name) SELECT 'name ' || i FROM n;
                """)
            #expect(try connection.integrityCheck() == [])
        }
    }
}
