extension JSONValue: Codable {
    /// Decodes whatever the decoder holds, trying in order: nil, `Bool`, `Int64`, `Double`,
    /// `String`, array, object.
    ///
    /// Text formats that write `2.0` as `2` (Foundation's `JSONEncoder` does) bring an
    /// integral double back as `.integer`; use `serialized()` and `init(parsing:)` where the
    /// distinction must survive.
    ///
    /// - Throws: `DecodingError.typeMismatch` if the value is none of these.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.typeMismatch(
                JSONValue.self,
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "Expected null, a boolean, a number, a string, an array or an object."
                )
            )
        }
    }

    /// Encodes the value as its natural kind: nil, `Bool`, `Int64`, `Double`, `String`, an
    /// unkeyed container for arrays and a keyed container for objects.
    ///
    /// - Throws: Whatever the encoder throws (for example on a non-finite double).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
