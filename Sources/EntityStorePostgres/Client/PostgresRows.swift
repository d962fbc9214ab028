#if PostgreSQL
import CLibPQ
import EntityStoreCodec
import Foundation

/// The rows of one statement's result, in libpq's text format; freed with the object.
///
/// Cells are read by position. ``value(_:_:table:)`` types a cell by its column's
/// PostgreSQL type, as the store's codec needs it.
final class PostgresRows {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) {
        self.result = result
    }

    deinit { PQclear(result) }

    /// The number of rows.
    var count: Int { Int(PQntuples(result)) }
    /// The number of columns.
    var columnCount: Int { Int(PQnfields(result)) }
    /// Whether there are no rows.
    var isEmpty: Bool { count == 0 }
    /// The rows the command affected (`INSERT`, `UPDATE`, `DELETE`, `COPY`), 0 for others.
    var affected: Int { PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0 }

    /// The name of column `column`.
    func columnName(_ column: Int) -> String { PQfname(result, Int32(column)).map { String(cString: $0) } ?? "" }

    /// Whether the cell is SQL NULL.
    func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) != 0 }

    /// The cell's text (nil for NULL).
    func string(_ row: Int, _ column: Int) -> String? {
        if isNull(row, column) { return nil }
        return withBytes(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    /// The cell's text, which must not be NULL.
    /// - Throws: ``PostgresStoreError/invalidData(table:detail:)`` for NULL.
    func requiredString(_ row: Int, _ column: Int, table: String = "") throws(PostgresStoreError) -> String {
        guard let text = string(row, column) else {
            throw .invalidData(table: table, detail: "column '\(columnName(column))' is NULL")
        }
        return text
    }

    /// The cell as an integer, which must not be NULL.
    func requiredInt64(_ row: Int, _ column: Int, table: String = "") throws(PostgresStoreError) -> Int64 {
        guard let number = int64(row, column) else {
            throw .invalidData(table: table, detail: "column '\(columnName(column))' does not hold an integer")
        }
        return number
    }

    /// The cell as an integer (nil for NULL or text that is not one).
    func int64(_ row: Int, _ column: Int) -> Int64? { string(row, column).flatMap { Int64($0) } }

    /// The cell as a boolean (nil for NULL).
    func bool(_ row: Int, _ column: Int) -> Bool? { string(row, column).map { $0 == "t" || $0 == "true" } }

    private func withBytes<R>(_ row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard let pointer = PQgetvalue(result, Int32(row), Int32(column)) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { body(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// The cell as a stored value, by its column's type: integers, floating point (`NaN`,
    /// `±Infinity` and `-0` kept), booleans and `bytea` are typed; everything else
    /// (`NUMERIC`, `UUID`, `JSONB`, text) is its text.
    /// - Throws: ``PostgresStoreError/invalidData(table:detail:)`` for a cell whose text
    ///   does not read as its type.
    func value(_ row: Int, _ column: Int, table: String) throws(PostgresStoreError) -> StoredValue {
        if isNull(row, column) { return .null }
        switch PQftype(result, Int32(column)) {
        case 20, 21, 23:  // int8, int2, int4
            guard let number = withBytes(row, column, { Self.integer($0) }) else { throw invalid(column, table) }
            return .integer(number)
        case 700, 701:  // float4, float8
            guard let text = string(row, column), let number = Self.double(text) else { throw invalid(column, table) }
            return .double(number)
        case 16:  // bool
            return .bool(withBytes(row, column) { $0.first == UInt8(ascii: "t") })
        case 17:  // bytea, hex output: \x0a1b...
            guard let bytes = withBytes(row, column, { Self.hexBytes($0) }) else { throw invalid(column, table) }
            return .bytes(bytes)
        default:
            return .text(string(row, column) ?? "")
        }
    }

    private func invalid(_ column: Int, _ table: String) -> PostgresStoreError {
        .invalidData(table: table, detail: "column '\(columnName(column))' holds a value this reader cannot decode")
    }

    /// A decimal integer's value, without building a string. Nil on overflow or other text.
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard !bytes.isEmpty else { return nil }
        var index = 0
        let negative = bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        guard index < bytes.count else { return nil }
        var magnitude: UInt64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- 48
            guard digit < 10 else { return nil }
            let (times, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// PostgreSQL's text of a float: shortest exact digits, `NaN`, `Infinity`, `-Infinity`.
    static func double(_ text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return Double(text)
        }
    }

    /// The bytes of `bytea`'s hex output (`\x` then two digits a byte).
    static func hexBytes(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x"), text.count % 2 == 0 else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: return byte - 48
            case 97...102: return byte - 87
            case 65...70: return byte - 55
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((text.count - 2) / 2)
        var index = 2
        while index < text.count {
            guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

/// A statement's parameter, sent as text and typed by the statement's cast (`$1::int8`).
enum PostgresParameter: Sendable {
    case null
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case text(String)
    case bytes([UInt8])
    /// A `text[]` literal.
    case texts([String])
    /// An `int8[]` literal.
    case integers([Int64])

    /// A stored value as a parameter.
    init(_ value: StoredValue) {
        switch value {
        case .null: self = .null
        case let .integer(number): self = .integer(number)
        case let .double(number): self = .double(number)
        case let .bool(flag): self = .bool(flag)
        case let .text(text): self = .text(text)
        case let .bytes(bytes): self = .bytes(bytes)
        }
    }

    /// The parameter's text (nil for NULL).
    /// - Throws: ``PostgresStoreError/invalidData(table:detail:)`` for text holding a NUL
    ///   character, which PostgreSQL's text cannot hold.
    func text() throws(PostgresStoreError) -> String? {
        switch self {
        case .null: return nil
        case let .integer(number): return String(number)
        case let .double(number): return Self.text(of: number)
        case let .bool(flag): return flag ? "t" : "f"
        case let .text(text):
            try Self.checkNoNUL(text)
            return text
        case let .bytes(bytes): return Self.hex(bytes)
        case let .texts(texts):
            var literal = "{"
            for (position, text) in texts.enumerated() {
                try Self.checkNoNUL(text)
                if position > 0 { literal += "," }
                literal += "\""
                for character in text.unicodeScalars {
                    if character == "\\" || character == "\"" { literal.unicodeScalars.append("\\") }
                    literal.unicodeScalars.append(character)
                }
                literal += "\""
            }
            return literal + "}"
        case let .integers(numbers):
            return "{" + numbers.map(String.init).joined(separator: ",") + "}"
        }
    }

    /// PostgreSQL's text for a double: the shortest digits that read back exactly.
    static func text(of number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        return number.description
    }

    /// `\x` and two hex digits per byte: `bytea`'s input.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        text.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func checkNoNUL(_ text: String) throws(PostgresStoreError) {
        if text.utf8.contains(0) {
            throw .invalidData(table: "", detail: "a text value holds a NUL character, which PostgreSQL cannot store")
        }
    }
}
#endif
