/// The storage class of one value of the current row.
package enum StorageClass: Sendable, Hashable {
    case null, integer, real, bool, text, blob
}

/// A row a ``RowDecoder`` reads its fields from, column by column: an SQLite statement on
/// its current row, or a ``StoredRow`` of values fetched from PostgreSQL. Columns are
/// positions from 0; each accessor is called only for a column whose
/// ``storageClass(at:)`` matches it.
package protocol RowSource: AnyObject {
    func storageClass(at column: Int32) -> StorageClass
    func int64(at column: Int32) -> Int64
    func double(at column: Int32) -> Double
    func bool(at column: Int32) -> Bool
    func text(at column: Int32) -> String
    func bytes(at column: Int32) -> [UInt8]
    /// Calls `body` with the column's text as UTF-8, without building a `String` where the
    /// source can avoid it.
    func withUnsafeText<R, E: Error>(at column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R
}

/// One row of values in column order, reused from row to row.
package final class StoredRow: RowSource {
    package var values: [StoredValue]

    package init(_ values: [StoredValue] = []) {
        self.values = values
    }

    package func storageClass(at column: Int32) -> StorageClass {
        switch values[Int(column)] {
        case .null: .null
        case .integer: .integer
        case .double: .real
        case .bool: .bool
        case .text: .text
        case .bytes: .blob
        }
    }

    package func int64(at column: Int32) -> Int64 {
        if case let .integer(value) = values[Int(column)] { return value }
        return 0
    }

    package func double(at column: Int32) -> Double {
        if case let .double(value) = values[Int(column)] { return value }
        return 0
    }

    package func bool(at column: Int32) -> Bool {
        if case let .bool(flag) = values[Int(column)] { return flag }
        return false
    }

    package func text(at column: Int32) -> String {
        if case let .text(text) = values[Int(column)] { return text }
        return ""
    }

    package func bytes(at column: Int32) -> [UInt8] {
        if case let .bytes(bytes) = values[Int(column)] { return bytes }
        return []
    }

    package func withUnsafeText<R, E: Error>(
        at column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R
    ) throws(E) -> R {
        try Array(text(at: column).utf8).withUnsafeBufferPointer(body)
    }
}

/// The columns a decoder reads from one table: names and kinds by position.
package struct RowLayout: Sendable {
    package let table: String
    package let names: [String]
    /// The declared kind of each column (nil where the table records none).
    package let kinds: [ColumnKind?]
    /// Column positions by name.
    package let index: [String: Int32]

    package init(table: String, names: [String], kinds: [ColumnKind?]) {
        precondition(names.count == kinds.count, "one kind per column")
        self.table = table
        self.names = names
        self.kinds = kinds
        var index: [String: Int32] = [:]
        for (position, name) in names.enumerated() { index[name] = Int32(position) }
        self.index = index
    }
}

/// A stored value that does not fit its column's kind, or a metadata row that names an
/// unknown kind, for the back end to report with its own error type.
package struct InvalidStoredValue: Error, CustomStringConvertible {
    package let table: String
    package let detail: String

    package var description: String { detail }
}
