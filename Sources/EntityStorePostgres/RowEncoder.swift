#if PostgreSQL
import EntityStore
import Foundation

/// Encodes one entity into named column values, without a JSON detour for flat fields
/// (the same mapping as the SQLite snapshot's encoder, with PostgreSQL's column types).
///
/// One encoder is reused for every row of a table: `encode(_:)` clears the previous row.
/// Nested values (structs, arrays, dictionaries, enums with payloads) become JSON text.
final class PGRowEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    /// The fields of the row being encoded, in encoding order.
    private(set) var fields: [(name: String, value: EncodedValue)] = []
    private var unsupported: String?
    let json: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Encodes `entity`, replacing the previous row's fields. O(fields).
    /// - Throws: `EncodingError` for values a column cannot hold.
    func encode(_ entity: some Encodable) throws {
        fields.removeAll(keepingCapacity: true)
        unsupported = nil
        try entity.encode(to: self)
        if let unsupported {
            throw EncodingError.invalidValue(entity, .init(codingPath: [], debugDescription: unsupported))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(PGRowKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        unsupported = "an entity must encode as a keyed container (an object), not an array"
        return PGIgnoringContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        unsupported = "an entity must encode as a keyed container (an object), not a single value"
        return PGIgnoringContainer()
    }

    func append(_ name: String, _ value: EncodedValue) {
        fields.append((name, value))
    }

    func markUnsupported(_ key: some CodingKey) {
        unsupported = "field '\(key.stringValue)' uses a nested container directly in the entity's encode(to:); encode a Codable value instead"
    }

    /// The column value of a nested `Encodable`: a special type (Date, UUID, Data,
    /// JSONValue), a single primitive (raw-value enums, typed IDs), or JSON text.
    func encodeNested<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> EncodedValue {
        switch value {
        case let date as Date: return EncodedValue(value: .text(try DecimalText.unixSeconds(of: date, path: path)), kind: .date)
        case let uuid as UUID: return EncodedValue(value: .text(uuid.uuidString), kind: .uuid)
        case let data as Data: return EncodedValue(value: .bytes([UInt8](data)), kind: .blob)
        case let json as JSONValue: return Self.encode(json)
        default: break
        }
        let probe = PGSingleValueProbe(codingPath: path)
        try value.encode(to: probe)
        if let single = probe.result, !probe.isComplex { return single }
        let data = try json.encode(value)
        return EncodedValue(value: .text(String(decoding: data, as: UTF8.self)), kind: .json)
    }

    /// The column value of a dynamic field on its own (scalars keep their kind).
    static func encode(_ value: JSONValue) -> EncodedValue {
        switch value {
        case .null: return EncodedValue(value: .null, kind: nil)
        case let .bool(flag): return EncodedValue(value: .bool(flag), kind: .bool)
        case let .integer(number): return EncodedValue(value: .integer(number), kind: .integer)
        case let .double(number): return EncodedValue(value: .double(number), kind: .double)
        case let .string(text): return EncodedValue(value: .text(text), kind: .string)
        case .array, .object: return EncodedValue(value: .text(value.serialized()), kind: .json)
        }
    }

    /// The stored form of an ID (integer or text), through the same rules as a field.
    static func encodeID<ID: Encodable>(_ id: ID) throws -> EncodedValue {
        if let record = id as? RecordID {
            switch record {
            case let .integer(value): return EncodedValue(value: .integer(value), kind: .integer)
            case let .string(value): return EncodedValue(value: .text(value), kind: .string)
            }
        }
        return try PGRowEncoder().encodeNested(id, path: [])
    }
}

/// Records each field of the top-level keyed container.
struct PGRowKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: PGRowEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { encoder.append(key.stringValue, EncodedValue(value: .null, kind: nil)) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { encoder.append(key.stringValue, EncodedValue(value: .bool(value), kind: .bool)) }
    mutating func encode(_ value: String, forKey key: Key) throws { encoder.append(key.stringValue, EncodedValue(value: .text(value), kind: .string)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { encoder.append(key.stringValue, EncodedValue(value: .double(value), kind: .double)) }
    mutating func encode(_ value: Float, forKey key: Key) throws { encoder.append(key.stringValue, EncodedValue(value: .double(Double(value)), kind: .double)) }
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
            throw EncodingError.invalidValue(value, .init(codingPath: [key], debugDescription: "\(value) does not fit BIGINT"))
        }
        integer(signed, key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(PGIgnoringKeyed<NestedKey>(report: { [encoder] in encoder.markUnsupported(key) }))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.markUnsupported(key)
        return PGIgnoringContainer()
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

/// Finds out whether a value encodes as one primitive (a raw-value enum, a typed ID
/// wrapper) and captures it; anything that opens a container is "complex" (JSON).
final class PGSingleValueProbe: Encoder, SingleValueEncodingContainer {
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] = [:]
    private(set) var result: EncodedValue?
    private(set) var isComplex = false

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        isComplex = true
        return KeyedEncodingContainer(PGIgnoringKeyed<Key>(report: {}))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        isComplex = true
        return PGIgnoringContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    private func set(_ value: PGValue, _ kind: PostgresColumnKind?) {
        if result != nil { isComplex = true }
        result = EncodedValue(value: value, kind: kind)
    }

    func encodeNil() throws { set(.null, nil) }
    func encode(_ value: Bool) throws { set(.bool(value), .bool) }
    func encode(_ value: String) throws { set(.text(value), .string) }
    func encode(_ value: Double) throws { set(.double(value), .double) }
    func encode(_ value: Float) throws { set(.double(Double(value)), .double) }
    func encode(_ value: Int) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: Int8) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: Int16) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: Int32) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: Int64) throws { set(.integer(value), .integer) }
    func encode(_ value: UInt8) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: UInt16) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: UInt32) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: UInt) throws { try encode(UInt64(value)) }
    func encode(_ value: UInt64) throws {
        guard let signed = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit BIGINT"))
        }
        set(.integer(signed), .integer)
    }

    func encode<T: Encodable>(_ value: T) throws {
        switch value {
        case let date as Date: set(.text(try DecimalText.unixSeconds(of: date, path: codingPath)), .date)
        case let uuid as UUID: set(.text(uuid.uuidString), .uuid)
        case is Data: isComplex = true
        default: try value.encode(to: self)
        }
    }
}

/// A container that accepts and drops everything (for shapes a row cannot hold, which
/// are reported separately).
struct PGIgnoringContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(PGIgnoringKeyed<NestedKey>(report: {}))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { PGIgnoringContainer() }
    mutating func superEncoder() -> any Encoder { PGSingleValueProbe(codingPath: []) }
}

/// A keyed container that drops everything, calling `report` once it is used.
struct PGIgnoringKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let report: () -> Void
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws { report() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { report() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        report()
        return KeyedEncodingContainer(PGIgnoringKeyed<NestedKey>(report: report))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        report()
        return PGIgnoringContainer()
    }
    mutating func superEncoder() -> any Encoder { PGSingleValueProbe(codingPath: []) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { PGSingleValueProbe(codingPath: []) }
}
#endif
