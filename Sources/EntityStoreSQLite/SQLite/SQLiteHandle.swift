internal import CSQLite

/// Owns the `sqlite3*` of one connection.
///
/// The connection and every statement prepared on it hold this object, so the C
/// handle outlives all statements whatever order Swift releases them in: statements
/// can never point into a closed connection.
final class SQLiteHandle {
    /// The open connection, or `nil` once ``close()`` succeeded.
    private(set) var db: OpaquePointer?

    init(_ db: OpaquePointer) {
        self.db = db
    }

    /// Closes the connection; fails with `SQLITE_BUSY` while statements are still alive.
    ///
    /// Uses `sqlite3_close` rather than `_v2` so an explicit close reports leftover
    /// statements instead of silently turning the connection into a zombie.
    func close() throws(SQLiteError) {
        guard let db else { return }
        let rc = sqlite3_close(db)
        guard rc == SQLITE_OK else {
            throw SQLiteError(extendedCode: rc, message: "cannot close the database: statements prepared on it are still alive")
        }
        self.db = nil
    }

    /// The connection handle, or a misuse error once it is closed.
    func open(sql: String? = nil) throws(SQLiteError) -> OpaquePointer {
        guard let db else { throw .misuse("the database connection is closed", sql: sql) }
        return db
    }

    /// Builds an error from the connection's current error state.
    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        SQLiteHandle.error(rc, db: db, sql: sql)
    }

    /// Builds an error from a connection's current error state, falling back to the
    /// generic text of `rc` when there is no handle (allocation failure on open).
    static func error(_ rc: Int32, db: OpaquePointer?, sql: String?) -> SQLiteError {
        guard let db else {
            return SQLiteError(extendedCode: rc, message: String(cString: sqlite3_errstr(rc)), sql: sql)
        }
        let extended = sqlite3_extended_errcode(db)
        // errmsg describes the most recent failure; if it belongs to another code
        // (the reported rc came from somewhere else), prefer the generic text of rc.
        let matches = extended & 0xFF == rc & 0xFF
        let message = matches ? String(cString: sqlite3_errmsg(db)) : String(cString: sqlite3_errstr(rc))
        return SQLiteError(extendedCode: matches ? extended : rc, message: message, sql: sql)
    }

    deinit {
        // Every statement holding this handle is gone, so this cannot fail with BUSY.
        if let db { sqlite3_close_v2(db) }
    }
}
