#if PostgreSQL
// The column kinds are the codec's, shared with the SQLite snapshot format; users of
// this module name them `ColumnKind`.
@_exported import enum EntityStoreCodec.ColumnKind
import EntityStoreCodec

/// The kind of a stored column, as `entitystore_columns.kind` names it.
@available(*, deprecated, renamed: "ColumnKind", message: "the kinds are shared with the SQLite snapshot format")
public typealias PostgresColumnKind = ColumnKind

extension ColumnKind {
    /// The PostgreSQL type of a column of this kind: `BIGINT`, `BOOLEAN`, `DOUBLE
    /// PRECISION`, `TEXT` (strings, and a column of NULLs only), `BYTEA`, `NUMERIC`
    /// (dates as exact seconds since 1970, and numbers), `UUID`, `JSONB`.
    public var sqlType: String {
        switch self {
        case .integer: return "BIGINT"
        case .bool: return "BOOLEAN"
        case .double: return "DOUBLE PRECISION"
        case .string, .null: return "TEXT"
        case .blob: return "BYTEA"
        case .date, .number: return "NUMERIC"
        case .uuid: return "UUID"
        case .json: return "JSONB"
        }
    }

    /// Whether a SELECT reads the column as text (`::text`): kinds whose value the codec
    /// takes as its text (exact decimals, UUIDs, JSON).
    var selectsAsText: Bool {
        switch self {
        case .date, .number, .json, .uuid: return true
        default: return false
        }
    }
}

extension CodecDialect {
    /// PostgreSQL's: dates as exact seconds since 1970 (`NUMERIC`), NaN kept.
    static let postgres = CodecDialect(dates: .unixSeconds, numbersAsText: true, nanRefusal: nil, integerColumns: "BIGINT")
}
#endif
