extension JSONValue {
    /// The value as JSON text that parses back to an equal value.
    ///
    /// Doubles are written in their shortest round-trip form, always with a `.` or an
    /// exponent so they parse back as doubles: `2.0`, `0.1`, `1e+300`, `-0.0`. JSON has no
    /// NaN or infinity, so non-finite doubles are written as `null` (as JavaScript does);
    /// that is the one case where the output does not parse back to an equal value.
    /// Strings escape `"`, `\` and control characters; other characters are written as
    /// UTF-8.
    ///
    /// - Parameters:
    ///   - sortedKeys: Whether object members are written in key order (the default, for
    ///     deterministic output) or in the dictionary's arbitrary order.
    ///   - pretty: Whether to write one element per line, indented by two spaces, with a
    ///     space after each colon, instead of compact text.
    /// - Complexity: O(n) in the output's length, plus sorting object keys.
    public func serialized(sortedKeys: Bool = true, pretty: Bool = false) -> String {
        var writer = JSONWriter(sortedKeys: sortedKeys, pretty: pretty)
        writer.write(self, indentation: 0)
        return String(decoding: writer.output, as: UTF8.self)
    }
}

/// Writes JSON text as UTF-8 bytes.
struct JSONWriter {
    let sortedKeys: Bool
    let pretty: Bool
    private(set) var output: [UInt8] = []

    init(sortedKeys: Bool, pretty: Bool) {
        self.sortedKeys = sortedKeys
        self.pretty = pretty
    }

    mutating func write(_ value: JSONValue, indentation: Int) {
        switch value {
        case .null:
            append("null")
        case .bool(let flag):
            append(flag ? "true" : "false")
        case .integer(let number):
            append(String(number))
        case .double(let number):
            append(Self.format(number))
        case .string(let text):
            writeString(text)
        case .array(let elements):
            guard !elements.isEmpty else { return append("[]") }
            output.append(ASCII.openBracket)
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(ASCII.comma) }
                newline(indentation + 1)
                write(element, indentation: indentation + 1)
            }
            newline(indentation)
            output.append(ASCII.closeBracket)
        case .object(let members):
            guard !members.isEmpty else { return append("{}") }
            let ordered = sortedKeys ? members.sorted { $0.key < $1.key } : Array(members)
            output.append(ASCII.openBrace)
            for (position, member) in ordered.enumerated() {
                if position > 0 { output.append(ASCII.comma) }
                newline(indentation + 1)
                writeString(member.key)
                output.append(ASCII.colon)
                if pretty { output.append(ASCII.space) }
                write(member.value, indentation: indentation + 1)
            }
            newline(indentation)
            output.append(ASCII.closeBrace)
        }
    }

    /// The shortest round-trip text of a double, marked as a double, or `null`.
    static func format(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        let text = number.description
        if text.utf8.contains(where: { $0 == ASCII.period || $0 == ASCII.lowercaseE || $0 == ASCII.uppercaseE }) {
            return text
        }
        return text + ".0"
    }

    private mutating func newline(_ indentation: Int) {
        guard pretty else { return }
        output.append(ASCII.newline)
        output.append(contentsOf: repeatElement(ASCII.space, count: indentation * 2))
    }

    private mutating func append(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    private mutating func writeString(_ text: String) {
        output.append(ASCII.quote)
        for byte in text.utf8 {
            switch byte {
            case ASCII.quote: append("\\\"")
            case ASCII.backslash: append("\\\\")
            case ASCII.newline: append("\\n")
            case ASCII.carriageReturn: append("\\r")
            case ASCII.tab: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case ..<0x20:
                let hex = String(byte, radix: 16, uppercase: true)
                append("\\u00" + (hex.count == 1 ? "0" : "") + hex)
            default:
                output.append(byte)
            }
        }
        output.append(ASCII.quote)
    }
}
