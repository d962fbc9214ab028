import EntityStore
import Foundation

/// One column of the current row, decoded as the Swift type asks, with a specific error
/// when the stored value does not fit.
struct ColumnCell: SingleValueDecodingContainer, Decoder {
    let decoder: RowDecoder
    let index: Int32
    let key: any CodingKey

    var codingPath: [any CodingKey] { [key] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private var source: any RowSource { decoder.source }
    private var table: String { decoder.layout.table }
    private var kind: ColumnKind? { decoder.layout.kinds[Int(index)] }

    private func mismatch<T>(_ type: T.Type, _ expected: String) -> DecodingError {
        let stored = source.storageClass(at: index)
        return DecodingError.typeMismatch(type, .init(
            codingPath: [key],
            debugDescription: "table '\(table)' column '\(key.stringValue)' holds \(stored) where the Swift type expects \(expected)"))
    }

    private func corrupted(_ detail: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [key], debugDescription: "table '\(table)' column '\(key.stringValue)': \(detail)"))
    }

    private func storedInteger<T>(_ type: T.Type) throws -> Int64 {
        guard source.storageClass(at: index) == .integer else { throw mismatch(type, "an integer") }
        return source.int64(at: index)
    }

    private func fitting<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let value = try storedInteger(type)
        guard let result = T(exactly: value) else { throw corrupted("\(value) does not fit \(T.self)") }
        return result
    }

    func decodeNil() -> Bool { source.storageClass(at: index) == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        if source.storageClass(at: index) == .bool { return source.bool(at: index) }
        switch try storedInteger(type) {
        case 0: return false
        case 1: return true
        default: throw mismatch(type, "a boolean (0 or 1)")
        }
    }

    func decode(_ type: String.Type) throws -> String {
        guard source.storageClass(at: index) == .text else { throw mismatch(type, "text") }
        return source.text(at: index)
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch source.storageClass(at: index) {
        case .real: return source.double(at: index)
        case .integer: return Double(source.int64(at: index))
        default: throw mismatch(type, "a number")
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    func decode(_ type: Int.Type) throws -> Int { try fitting(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try fitting(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try fitting(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try fitting(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try storedInteger(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try fitting(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try fitting(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try fitting(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try fitting(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try fitting(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if type == Date.self, let date = try decodeDate() as? T {
            return date
        }
        if type == UUID.self {
            let text = try decode(String.self)
            guard let uuid = UUID(uuidString: text) as? T else { throw mismatch(type, "a UUID") }
            return uuid
        }
        if type == Data.self {
            guard source.storageClass(at: index) == .blob, let data = Data(source.bytes(at: index)) as? T else {
                throw mismatch(type, "a blob")
            }
            return data
        }
        if type == JSONValue.self {
            let value = try StoredJSON.value(source, index, kind: kind, dialect: decoder.dialect, table: table, name: key.stringValue)
            if let value = (value ?? .null) as? T { return value }
        }
        if kind == .json, source.storageClass(at: index) == .text {
            do {
                return try decoder.json.decode(type, from: Data(source.text(at: index).utf8))
            } catch {
                throw corrupted("holds JSON that does not decode as \(T.self): \(error)")
            }
        }
        // Raw-value enums and single-value wrappers decode from the column itself.
        return try T(from: self)
    }

    /// A date in the dialect's form: ISO 8601 text read in place from the column's bytes,
    /// or the exact seconds since 1970 of a `date` column.
    private func decodeDate() throws -> Date {
        switch decoder.dialect.dates {
        case .isoText:
            guard source.storageClass(at: index) == .text else { throw mismatch(Date.self, "a date as ISO 8601 text") }
            do {
                return Date(timeIntervalSinceReferenceDate: try source.withUnsafeText(at: index) { bytes throws(DateTextError) in
                    try DateText.referenceSeconds(parsing: bytes)
                })
            } catch {
                throw corrupted(error.description)
            }
        case .unixSeconds:
            guard source.storageClass(at: index) == .text, kind == .date else {
                throw corrupted("expected a date (exact seconds), found \(kind?.rawValue ?? "an unknown kind")")
            }
            let text = source.text(at: index)
            guard let date = DecimalText.date(unixSeconds: text) else {
                throw corrupted("expected a date (exact seconds), found \(DecimalText.nonFiniteDate(text))")
            }
            return date
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw mismatch(type, "a nested value (it is stored as \(kind?.rawValue ?? "an unknown kind"), not JSON)")
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw mismatch([Any].self, "an array (it is stored as \(kind?.rawValue ?? "an unknown kind"), not JSON)")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
}
