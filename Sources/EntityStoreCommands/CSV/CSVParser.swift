/// An RFC 4180 reader over bytes: fields separated by commas, records by CRLF or LF,
/// quoted fields (`"a, ""b"""`) that may hold commas, quotes and line breaks. A leading
/// UTF-8 byte order mark is skipped.
///
/// Strict where lenient readers guess: a quote inside an unquoted field, text after a
/// closing quote, an unterminated quote and invalid UTF-8 are errors naming the line.
/// - Complexity: O(bytes), one pass, no copy of the input.
struct CSVParser {
    /// Why the text is not CSV, and on which line (1-based, counting line breaks inside
    /// quoted fields too).
    struct Failure: Error, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    private static let comma = UInt8(ascii: ","), quote = UInt8(ascii: "\""),
        newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")

    /// Calls `body` with each record's fields and the line the record starts on.
    static func forEachRecord(
        in bytes: UnsafeBufferPointer<UInt8>, _ body: (_ fields: [String], _ line: Int) throws -> Void
    ) throws {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let end = bytes.count
        // Validated once, so that each field decodes without a check of its own.
        if let line = firstInvalidUTF8Line(bytes) { throw Failure(line: line, reason: "the text is not valid UTF-8") }
        var line = 1
        var fields: [String] = []
        var field: [UInt8] = []
        while index < end {
            let recordLine = line
            fields.removeAll(keepingCapacity: true)
            var atRecordEnd = false
            while !atRecordEnd {
                // One field, starting at `index`.
                if index < end, bytes[index] == quote {
                    field.removeAll(keepingCapacity: true)
                    index += 1
                    var closed = false
                    while index < end {
                        let byte = bytes[index]
                        if byte == quote {
                            if index + 1 < end, bytes[index + 1] == quote {
                                field.append(quote)
                                index += 2
                                continue
                            }
                            index += 1
                            closed = true
                            break
                        }
                        if byte == newline { line += 1 }
                        field.append(byte)
                        index += 1
                    }
                    guard closed else {
                        throw Failure(line: recordLine, reason: "a quoted field is not closed before the end of the file")
                    }
                    fields.append(try string(field[...], line: line))
                } else {
                    let start = index
                    while index < end {
                        let byte = bytes[index]
                        if byte == comma || byte == newline || byte == carriageReturn { break }
                        if byte == quote {
                            throw Failure(line: line, reason: "a quote inside an unquoted field (quote the whole field and double the quote: \"a \"\"b\"\"\")")
                        }
                        index += 1
                    }
                    fields.append(try string(UnsafeBufferPointer(rebasing: bytes[start..<index]), line: line))
                }
                // What ends the field.
                if index >= end {
                    atRecordEnd = true
                } else if bytes[index] == comma {
                    index += 1
                    if index >= end { fields.append("") ; atRecordEnd = true }
                } else if bytes[index] == newline {
                    index += 1
                    line += 1
                    atRecordEnd = true
                } else if bytes[index] == carriageReturn {
                    index += 1
                    if index < end, bytes[index] == newline { index += 1 }
                    line += 1
                    atRecordEnd = true
                } else {
                    throw Failure(line: line, reason: "text after the closing quote of a field")
                }
            }
            // A blank line is no record.
            if fields.count == 1, fields[0].isEmpty { continue }
            try body(fields, recordLine)
        }
    }

    /// A field's text; the whole input was validated as UTF-8 first, and fields split at
    /// ASCII separators only, so each one is valid too.
    private static func string(_ bytes: some Collection<UInt8>, line: Int) throws -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// The line of the first byte that is not well-formed UTF-8, or nil if all are.
    private static func firstInvalidUTF8Line(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        // Most files are ASCII: a quick scan settles them.
        if !bytes.contains(where: { $0 >= 0x80 }) { return nil }
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        // Find where, line by line (a line break never splits a UTF-8 sequence).
        var line = 1, start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x0A {
            if String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) == nil { return line }
            line += 1
            start = index + 1
        }
        return line
    }
}
