import ArgumentParser
import EntityStore
import EntityStoreSQLite

/// One `--where` condition on a field of dynamic records.
///
/// Syntax: `FIELD=VALUE`, `FIELD!=VALUE`, `FIELD<VALUE`, `FIELD<=VALUE`, `FIELD>VALUE`,
/// `FIELD>=VALUE`, `FIELD=in:V1,V2,...`, `FIELD is null`, `FIELD not null`; `==` and `<>`
/// are read as `=` and `!=`, and spaces around the operator are ignored. A VALUE is read
/// as JSON when it parses (`1999`, `2.5`, `true`, `"x"`) and as a string otherwise; on a
/// field of strings (see ``fitted(to:option:)``) an unquoted VALUE is its text.
///
/// Semantics, the same wherever the condition runs (in memory or pushed down to SQLite):
/// - Numbers compare by value: `year=1999` matches `1999` and `1999.0`.
/// - Strings compare by their exact characters (Unicode scalars, as SQLite's binary
///   collation), and order by code point.
/// - A value of another kind never matches a comparison, nor does `null` or a missing
///   field, except for `is null`, which matches both.
struct FieldCondition: Equatable, CustomStringConvertible {
    enum Operator: String {
        case equal = "=", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case oneOf = "=in:", isNull = " is null", isNotNull = " not null"
    }

    let field: String
    let op: Operator
    /// The values compared with: one, several for `oneOf`, none for the null checks.
    let operands: [JSONValue]
    /// Each operand as it was typed (its JSON spelling for a condition built in code).
    let texts: [String]

    /// The accepted forms, for error messages.
    private static let forms = "expected FIELD=VALUE, FIELD!=VALUE, FIELD<VALUE (<=, >, >=), FIELD=in:A,B or 'FIELD is null' / 'FIELD not null'"

    /// Parses one `--where` text.
    /// - Throws: `ValidationError` saying the accepted forms.
    init(parsing text: String) throws {
        let lowered = text.lowercased()
        for (suffix, op) in [(" is not null", Operator.isNotNull), (" not null", .isNotNull), (" is null", .isNull)]
        where lowered.hasSuffix(suffix) {
            let field = String(text.dropLast(suffix.count)).trimmingSpaces
            guard !field.isEmpty else { break }
            self.init(field: field, op: op, operands: [])
            return
        }
        // The first operator character ends the field name; the longest operator wins.
        guard let start = text.firstIndex(where: { $0 == "=" || $0 == "!" || $0 == "<" || $0 == ">" }),
              !String(text[..<start]).trimmingSpaces.isEmpty else {
            throw ValidationError("--where \(text): \(Self.forms)")
        }
        // Spaces before the operator are kept here: a field name may end with one.
        let field = String(text[..<start])
        let rest = text[start...]
        let spellings: [(String, Operator)] = [
            ("!=", .notEqual), ("<>", .notEqual), ("<=", .lessOrEqual), (">=", .greaterOrEqual), ("==", .equal),
            ("=", .equal), ("<", .less), (">", .greater),
        ]
        guard let (spelling, parsedOp) = spellings.first(where: { rest.hasPrefix($0.0) }) else {
            throw ValidationError("--where \(text): \(Self.forms)")
        }
        var op = parsedOp
        var value = String(rest.dropFirst(spelling.count)).trimmingSpaces
        if op == .equal, value.hasPrefix("in:") {
            op = .oneOf
            value.removeFirst(3)
        }
        let texts = op == .oneOf
            ? value.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces } : [value]
        let operands = texts.map(Self.value)
        // `FIELD=null` reads as `FIELD is null`.
        if op == .equal, operands == [.null] {
            self.init(field: field, op: .isNull, operands: [])
        } else {
            self.init(field: field, op: op, operands: operands, texts: texts)
        }
    }

    init(field: String, op: Operator, operands: [JSONValue], texts: [String]? = nil) {
        self.field = field
        self.op = op
        self.operands = operands
        self.texts = texts ?? operands.map { $0.serialized() }
    }

    /// This condition on `field`, a field whose values are of `kind` (nil: unknown).
    ///
    /// On a field of text (strings, dates, UUIDs, string ids) an operand typed without
    /// JSON quotes is its text, so `zip=02134` and `zip=10001` both compare with the text.
    /// On a field of numbers or booleans an operand of another kind could never match:
    /// that is an error saying so, rather than an answer of nothing.
    /// - Throws: ``CommandFailure`` naming `option`.
    func fitted(to kind: ColumnKind?, field: String, option: String) throws -> FieldCondition {
        var operands = self.operands
        switch kind {
        case .string?, .date?, .uuid?:
            for (position, operand) in operands.enumerated() where operand.stringValue == nil {
                operands[position] = .string(texts[position])
            }
        case .integer?, .double?, .number?:
            for (operand, text) in zip(operands, texts) where operand.doubleValue == nil {
                if Self.isNumberSpelling(text) {
                    let isInteger = !text.contains { $0 == "." || $0 == "e" || $0 == "E" }
                    throw CommandFailure(isInteger
                        ? "\(option): \(text) is beyond the range of a 64-bit integer; write it with a decimal point (\(text).0) to compare as a double"
                        : "\(option): \(text) is beyond the range of a double")
                }
                throw CommandFailure("\(option): field \(Echo.name(field)) holds numbers, and \(Echo.summary(operand)) is not one")
            }
        case .bool?:
            for operand in operands where operand.boolValue == nil {
                throw CommandFailure("\(option): field \(Echo.name(field)) holds true or false, and \(Echo.summary(operand)) is neither")
            }
        default:
            break
        }
        return FieldCondition(field: field, op: op, operands: operands, texts: texts)
    }

    /// Whether `text` is spelt as a JSON number (`-12`, `3.5e7`), whatever its size.
    private static func isNumberSpelling(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let digits = bytes.prefix { $0 >= 48 && $0 <= 57 }
        guard !digits.isEmpty else { return false }
        bytes = bytes.dropFirst(digits.count)
        if bytes.first == UInt8(ascii: ".") {
            let fraction = bytes.dropFirst().prefix { $0 >= 48 && $0 <= 57 }
            guard !fraction.isEmpty else { return false }
            bytes = bytes.dropFirst(1 + fraction.count)
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            let exponent = bytes.prefix { $0 >= 48 && $0 <= 57 }
            guard !exponent.isEmpty else { return false }
            bytes = bytes.dropFirst(exponent.count)
        }
        return bytes.isEmpty
    }

    /// VALUE as JSON if it parses, else as a plain string.
    static func value(_ text: String) -> JSONValue {
        (try? JSONValue(parsing: text)) ?? .string(text)
    }

    var description: String {
        switch op {
        case .isNull, .isNotNull: field + op.rawValue
        case .oneOf: field + op.rawValue + operands.map { $0.serialized() }.joined(separator: ",")
        default: field + op.rawValue + (operands.first?.serialized() ?? "")
        }
    }

    /// Whether `record` satisfies the condition.
    func matches(_ record: DynamicRecord) -> Bool {
        let value = record[field: field]
        switch op {
        case .isNull: return value == nil || value == .null
        case .isNotNull: return value != nil && value != .null
        default: break
        }
        guard let value, value != .null else { return false }
        switch op {
        case .equal: return Self.order(value, operands[0]) == 0
        case .notEqual: return Self.order(value, operands[0]).map { $0 != 0 } ?? true
        case .less: return Self.order(value, operands[0]).map { $0 < 0 } ?? false
        case .lessOrEqual: return Self.order(value, operands[0]).map { $0 <= 0 } ?? false
        case .greater: return Self.order(value, operands[0]).map { $0 > 0 } ?? false
        case .greaterOrEqual: return Self.order(value, operands[0]).map { $0 >= 0 } ?? false
        case .oneOf: return operands.contains { Self.order(value, $0) == 0 }
        case .isNull, .isNotNull: return false
        }
    }

    /// How `value` compares with `operand`: by value (see `JSONValue.compareByValue`).
    static func order(_ value: JSONValue, _ operand: JSONValue) -> Int? {
        JSONValue.compareByValue(value, operand)
    }

    /// `query` narrowed by this condition: the exact test as a filter, after an index
    /// lookup where one can propose candidates (a superset the filter then trims).
    func apply(to query: Query<DynamicRecord>) -> Query<DynamicRecord> {
        var narrowed = query
        if op == .equal, let operand = operands.first, operand.isString || operand.isBool {
            // Canonically equivalent strings share an index key: still a superset.
            narrowed = narrowed.where(field: field, equals: operand)
        } else if let bounds = candidateRange {
            narrowed = narrowed.where(field: field, in: bounds)
        }
        return narrowed.filter(description) { matches($0) }
    }

    /// A range of the library's total order holding every value that can match, for an
    /// ordered index to propose candidates from; nil when none helps.
    private var candidateRange: ClosedRange<JSONValue>? {
        guard let operand = operands.first, operands.count == 1 else { return nil }
        switch (op, operand) {
        case (.equal, .integer(let number)):
            // The integer sorts just before the double of equal value.
            return operand...(Double(exactly: number).map(JSONValue.double) ?? operand)
        case (.equal, .double(let number)):
            return (Int64(exactly: number).map(JSONValue.integer) ?? operand)...operand
        default:
            return nil
        }
    }
}

extension JSONValue {
    var isString: Bool { if case .string = self { true } else { false } }
    var isBool: Bool { if case .bool = self { true } else { false } }
}

extension String {
    /// The text without leading and trailing spaces.
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
