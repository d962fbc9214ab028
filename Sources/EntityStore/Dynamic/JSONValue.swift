/// A JSON value whose kinds are kept exactly: integers stay integers, doubles stay doubles
/// (`2.0` is not `2`), booleans are never numbers and strings are exact Unicode.
///
/// Dynamic records (rows of tools that know no Swift types) store their fields as
/// `JSONValue`. Equality is structural and kind-sensitive: `.integer(1) != .double(1)`.
/// Doubles compare as numbers (`-0.0 == 0.0`), except that NaN equals NaN so a NaN value can
/// still be found again in a set, dictionary or index.
public enum JSONValue: Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An ordered list.
    case array([JSONValue])
    /// A key-value map; key order carries no meaning.
    case object([String: JSONValue])
}

extension JSONValue {
    /// The value stored under `key` if this is an object that has it.
    ///
    /// - Complexity: O(1) on average.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` if this is an array and `index` is within it.
    ///
    /// - Complexity: O(1)
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// The value of an `.integer`; nil for every other kind, doubles included.
    public var intValue: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The value of a `.double`, or an `.integer` converted to `Double` (rounded to the
    /// nearest double beyond 2^53); nil for non-numbers.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// The value of a `.string`; nil for every other kind.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The value of a `.bool`; nil for every other kind (numbers are never booleans).
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The elements of an `.array`; nil for every other kind.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    /// The members of an `.object`; nil for every other kind.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }
}
