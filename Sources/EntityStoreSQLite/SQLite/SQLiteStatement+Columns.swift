internal import CSQLite
import EntityStoreCodec

/// Reading the current row. Column indices start at 0; call these only after
/// ``SQLiteStatement/step()`` returned `true`.
extension SQLiteStatement {
    /// The number of columns in the result.
    package var columnCount: Int32 { sqlite3_column_count(stmt) }

    /// The name of result column `index` ("" if out of range).
    package func columnName(_ index: Int32) -> String {
        guard let name = sqlite3_column_name(stmt, index) else { return "" }
        return String(cString: name)
    }

    /// The storage class of column `index` in the current row.
    package func columnType(_ index: Int32) -> SQLiteValue.Kind {
        switch sqlite3_column_type(stmt, index) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// Column `index` as an integer (SQLite converts other types; NULL is 0).
    package func int64(at index: Int32) -> Int64 {
        sqlite3_column_int64(stmt, index)
    }

    /// Column `index` as a double (SQLite converts other types; NULL is 0).
    package func double(at index: Int32) -> Double {
        sqlite3_column_double(stmt, index)
    }

    /// Column `index` as text, embedded NULs included (NULL is "").
    package func text(at index: Int32) -> String {
        // Fetch the pointer before the length, as SQLite's documentation requires.
        guard let bytes = sqlite3_column_text(stmt, index) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Calls `body` with the UTF-8 bytes of column `index` as text (NULL gives no bytes),
    /// without copying them into a `String`. The bytes are valid only inside `body`.
    package func withUnsafeText<R, E: Error>(
        at index: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R
    ) throws(E) -> R {
        // Fetch the pointer before the length, as SQLite's documentation requires.
        let bytes = sqlite3_column_text(stmt, index)
        let count = bytes == nil ? 0 : Int(sqlite3_column_bytes(stmt, index))
        return try body(UnsafeBufferPointer(start: bytes, count: count))
    }

    /// Column `index` as bytes (NULL and the empty blob are both `[]`; see ``isNull(at:)``).
    package func blob(at index: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(stmt, index) else { return [] }
        let count = Int(sqlite3_column_bytes(stmt, index))
        return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Whether column `index` is SQL NULL.
    package func isNull(at index: Int32) -> Bool {
        sqlite3_column_type(stmt, index) == SQLITE_NULL
    }

    /// Column `index` in its own storage class.
    package func value(at index: Int32) -> SQLiteValue {
        switch columnType(index) {
        case .null: .null
        case .integer: .integer(int64(at: index))
        case .real: .real(double(at: index))
        case .text: .text(text(at: index))
        case .blob: .blob(blob(at: index))
        }
    }
}

/// The codec's ``RowDecoder`` reads a statement's current row in place.
extension SQLiteStatement: RowSource {
    package func storageClass(at column: Int32) -> StorageClass {
        switch sqlite3_column_type(stmt, column) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// SQLite has no boolean storage class (``storageClass(at:)`` never says `bool`).
    package func bool(at column: Int32) -> Bool { int64(at: column) != 0 }

    package func bytes(at column: Int32) -> [UInt8] { blob(at: column) }
}
