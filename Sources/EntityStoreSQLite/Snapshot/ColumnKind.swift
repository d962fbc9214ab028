/// How a field's values are stored in a snapshot column; recorded per column in
/// `entitystore_columns.kind` so a reader that knows no Swift types restores values with
/// their exact types.
///
/// | kind | Swift | SQLite value |
/// | --- | --- | --- |
/// | `integer` | `Int`, `Int8`…`Int64`, `UInt8`…`UInt32`, `UInt`/`UInt64` up to `Int64.max` | INTEGER |
/// | `bool` | `Bool` | INTEGER 0 or 1 |
/// | `double` | `Double`, `Float` | REAL (column declared without a type, so `-0.0` and `2.0` survive exactly) |
/// | `number` | dynamic fields holding both integers and doubles | INTEGER for an integer, REAL for a double (declared without a type, so each keeps its storage class) |
/// | `string` | `String`, `Character` | TEXT |
/// | `blob` | `Data`, `[UInt8]` encoded as data | BLOB |
/// | `date` | `Date` | TEXT, exact ISO 8601 in UTC (`2026-11-24T10:00:00.1234567+00:00`), exact to the bit |
/// | `uuid` | `UUID` | TEXT, upper-case canonical form |
/// | `json` | nested structs, arrays, dictionaries, enums with payloads | TEXT holding JSON |
/// | `null` | a field that was `nil` in every row | NULL |
///
/// Enums with raw values and single-value wrappers (typed IDs) take the kind of their raw
/// value. `nil` is always NULL.
public enum ColumnKind: String, Sendable, CaseIterable, Codable {
    case integer, bool, double, string, blob, date, uuid, json, null
    /// Integers and doubles in one dynamic column: SQL compares them as numbers, and each
    /// value's storage class (INTEGER or REAL) says which it was.
    case number

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
