import Foundation

/// Finds out whether a value encodes as one primitive (a raw-value enum, a typed ID
/// wrapper) and captures it; anything that opens a keyed or unkeyed container is
/// "complex" and is stored as JSON instead.
final class SingleValueProbe: Encoder, SingleValueEncodingContainer {
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] = [:]
    let dialect: CodecDialect
    private(set) var result: EncodedValue?
    private(set) var isComplex = false

    init(codingPath: [any CodingKey], dialect: CodecDialect) {
        self.codingPath = codingPath
        self.dialect = dialect
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        isComplex = true
        return KeyedEncodingContainer(IgnoringKeyed<Key>(report: {}))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        isComplex = true
        return IgnoringContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    private func set(_ value: StoredValue, _ kind: ColumnKind?) {
        if result != nil { isComplex = true }
        result = EncodedValue(value: value, kind: kind)
    }

    func encodeNil() throws { set(.null, nil) }
    func encode(_ value: Bool) throws { set(.bool(value), .bool) }
    func encode(_ value: String) throws { set(.text(value), .string) }
    func encode(_ value: Double) throws { set(try dialect.real(value, path: codingPath), .double) }
    func encode(_ value: Float) throws { set(try dialect.real(Double(value), path: codingPath), .double) }
    func encode(_ value: Int) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: Int8) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: Int16) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: Int32) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: Int64) throws { set(.integer(value), .integer) }
    func encode(_ value: UInt8) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: UInt16) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: UInt32) throws { set(.integer(Int64(value)), .integer) }
    func encode(_ value: UInt) throws { try encode(UInt64(value)) }
    func encode(_ value: UInt64) throws { set(.integer(try dialect.integer(value, path: codingPath)), .integer) }

    func encode<T: Encodable>(_ value: T) throws {
        switch value {
        case let date as Date:
            let encoded = try dialect.encode(date, path: codingPath)
            set(encoded.value, encoded.kind)
        case let uuid as UUID: set(.text(uuid.uuidString), .uuid)
        case is Data: isComplex = true
        default: try value.encode(to: self)
        }
    }
}

/// A container that accepts and drops everything (for shapes a row cannot hold, which
/// are reported separately).
struct IgnoringContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(IgnoringKeyed<NestedKey>(report: {}))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { IgnoringContainer() }
    mutating func superEncoder() -> any Encoder { SingleValueProbe(codingPath: [], dialect: .neutral) }
}

/// A keyed container that drops everything, calling `report` once it is used.
struct IgnoringKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let report: () -> Void
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws { report() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { report() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        report()
        return KeyedEncodingContainer(IgnoringKeyed<NestedKey>(report: report))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        report()
        return IgnoringContainer()
    }
    mutating func superEncoder() -> any Encoder { SingleValueProbe(codingPath: [], dialect: .neutral) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { SingleValueProbe(codingPath: [], dialect: .neutral) }
}
