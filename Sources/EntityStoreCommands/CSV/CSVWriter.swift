import EntityStore
import Foundation

/// Writes records as RFC 4180 CSV: a header row (`id`, then the fields), then one row per
/// record. Lines end with LF, as Unix tools expect (RFC 4180 readers accept it); a field
/// is quoted only when it holds a comma, a quote, a line break or leading/trailing spaces.
///
/// Values: `null` and an absent field are an empty field (CSV cannot tell them apart);
/// numbers are written as JSON spells them (`2.0` stays `2.0`); booleans `true`/`false`;
/// strings as they are; arrays and objects as JSON text.
struct CSVWriter {
    /// The fields after `id`, in column order.
    let fields: [String]

    /// The header row, with its line break.
    var header: String { line(["id"] + fields) }

    /// The row of `record`, with its line break.
    func row(_ record: DynamicRecord) -> String {
        var cells: [String] = [Self.text(record.id.jsonValue)]
        cells.reserveCapacity(fields.count + 1)
        for field in fields { cells.append(record.fields[field].map(Self.text) ?? "") }
        return line(cells)
    }

    private func line(_ cells: [String]) -> String {
        cells.map(Self.quotedIfNeeded).joined(separator: ",") + "\n"
    }

    /// A value's cell text, before quoting.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .null: ""
        case .string(let text): text
        default: value.serialized()
        }
    }

    static func quotedIfNeeded(_ cell: String) -> String {
        let needsQuotes = cell.utf8.contains { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }
            || cell.first == " " || cell.last == " "
        guard needsQuotes else { return cell }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
