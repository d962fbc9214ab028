import EntityStore
import Foundation

/// Decodes one entity from the current row of a ``RowSource``, reading each field straight
/// from its column with the storage class its kind implies: the one row-to-`Codable`
/// bridge of both back ends, the inverse of ``RowEncoder``. Flat fields come from their
/// columns, nested values from JSON text, dates in the dialect's form; a missing column or
/// NULL is `nil`.
///
/// One decoder is reused for every row of a table; ``finish()`` ends its use.
package final class RowDecoder: Decoder {
    package var codingPath: [any CodingKey] = []
    package var userInfo: [CodingUserInfoKey: Any] = [:]
    package let source: any RowSource
    package let layout: RowLayout
    package let dialect: CodecDialect
    let json = JSONDecoder()
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

    package init(source: any RowSource, layout: RowLayout, dialect: CodecDialect) {
        self.source = source
        self.layout = layout
        self.dialect = dialect
    }

    /// The column of the field `name`, or nil if the table has none. O(1) when fields are
    /// asked in the same order on every row; a scan of the columns otherwise. (Hashing the
    /// name per field per row cost more than the rest of the decoding.)
    func column(named name: String) -> Int32? {
        defer { step += 1 }
        if step < planNames.count, planNames[step] == name { return planColumns[step] }
        let column = layout.names.firstIndex(of: name).map { Int32($0) }
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
    package func finish() {
        cachedContainer = nil
        cachedKeyType = nil
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
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

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "an entity decodes from a row, which is keyed"))
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "an entity decodes from a row, which is keyed"))
    }

    /// One column of the current row decoded as `type` (an ID read on its own), with the
    /// errors a field of that name would give.
    package func decodeColumn<T: Decodable>(_ type: T.Type, at column: Int32) throws -> T {
        let name = layout.names[Int(column)]
        return try cell(ColumnKey(name), at: column).decode(type)
    }
}

/// A coding key for a column named at run time.
package struct ColumnKey: CodingKey {
    package let stringValue: String
    package var intValue: Int? { nil }
    package init(_ name: String) { stringValue = name }
    package init(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
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
        ColumnCell(decoder: self, index: column, key: key)
    }

    func cell(_ key: some CodingKey) throws -> ColumnCell { cell(key, at: try requiredColumn(key)) }

    /// The field `key`, read straight from its column when the column holds the storage
    /// class `direct` (nil: never), and through ``ColumnCell`` otherwise.
    @inline(__always)
    private func field<T: Decodable>(
        _ key: some CodingKey, direct: StorageClass?, _ read: (Int32) -> T
    ) throws -> T {
        let column = try requiredColumn(key)
        if source.storageClass(at: column) == direct { return read(column) }
        return try cell(key, at: column).decode(T.self)
    }

    /// An optional field, with one column lookup (instead of the default's `contains`,
    /// then `decodeNil`, then `decode`); nil for a missing column or a NULL.
    @inline(__always)
    private func optionalField<T: Decodable>(
        _ key: some CodingKey, direct: StorageClass?, _ read: (Int32) -> T
    ) throws -> T? {
        guard let column = column(named: key.stringValue) else { return nil }
        let stored = source.storageClass(at: column)
        if stored == .null { return nil }
        if stored == direct { return read(column) }
        return try cell(key, at: column).decode(T.self)
    }

    /// Integers are read directly where `Int` is 64-bit, which holds any stored integer;
    /// elsewhere ``ColumnCell`` checks that the value fits.
    #if _pointerBitWidth(_64)
    private static var directInteger: StorageClass? { .integer }
    #else
    private static var directInteger: StorageClass? { nil }
    #endif

    func decodeString(_ key: some CodingKey) throws -> String {
        try field(key, direct: .text) { source.text(at: $0) }
    }

    func decodeDouble(_ key: some CodingKey) throws -> Double {
        try field(key, direct: .real) { source.double(at: $0) }
    }

    func decodeInt64(_ key: some CodingKey) throws -> Int64 {
        try field(key, direct: .integer) { source.int64(at: $0) }
    }

    func decodeInt(_ key: some CodingKey) throws -> Int {
        try field(key, direct: Self.directInteger) { Int(source.int64(at: $0)) }
    }

    func decodeStringIfPresent(_ key: some CodingKey) throws -> String? {
        try optionalField(key, direct: .text) { source.text(at: $0) }
    }

    func decodeIntIfPresent(_ key: some CodingKey) throws -> Int? {
        try optionalField(key, direct: Self.directInteger) { Int(source.int64(at: $0)) }
    }

    func decodeDoubleIfPresent(_ key: some CodingKey) throws -> Double? {
        try optionalField(key, direct: .real) { source.double(at: $0) }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, _ key: some CodingKey) throws -> T? {
        guard let column = column(named: key.stringValue), source.storageClass(at: column) != .null else { return nil }
        return try cell(key, at: column).decode(type)
    }

    /// Whether the field is nil: its column is missing or NULL.
    func decodeNil(_ key: some CodingKey) -> Bool {
        guard let column = column(named: key.stringValue) else { return true }
        return source.storageClass(at: column) == .null
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
    var allKeys: [Key] { withDecoder { $0.layout.names.compactMap { Key(stringValue: $0) } } }

    func contains(_ key: Key) -> Bool { withDecoder { $0.column(named: key.stringValue) != nil } }

    func decodeNil(forKey key: Key) throws -> Bool { withDecoder { $0.decodeNil(key) } }
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
