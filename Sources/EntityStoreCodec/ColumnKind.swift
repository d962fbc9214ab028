/// How a field's values are stored in a column of a snapshot file or a PostgreSQL store;
/// recorded per column in `entitystore_columns.kind`, so a reader that knows no Swift
/// types restores values with their exact types. Both back ends share these kinds.
///
/// | kind | Swift | SQLite value | PostgreSQL type |
/// | --- | --- | --- | --- |
/// | `integer` | `Int`, `Int8`…`Int64`, `UInt8`…`UInt32`, `UInt`/`UInt64` up to `Int64.max` | INTEGER | `BIGINT` |
/// | `bool` | `Bool` | INTEGER 0 or 1 | `BOOLEAN` |
/// | `double` | `Double`, `Float` | REAL (column declared without a type, so `-0.0` and `2.0` survive exactly; no NaN) | `DOUBLE PRECISION` (`-0.0`, infinities and NaN kept) |
/// | `number` | dynamic fields holding both integers and doubles | INTEGER for an integer, REAL for a double | `NUMERIC` (a double always has a fractional part in its text) |
/// | `string` | `String`, `Character` | TEXT | `TEXT` |
/// | `blob` | `Data`, `[UInt8]` encoded as data | BLOB | `BYTEA` |
/// | `date` | `Date` | TEXT, exact ISO 8601 in UTC (`2026-11-24T10:00:00.1234567+00:00`) | `NUMERIC`, the exact seconds since 1970 |
/// | `uuid` | `UUID` | TEXT, upper-case canonical form | `UUID` |
/// | `json` | nested structs, arrays, dictionaries, enums with payloads | TEXT holding JSON | `JSONB` |
/// | `null` | a field that was `nil` in every row | NULL | `TEXT` holding only NULLs |
///
/// Dates are exact to the bit either way. Enums with raw values and single-value wrappers
/// (typed IDs) take the kind of their raw value. `nil` is always NULL.
public enum ColumnKind: String, Sendable, CaseIterable, Codable {
    case integer, bool, double, string, blob, date, uuid, json, null
    /// Integers and doubles in one dynamic column: SQL compares them as numbers, and each
    /// value's stored form says which it was.
    case number
}
