import EntityStoreCodec

/// A value as SQLite stores it: one of its five storage classes.
public enum SQLiteValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text; may contain embedded NUL characters.
    case text(String)
    /// Raw bytes; an empty blob is distinct from ``null``.
    case blob([UInt8])

    /// The storage class of a value or of a result column.
    public enum Kind: Sendable, Hashable {
        /// SQL `NULL`.
        case null
        /// A 64-bit signed integer.
        case integer
        /// An IEEE 754 double.
        case real
        /// UTF-8 text.
        case text
        /// Raw bytes.
        case blob
    }

    /// The storage class of this value.
    public var kind: Kind {
        switch self {
        case .null: .null
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }
}

extension SQLiteValue {
    /// The codec's value as SQLite stores it: a boolean as the integer 0 or 1.
    @inline(__always)
    init(_ stored: StoredValue) {
        switch stored {
        case .null: self = .null
        case let .integer(value): self = .integer(value)
        case let .double(value): self = .real(value)
        case let .bool(flag): self = .integer(flag ? 1 : 0)
        case let .text(text): self = .text(text)
        case let .bytes(bytes): self = .blob(bytes)
        }
    }
}
