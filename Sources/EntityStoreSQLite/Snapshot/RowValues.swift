import EntityStore

/// Conversions between stored column values and dynamic `JSONValue`s, by column kind.
enum RowValues {
    /// The JSON value of a column, exact for every kind: `bool` columns give booleans,
    /// `double` columns doubles (also for whole numbers), `json` columns the parsed JSON;
    /// dates their ISO 8601 text (checked), blobs a base64 string. NULL gives nil (an
    /// absent field).
    static func jsonValue(
        _ statement: SQLiteStatement, _ index: Int32, kind: ColumnKind?, table: String, column: String
    ) throws(SnapshotError) -> JSONValue? {
        let stored = statement.columnType(index)
        if stored == .null { return nil }
        func wrong() -> SnapshotError {
            .invalidData(table: table, detail: "column '\(column)' is declared \(kind?.rawValue ?? "untyped") but holds \(stored)")
        }
        switch kind {
        case .bool?:
            guard stored == .integer else { throw wrong() }
            let value = statement.int64(at: index)
            guard value == 0 || value == 1 else { throw wrong() }
            return .bool(value == 1)
        case .integer?:
            guard stored == .integer else { throw wrong() }
            return .integer(statement.int64(at: index))
        case .double?:
            switch stored {
            case .real: return .double(statement.double(at: index))
            case .integer: return .double(Double(statement.int64(at: index)))
            default: throw wrong()
            }
        case .number?:
            switch stored {
            case .integer: return .integer(statement.int64(at: index))
            case .real: return .double(statement.double(at: index))
            default: throw wrong()
            }
        case .date?:
            guard stored == .text else { throw wrong() }
            do {
                _ = try statement.withUnsafeText(at: index) { bytes throws(DateTextError) in try DateText.referenceSeconds(parsing: bytes) }
            } catch {
                throw .invalidData(table: table, detail: "column '\(column)': \(error.description)")
            }
            return .string(statement.text(at: index))
        case .string?, .uuid?:
            guard stored == .text else { throw wrong() }
            return .string(statement.text(at: index))
        case .json?:
            guard stored == .text else { throw wrong() }
            do { return try JSONValue(parsing: statement.text(at: index)) } catch {
                throw .invalidData(table: table, detail: "column '\(column)' holds invalid JSON: \(error)")
            }
        case .blob?:
            guard stored == .blob else { throw wrong() }
            return .string(Base64.encode(statement.blob(at: index)))
        case .null?, nil:
            switch stored {
            case .integer: return .integer(statement.int64(at: index))
            case .real: return .double(statement.double(at: index))
            case .text: return .string(statement.text(at: index))
            case .blob: return .string(Base64.encode(statement.blob(at: index)))
            case .null: return nil
            }
        }
    }
}

/// Standard base64 (RFC 4648) without line breaks.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 2 < bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int((chunk >> UInt32(shift)) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let chunk = UInt32(bytes[index]) << 16 | (rest > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
            output.append(alphabet[Int((chunk >> 18) & 63)])
            output.append(alphabet[Int((chunk >> 12) & 63)])
            output.append(rest > 1 ? alphabet[Int((chunk >> 6) & 63)] : UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        }
        return String(decoding: output, as: UTF8.self)
    }
}
