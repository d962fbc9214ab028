
/// One aggregate over dynamic records, per group or over every match, named as its output
/// column: `count`, `sum(F)`, `avg(F)`, `min(F)`, `max(F)`.
///
/// Semantics, the same as SQLite's on a column of one kind: `count` counts records; `sum`
/// and `avg` add the numbers of the field (null, missing and non-numeric values are
/// skipped; a sum of integers stays an integer unless it overflows 64 bits); `min` and
/// `max` take the least and greatest number or string (numbers before strings, strings by
/// code point); a group with no such value gets `null`.
public enum FieldAggregate: Hashable, Sendable {
    case count
    case sum(String)
    case average(String)
    case minimum(String)
    case maximum(String)

    /// The output column's name.
    public var name: String {
        switch self {
        case .count: "count"
        case .sum(let field): "sum(\(field))"
        case .average(let field): "avg(\(field))"
        case .minimum(let field): "min(\(field))"
        case .maximum(let field): "max(\(field))"
        }
    }

    /// The field it reads, if any.
    public var field: String? {
        switch self {
        case .count: nil
        case .sum(let field), .average(let field), .minimum(let field), .maximum(let field): field
        }
    }

    /// Accumulates one aggregate over the records of a group.
    struct Accumulator {
        let aggregate: FieldAggregate
        private var count = 0
        private var integerSum: Int64 = 0
        private var doubleSum = 0.0
        private var numbers = 0
        private var isDouble = false
        private var extreme: JSONValue?

        init(_ aggregate: FieldAggregate) { self.aggregate = aggregate }

        mutating func add(_ record: DynamicRecord) {
            count += 1
            guard let field = aggregate.field, let value = record[field: field] else { return }
            switch aggregate {
            case .count: return
            case .sum, .average: addNumber(value)
            case .minimum: if Self.isOrdered(value), extreme.map({ GroupKey.order(value, $0) < 0 }) ?? true { extreme = value }
            case .maximum: if Self.isOrdered(value), extreme.map({ GroupKey.order(value, $0) > 0 }) ?? true { extreme = value }
            }
        }

        private mutating func addNumber(_ value: JSONValue) {
            switch value {
            case .integer(let number):
                numbers += 1
                doubleSum += Double(number)
                if !isDouble {
                    let (sum, overflow) = integerSum.addingReportingOverflow(number)
                    if overflow { isDouble = true } else { integerSum = sum }
                }
            case .double(let number):
                numbers += 1
                doubleSum += number
                isDouble = true
            default: break
            }
        }

        private static func isOrdered(_ value: JSONValue) -> Bool {
            switch value {
            case .integer, .double, .string: true
            default: false
            }
        }

        /// The aggregate's value.
        var value: JSONValue {
            switch aggregate {
            case .count: return .integer(Int64(count))
            case .sum: return numbers == 0 ? .null : (isDouble ? .double(doubleSum) : .integer(integerSum))
            case .average:
                guard numbers > 0 else { return .null }
                // As SQLite's avg(): the sum as a double, over the count.
                return .double(doubleSum / Double(numbers))
            case .minimum, .maximum: return extreme ?? .null
            }
        }
    }

    /// One row per distinct value of `field` (all records in one row when nil), with the
    /// aggregates, in ``GroupKey`` order. O(n) for n records.
    static func rows(of records: some Sequence<DynamicRecord>, groupBy field: String?, _ aggregates: [FieldAggregate]) -> [[String: JSONValue]] {
        var groups: [GroupKey: (key: JSONValue, accumulators: [Accumulator])] = [:]
        var order: [GroupKey] = []
        for record in records {
            let value = field.flatMap { record[field: $0] } ?? .null
            let key = GroupKey(value)
            if groups[key] == nil {
                groups[key] = (value, aggregates.map(Accumulator.init))
                order.append(key)
            }
            for index in aggregates.indices { groups[key]!.accumulators[index].add(record) }
        }
        if field == nil, groups.isEmpty { groups[GroupKey(.null)] = (.null, aggregates.map(Accumulator.init)); order = [GroupKey(.null)] }
        return order.sorted { GroupKey.order(groups[$0]!.key, groups[$1]!.key) < 0 }.map { key in
            let group = groups[key]!
            var row: [String: JSONValue] = [:]
            if let field { row[field] = group.key }
            for accumulator in group.accumulators { row[accumulator.aggregate.name] = accumulator.value }
            return row
        }
    }
}

/// A group's key: values equal by value (``JSONValue/compareByValue(_:_:)``) (numbers by value, strings
/// by their exact characters, null and missing alike) share one.
public struct GroupKey: Hashable {
    private enum Normalized: Hashable {
        case null, bool(Bool), integer(Int64), double(Double), string([UInt8]), other(String)
    }

    private let normalized: Normalized

    public init(_ value: JSONValue) {
        normalized = switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .double(let number): Int64(exactly: number).map(Normalized.integer) ?? .double(number)
        case .string(let text): .string(Array(text.utf8))
        case .array, .object: .other(value.serialized())
        }
    }

    /// A total order of keys: null, booleans, numbers by value, strings by code point,
    /// then nested values by their JSON text.
    public static func order(_ left: JSONValue, _ right: JSONValue) -> Int {
        let ranks = rank(left) - rank(right)
        if ranks != 0 { return ranks }
        if let order = JSONValue.compareByValue(left, right) { return order }
        if case .null = left { return 0 }
        let (a, b) = (left.serialized(), right.serialized())
        return a == b ? 0 : (a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1)
    }

    private static func rank(_ value: JSONValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .integer, .double: 2
        case .string: 3
        case .array, .object: 4
        }
    }
}

extension JSONValue {
    /// How `value` compares with `other` by value, as SQL compares them: numbers exactly
    /// by value (`1` equals `1.0`), strings by their code points (no Unicode
    /// normalization), booleans false before true; arrays and objects only equal or not;
    /// nil for values of different kinds, which do not compare.
    /// - Complexity: O(1) for scalars; O(size) for nested values.
    public static func compareByValue(_ value: JSONValue, _ other: JSONValue) -> Int? {
        if let numeric = value.numericComparison(to: other) { return numeric }
        switch (value, other) {
        case (.string(let left), .string(let right)):
            if left.utf8.elementsEqual(right.utf8) { return 0 }
            return left.utf8.lexicographicallyPrecedes(right.utf8) ? -1 : 1
        case (.bool(let left), .bool(let right)):
            return left == right ? 0 : (left ? 1 : -1)
        case (.array, .array), (.object, .object):
            return value == other ? 0 : nil
        default:
            return nil
        }
    }
}

extension Query where E == DynamicRecord {
    /// The matches' aggregates: one row per distinct value of `field` (values equal by
    /// value share a row: null and a missing field, `1` and `1.0`), in ``GroupKey`` order,
    /// or one row for all matches when `field` is nil. Offset, limit and order are ignored.
    /// - Complexity: O(m) over the m matches, streamed from the query's source.
    public func aggregated(groupedByField field: String?, _ aggregates: [FieldAggregate]) -> [[String: JSONValue]] {
        var matches: [DynamicRecord] = []
        var unordered = self
        unordered.ordering = nil
        unordered.offsetCount = 0
        unordered.limitCount = nil
        unordered.visitMatches { matches.append($0); return true }
        // Rows in id order, so a group's key is its first record's spelling of it.
        matches.sort { $0.id < $1.id }
        return FieldAggregate.rows(of: matches, groupBy: field, aggregates)
    }
}
