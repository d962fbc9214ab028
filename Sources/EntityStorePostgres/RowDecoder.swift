#if PostgreSQL
import EntityStore
import Foundation

/// The columns a restore reads from one table: positions by name and kinds.
struct ReadLayout: Sendable {
    let table: String
    let names: [String]
    let kinds: [PostgresColumnKind]
    let index: [String: Int]

    init(table: String, names: [String], kinds: [PostgresColumnKind]) {
        self.table = table
        self.names = names
        self.kinds = kinds
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() { index[name] = position }
        self.index = index
    }
}

/// Decodes an entity from one row of values, reused for every row of a table.
///
/// The inverse of ``PGRowEncoder``: flat fields come from their columns, nested values
/// from JSON text, dates from exact seconds, a missing column or NULL is `nil`.
final class PGRowDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    let layout: ReadLayout
    var row: [PGValue] = []
    let json = JSONDecoder()

    init(layout: ReadLayout) {
        self.layout = layout
    }

    /// Decodes `type` from `row`. O(fields).
    func decode<E: Decodable>(_ type: E.Type, row: [PGValue]) throws -> E {
        self.row = row
        return try E(from: self)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(PGRowKeyedDecoder<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "an entity is a row, not an array"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "an entity is a row, not a single value"))
    }

    func value(_ key: some CodingKey) -> (PGValue, PostgresColumnKind)? {
        guard let position = layout.index[key.stringValue] else { return nil }
        return (row[position], layout.kinds[position])
    }

    /// Decodes a nested `Decodable` from a column: the special types, a single
    /// primitive through a single-value decoder, or JSON.
    func decodeNested<T: Decodable>(_ type: T.Type, _ value: PGValue, kind: PostgresColumnKind, path: [any CodingKey]) throws -> T {
        func mismatch(_ detail: String) -> DecodingError {
            .dataCorrupted(.init(codingPath: path, debugDescription: "column '\(path.last?.stringValue ?? "?")': \(detail)"))
        }
        if type == Date.self {
            guard case let .text(text) = value, kind == .date else { throw mismatch("expected a date (exact seconds), found \(kind.rawValue)") }
            guard let date = DecimalText.date(unixSeconds: text) else {
                throw mismatch("expected a date (exact seconds), found \(DecimalText.nonFiniteDate(text))")
            }
            if let date = date as? T { return date }
        }
        if type == UUID.self {
            guard case let .text(text) = value, let uuid = UUID(uuidString: text) else { throw mismatch("expected a UUID") }
            if let uuid = uuid as? T { return uuid }
        }
        if type == Data.self {
            guard case let .bytes(bytes) = value else { throw mismatch("expected bytes, found \(kind.rawValue)") }
            if let data = Data(bytes) as? T { return data }
        }
        if type == JSONValue.self, let json = try Self.jsonValue(value, kind: kind, table: layout.table, column: path.last?.stringValue ?? "?") as? T {
            return json
        }
        if kind == .json {
            guard case let .text(text) = value else { throw mismatch("expected JSON text") }
            return try json.decode(T.self, from: Data(text.utf8))
        }
        return try T(from: PGSingleValueDecoder(value: value, kind: kind, codingPath: path, parent: self))
    }

    /// The JSON value of a stored value, exact by kind; a date is its date text (see
    /// ``DynamicDates``).
    static func jsonValue(_ value: PGValue, kind: PostgresColumnKind, table: String, column: String) throws -> JSONValue {
        switch value {
        case .null: return .null
        case let .integer(number): return .integer(number)
        case let .double(number): return .double(number)
        case let .bool(flag): return .bool(flag)
        case let .bytes(bytes): return .string(Data(bytes).base64EncodedString())
        case let .text(text):
            switch kind {
            case .json:
                do { return try JSONValue(parsing: text) } catch {
                    throw PostgresStoreError.invalidData(table: table, detail: "column '\(column)' holds invalid JSON")
                }
            case .number:
                if text.contains(".") || text.contains("e"), let number = Double(text) { return .double(number) }
                if let number = Int64(text) { return .integer(number) }
                if let number = Double(text) { return .double(number) }
                throw PostgresStoreError.invalidData(table: table, detail: "column '\(column)' holds '\(text)', not a number")
            case .date:
                guard let date = DynamicDates.text(unixSeconds: text) else {
                    throw PostgresStoreError.invalidData(table: table, detail: "column '\(column)' holds \(DecimalText.nonFiniteDate(text))")
                }
                return .string(date)
            default: return .string(text)
            }
        }
    }
}

struct PGRowKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: PGRowDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { decoder.layout.names.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { decoder.layout.index[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let (value, _) = decoder.value(key) else { return true }
        return value == .null
    }

    private func present(_ key: Key, _ type: Any.Type) throws -> (PGValue, PostgresColumnKind) {
        guard let (value, kind) = decoder.value(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "missing column '\(key.stringValue)'"))
        }
        if value == .null {
            throw DecodingError.valueNotFound(type, .init(codingPath: [key], debugDescription: "column '\(key.stringValue)' is NULL"))
        }
        return (value, kind)
    }

    private func mismatch(_ key: Key, _ type: Any.Type, _ value: PGValue) -> DecodingError {
        .typeMismatch(type, .init(codingPath: [key], debugDescription: "column '\(key.stringValue)' holds \(value), not \(type)"))
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let (value, _) = try present(key, type)
        if case let .bool(flag) = value { return flag }
        throw mismatch(key, type, value)
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let (value, _) = try present(key, type)
        if case let .text(text) = value { return text }
        throw mismatch(key, type, value)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let (value, _) = try present(key, type)
        switch value {
        case let .double(number): return number
        case let .integer(number): return Double(number)
        default: throw mismatch(key, type, value)
        }
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decode(Double.self, forKey: key)) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        let (value, _) = try present(key, type)
        guard case let .integer(number) = value else { throw mismatch(key, type, value) }
        guard let exact = T(exactly: number) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [key], debugDescription: "column '\(key.stringValue)': \(number) does not fit \(type)"))
        }
        return exact
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let (value, kind) = decoder.value(key) else {
            // A field of JSONValue? may be missing; Optional handles nil through decodeIfPresent.
            throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "missing column '\(key.stringValue)'"))
        }
        if value == .null, type != JSONValue.self {
            throw DecodingError.valueNotFound(type, .init(codingPath: [key], debugDescription: "column '\(key.stringValue)' is NULL"))
        }
        return try decoder.decodeNested(type, value, kind: kind, path: [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "nested containers are read as Codable values"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "nested containers are read as Codable values"))
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
}

/// Presents one column value as a single value (raw-value enums, typed IDs).
struct PGSingleValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: PGValue
    let kind: PostgresColumnKind
    var codingPath: [any CodingKey]
    let parent: PGRowDecoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: PGValue, kind: PostgresColumnKind, codingPath: [any CodingKey], parent: PGRowDecoder) {
        self.value = value
        self.kind = kind
        self.codingPath = codingPath
        self.parent = parent
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "column holds \(kind.rawValue), not an object"))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "column holds \(kind.rawValue), not an array"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value == .null }

    private func mismatch(_ type: Any.Type) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "column '\(codingPath.last?.stringValue ?? "?")' holds \(value), not \(type)"))
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        if case let .bool(flag) = value { return flag }
        throw mismatch(type)
    }

    func decode(_ type: String.Type) throws -> String {
        if case let .text(text) = value { return text }
        throw mismatch(type)
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case let .double(number): return number
        case let .integer(number): return Double(number)
        default: throw mismatch(type)
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard case let .integer(number) = value, let exact = T(exactly: number) else { throw mismatch(type) }
        return exact
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try parent.decodeNested(type, value, kind: kind, path: codingPath)
    }
}
#endif
