// The column kinds are the codec's, shared with the PostgreSQL back end; users of this
// module name them `ColumnKind` as before.
@_exported import enum EntityStoreCodec.ColumnKind
import EntityStoreCodec

extension ColumnKind {
    /// The SQL type declared for a column of this kind: chosen so SQLite's type affinity
    /// never converts a stored value.
    var declaredType: String {
        switch self {
        case .integer, .bool: return "INTEGER"
        case .string, .uuid, .json, .date: return "TEXT"
        case .blob: return "BLOB"
        case .double, .number, .null: return ""
        }
    }
}

extension CodecDialect {
    /// The snapshot file's: dates as exact ISO 8601 text, no NaN (SQLite binds one as NULL,
    /// which would restore as nil or not at all).
    static let sqlite = CodecDialect(
        dates: .isoText,
        numbersAsText: false,
        nanRefusal: "NaN cannot be stored: SQLite has no NaN (it would read back as NULL)",
        integerColumns: "SQLite's 64-bit signed integers")
}
