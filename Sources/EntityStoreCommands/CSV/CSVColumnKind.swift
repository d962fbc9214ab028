import EntityStore

/// The kind a CSV column's text is read as. Inferred from every value of the column,
/// or given with `--types`.
enum CSVColumnKind: String, CaseIterable {
    case integer, double, bool, string

    /// The kind every non-null value of a column fits, the narrowest first: all integers
    /// make an integer column; integers and decimals a double column; `true`/`false` a
    /// bool column; anything else a string column (its values kept as written).
    static func inferred(from values: [String?]) -> CSVColumnKind {
        var integers = true, doubles = true, bools = true
        for case let value? in values {
            if integers, integer(value) == nil { integers = false }
            if doubles, !integers, double(value) == nil { doubles = false }
            if bools, bool(value) == nil { bools = false }
            if !integers, !doubles, !bools { return .string }
        }
        if integers { return values.contains(where: { $0 != nil }) ? .integer : .string }
        if doubles { return .double }
        return bools ? .bool : .string
    }

    /// `value` read as this kind, or nil if it is not of it.
    func value(_ text: String) -> JSONValue? {
        switch self {
        case .integer: Self.integer(text).map(JSONValue.integer)
        case .double: Self.double(text).map(JSONValue.double)
        case .bool: Self.bool(text).map(JSONValue.bool)
        case .string: .string(text)
        }
    }

    /// An integer written plainly: an optional minus and digits, no leading zero (`007`
    /// is a code, kept as text), within 64 bits.
    static func integer(_ text: String) -> Int64? {
        let digits = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
        guard let first = digits.first, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        if first == 48, digits.count > 1 { return nil }
        return Int64(text)
    }

    /// A finite decimal number (`2.5`, `-1e3`, `.5` is refused: JSON spelling only).
    static func double(_ text: String) -> Double? {
        // A JSON number starts with a minus or a digit and ends with a digit: " 1" and
        // "1 " are text, kept as written.
        let isDigit = { (byte: UInt8) in byte >= 48 && byte <= 57 }
        guard let first = text.utf8.first, let last = text.utf8.last, first == UInt8(ascii: "-") || isDigit(first), isDigit(last) else {
            return nil
        }
        guard let value = try? JSONValue(parsing: text), let number = value.doubleValue else { return nil }
        if case .string = value { return nil }
        return number
    }

    /// `true` or `false`, in any case.
    static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true": true
        case "false": false
        default: nil
        }
    }
}
