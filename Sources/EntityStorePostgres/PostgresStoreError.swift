#if PostgreSQL
import Foundation

/// What can go wrong between a store and PostgreSQL. Every case describes itself in one
/// line that names the server (never its password) and what to do.
public enum PostgresStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A `postgres://` URL or a `PG*` variable that cannot be read.
    case invalidConfiguration(String)
    /// The server could not be reached (refused, unknown host, timed out, TLS refused).
    case connectionFailed(server: String, reason: String)
    /// The server refused the user name or password.
    case authenticationFailed(server: String, reason: String)
    /// The connection broke during an operation; nothing of an unfinished transaction is kept.
    case connectionLost(server: String, reason: String)
    /// The server refused a statement.
    case server(message: String, sqlState: String?)
    /// The schema holds no store, or one this library cannot read.
    case notAStore(schema: String, reason: String)
    /// A stored table or column does not fit the store's schema or Swift types.
    case schemaMismatch(table: String, detail: String)
    /// A stored value is wrong for its column.
    case invalidData(table: String, detail: String)
    /// An entity cannot be stored (an infinite date, an integer beyond 64 bits ...).
    case encodingFailed(table: String, detail: String)
    /// A push was refused because other processes changed these rows since this replica
    /// read them; nothing was written. Pull, then redo the change.
    case conflict([PostgresConflict])
    /// A selection cannot be used (a partial load's or a scoped replica's condition on a
    /// field without a declared index), or a scoped replica refused a local write, or a
    /// push, of a row outside its selection (``PostgresSync/selection``).
    case invalidSelection(String)

    /// One line, without credentials.
    public var description: String {
        switch self {
        case let .invalidConfiguration(detail): return "invalid PostgreSQL connection settings: \(detail)"
        case let .connectionFailed(server, reason): return "cannot connect to PostgreSQL at \(server): \(reason)"
        case let .authenticationFailed(server, reason): return "PostgreSQL at \(server) refused the login: \(reason)"
        case let .connectionLost(server, reason): return "lost the connection to PostgreSQL at \(server): \(reason)"
        case let .server(message, sqlState): return "PostgreSQL: \(message)\(sqlState.map { " (SQLSTATE \($0))" } ?? "")"
        case let .notAStore(schema, reason): return "schema '\(schema)' holds no entity store: \(reason)"
        case let .schemaMismatch(table, detail): return "table '\(table)' does not fit the schema: \(detail)"
        case let .invalidData(table, detail): return "invalid data in table '\(table)': \(detail)"
        case let .encodingFailed(table, detail): return "cannot store a row of table '\(table)': \(detail)"
        case let .conflict(rows):
            let listed = rows.prefix(10).map { "\($0.table) \($0.id)" }.joined(separator: ", ")
            return "push refused: \(rows.count) row(s) changed by another process since this replica read them (\(listed)\(rows.count > 10 ? ", ..." : "")); pull and retry"
        case let .invalidSelection(detail): return "selection: \(detail)"
        }
    }

    /// Whether retrying later can succeed: the server was unreachable or the connection broke.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed, .connectionLost: return true
        default: return false
        }
    }

    /// Maps any error of a PostgreSQL operation to a one-line error. O(1).
    static func from(_ error: any Error, server: String) -> PostgresStoreError {
        switch error {
        case let error as PostgresStoreError:
            guard case let .server(message, state) = error, let state else { return error }
            // 28P01 invalid_password, 28000 invalid_authorization_specification.
            if state == "28P01" || state == "28000" { return .authenticationFailed(server: server, reason: message) }
            if state == "3D000" { return .connectionFailed(server: server, reason: message) }
            if state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03" {
                return .connectionLost(server: server, reason: message)
            }
            return error
        case is CancellationError: return .connectionLost(server: server, reason: "cancelled")
        default: return .connectionFailed(server: server, reason: oneLine(String(describing: error)))
        }
    }

    /// The SQLSTATE of a statement the server refused, if `error` is one.
    static func sqlState(of error: any Error) -> String? {
        guard case let .server(_, state)? = error as? PostgresStoreError else { return nil }
        return state
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

/// A row another process changed since this replica read it.
public struct PostgresConflict: Sendable, Hashable, CustomStringConvertible {
    /// The table's name.
    public let table: String
    /// The row's ID, as text.
    public let id: String
    /// The revision this replica read (0: it believed the row absent).
    public let expectedRevision: Int64
    /// The revision the server holds (0: the row was removed).
    public let serverRevision: Int64

    /// "table id".
    public var description: String { "\(table) \(id)" }
}
#endif
