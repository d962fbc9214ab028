/// The identifier of a dynamic record: an integer or a string. Integers sort before
/// strings.
public enum RecordID: Sendable, Hashable {
    /// A numeric identifier.
    case integer(Int64)
    /// A textual identifier.
    case string(String)
}

extension RecordID {
    /// The identifier a JSON value denotes: an `.integer` or a `.string`; nil otherwise
    /// (doubles included, since `1.0` would be ambiguous).
    public init?(_ value: JSONValue) {
        switch value {
        case .integer(let number): self = .integer(number)
        case .string(let text): self = .string(text)
        default: return nil
        }
    }

    /// The identifier as a JSON value.
    public var jsonValue: JSONValue {
        switch self {
        case .integer(let number): .integer(number)
        case .string(let text): .string(text)
        }
    }
}

extension RecordID: Comparable {
    /// Integers numerically, then strings as Swift `String`s.
    public static func < (lhs: RecordID, rhs: RecordID) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let left), .integer(let right)): left < right
        case (.string(let left), .string(let right)): left < right
        case (.integer, .string): true
        case (.string, .integer): false
        }
    }
}

extension RecordID: CustomStringConvertible {
    /// The identifier as JSON text: `42` or `"abc"`, so `42` and `"42"` stay distinct.
    public var description: String {
        jsonValue.serialized()
    }
}

extension RecordID: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    /// An integer literal is `.integer`.
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }

    /// A string literal is `.string`.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension RecordID: Codable {
    /// Decodes an integer, or else a string.
    ///
    /// - Throws: `DecodingError.typeMismatch` for any other value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            self = .integer(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else {
            throw DecodingError.typeMismatch(
                RecordID.self,
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "Expected an integer or a string record ID.")
            )
        }
    }

    /// Encodes the bare integer or string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        }
    }
}
