internal import CSQLite
import Foundation

/// A compiled SQL statement: bind parameters, step through rows, read columns.
///
/// Not `Sendable`; use it on the thread of its `SQLiteConnection`. It keeps the
/// connection's handle alive and is finalized when released. The typed binders and
/// column readers do not allocate beyond the value they return, so a statement can
/// be reused for millions of rows.
package final class SQLiteStatement {
    let stmt: OpaquePointer
    private let handle: SQLiteHandle

    init(_ stmt: OpaquePointer, handle: SQLiteHandle) {
        self.stmt = stmt
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(stmt)
    }

    /// The SQL text the statement was compiled from.
    package var sql: String {
        guard let text = sqlite3_sql(stmt) else { return "" }
        return String(cString: text)
    }

    /// The number of `?` parameters in the statement.
    package var parameterCount: Int32 { sqlite3_bind_parameter_count(stmt) }

    /// An error for `rc`, with SQLite's message and this statement's SQL.
    func error(_ rc: Int32) -> SQLiteError {
        handle.error(rc, sql: sql)
    }

    @inline(__always)
    private func check(_ rc: Int32) throws(SQLiteError) {
        if rc != SQLITE_OK { throw error(rc) }
    }

    // MARK: Binding (parameter indices start at 1)

    /// Binds a 64-bit integer to the parameter at `index` (1-based).
    package func bind(int64 value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(stmt, index, value))
    }

    /// Binds a double to the parameter at `index` (1-based).
    package func bind(double value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(stmt, index, value))
    }

    /// Binds UTF-8 text, embedded NULs included, to the parameter at `index` (1-based).
    package func bind(text value: String, at index: Int32) throws(SQLiteError) {
        let stmt = stmt
        let rc = value.utf8.withContiguousStorageIfAvailable { buffer in
            Self.bindText(stmt, index, buffer)
        } ?? {
            var copy = value
            return copy.withUTF8 { Self.bindText(stmt, index, $0) }
        }()
        try check(rc)
    }

    private static func bindText(_ stmt: OpaquePointer, _ index: Int32, _ buffer: UnsafeBufferPointer<UInt8>) -> Int32 {
        // A nil pointer would bind NULL, so an empty string gets a valid empty C string.
        guard let base = buffer.baseAddress, !buffer.isEmpty else {
            return es_bind_text_transient(stmt, index, "", 0)
        }
        return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
            es_bind_text_transient(stmt, index, $0, sqlite3_uint64(buffer.count))
        }
    }

    /// Binds raw bytes to the parameter at `index` (1-based); an empty blob stays a blob, not NULL.
    package func bind(blob value: some ContiguousBytes, at index: Int32) throws(SQLiteError) {
        let stmt = stmt
        let rc = value.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                // A nil pointer would bind NULL.
                return sqlite3_bind_zeroblob(stmt, index, 0)
            }
            return es_bind_blob_transient(stmt, index, base, sqlite3_uint64(buffer.count))
        }
        try check(rc)
    }

    /// Binds raw bytes to the parameter at `index` (1-based); an empty array stays a blob, not NULL.
    package func bind(blob value: [UInt8], at index: Int32) throws(SQLiteError) {
        let stmt = stmt
        let rc = value.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                return sqlite3_bind_zeroblob(stmt, index, 0)
            }
            return es_bind_blob_transient(stmt, index, base, sqlite3_uint64(buffer.count))
        }
        try check(rc)
    }

    /// Binds SQL `NULL` to the parameter at `index` (1-based).
    package func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(stmt, index))
    }

    /// Binds any value to the parameter at `index` (1-based).
    package func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let int): try bind(int64: int, at: index)
        case .real(let double): try bind(double: double, at: index)
        case .text(let text): try bind(text: text, at: index)
        case .blob(let bytes): try bind(blob: bytes, at: index)
        }
    }

    /// Binds `values` to parameters 1...n.
    ///
    /// - Throws: `SQLITE_RANGE` unless there is exactly one value per parameter.
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        guard values.count == Int(parameterCount) else {
            throw SQLiteError(
                extendedCode: SQLITE_RANGE,
                message: "the statement has \(parameterCount) parameters but \(values.count) values were given",
                sql: sql
            )
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Sets every parameter back to NULL.
    package func clearBindings() {
        sqlite3_clear_bindings(stmt)
    }

    // MARK: Execution

    /// Advances to the next row.
    ///
    /// - Returns: `true` when a row is available to read, `false` when the statement is done.
    /// - Throws: the failure (constraint, I/O, corruption ...) with this statement's SQL.
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw error(rc)
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    ///
    /// - Throws: the error of the last step, if it failed (SQLite reports it again here).
    package func reset() throws(SQLiteError) {
        try check(sqlite3_reset(stmt))
    }

    /// Rewinds the statement when its last step's error has already been reported.
    func resetIgnoringError() {
        sqlite3_reset(stmt)
    }

    /// Binds `values`, steps until done (discarding rows) and resets, leaving the
    /// statement ready for the next run.
    package func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        resetIgnoringError()
        do {
            try bind(values)
            while try step() {}
        } catch {
            resetIgnoringError()
            throw error
        }
        resetIgnoringError()
    }

    /// Binds `values` and calls `body` once per result row, with the statement
    /// positioned on that row; the statement is reset afterwards, also on failure.
    package func forEachRow(
        _ values: [SQLiteValue] = [], _ body: (SQLiteStatement) throws -> Void
    ) throws {
        resetIgnoringError()
        defer { resetIgnoringError() }
        try bind(values)
        while try step() {
            try body(self)
        }
    }

    /// Binds `values` and returns every result row as values, then resets.
    ///
    /// - Complexity: O(rows × columns); meant for small results (pragmas, metadata).
    package func rows(_ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        resetIgnoringError()
        defer { resetIgnoringError() }
        try bind(values)
        var rows: [[SQLiteValue]] = []
        let count = columnCount
        while try step() {
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(count))
            for column in 0..<count { row.append(value(at: column)) }
            rows.append(row)
        }
        return rows
    }
}
