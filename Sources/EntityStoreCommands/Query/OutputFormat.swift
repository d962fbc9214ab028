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
    static var automatic: OutputFormat { CommandOutput.isTerminal(STDOUT_FILENO) ? .table : .ndjson }
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
        var aligner = TableAligner(fields: fields)
        for row in rows { aligner.measure { row[$0] } }
        return aligner.header() + rows.map { row in aligner.line { row[$0] } }.joined() + aligner.footer(rows: rows.count)
    }

    /// A value as a table cell: strings bare, null as `null`, control characters escaped,
    /// at most 40 columns. A string is escaped and measured only as far as a cell can show
    /// (`cellLookahead` characters), so a 4 KB string costs what a short one does.
    static func cell(_ value: JSONValue) -> String {
        let text = if case .string(let string) = value { string } else { value.serialized() }
        let head = text.prefix(cellLookahead)
        return cut(Echo.escaped(String(head)), longer: head.endIndex != text.endIndex)
    }

    /// How many characters of a value a cell escapes and measures: every character takes
    /// at least one column, so 40 would do; the slack covers escapes that join the
    /// characters after them into one grapheme (a combining mark after `\u{1B}`).
    private static let cellLookahead = 80

    /// At most 40 columns of screen, cut with "…" when wider or when `longer` says the
    /// text was already shortened.
    static func cut(_ text: String, longer: Bool = false) -> String {
        guard longer || width(text) > 40 else { return text }
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
        return wideScalars.contains { $0.contains(scalar) } ? 2 : 1
    }

    /// The scalars that start a character two columns wide.
    private static let wideScalars: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
        0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
        0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD,
    ]
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

/// Aligns a table in two passes over its rows, holding none of them: ``measure(_:)`` each
/// row, then print ``header()``, each row's ``line(_:)`` and ``footer(rows:)``. Numbers are
/// right-aligned (a column of numbers, nulls and missing values), text left-aligned, and
/// cells cut at 40 columns of screen.
struct TableAligner {
    /// The columns, in print order.
    let fields: [String]
    private var widths: [Int]
    /// Per column: whether a row has the field, and whether every value is a number or null.
    private var hasValue: [Bool]
    private var allNumbers: [Bool]

    init(fields: [String]) {
        self.fields = fields
        widths = fields.map { RowPrinter.width(RowPrinter.cut(Echo.escaped($0))) }
        hasValue = fields.map { _ in false }
        allNumbers = fields.map { _ in true }
    }

    /// Takes a row, whose value in each field `value` gives, into the columns' widths.
    mutating func measure(_ value: (String) -> JSONValue?) {
        for (column, field) in fields.enumerated() {
            let cell = value(field)
            switch cell {
            case nil: continue
            case .integer?, .double?, .null?: break
            default: allNumbers[column] = false
            }
            hasValue[column] = true
            widths[column] = max(widths[column], RowPrinter.width(cell.map(RowPrinter.cell) ?? ""))
        }
    }

    /// The column names and the rule under them.
    func header() -> String {
        line(fields.map { RowPrinter.cut(Echo.escaped($0)) }) + line(widths.map { String(repeating: "-", count: $0) })
    }

    /// A measured row's line.
    func line(_ value: (String) -> JSONValue?) -> String {
        line(fields.map { value($0).map(RowPrinter.cell) ?? "" })
    }

    /// The count of rows, after the last.
    func footer(rows count: Int) -> String {
        "(\(Echo.grouped(count)) \(count == 1 ? "row" : "rows"))\n"
    }

    private func line(_ cells: [String]) -> String {
        cells.enumerated().map { column, cell in
            // Never negative, even for a row that was not measured.
            let padding = String(repeating: " ", count: max(0, widths[column] - RowPrinter.width(cell)))
            return hasValue[column] && allNumbers[column] ? padding + cell : cell + padding
        }.joined(separator: "  ").trimmingTrailingSpaces + "\n"
    }
}
