import EntityStore
import Foundation

/// The JSON value of a stored column, exact for every kind, for dynamic records.
package enum StoredJSON {
    /// The value of `column` in `source`'s current row: `bool` columns give booleans,
    /// `double` columns doubles (also for whole numbers), `number` columns integers or
    /// doubles as stored, `json` columns the parsed JSON, dates the format's date text
    /// (checked), blobs a base64 string. NULL gives nil (an absent field).
    /// - Throws: ``InvalidStoredValue`` for a value that does not fit its column's kind.
    package static func value(
        _ source: any RowSource, _ column: Int32, kind: ColumnKind?, dialect: CodecDialect, table: String, name: String
    ) throws(InvalidStoredValue) -> JSONValue? {
        let stored = source.storageClass(at: column)
        if stored == .null { return nil }
        func wrong() -> InvalidStoredValue {
            InvalidStoredValue(table: table, detail: "column '\(name)' is declared \(kind?.rawValue ?? "untyped") but holds \(stored)")
        }
        switch kind {
        case .bool?:
            switch stored {
            case .bool: return .bool(source.bool(at: column))
            case .integer:
                let value = source.int64(at: column)
                guard value == 0 || value == 1 else { throw wrong() }
                return .bool(value == 1)
            default: throw wrong()
            }
        case .integer?:
            guard stored == .integer else { throw wrong() }
            return .integer(source.int64(at: column))
        case .double?:
            switch stored {
            case .real: return .double(source.double(at: column))
            case .integer: return .double(Double(source.int64(at: column)))
            default: throw wrong()
            }
        case .number?:
            switch stored {
            case .integer: return .integer(source.int64(at: column))
            case .real: return .double(source.double(at: column))
            case .text where dialect.numbersAsText: return try number(source.text(at: column), table: table, name: name)
            default: throw wrong()
            }
        case .date?:
            guard stored == .text else { throw wrong() }
            return .string(try dateText(source, column, dialect: dialect, table: table, name: name))
        case .string?, .uuid?:
            guard stored == .text else { throw wrong() }
            return .string(source.text(at: column))
        case .json?:
            guard stored == .text else { throw wrong() }
            do { return try JSONValue(parsing: source.text(at: column)) } catch {
                throw InvalidStoredValue(table: table, detail: "column '\(name)' holds invalid JSON: \(error)")
            }
        case .blob?:
            guard stored == .blob else { throw wrong() }
            return .string(Data(source.bytes(at: column)).base64EncodedString())
        case .null?, nil:
            switch stored {
            case .integer: return .integer(source.int64(at: column))
            case .real: return .double(source.double(at: column))
            case .bool: return .bool(source.bool(at: column))
            case .text: return .string(source.text(at: column))
            case .blob: return .string(Data(source.bytes(at: column)).base64EncodedString())
            case .null: return nil
            }
        }
    }

    /// A `number` column's decimal text: a double when it has a fractional part or an
    /// exponent (as every stored double has), an integer otherwise.
    private static func number(_ text: String, table: String, name: String) throws(InvalidStoredValue) -> JSONValue {
        if text.contains(".") || text.contains("e"), let number = Double(text) { return .double(number) }
        if let number = Int64(text) { return .integer(number) }
        if let number = Double(text) { return .double(number) }
        throw InvalidStoredValue(table: table, detail: "column '\(name)' holds '\(text)', not a number")
    }

    /// A `date` column's value as the format's date text: checked and kept as stored (ISO
    /// text), or converted from exact seconds.
    private static func dateText(
        _ source: any RowSource, _ column: Int32, dialect: CodecDialect, table: String, name: String
    ) throws(InvalidStoredValue) -> String {
        switch dialect.dates {
        case .isoText:
            do {
                _ = try source.withUnsafeText(at: column) { bytes throws(DateTextError) in try DateText.referenceSeconds(parsing: bytes) }
            } catch {
                throw InvalidStoredValue(table: table, detail: "column '\(name)': \(error.description)")
            }
            return source.text(at: column)
        case .unixSeconds:
            let text = source.text(at: column)
            guard let date = DecimalText.date(unixSeconds: text), let iso = try? DateText.string(from: date) else {
                throw InvalidStoredValue(table: table, detail: "column '\(name)' holds \(DecimalText.nonFiniteDate(text))")
            }
            return iso
        }
    }
}
