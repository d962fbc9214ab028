#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

extension PostgresCondition {
    /// Whether a row whose field encodes as `value` (nil: the row has no such field) lies
    /// inside the condition, evaluated locally, as the server's SQL would: a scoped
    /// replica refuses to push a row that does not. NULL matches nothing (SQL's `=` and
    /// `>=` are not true on it). Numbers compare by value across integer, double and exact
    /// decimal forms (dates are exact seconds); text by code point (the `C` collation's
    /// order: a range on text under another collation may differ at the edges).
    /// - Complexity: O(1) for numbers, O(length) for text.
    func matches(_ value: EncodedValue?) -> Bool {
        guard let value else { return false }
        switch bound {
        case let .equals(expected):
            return Self.compare(value, expected) == .orderedSame
        case let .range(lower, upper):
            if let lower {
                guard let order = Self.compare(value, lower), order != .orderedAscending else { return false }
            }
            if let upper {
                guard let order = Self.compare(value, upper), order == .orderedAscending else { return false }
            }
            return true
        }
    }

    /// The order of two stored values, nil when they do not compare (NULL, or kinds that
    /// differ: text and a number).
    static func compare(_ a: EncodedValue, _ b: EncodedValue) -> ComparisonResult? {
        switch (a.value, b.value) {
        case (.null, _), (_, .null): return nil
        case let (.integer(x), .integer(y)): return order(x, y)
        case let (.bool(x), .bool(y)): return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        case let (.bytes(x), .bytes(y)): return x == y ? .orderedSame : (x.lexicographicallyPrecedes(y) ? .orderedAscending : .orderedDescending)
        default: break
        }
        if isNumeric(a) || isNumeric(b) {
            guard let x = decimal(a), let y = decimal(b) else { return nil }
            return order(x, y)
        }
        guard case let .text(x) = a.value, case let .text(y) = b.value else { return nil }
        if a.kind == .uuid || b.kind == .uuid {
            return x.lowercased() == y.lowercased() ? .orderedSame : order(Array(x.lowercased().utf8), Array(y.lowercased().utf8))
        }
        return x == y ? .orderedSame : order(Array(x.utf8), Array(y.utf8))
    }

    private static func isNumeric(_ value: EncodedValue) -> Bool {
        switch value.value {
        case .integer, .double: return true
        case .text: return value.kind == .date || value.kind == .number
        default: return false
        }
    }

    /// The exact value of a number (a double through its shortest text, which reads back as itself).
    private static func decimal(_ value: EncodedValue) -> Decimal? {
        switch value.value {
        case let .integer(number): return Decimal(number)
        case let .double(number): return number.isFinite ? Decimal(string: String(number)) : nil
        case let .text(text): return value.kind == .date || value.kind == .number ? Decimal(string: text) : nil
        default: return nil
        }
    }

    private static func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
    }

    private static func order(_ x: [UInt8], _ y: [UInt8]) -> ComparisonResult {
        x == y ? .orderedSame : (x.lexicographicallyPrecedes(y) ? .orderedAscending : .orderedDescending)
    }

    /// The value of the condition's field in `entity`, as the server stores it (nil when the
    /// entity has no such field, or it does not encode).
    func value<E: Entity>(of entity: E, encoder: RowEncoder) -> EncodedValue? {
        if let record = entity as? DynamicRecord {
            if field == "id" { return RowEncoder.encode(record.id) }
            guard let json = record.fields[field] else { return nil }
            if isDateBound, let date = DynamicDates.encode(json) { return date }
            return RowEncoder.encode(json)
        }
        if field == "id" { return try? RowEncoder.encodeID(entity.id, dialect: .postgres) }
        guard (try? encoder.encode(entity)) != nil else { return nil }
        return encoder.fields.first { $0.name == field }?.value
    }

    /// Whether the condition compares dates.
    private var isDateBound: Bool {
        switch bound {
        case let .equals(value): return value.kind == .date
        case let .range(lower, upper): return lower?.kind == .date || upper?.kind == .date
        }
    }
}
#endif
