import HashTreeCollections
/// The tables of a store, with their indexes and relations, validated once.
///
/// ```swift
/// let schema = try Schema {
///     authors
///     books
/// }
/// ```
public struct Schema: Sendable {
    /// The tables, in declaration order.
    public let tables: [any AnyTable]
    let operations: [any TableOperations]
    @usableFromInline
    let positions: [String: Int]
    /// Relations pointing at each table, by target table name.
    let incomingRelations: [String: [any RelationRule]]

    /// Validates and builds a schema from a list of tables.
    /// - Throws: ``EntityStoreError/invalidSchema(_:)`` for duplicate table or index
    ///   names, a relation to an undeclared table, or `.nullify` on a non-optional field.
    public init(_ tables: [any AnyTable]) throws(EntityStoreError) {
        var operations: [any TableOperations] = []
        var positions: [String: Int] = [:]
        for table in tables {
            guard let ops = table as? any TableOperations else {
                throw .invalidSchema("table '\(table.name)' is not a Table value")
            }
            if table.name.isEmpty { throw .invalidSchema("a table has an empty name") }
            if positions[table.name] != nil { throw .invalidSchema("two tables are named '\(table.name)'") }
            var indexNames = Set<String>()
            for index in table.indexDescriptions where !indexNames.insert(index.name).inserted {
                throw .invalidSchema("table '\(table.name)' declares two indexes named '\(index.name)'")
            }
            positions[table.name] = operations.count
            operations.append(ops)
        }
        var incoming: [String: [any RelationRule]] = [:]
        for ops in operations {
            for rule in ops.relationRules {
                guard positions[rule.targetTable] != nil else {
                    throw .invalidSchema("'\(rule.sourceTable).\(rule.field)' references table '\(rule.targetTable)', which the schema does not declare")
                }
                if rule.deleteRule == .nullify && !rule.supportsNullify {
                    throw .invalidSchema("'\(rule.sourceTable).\(rule.field)' uses .nullify but is not an optional field")
                }
                incoming[rule.targetTable, default: []].append(rule)
            }
        }
        self.tables = tables
        self.operations = operations
        self.positions = positions
        self.incomingRelations = incoming
    }

    /// Builds a schema from the tables listed in `content`.
    public init(@SchemaBuilder _ content: () -> [any AnyTable]) throws(EntityStoreError) {
        try self.init(content())
    }

    /// The table named `name`, if declared. O(1).
    public func table(named name: String) -> (any AnyTable)? {
        positions[name].map { tables[$0] }
    }

    /// The first way `other` declares its tables differently (names and order, entity
    /// types, indexes, relations and their delete rules), or nil when it declares the same
    /// ones. O(tables + indexes + relations).
    func difference(from other: Schema) -> String? {
        let names = tables.map(\.name), otherNames = other.tables.map(\.name)
        guard names == otherNames else { return "tables \(otherNames) differ from \(names)" }
        for (table, otherTable) in zip(operations, other.operations) {
            if type(of: table) != type(of: otherTable) {
                return "table '\(table.name)' holds \(type(of: otherTable)) instead of \(type(of: table))"
            }
            if table.indexDescriptions != otherTable.indexDescriptions {
                return "table '\(table.name)' has indexes \(otherTable.indexDescriptions.map(\.name)) instead of \(table.indexDescriptions.map(\.name))"
            }
            func relations(_ ops: any TableOperations) -> [String] {
                ops.relationRules.map { "\($0.field) -> \($0.targetTable) (\($0.deleteRule.rawValue))" }
            }
            if relations(table) != relations(otherTable) {
                return "table '\(table.name)' has relations \(relations(otherTable)) instead of \(relations(table))"
            }
        }
        return nil
    }
}

/// Collects the tables of a ``Schema`` written one per line.
@resultBuilder
public enum SchemaBuilder {
    /// One table.
    public static func buildExpression(_ table: any AnyTable) -> [any AnyTable] { [table] }
    /// Several tables, e.g. from a loop.
    public static func buildExpression(_ tables: [any AnyTable]) -> [any AnyTable] { tables }
    /// Joins the lines.
    public static func buildBlock(_ parts: [any AnyTable]...) -> [any AnyTable] { parts.flatMap { $0 } }
    /// An `if` without `else`.
    public static func buildOptional(_ part: [any AnyTable]?) -> [any AnyTable] { part ?? [] }
    /// The first branch of an `if`/`else`.
    public static func buildEither(first part: [any AnyTable]) -> [any AnyTable] { part }
    /// The second branch of an `if`/`else`.
    public static func buildEither(second part: [any AnyTable]) -> [any AnyTable] { part }
    /// A `for` loop.
    public static func buildArray(_ parts: [[any AnyTable]]) -> [any AnyTable] { parts.flatMap { $0 } }
}
