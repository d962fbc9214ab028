import ArgumentParser
import EntityStore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How `query` prints rows.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    /// Aligned columns under a header, for reading.
    case table
    /// One JSON array of objects.
    case json
    /// One JSON object per line.
    case ndjson
    /// A CSV header row, then one row per record.
    case csv

    /// `table` when standard output is a terminal, else `ndjson`.
    static var automatic: OutputFormat { isatty(STDOUT_FILENO) == 1 ? .table : .ndjson }
}

/// Prints rows (records, or group-by results) with their fields in a fixed order.
struct RowPrinter {
    let format: OutputFormat
    /// The columns, in print order.
    let fields: [String]

    /// The rows as text, each row a map from field to value (a missing field prints as
    /// nothing in CSV and tables, and is left out of JSON objects).
    func text(_ rows: [[String: JSONValue]]) -> String {
        guard var streamer = RowStreamer(format: format, fields: fields) else { return table(rows) }
        return rows.map { streamer.text($0) }.joined() + streamer.end()
    }

    /// Aligned columns: numbers right-aligned, text left-aligned, long cells cut.
    private func table(_ rows: [[String: JSONValue]]) -> String {
        let cells = rows.map { row in fields.map { row[$0].map(Self.cell) ?? "" } }
        let header = fields.map { Self.cut(Echo.escaped($0)) }
        var widths = header.map(Self.width)
        for row in cells {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], Self.width(cell)) }
        }
        let numeric = fields.indices.map { column in
            rows.contains { $0[fields[column]] != nil } && rows.allSatisfy { row in
                switch row[fields[column]] {
                case .integer?, .double?, nil, .null?: true
                default: false
                }
            }
        }
        func line(_ row: [String]) -> String {
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - Self.width(cell))
                return numeric[column] ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingTrailingSpaces + "\n"
        }
        var text = line(header)
        text += line(widths.map { String(repeating: "-", count: $0) })
        for row in cells { text += line(row) }
        text += "(\(Echo.grouped(rows.count)) \(rows.count == 1 ? "row" : "rows"))\n"
        return text
    }

    /// A value as a table cell: strings bare, null as `null`, control characters escaped,
    /// at most 40 characters.
    private static func cell(_ value: JSONValue) -> String {
        let text = if case .string(let string) = value { string } else { value.serialized() }
        return cut(Echo.escaped(text))
    }

    /// At most 40 columns of screen.
    private static func cut(_ text: String) -> String {
        guard width(text) > 40 else { return text }
        var kept = "", used = 0
        for character in text {
            let next = width(of: character)
            if used + next > 39 { break }
            kept.append(character)
            used += next
        }
        return kept + "…"
    }

    /// The columns a cell takes on screen: two for each wide character (CJK ideographs,
    /// kana, Hangul, fullwidth forms, most emoji), one for any other grapheme cluster.
    static func width(_ text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    private static func width(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first?.value, scalar >= 0x1100 else { return 1 }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD,
        ]
        return wide.contains { $0.contains(scalar) } ? 2 : 1
    }
}

extension String {
    /// The text without trailing spaces.
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// Prints rows one at a time, for the formats that need no look at later rows (all but
/// `table`): the text of the rows and then ``end()`` is what ``RowPrinter`` prints for
/// them all at once.
struct RowStreamer {
    let format: OutputFormat
    /// The columns, in print order.
    let fields: [String]
    /// Each column's JSON member name and colon, `"name":`.
    private let keys: [String]
    /// The rows printed so far.
    private(set) var count = 0

    /// Nil for `table`, which aligns its columns over all rows.
    init?(format: OutputFormat, fields: [String]) {
        guard format != .table else { return nil }
        self.format = format
        self.fields = fields
        self.keys = fields.map { JSONValue.string($0).serialized() + ":" }
    }

    /// The text of the next row (after what comes before the first).
    mutating func text(_ row: [String: JSONValue]) -> String {
        text { row[$0] }
    }

    /// The text of the next row, whose value in each field `value` gives (nil: none).
    mutating func text(_ value: (String) -> JSONValue?) -> String {
        defer { count += 1 }
        switch format {
        case .json: return (count == 0 ? "[\n  " : ",\n  ") + object(value)
        case .csv: return (count == 0 ? header : "") + fields.map { CSVWriter.quotedIfNeeded(value($0).map(CSVWriter.text) ?? "") }.joined(separator: ",") + "\n"
        case .ndjson, .table: return object(value) + "\n"
        }
    }

    /// What follows the last row.
    func end() -> String {
        switch format {
        case .json: count == 0 ? "[]\n" : "\n]\n"
        case .csv: count == 0 ? header : ""
        case .ndjson, .table: ""
        }
    }

    private var header: String { fields.map(CSVWriter.quotedIfNeeded).joined(separator: ",") + "\n" }

    /// A JSON object with the row's fields in column order.
    private func object(_ value: (String) -> JSONValue?) -> String {
        var text = "{"
        var first = true
        for (field, key) in zip(fields, keys) {
            guard let member = value(field) else { continue }
            if !first { text += "," }
            first = false
            text += key
            text += member.serialized()
        }
        return text + "}"
    }
}
