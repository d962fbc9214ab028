internal import CSQLite

/// A connection to one SQLite database file.
///
/// Not `Sendable` and not thread-safe: the connection is opened with
/// `SQLITE_OPEN_NOMUTEX`, so it and its statements must be used from one thread (or
/// one isolation domain) at a time. Every `sqlite3_*` call of the package goes
/// through this type and ``SQLiteStatement``.
package final class SQLiteConnection {
    /// How to open the database file.
    package enum OpenMode: Sendable {
        /// Read only; the file must exist.
        case readOnly
        /// Read and write; the file must exist.
        case readWrite
        /// Read and write; the file is created when missing.
        case readWriteCreate
    }

    /// The path the connection was opened with; for a ``privateCopy(of:)``, the path of
    /// the file copied, which errors name (the copy itself has none).
    package let path: String
    /// Whether this connection holds a ``privateCopy(of:)``, which no other connection
    /// can open: never open ``path`` to read the same data.
    package let isPrivateCopy: Bool
    let handle: SQLiteHandle
    private var statementCache: [String: SQLiteStatement] = [:]
    /// Depth of nested ``transaction(_:_:)`` calls, used to name savepoints.
    var transactionDepth = 0

    /// Opens the database at `path` and verifies that it is readable as SQLite.
    ///
    /// SQLite opens files lazily, so the header is read right away: a file that is
    /// not a database fails here with `SQLITE_NOTADB` instead of at the first query.
    /// - Throws: `SQLITE_CANTOPEN` for a missing file (unless creating) or a
    ///   directory, `SQLITE_NOTADB`/`SQLITE_CORRUPT` for a file that is not a database.
    package convenience init(path: String, mode: OpenMode) throws(SQLiteError) {
        try self.init(opening: path, mode: mode, name: path)
    }

    /// Opens the database at `path` (the empty path: a private temporary database),
    /// naming it `name` in errors.
    init(opening path: String, mode: OpenMode, name: String) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteHandle.error(rc, db: db, sql: nil)
            // A handle is returned even on failure and must be released.
            sqlite3_close_v2(db)
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        // Snapshot files come from outside: functions named in their schema (views,
        // triggers, defaults) must not run with side effects.
        let trustRC = es_db_config_int(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nil)
        guard trustRC == SQLITE_OK else {
            let error = SQLiteHandle.error(trustRC, db: db, sql: nil)
            sqlite3_close_v2(db)
            throw error
        }
        self.path = name
        self.isPrivateCopy = path.isEmpty
        self.handle = SQLiteHandle(db)
        do {
            _ = try prepare("SELECT count(*) FROM sqlite_schema").step()
        } catch {
            // The probe is an implementation detail, so the error names no SQL.
            // The handle closes when `self` is released.
            throw SQLiteError(extendedCode: error.extendedCode, message: error.message)
        }
    }

    /// Runs a script of one or more statements, such as a migration.
    ///
    /// - Throws: the first failing statement's error, carrying the whole script as `sql`.
    /// - Complexity: that of the statements in the script.
    package func execute(_ sql: String) throws(SQLiteError) {
        let db = try handle.open(sql: sql)
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard rc == SQLITE_OK else {
            var error = handle.error(rc, sql: sql)
            if let errorMessage {
                error = SQLiteError(extendedCode: error.extendedCode, message: String(cString: errorMessage), sql: sql)
            }
            throw error
        }
    }

    /// Compiles one statement. The caller owns it; it is finalized when released.
    ///
    /// - Throws: a syntax or schema error carrying `sql`, or a misuse error if `sql`
    ///   holds more than one statement (use ``execute(_:)`` for scripts).
    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try prepare(sql, persistent: false)
    }

    /// Returns the statement for `sql` from the connection's cache, compiling it on
    /// first use. It is reset and its bindings are cleared before being handed out.
    ///
    /// Use it for statements run many times; the returned object stays owned by the
    /// cache, so do not keep it across another `cachedStatement` call for the same SQL.
    /// - Complexity: O(length of `sql`) for the lookup once cached.
    package func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statementCache[sql] {
            statement.resetIgnoringError()
            statement.clearBindings()
            return statement
        }
        let statement = try prepare(sql, persistent: true)
        statementCache[sql] = statement
        return statement
    }

    private func prepare(_ sql: String, persistent: Bool) throws(SQLiteError) -> SQLiteStatement {
        let db = try handle.open(sql: sql)
        let flags = UInt32(persistent ? SQLITE_PREPARE_PERSISTENT : 0)
        var utf8 = sql
        // withUTF8 rethrows untyped errors, so the typed result travels out as a Result.
        let result = utf8.withUTF8 { buffer -> Result<SQLiteStatement, SQLiteError> in
            Result { () throws(SQLiteError) -> SQLiteStatement in
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    throw .misuse("cannot prepare an empty statement", sql: sql)
                }
                let start = UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
                var stmt: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v3(db, start, Int32(clamping: buffer.count), flags, &stmt, &tail)
                guard rc == SQLITE_OK else {
                    sqlite3_finalize(stmt)
                    throw handle.error(rc, sql: sql)
                }
                guard let stmt else { throw .misuse("the SQL contains no statement", sql: sql) }
                let statement = SQLiteStatement(stmt, handle: handle)
                if let tail, tail - start < buffer.count {
                    try rejectTrailingStatement(db: db, tail: tail, remaining: buffer.count - (tail - start), sql: sql)
                }
                return statement
            }
        }
        return try result.get()
    }

    /// Fails if text after the first statement holds another statement: it would be
    /// silently ignored by `sqlite3_prepare`. Trailing whitespace and comments are fine.
    private func rejectTrailingStatement(
        db: OpaquePointer, tail: UnsafePointer<CChar>, remaining: Int, sql: String
    ) throws(SQLiteError) {
        var extra: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, tail, Int32(clamping: remaining), 0, &extra, nil)
        sqlite3_finalize(extra)
        guard rc == SQLITE_OK, extra == nil else {
            throw .misuse("prepare accepts a single statement; use execute for scripts", sql: sql)
        }
    }

    /// The rowid of the most recent successful INSERT on this connection (0 if none).
    package var lastInsertRowID: Int64 {
        guard let db = handle.db else { return 0 }
        return sqlite3_last_insert_rowid(db)
    }

    /// The number of rows changed by the most recent INSERT, UPDATE or DELETE.
    package var changes: Int {
        guard let db = handle.db else { return 0 }
        return Int(sqlite3_changes64(db))
    }

    /// The number of rows changed by INSERT, UPDATE and DELETE statements since the
    /// connection opened (schema changes such as `ALTER TABLE` count none).
    package var totalChanges: Int64 {
        guard let db = handle.db else { return 0 }
        return sqlite3_total_changes64(db)
    }

    /// The most columns a table may have on this connection (`SQLITE_LIMIT_COLUMN`, 2,000
    /// unless SQLite was built otherwise).
    package var columnLimit: Int {
        guard let db = handle.db else { return 2_000 }
        return Int(sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1))
    }

    /// Whether the connection is inside a transaction (explicit or from ``transaction(_:_:)``).
    package var isInTransaction: Bool {
        guard let db = handle.db else { return false }
        return sqlite3_get_autocommit(db) == 0
    }

    /// Whether ``close()`` has succeeded.
    package var isClosed: Bool { handle.db == nil }

    /// Finalizes the cached statements and closes the connection. Closing twice is a no-op.
    ///
    /// - Throws: `SQLITE_BUSY` while statements from ``prepare(_:)`` (or cached ones
    ///   kept by the caller) are still alive; the connection then stays open and is
    ///   closed when the last of them and the connection are released.
    package func close() throws(SQLiteError) {
        statementCache.removeAll()
        try handle.close()
    }
}
