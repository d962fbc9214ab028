/// What SQL `NULL` means in one snapshot column (`entitystore_columns.nulls`, format 3).
///
/// A dynamic field keeps its kind's column type (INTEGER, REAL, TEXT) however many of its
/// values are `null`, so SQL on the file compares real numbers and strings; `NULL` then
/// stands for `null`, for a missing field, or for either, and this says which:
///
/// | value | `NULL` is | used when |
/// | --- | --- | --- |
/// | `absent` | a missing field (or a Swift `nil`) | no row holds `null`: typed tables, fields that are sometimes missing |
/// | `null` | JSON `null` | some rows hold `null` and every row has the field |
/// | `either` | `null`, unless the row's ``absentFieldsColumn`` names the field | both `null` and missing occur |
public enum NullMeaning: String, Sendable, CaseIterable, Codable {
    case absent, null, either

    /// The hidden column of a table with an `either` column: a JSON array of the fields
    /// the row lacks among its `either` columns, or NULL when it lacks none. Listed in
    /// `entitystore_columns` with kind `json`; never a field of a record.
    public static let absentFieldsColumn = "entitystore_absent"
}
