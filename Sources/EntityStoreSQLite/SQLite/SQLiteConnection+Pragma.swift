internal import CSQLite

/// Pragmas, header fields and schema inspection.
extension SQLiteConnection {
    /// Reads a pragma, for example `"journal_mode"` or `"main.page_count"`.
    ///
    /// - Returns: the first column of the first row, or `nil` if the pragma returns no row.
    /// - Throws: a misuse error if `name` is not a plain (optionally schema-qualified) identifier.
    package func pragma(_ name: String) throws(SQLiteError) -> SQLiteValue? {
        try Self.validatePragmaName(name)
        let statement = try prepare("PRAGMA \(name)")
        return try statement.step() ? statement.value(at: 0) : nil
    }

    /// Sets a pragma, for example `setPragma("journal_mode", "WAL")`.
    ///
    /// A `value` that is a plain word or number is passed as is; anything else is
    /// quoted as an SQL string literal, so a value can never inject SQL.
    package func setPragma(_ name: String, _ value: String) throws(SQLiteError) {
        try Self.validatePragmaName(name)
        let statement = try prepare("PRAGMA \(name) = \(Self.pragmaLiteral(value))")
        while try statement.step() {}
    }

    /// Copies every frame of the write-ahead log into the database and truncates the log
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`); a no-op in rollback mode.
    /// - Returns: false if another connection's read or write kept part of the log.
    package func checkpointCompletely() throws(SQLiteError) -> Bool {
        let statement = try prepare("PRAGMA wal_checkpoint(TRUNCATE)")
        guard try statement.step() else { return true }
        return statement.int64(at: 0) == 0
    }

    /// Makes closing leave the write-ahead log and shared-memory files in place
    /// (`SQLITE_FCNTL_PERSIST_WAL`). SQLite deletes them by name when the last connection
    /// closes; for a connection whose file was replaced under the same path, those names
    /// belong to the new file's log.
    package func keepLogOnClose() throws(SQLiteError) {
        let db = try handle.open()
        var on: Int32 = 1
        let rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
        guard rc == SQLITE_OK else { throw handle.error(rc, sql: nil) }
    }

    /// The database's size in bytes (pages times page size, the write-ahead log included).
    package var fileBytes: Int64 {
        get throws(SQLiteError) {
            guard case let .integer(pages)? = try pragma("page_count"), case let .integer(size)? = try pragma("page_size") else { return 0 }
            return pages.multipliedReportingOverflow(by: size).overflow ? .max : pages * size
        }
    }

    /// The `application_id` header field, which identifies the file's format (0 if unset).
    package var applicationID: Int32 {
        get throws(SQLiteError) { try headerInteger("application_id") }
    }

    /// Sets the `application_id` header field.
    package func setApplicationID(_ id: Int32) throws(SQLiteError) {
        try setPragma("application_id", String(id))
    }

    /// The `user_version` header field, used as the format version (0 if unset).
    package var userVersion: Int32 {
        get throws(SQLiteError) { try headerInteger("user_version") }
    }

    /// Sets the `user_version` header field; transactional like any other write.
    package func setUserVersion(_ version: Int32) throws(SQLiteError) {
        try setPragma("user_version", String(version))
    }

    /// Whether a table named `name` exists in the main schema (case-insensitive, as in SQL).
    package func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        let statement = try cachedStatement(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE"
        )
        defer { statement.resetIgnoringError() }
        try statement.bind(text: name, at: 1)
        return try statement.step()
    }

    /// Runs `PRAGMA integrity_check`.
    ///
    /// - Returns: the problems found; empty when the database is intact.
    /// - Complexity: O(size of the database): it reads every page.
    package func integrityCheck() throws(SQLiteError) -> [String] {
        let statement = try prepare("PRAGMA integrity_check")
        var problems: [String] = []
        while try statement.step() {
            problems.append(statement.text(at: 0))
        }
        return problems == ["ok"] ? [] : problems
    }

    private func headerInteger(_ name: String) throws(SQLiteError) -> Int32 {
        guard case .integer(let value) = try pragma(name) else { return 0 }
        // Both header fields are stored as 32-bit signed integers.
        return Int32(truncatingIfNeeded: value)
    }

    /// Accepts `pragma` or `schema.pragma` made of ASCII letters, digits and underscores.
    private static func validatePragmaName(_ name: String) throws(SQLiteError) {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        let valid = (1...2).contains(parts.count) && parts.allSatisfy { part in
            guard let first = part.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            return part.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0)) }
        }
        guard valid else { throw .misuse("invalid pragma name '\(name)'") }
    }

    private static func pragmaLiteral(_ value: String) -> String {
        let isPlain = !value.isEmpty && value.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_+-.".unicodeScalars.contains($0))
        }
        if isPlain { return value }
        var literal = "'"
        for scalar in value.unicodeScalars {
            if scalar == "'" { literal.unicodeScalars.append("'") }
            literal.unicodeScalars.append(scalar)
        }
        return literal + "'"
    }
}
