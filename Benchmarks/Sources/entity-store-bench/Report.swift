/// Whether a figure's ratio is better above or below 1.
enum Direction: String {
    case higherIsBetter = "higher is better"
    case lowerIsBetter = "lower is better"
}

/// One reported figure: a value, the baseline measured in the same process on the same
/// data, and their ratio (whose definition each figure states).
struct Figure {
    let name: String
    let value: Double
    let unit: String
    let baseline: Double
    let ratio: Double
    /// What the ratio is, e.g. "ours / Dictionary".
    let ratioMeaning: String
    let direction: Direction
    /// What the baseline is, for the table.
    let baselineMeaning: String
}

/// The figures of one size, in the order they were measured.
struct SizeReport {
    let size: Int
    var figures: [Figure] = []
    var notes: [String] = []

    mutating func add(_ figure: Figure) { figures.append(figure) }

    /// Exactly one JSON object on one line:
    /// `{"size": N, "results": {NAME: {"value": X, "unit": "...", "baseline": Y, "ratio": R}}}`.
    func json() -> String {
        let results = figures.map { figure in
            "\(jsonString(figure.name)): {\"value\": \(jsonNumber(figure.value)), \"unit\": \(jsonString(figure.unit)), "
                + "\"baseline\": \(jsonNumber(figure.baseline)), \"ratio\": \(jsonNumber(figure.ratio))}"
        }
        return "{\"size\": \(size), \"results\": {\(results.joined(separator: ", "))}}"
    }

    /// A readable table.
    func table() -> String {
        var rows: [[String]] = [["figure", "value", "unit", "baseline", "ratio", "ratio is", "baseline is"]]
        for figure in figures {
            rows.append([
                figure.name, formatted(figure.value), figure.unit, formatted(figure.baseline),
                String(format2: figure.ratio), "\(figure.ratioMeaning) (\(figure.direction.rawValue))",
                figure.baselineMeaning,
            ])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = ["EntityStore benchmarks, N = \(grouped(size))"]
        for (index, row) in rows.enumerated() {
            let cells = row.enumerated().map { column, cell in
                column == 0 || column >= 5 ? cell.padding(toLength: widths[column]) : cell.leftPadding(toLength: widths[column])
            }
            lines.append(cells.joined(separator: "  "))
            if index == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        lines.append(contentsOf: notes.map { "note: \($0)" })
        return lines.joined(separator: "\n")
    }
}

// MARK: Formatting

/// A JSON string literal.
func jsonString(_ value: String) -> String {
    var out = "\""
    for scalar in value.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case _ where scalar.value < 0x20: out += "\\u" + String(scalar.value, radix: 16).leftPadding(toLength: 4, with: "0")
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// A JSON number; non-finite values (which JSON cannot hold) become null.
func jsonNumber(_ value: Double) -> String {
    guard value.isFinite else { return "null" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
    return String(format4: value)
}

/// A value with about four significant digits and thousands separators for large ones.
func formatted(_ value: Double) -> String {
    guard value.isFinite else { return "n/a" }
    if abs(value) >= 10_000 { return grouped(Int(value.rounded())) }
    if abs(value) >= 100 { return String(format2: value) }
    return String(format4: value)
}

/// An integer with thousands separators: 1,000,000.
func grouped(_ value: Int) -> String {
    let digits = String(abs(value))
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { out += "," }
        out.append(digit)
    }
    return value < 0 ? "-" + out : out
}

extension String {
    /// `value` with exactly `digits` decimals ("n/a" for NaN or an infinity).
    init(_ value: Double, decimals digits: Int) {
        guard value.isFinite else {
            self = "n/a"
            return
        }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled - Double(whole) * scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        self = digits == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(String(fraction).leftPadding(toLength: digits, with: "0"))"
    }

    init(format2 value: Double) { self.init(value, decimals: 2) }
    init(format4 value: Double) { self.init(value, decimals: 4) }

    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }

    func leftPadding(toLength length: Int, with pad: Character = " ") -> String {
        count >= length ? self : String(repeating: pad, count: length - count) + self
    }
}
