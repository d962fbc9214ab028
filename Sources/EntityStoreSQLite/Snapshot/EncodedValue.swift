/// One field value ready to bind, with the column kind it implies.
struct EncodedValue: Sendable {
    var value: SQLiteValue
    /// nil for NULL, which fits a column of any kind.
    var kind: ColumnKind?
}
