import EntityStore
import Foundation

/// The columns of one snapshot table as the reader sees them.
struct ColumnLayout {
    /// Column index in the `SELECT` by field name.
    let index: [String: Int32]
    /// Declared kind by field name.
    let kind: [String: ColumnKind]
    let table: String
    /// What NULL means, by field name (missing: a missing field).
    var nulls: [String: NullMeaning] = [:]

    /// The layout of `statement`'s result columns for the stored table `stored`.
    init(_ statement: SQLiteStatement, stored: SnapshotMetadata.TableMetadata) {
        var index: [String: Int32] = [:]
        for column in 0..<statement.columnCount { index[statement.columnName(column)] = column }
        var kinds: [String: ColumnKind] = [:]
        var nulls: [String: NullMeaning] = [:]
        for column in stored.columns {
            kinds[column.name] = column.kind
            if column.nulls != .absent { nulls[column.name] = column.nulls }
        }
        self.init(index: index, kind: kinds, table: stored.name)
        self.nulls = nulls
    }

    init(index: [String: Int32], kind: [String: ColumnKind], table: String) {
        self.index = index
        self.kind = kind
        self.table = table
    }
}

/// Decodes one entity from the current row of a `SELECT *` statement, reading each field
/// straight from its column with the storage class its kind implies.
final class RowDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    let statement: SQLiteStatement
    let layout: ColumnLayout
    let json = JSONDecoder()
    /// The columns by position, for the name scan of `column(named:)`.
    private let names: [String]
    private let columns: [Int32]
    /// The fields asked for, in order, while decoding the last row, with their columns: an
    /// entity asks for its fields in the same order on every row, so the n-th request of
    /// a row is checked against the n-th of the last one (comparing a string with itself,
    /// which is cheap) before any search.
    /// (Exclusivity is unchecked: the decoder is used by one thread, one call at a time,
    /// and these are touched only inside `column(named:)` and `container(keyedBy:)`,
    /// which never overlap; the dynamic checks cost more than the lookups.)
    @exclusivity(unchecked) private var planNames: [String] = []
    @exclusivity(unchecked) private var planColumns: [Int32?] = []
    /// The number of requests so far in the current row.
    @exclusivity(unchecked) private var step = 0
    /// The keyed container of the last key type asked for, reused for every row (its
    /// creation costs a metadata lookup and an allocation). ``finish()`` drops it.
    @exclusivity(unchecked) private var cachedContainer: AnyObject?
    @exclusivity(unchecked) private var cachedKeyType: ObjectIdentifier?

    init(statement: SQLiteStatement, layout: ColumnLayout) {
        self.statement = statement
        self.layout = layout
        let sorted = layout.index.sorted { $0.value < $1.value }
        names = sorted.map { $0.key }
        columns = sorted.map { $0.value }
    }

    /// The column of the field `name`, or nil if the table has none. O(1) when fields are
    /// asked in the same order on every row; a scan of the columns otherwise. (Hashing the
    /// name per field per row cost more than the rest of the decoding.)
    func column(named name: String) -> Int32? {
        defer { step += 1 }
        if step < planNames.count, planNames[step] == name { return planColumns[step] }
        let column = names.firstIndex(of: name).map { columns[$0] }
        if step < planNames.count {
            planNames[step] = name
            planColumns[step] = column
        } else {
            planNames.append(name)
            planColumns.append(column)
        }
        return column
    }

    /// Drops the cached container: decoding is over.
    func finish() {
        cachedContainer = nil
        cachedKeyType = nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        // A new entity begins.
        step = 0
        if cachedKeyType == ObjectIdentifier(type), let cachedContainer {
            // Stored below for this very key type.
            return unsafeDowncast(cachedContainer, to: ContainerCache<Key>.self).container
        }
        let container = KeyedDecodingContainer(RowKeyedDecoder<Key>(unmanagedDecoder: .passUnretained(self)))
        cachedContainer = ContainerCache(container)
        cachedKeyType = ObjectIdentifier(type)
        return container
    }

    /// Holds a keyed container so the decoder can keep it without knowing its key type.
    private final class ContainerCache<Key: CodingKey> {
        let container: KeyedDecodingContainer<Key>
        init(_ container: KeyedDecodingContainer<Key>) { self.container = container }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "an entity decodes from a row, which is keyed"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "an entity decodes from a row, which is keyed"))
    }
}

/// The field reads of a keyed container, on the decoder itself: called through the
/// container's unretained reference, so no field of any row retains the decoder.
extension RowDecoder {
    func requiredColumn(_ key: some CodingKey) throws -> Int32 {
        guard let index = column(named: key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(
                codingPath: [key],
                debugDescription: "table '\(layout.table)' has no column '\(key.stringValue)' for this non-optional field"))
        }
        return index
    }

    func cell(_ key: some CodingKey, at column: Int32) -> ColumnCell {
        ColumnCell(statement: statement, index: column, key: key, table: layout.table, kind: layout.kind[key.stringValue], json: json)
    }

    func cell(_ key: some CodingKey) throws -> ColumnCell { cell(key, at: try requiredColumn(key)) }

    /// The field `key`, read straight from its column when the column holds the storage
    /// class `direct` (nil: never), and through ``ColumnCell`` otherwise.
    @inline(__always)
    private func field<T: Decodable>(
        _ key: some CodingKey, direct: SQLiteValue.Kind?, _ read: (Int32) -> T
    ) throws -> T {
        let column = try requiredColumn(key)
        if statement.columnType(column) == direct { return read(column) }
        return try cell(key, at: column).decode(T.self)
    }

    /// An optional field, with one column lookup (instead of the default's `contains`,
    /// then `decodeNil`, then `decode`); nil for a missing column or a NULL.
    @inline(__always)
    private func optionalField<T: Decodable>(
        _ key: some CodingKey, direct: SQLiteValue.Kind?, _ read: (Int32) -> T
    ) throws -> T? {
        guard let column = column(named: key.stringValue) else { return nil }
        let stored = statement.columnType(column)
        if stored == .null { return nil }
        if stored == direct { return read(column) }
        return try cell(key, at: column).decode(T.self)
    }

    /// Integers are read directly where `Int` is 64-bit, which holds any stored integer;
    /// elsewhere ``ColumnCell`` checks that the value fits.
    #if _pointerBitWidth(_64)
    private static var directInteger: SQLiteValue.Kind? { .integer }
    #else
    private static var directInteger: SQLiteValue.Kind? { nil }
    #endif

    func decodeString(_ key: some CodingKey) throws -> String {
        try field(key, direct: .text) { statement.text(at: $0) }
    }

    func decodeDouble(_ key: some CodingKey) throws -> Double {
        try field(key, direct: .real) { statement.double(at: $0) }
    }

    func decodeInt64(_ key: some CodingKey) throws -> Int64 {
        try field(key, direct: .integer) { statement.int64(at: $0) }
    }

    func decodeInt(_ key: some CodingKey) throws -> Int {
        try field(key, direct: Self.directInteger) { Int(statement.int64(at: $0)) }
    }

    func decodeStringIfPresent(_ key: some CodingKey) throws -> String? {
        try optionalField(key, direct: .text) { statement.text(at: $0) }
    }

    func decodeIntIfPresent(_ key: some CodingKey) throws -> Int? {
        try optionalField(key, direct: Self.directInteger) { Int(statement.int64(at: $0)) }
    }

    func decodeDoubleIfPresent(_ key: some CodingKey) throws -> Double? {
        try optionalField(key, direct: .real) { statement.double(at: $0) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, _ key: some CodingKey) throws -> T? {
        guard let column = column(named: key.stringValue), !statement.isNull(at: column) else { return nil }
        return try cell(key, at: column).decode(type)
    }
}

/// Reads fields of the current row by name.
///
/// Text, integers and doubles stored in their expected storage class are read directly;
/// anything else (and every error) goes through ``ColumnCell``, which knows the kinds.
///
/// The decoder is held unretained. The standard library's container box copies this
/// value on every call, so a strong reference would retain and release the decoder for
/// every field of every row, a large share of a restore. The decoder outlives every
/// use: it makes this container only for the `init(from:)` calls it runs itself, keeps
/// it until ``RowDecoder/finish()``, after the last row, and every read happens inside
/// those calls. (Like any decoding container, it is not meant to be kept past the
/// `init(from:)` it was given to.)
struct RowKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let unmanagedDecoder: Unmanaged<RowDecoder>

    /// Runs `body` with the decoder, without retaining it.
    @inline(__always)
    private func withDecoder<R>(_ body: (RowDecoder) throws -> R) rethrows -> R {
        try unmanagedDecoder._withUnsafeGuaranteedRef(body)
    }

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { withDecoder { $0.layout.index.keys.compactMap { Key(stringValue: $0) } } }

    func contains(_ key: Key) -> Bool { withDecoder { $0.column(named: key.stringValue) != nil } }

    func decodeNil(forKey key: Key) throws -> Bool { try withDecoder { $0.statement.isNull(at: try $0.requiredColumn(key)) } }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try withDecoder { try $0.decodeString(key) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try withDecoder { try $0.decodeDouble(key) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try withDecoder { try $0.decodeInt(key) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try withDecoder { try $0.decodeInt64(key) } }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try withDecoder { try $0.decodeStringIfPresent(key) }
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try withDecoder { try $0.decodeIntIfPresent(key) }
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try withDecoder { try $0.decodeDoubleIfPresent(key) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try withDecoder { try $0.decodeIfPresent(type, key) }
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try withDecoder { try $0.cell(key).decode(type) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try withDecoder { try $0.cell(key).decode(type) } }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try withDecoder { try $0.cell(key).decode(type) } }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "decode a Codable value for '\(key.stringValue)' instead of a nested container"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "decode a Codable value for '\(key.stringValue)' instead of a nested container"))
    }

    func superDecoder() throws -> any Decoder { unmanagedDecoder.takeUnretainedValue() }
    func superDecoder(forKey key: Key) throws -> any Decoder { unmanagedDecoder.takeUnretainedValue() }
}

/// One column of the current row, decoded as the Swift type asks, with a specific error
/// when the stored value does not fit.
struct ColumnCell: SingleValueDecodingContainer, Decoder {
    let statement: SQLiteStatement
    let index: Int32
    let key: any CodingKey
    let table: String
    let kind: ColumnKind?
    let json: JSONDecoder

    var codingPath: [any CodingKey] { [key] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    private func mismatch<T>(_ type: T.Type, _ expected: String) -> DecodingError {
        let stored = statement.columnType(index)
        return DecodingError.typeMismatch(type, .init(
            codingPath: [key],
            debugDescription: "table '\(table)' column '\(key.stringValue)' holds \(stored) where the Swift type expects \(expected)"))
    }

    private func storedInteger<T>(_ type: T.Type) throws -> Int64 {
        guard statement.columnType(index) == .integer else { throw mismatch(type, "an integer") }
        return statement.int64(at: index)
    }

    private func fitting<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let value = try storedInteger(type)
        guard let result = T(exactly: value) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [key], debugDescription: "table '\(table)' column '\(key.stringValue)': \(value) does not fit \(T.self)"))
        }
        return result
    }

    func decodeNil() -> Bool { statement.isNull(at: index) }

    func decode(_ type: Bool.Type) throws -> Bool {
        switch try storedInteger(type) {
        case 0: return false
        case 1: return true
        default: throw mismatch(type, "a boolean (0 or 1)")
        }
    }

    func decode(_ type: String.Type) throws -> String {
        guard statement.columnType(index) == .text else { throw mismatch(type, "text") }
        return statement.text(at: index)
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch statement.columnType(index) {
        case .real: return statement.double(at: index)
        case .integer: return Double(statement.int64(at: index))
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
            guard statement.columnType(index) == .blob, let data = Data(statement.blob(at: index)) as? T else {
                throw mismatch(type, "a blob")
            }
            return data
        }
        if type == JSONValue.self,
           let value = try RowValues.jsonValue(statement, index, kind: kind, table: table, column: key.stringValue) as? T {
            return value
        }
        if kind == .json, statement.columnType(index) == .text {
            do {
                return try json.decode(type, from: Data(statement.text(at: index).utf8))
            } catch {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: [key], debugDescription: "table '\(table)' column '\(key.stringValue)' holds JSON that does not decode as \(T.self): \(error)"))
            }
        }
        // Raw-value enums and single-value wrappers decode from the column itself.
        return try T(from: self)
    }

    /// A date from its ISO 8601 text, read in place from the column's bytes.
    private func decodeDate() throws -> Date {
        guard statement.columnType(index) == .text else { throw mismatch(Date.self, "a date as ISO 8601 text") }
        do {
            return Date(timeIntervalSinceReferenceDate: try statement.withUnsafeText(at: index) { bytes throws(DateTextError) in
                try DateText.referenceSeconds(parsing: bytes)
            })
        } catch {
            throw DecodingError.dataCorrupted(.init(
                codingPath: [key], debugDescription: "table '\(table)' column '\(key.stringValue)': \(error.description)"))
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
