import EntityStoreCodec

/// The columns of one snapshot table as the reader sees them: the codec's layout of a
/// `SELECT`'s result columns, and what NULL means per field.
struct ColumnLayout {
    /// Names and kinds by result column, for ``RowDecoder`` and ``StoredJSON``.
    let row: RowLayout
    /// What NULL means, by field name (missing: a missing field).
    var nulls: [String: NullMeaning] = [:]

    var table: String { row.table }

    /// The layout of `statement`'s result columns for the stored table `stored`.
    init(_ statement: SQLiteStatement, stored: StoreMetadata.Table) {
        var kinds: [String: ColumnKind] = [:]
        for column in stored.columns {
            kinds[column.name] = column.kind
            if column.nulls != .absent { nulls[column.name] = column.nulls }
        }
        let names = (0..<statement.columnCount).map { statement.columnName($0) }
        row = RowLayout(table: stored.name, names: names, kinds: names.map { kinds[$0] })
    }
}

extension SnapshotError {
    /// The error of a stored value that does not fit its column's kind.
    init(_ invalid: InvalidStoredValue) {
        self = .invalidData(table: invalid.table, detail: invalid.detail)
    }
}
