import ArgumentParser
import EntityStore

/// One `--where` condition on a field of dynamic records.
///
/// Syntax: `FIELD=VALUE`, `FIELD!=VALUE`, `FIELD<VALUE`, `FIELD<=VALUE`, `FIELD>VALUE`,
/// `FIELD>=VALUE`, `FIELD=in:V1,V2,...`, `FIELD is null`, `FIELD not null`. A VALUE is
/// read as JSON when it parses (`1999`, `2.5`, `true`, `"x"`) and as a string otherwise.
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
        guard let start = text.firstIndex(where: { $0 == "=" || $0 == "!" || $0 == "<" || $0 == ">" }), start != text.startIndex else {
            throw ValidationError("--where \(text): expected FIELD=VALUE, FIELD!=VALUE, FIELD<VALUE (<=, >, >=), FIELD=in:A,B or 'FIELD is null' / 'FIELD not null'")
        }
        let field = String(text[..<start])
        let rest = text[start...]
        for op in [Operator.oneOf, .notEqual, .lessOrEqual, .greaterOrEqual, .equal, .less, .greater] where rest.hasPrefix(op.rawValue) {
            let value = String(rest.dropFirst(op.rawValue.count))
            let operands = op == .oneOf ? value.split(separator: ",", omittingEmptySubsequences: false).map { Self.value(String($0)) } : [Self.value(value)]
            // `FIELD=null` reads as `FIELD is null`.
            if op == .equal, operands == [.null] {
                self.init(field: field, op: .isNull, operands: [])
            } else {
                self.init(field: field, op: op, operands: operands)
            }
            return
        }
        throw ValidationError("--where \(text): expected FIELD=VALUE, FIELD!=VALUE, FIELD<VALUE (<=, >, >=), FIELD=in:A,B or 'FIELD is null' / 'FIELD not null'")
    }

    init(field: String, op: Operator, operands: [JSONValue]) {
        self.field = field
        self.op = op
        self.operands = operands
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
