import EntityStore

/// Text from the input (file, table, field names, values) made fit to print in a line:
/// control characters escaped, lengths capped, large values summarized.
enum Echo {
    /// The longest line a message may take; the rest is summarized.
    static let lineLimit = 500

    /// `text` with every control character escaped, so that a message stays on one line
    /// and a terminal never receives raw escape sequences: `\n`, `\r`, `\t`, and `\u{1B}`
    /// for the others (C0, DEL, C1, line and paragraph separators, bidirectional
    /// overrides and isolates, which can make a line read other than it is).
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where needsEscape(scalar): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` escaped and cut to `limit` characters, the cut said: "… (N more characters)".
    static func capped(_ text: String, limit: Int = lineLimit) -> String {
        let text = escaped(text)
        guard text.count > limit else { return text }
        return text.prefix(limit) + "… (\(grouped(text.count - limit)) more characters)"
    }

    /// A name (table, field, file) for a message: escaped, quoted, and capped.
    static func name(_ text: String, limit: Int = 80) -> String {
        "'\(capped(text, limit: limit))'"
    }

    /// A short rendering of `value`: objects and arrays show their first `members`
    /// members ("... and 9,990 more fields"), strings their first characters.
    static func summary(_ value: JSONValue, members: Int = 10, depth: Int = 2) -> String {
        switch value {
        case .object(let object):
            guard depth > 0 else { return "{…}" }
            let keys = object.keys.sorted()
            var parts = keys.prefix(members).map { key in
                summary(.string(key), members: members, depth: depth) + ": "
                    + summary(object[key] ?? .null, members: members, depth: depth - 1)
            }
            if keys.count > members { parts.append("... and \(grouped(keys.count - members)) more fields") }
            return "{" + parts.joined(separator: ", ") + "}"
        case .array(let array):
            guard depth > 0 else { return "[…]" }
            var parts = array.prefix(members).map { summary($0, members: members, depth: depth - 1) }
            if array.count > members { parts.append("... and \(grouped(array.count - members)) more elements") }
            return "[" + parts.joined(separator: ", ") + "]"
        case .string(let string) where string.count > 60:
            return JSONValue.string(String(string.prefix(60))).serialized() + "… (\(grouped(string.count - 60)) more characters)"
        default:
            return value.serialized()
        }
    }

    /// `count` with thousands separators: 9990 is "9,990".
    static func grouped(_ count: Int) -> String {
        let digits = String(count.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return count < 0 ? "-" + result : result
    }
}

/// Prints a line of text to standard output with its passwords hidden (see
/// ``Redaction``) and its control characters escaped (see ``Echo/escaped(_:)``): for
/// lines that hold paths, URLs, names or values from the input.
func printEscaped(_ line: String) {
    CommandOutput.print(Echo.escaped(Redaction.redacted(line)))
}
