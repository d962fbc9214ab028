internal import CSQLite

/// A failure reported by SQLite, with the result codes, SQLite's message and the failing SQL.
///
/// `code` is the primary result code (the low byte of `extendedCode`); compare it with
/// the static constants below or use the helpers such as ``isCorrupt``.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The primary result code, for example ``constraint`` or ``corrupt``.
    public let code: Int32
    /// The extended result code, for example `SQLITE_CONSTRAINT_UNIQUE` (2067).
    public let extendedCode: Int32
    /// SQLite's own explanation, as returned by `sqlite3_errmsg` when the call failed.
    public let message: String
    /// The statement or script that failed, when the failure belongs to one.
    public let sql: String?

    /// Creates an error from an extended result code; the primary code is derived from it.
    package init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.code = extendedCode & 0xFF
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// An API misuse detected before reaching SQLite (closed connection, bad argument).
    package static func misuse(_ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_MISUSE, message: message, sql: sql)
    }

    /// `SQLITE_ERROR`: generic error, typically an SQL syntax error or a missing table.
    public static let error: Int32 = SQLITE_ERROR
    /// `SQLITE_BUSY`: the database file is locked by another connection.
    public static let busy: Int32 = SQLITE_BUSY
    /// `SQLITE_LOCKED`: a table is locked by another statement of the same connection.
    public static let locked: Int32 = SQLITE_LOCKED
    /// `SQLITE_READONLY`: an attempt to write to a read-only database.
    public static let readOnly: Int32 = SQLITE_READONLY
    /// `SQLITE_IOERR`: the operating system reported an I/O error.
    public static let ioError: Int32 = SQLITE_IOERR
    /// `SQLITE_CORRUPT`: the database file is malformed.
    public static let corrupt: Int32 = SQLITE_CORRUPT
    /// `SQLITE_FULL`: the disk (or the size limit of the database) is full.
    public static let full: Int32 = SQLITE_FULL
    /// `SQLITE_CANTOPEN`: the file could not be opened (missing, a directory, no permission).
    public static let cantOpen: Int32 = SQLITE_CANTOPEN
    /// `SQLITE_CONSTRAINT`: a UNIQUE, NOT NULL, CHECK or FOREIGN KEY constraint failed.
    public static let constraint: Int32 = SQLITE_CONSTRAINT
    /// `SQLITE_TOOBIG`: a string or blob exceeds SQLite's size limit.
    public static let tooBig: Int32 = SQLITE_TOOBIG
    /// `SQLITE_MISUSE`: the API was used incorrectly, for example on a closed connection.
    public static let misuse: Int32 = SQLITE_MISUSE
    /// `SQLITE_RANGE`: a bind parameter index is out of range.
    public static let range: Int32 = SQLITE_RANGE
    /// `SQLITE_NOTADB`: the file is not an SQLite database.
    public static let notADatabase: Int32 = SQLITE_NOTADB

    /// Whether the file is damaged or not a database at all (`SQLITE_CORRUPT` or `SQLITE_NOTADB`).
    public var isCorrupt: Bool { code == Self.corrupt || code == Self.notADatabase }
    /// Whether the disk or the database size limit is full (`SQLITE_FULL`).
    public var isFull: Bool { code == Self.full }
    /// Whether another connection or statement holds a lock (`SQLITE_BUSY` or `SQLITE_LOCKED`).
    public var isBusy: Bool { code == Self.busy || code == Self.locked }
    /// Whether a constraint failed (`SQLITE_CONSTRAINT`); `extendedCode` tells which kind.
    public var isConstraint: Bool { code == Self.constraint }
    /// Whether the operating system reported an I/O error (`SQLITE_IOERR`).
    public var isIOError: Bool { code == Self.ioError }
    /// Whether the file could not be opened (`SQLITE_CANTOPEN`).
    public var isCantOpen: Bool { code == Self.cantOpen }
    /// Whether a write was attempted on a read-only database (`SQLITE_READONLY`).
    public var isReadOnly: Bool { code == Self.readOnly }

    /// The message, the codes and the failing SQL, for logs and error reports.
    public var description: String {
        var text = "SQLite error \(code)"
        if extendedCode != code { text += " (extended \(extendedCode))" }
        text += ": \(message)"
        if let sql { text += " — in: \(sql)" }
        return text
    }
}
