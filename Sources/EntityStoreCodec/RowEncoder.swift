import EntityStore
import Foundation

/// Encodes one entity into named column values, without a JSON detour for flat fields:
/// the one `Codable`-to-row bridge of both back ends, which differ only in their
/// ``CodecDialect``.
///
/// One encoder is reused for every row of a table: `encode(_:)` clears the previous row.
/// Nested values (structs, arrays, dictionaries, enums with payloads) become JSON text.
package final class RowEncoder: Encoder {
    package var codingPath: [any CodingKey] = []
    package var userInfo: [CodingUserInfoKey: Any] = [:]
    package let dialect: CodecDialect
    /// The fields of the row being encoded, in encoding order.
    package private(set) var fields: [(name: String, value: EncodedValue)] = []
    private var unsupported: String?
    private let json: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    package init(dialect: CodecDialect) {
        self.dialect = dialect
    }

    /// Encodes `entity`, replacing the previous row's fields. O(fields).
    /// - Throws: `EncodingError` for values a column cannot hold (an `UInt64` above
    ///   `Int64.max`, a NaN where the dialect refuses it, an entity that does not encode
    ///   as a keyed container).
    package func encode(_ entity: some Encodable) throws {
        fields.removeAll(keepingCapacity: true)
        unsupported = nil
        try entity.encode(to: self)
        if let unsupported {
            throw EncodingError.invalidValue(entity, .init(codingPath: [], debugDescription: unsupported))
        }
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowKeyedContainer<Key>(encoder: self))
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        unsupported = "an entity must encode as a keyed container (an object), not an array"
        return IgnoringContainer()
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer {
        unsupported = "an entity must encode as a keyed container (an object), not a single value"
        return IgnoringContainer()
    }

    fileprivate func append(_ name: String, _ value: EncodedValue) {
        fields.append((name, value))
    }

    fileprivate func markUnsupported(_ key: some CodingKey) {
        unsupported = "field '\(key.stringValue)' uses a nested container directly in the entity's encode(to:); encode a Codable value instead"
    }

    /// The column value of a nested `Encodable`: a special type (Date, UUID, Data,
    /// JSONValue), a single primitive (raw-value enums, typed IDs), or JSON text.
    package func encodeNested<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> EncodedValue {
        switch value {
        case let date as Date: return try dialect.encode(date, path: path)
        case let uuid as UUID: return EncodedValue(value: .text(uuid.uuidString), kind: .uuid)
        case let data as Data: return EncodedValue(value: .bytes([UInt8](data)), kind: .blob)
        case let json as JSONValue: return Self.encode(json)
        default: break
        }
        let probe = SingleValueProbe(codingPath: path, dialect: dialect)
        try value.encode(to: probe)
        if let single = probe.result, !probe.isComplex { return single }
        let data = try json.encode(value)
        return EncodedValue(value: .text(String(decoding: data, as: UTF8.self)), kind: .json)
    }

    /// The column value of a dynamic field on its own (scalars keep their kind).
    package static func encode(_ value: JSONValue) -> EncodedValue {
        switch value {
        case .null: return .null
        case let .bool(flag): return EncodedValue(value: .bool(flag), kind: .bool)
        case let .integer(number): return EncodedValue(value: .integer(number), kind: .integer)
        case let .double(number): return EncodedValue(value: .double(number), kind: .double)
        case let .string(text): return EncodedValue(value: .text(text), kind: .string)
        case .array, .object: return EncodedValue(value: .text(value.serialized()), kind: .json)
        }
    }

    /// The stored form of a dynamic record's ID.
    package static func encode(_ id: RecordID) -> EncodedValue {
        switch id {
        case let .integer(value): return EncodedValue(value: .integer(value), kind: .integer)
        case let .string(value): return EncodedValue(value: .text(value), kind: .string)
        }
    }

    /// The stored form of an ID (integer or text), through the same rules as a field.
    package static func encodeID<ID: Encodable>(_ id: ID, dialect: CodecDialect) throws -> EncodedValue {
        if let record = id as? RecordID { return encode(record) }
        return try RowEncoder(dialect: dialect).encodeNested(id, path: [])
    }
}

/// Records each field of the top-level keyed container.
struct RowKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { encoder.append(key.stringValue, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        encoder.append(key.stringValue, EncodedValue(value: .bool(value), kind: .bool))
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        encoder.append(key.stringValue, EncodedValue(value: .text(value), kind: .string))
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        encoder.append(key.stringValue, EncodedValue(value: try encoder.dialect.real(value, path: [key]), kind: .double))
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        encoder.append(key.stringValue, EncodedValue(value: try encoder.dialect.real(Double(value), path: [key]), kind: .double))
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { integer(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { integer(Int64(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { integer(try encoder.dialect.integer(UInt64(value), path: [key]), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { integer(try encoder.dialect.integer(value, path: [key]), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        encoder.append(key.stringValue, try encoder.encodeNested(value, path: [key]))
    }

    private func integer(_ value: Int64, _ key: Key) {
        encoder.append(key.stringValue, EncodedValue(value: .integer(value), kind: .integer))
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
