import EntityStore
import Foundation

/// Encodes one entity into named column values, without a JSON detour for flat fields.
///
/// One encoder is reused for every row of a table: `encode(_:)` clears the previous row.
/// Nested values (structs, arrays, dictionaries, enums with payloads) become JSON text.
final class RowEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    /// The fields of the row being encoded, in encoding order.
    private(set) var fields: [(name: String, value: EncodedValue)] = []
    private var unsupported: String?
    private let json: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Encodes `entity`, replacing the previous row's fields.
    /// - Throws: `EncodingError` for values SQLite cannot hold (an `UInt64` above
    ///   `Int64.max`, an entity that does not encode as a keyed container).
    func encode(_ entity: some Encodable) throws {
        fields.removeAll(keepingCapacity: true)
        unsupported = nil
        try entity.encode(to: self)
        if let unsupported {
            throw EncodingError.invalidValue(entity, .init(codingPath: [], debugDescription: unsupported))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        unsupported = "an entity must encode as a keyed container (an object), not an array"
        return IgnoringContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        unsupported = "an entity must encode as a keyed container (an object), not a single value"
        return IgnoringContainer()
    }

    func append(_ name: String, _ value: EncodedValue) {
        fields.append((name, value))
    }

    /// The column value of a nested `Encodable`: a special type (Date, UUID, Data,
    /// JSONValue), a single primitive (raw-value enums, typed IDs), or JSON text.
    func encodeNested<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> EncodedValue {
        switch value {
        case let date as Date: return try Self.encode(date, path: path)
        case let uuid as UUID: return EncodedValue(value: .text(uuid.uuidString), kind: .uuid)
        case let data as Data: return EncodedValue(value: .blob([UInt8](data)), kind: .blob)
        case let json as JSONValue: return Self.encode(json)
        default: break
        }
        let probe = SingleValueProbe(codingPath: path)
        try value.encode(to: probe)
        if let single = probe.result, !probe.isComplex { return single }
        let data = try json.encode(value)
        return EncodedValue(value: .text(String(decoding: data, as: UTF8.self)), kind: .json)
    }

    /// The column value of a date: its exact ISO 8601 text (see ``DateText``).
    /// - Throws: `EncodingError.invalidValue` for an infinite or NaN date.
    static func encode(_ date: Date, path: [any CodingKey]) throws -> EncodedValue {
        do {
            return EncodedValue(value: .text(try DateText.string(from: date)), kind: .date)
        } catch {
            throw EncodingError.invalidValue(date, .init(codingPath: path, debugDescription: error.description))
        }
    }

    /// The column value of a dynamic field.
    static func encode(_ value: JSONValue) -> EncodedValue {
        switch value {
        case .null: return EncodedValue(value: .null, kind: nil)
        case let .bool(flag): return EncodedValue(value: .integer(flag ? 1 : 0), kind: .bool)
        case let .integer(number): return EncodedValue(value: .integer(number), kind: .integer)
        case let .double(number): return EncodedValue(value: .real(number), kind: .double)
        case let .string(text): return EncodedValue(value: .text(text), kind: .string)
        case .array, .object: return EncodedValue(value: .text(value.serialized()), kind: .json)
        }
    }
}

/// Records each field of the top-level keyed container.
struct RowKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { encoder.append(key.stringValue, EncodedValue(value: .null, kind: nil)) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        encoder.append(key.stringValue, EncodedValue(value: .integer(value ? 1 : 0), kind: .bool))
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        encoder.append(key.stringValue, EncodedValue(value: .text(value), kind: .string))
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        encoder.append(key.stringValue, EncodedValue(value: .real(try storableReal(value, path: [key])), kind: .double))
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        encoder.append(key.stringValue, EncodedValue(value: .real(try storableReal(Double(value), path: [key])), kind: .double))
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try unsigned(UInt64(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try unsigned(value, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        encoder.append(key.stringValue, try encoder.encodeNested(value, path: [key]))
    }

    private func integer(_ value: Int64, _ key: Key) {
        encoder.append(key.stringValue, EncodedValue(value: .integer(value), kind: .integer))
    }

    private func unsigned(_ value: UInt64, _ key: Key) throws {
        guard let signed = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(
                codingPath: [key], debugDescription: "\(value) does not fit SQLite's 64-bit signed integers"))
        }
        integer(signed, key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(IgnoringKeyed<NestedKey>(report: { [encoder] in encoder.markUnsupported(key) }))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.markUnsupported(key)
        return IgnoringContainer()
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

extension RowEncoder {
    fileprivate func markUnsupported(_ key: some CodingKey) {
        unsupported = "field '\(key.stringValue)' uses a nested container directly in the entity's encode(to:); encode a Codable value instead"
    }
}

/// `value`, if SQLite can store it: SQLite has no NaN and binds one as NULL, which would
/// restore as nil (an optional field) or not at all, so a NaN is refused instead.
/// - Throws: `EncodingError.invalidValue` for a NaN.
func storableReal(_ value: Double, path: [any CodingKey]) throws -> Double {
    guard value.isNaN else { return value }
    throw EncodingError.invalidValue(value, .init(
        codingPath: path, debugDescription: "NaN cannot be stored: SQLite has no NaN (it would read back as NULL)"))
}
