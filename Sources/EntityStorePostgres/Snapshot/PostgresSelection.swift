#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

/// Which rows a restore loads, or a scoped ``PostgresSync`` replica holds: every table,
/// some tables, and within a table only the rows matching a condition on an indexed field.
public struct PostgresSelection: Sendable, CustomStringConvertible {
    /// The tables to load; nil for all.
    public var tables: Set<String>?
    /// A condition per table.
    public var conditions: [String: PostgresCondition] = [:]

    /// Every row of every table.
    public static var all: PostgresSelection { PostgresSelection(tables: nil) }

    /// Every row of the named tables; the others restore empty.
    public static func tables(_ names: some Sequence<String>) -> PostgresSelection {
        PostgresSelection(tables: Set(names))
    }

    /// Only the rows of `table` that match `condition` (the table is selected too).
    public func filtering(_ table: String, _ condition: PostgresCondition) -> PostgresSelection {
        var copy = self
        copy.conditions[table] = condition
        copy.tables?.insert(table)
        return copy
    }

    func includes(_ table: String) -> Bool { tables?.contains(table) ?? true }

    /// Whether it selects every row of every table.
    var isAll: Bool { tables == nil && conditions.isEmpty }

    /// "orders where customerID = 'c7'; customers", or "all tables", for messages.
    public var description: String {
        guard !isAll else { return "all tables" }
        var names = Set(conditions.keys)
        if let tables { names.formUnion(tables) }
        let parts = names.sorted().map { name in conditions[name].map { "\(name) where \($0)" } ?? name }
        return (tables == nil ? "all tables, with " : "") + parts.joined(separator: "; ")
    }
}

/// A condition on one field that a partial load sends to the server: equality, or a
/// half-open range. The field must have a declared index (so the server reads only the
/// matching rows through its SQL index).
public struct PostgresCondition: Sendable, CustomStringConvertible {
    enum Bound: Sendable {
        case equals(EncodedValue)
        case range(lower: EncodedValue?, upper: EncodedValue?)
    }
    let field: String
    let bound: Bound

    /// Rows whose `field` equals `value`.
    /// - Throws: ``PostgresStoreError/invalidSelection(_:)`` for a value no column holds.
    public static func field(_ field: String, equals value: some Encodable) throws(PostgresStoreError) -> PostgresCondition {
        PostgresCondition(field: field, bound: .equals(try encode(value)))
    }

    /// Rows whose `field` is at least `lower` (if given) and below `upper` (if given).
    public static func field<V: Encodable>(_ field: String, from lower: V?, below upper: V?) throws(PostgresStoreError) -> PostgresCondition {
        PostgresCondition(field: field, bound: .range(lower: try lower.map { v throws(PostgresStoreError) in try encode(v) }, upper: try upper.map { v throws(PostgresStoreError) in try encode(v) }))
    }

    private static func encode(_ value: some Encodable) throws(PostgresStoreError) -> EncodedValue {
        do {
            let encoded = try RowEncoder(dialect: .postgres).encodeNested(value, path: [])
            if encoded.kind == .json || encoded.kind == nil { throw PostgresStoreError.invalidSelection("a condition compares a single value, not \(value)") }
            return encoded
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw .invalidSelection("cannot encode \(value): \(error)")
        }
    }

    /// "customerID = 'c7'" or "total >= 10 and < 20", for messages.
    public var description: String {
        func text(_ value: EncodedValue) -> String {
            if case let .text(text) = value.value, value.kind != .date, value.kind != .number { return "'\(text)'" }
            return idText(value)
        }
        switch bound {
        case let .equals(value): return "\(field) = \(text(value))"
        case let .range(lower, upper):
            let parts = [lower.map { "\(field) >= \(text($0))" }, upper.map { "\(field) < \(text($0))" }].compactMap(\.self)
            return parts.isEmpty ? "any \(field)" : parts.joined(separator: " and ")
        }
    }

    /// `"field" = $n::type` and the like, binding the values.
    func sql(kind: ColumnKind, binds: inout [PostgresParameter]) -> String {
        func bind(_ value: EncodedValue) -> String {
            binds.append(PostgresParameter(value.value))
            return "$\(binds.count)::\(kind.sqlType)"
        }
        let column = SQL.quote(field)
        switch bound {
        case let .equals(value): return "\(column) = \(bind(value))"
        case let .range(lower, upper):
            var parts: [String] = []
            if let lower { parts.append("\(column) >= \(bind(lower))") }
            if let upper { parts.append("\(column) < \(bind(upper))") }
            return parts.isEmpty ? "TRUE" : parts.joined(separator: " AND ")
        }
    }

}
#endif
