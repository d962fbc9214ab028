import EntityStoreSQLite
import Testing

@Suite("SQLiteConnection: transactions and savepoints")
struct SQLiteTransactionTests {
    private func count(_ connection: SQLiteConnection) throws -> Int64 {
        let statement = try connection.prepare("SELECT count(*) FROM t")
        _ = try statement.step()
        return statement.int64(at: 0)
    }

    @Test(arguments: [SQLiteConnection.TransactionKind.deferred, .immediate, .exclusive])
    func commitsWhenTheBodyReturns(kind: SQLiteConnection.TransactionKind) throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x)")
            let result = try connection.transaction(kind) {
                #expect(connection.isInTransaction)
                try connection.execute("INSERT INTO t VALUES (1), (2)")
                return "done"
            }
            #expect(result == "done")
            #expect(!connection.isInTransaction)
            #expect(try count(connection) == 2)
        }
    }

    @Test func rollsBackWhenTheBodyThrows() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x)")
            #expect(throws: TestAbort.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (1)")
                    throw TestAbort()
                }
            }
            #expect(!connection.isInTransaction)
            #expect(try count(connection) == 0)
        }
    }

    @Test func rollsBackWhenCommitFails() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.setPragma("foreign_keys", "ON")
            try connection.execute("""
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE t (x INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
                """)
            let error = #expect(throws: SQLiteError.self) {
                try connection.transaction {
                    // Deferred: the violation is only detected by COMMIT.
                    try connection.execute("INSERT INTO t VALUES (99)")
                }
            }
            #expect(error?.isConstraint == true)
            #expect(error?.sql == "COMMIT")
            #expect(!connection.isInTransaction)
            #expect(try count(connection) == 0)
        }
    }

    @Test func nestedTransactionsUseSavepoints() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x)")
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1)")
                #expect(throws: TestAbort.self) {
                    try connection.transaction {
                        try connection.execute("INSERT INTO t VALUES (2)")
                        try connection.transaction {
                            try connection.execute("INSERT INTO t VALUES (3)")
                        }
                        throw TestAbort()
                    }
                }
                // Only the failed inner level was undone; the outer one goes on.
                #expect(connection.isInTransaction)
                #expect(try count(connection) == 1)
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (4)")
                }
            }
            let rows = try connection.prepare("SELECT x FROM t ORDER BY x").rows()
            #expect(rows == [[.integer(1)], [.integer(4)]])
        }
    }

    @Test func anOuterRollbackUndoesReleasedSavepoints() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x)")
            #expect(throws: TestAbort.self) {
                try connection.transaction {
                    try connection.transaction {
                        try connection.execute("INSERT INTO t VALUES (1)")
                    }
                    throw TestAbort()
                }
            }
            #expect(try count(connection) == 0)
        }
    }

    @Test func beginFailsInsideAManualTransactionIsAvoided() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.execute("CREATE TABLE t (x)")
            try connection.execute("BEGIN")
            // Already in a transaction opened by hand: a savepoint, not a second BEGIN.
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1)")
            }
            #expect(connection.isInTransaction)
            try connection.execute("ROLLBACK")
            #expect(try count(connection) == 0)
        }
    }
}
