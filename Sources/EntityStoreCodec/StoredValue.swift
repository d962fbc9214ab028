/// One column value as the codec reads and writes it, whatever the back end. Each back end
/// maps it to its own values in one place (SQLite stores `bool` as the integers 0 and 1);
/// `date`, `uuid`, `json` and PostgreSQL's `number` values travel as their text.
package enum StoredValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case text(String)
    case bytes([UInt8])
}

/// One field value ready to bind, with the column kind it implies.
package struct EncodedValue: Sendable {
    package var value: StoredValue
    /// nil for NULL, which fits a column of any kind.
    package var kind: ColumnKind?

    package init(value: StoredValue, kind: ColumnKind?) {
        self.value = value
        self.kind = kind
    }

    /// NULL, which fits a column of any kind.
    package static let null = EncodedValue(value: .null, kind: nil)
}
