import EntityStore
import EntityStoreCodec

/// Says conditions on a snapshot table's fields in SQL, where SQL gives exactly the answer
/// the in-memory query gives: the SQL a one-shot query (`entity-store query`) runs through
/// ``SnapshotTableReader`` instead of restoring the store.
///
/// That holds on the scalar columns: a column of kind `integer` or `double` holds numbers
/// (SQLite compares an INTEGER with a REAL by exact value, as the in-memory test does), a
/// `string` column text (compared byte by byte, which is code point order), a `bool`
/// column 0 or 1; SQL `NULL` is a null or missing field, which only `is null` matches. An
/// operand of another kind than the column's never equals or orders against its values
/// (`!=` then holds for every non-null value). A `json` column holds JSON text, which SQL
/// cannot compare by value: its conditions stay in memory.
package struct SQLPushdown {
    /// One condition on a field: its value compared with operands, as the in-memory query
    /// compares them (numbers by value, strings by their Unicode scalars, `null` and a
    /// missing field matching only `isNull`).
    package struct Condition: Sendable, Equatable {
        package enum Operator: Sendable, Equatable {
            case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
            /// Equal to one of the operands.
            case oneOf
            case isNull, isNotNull
        }

        package let field: String
        package let op: Operator
        /// The values compared with: one, several for `oneOf`, none for the null checks.
        package let operands: [JSONValue]

        package init(field: String, op: Operator, operands: [JSONValue]) {
            self.field = field
            self.op = op
            self.operands = operands
        }
    }

    /// The kind of each column, the id's included.
    package let kinds: [String: ColumnKind]
    /// What NULL means in each column.
    package let nulls: [String: NullMeaning]

    /// The pushdown for the columns of `table`.
    /// - Complexity: O(columns).
    package init(_ table: StoreMetadata.Table) {
        var kinds: [String: ColumnKind] = ["id": table.idKind]
        var nulls: [String: NullMeaning] = ["id": .absent]
        for column in table.columns {
            kinds[column.name] = column.kind
            nulls[column.name] = column.nulls
        }
        self.kinds = kinds
        self.nulls = nulls
    }

    /// The filter for the conditions SQL can answer exactly, and whether that is all of them.
    /// - Complexity: O(conditions + operands).
    package func filter(_ conditions: [Condition]) -> (filter: SnapshotTableReader.Filter, isExact: Bool) {
        var filter = SnapshotTableReader.Filter()
        var isExact = true
        for condition in conditions {
            guard let (clause, arguments) = clause(condition) else {
                isExact = false
                continue
            }
            filter.clauses.append(clause)
            filter.arguments += arguments
        }
        return (filter, isExact)
    }

    /// The clause and arguments for `condition`, or nil when SQL cannot say it exactly.
    package func clause(_ condition: Condition) -> (String, [SQLiteValue])? {
        // A JSON column spells null as the text `null`: only scalar columns read NULL as null.
        guard let kind = kinds[condition.field], [.integer, .double, .number, .string, .bool, .null].contains(kind) else { return nil }
        let column = quoteIdentifier(condition.field)
        switch condition.op {
        case .isNull: return ("\(column) IS NULL", [])
        case .isNotNull: return ("\(column) IS NOT NULL", [])
        default: break
        }
        let never = ("0", [SQLiteValue]())
        let anyValue = ("\(column) IS NOT NULL", [SQLiteValue]())
        if kind == .null { return condition.op == .notEqual ? anyValue : never }
        if condition.op == .oneOf {
            let values = condition.operands.compactMap { Self.bound($0, in: kind) }
            guard !values.isEmpty else { return never }
            return ("\(column) IN (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))", values)
        }
        guard let operand = condition.operands.first else { return nil }
        guard let value = Self.bound(operand, in: kind) else {
            return condition.op == .notEqual ? anyValue : never
        }
        let sql = switch condition.op {
        case .equal: "="
        case .notEqual: "!="
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        case .oneOf, .isNull, .isNotNull: "="
        }
        return ("\(column) \(sql) ?", [value])
    }

    /// `operand` as the SQL value it compares as in a column of `kind`, or nil if no value
    /// of the column can compare with it.
    private static func bound(_ operand: JSONValue, in kind: ColumnKind) -> SQLiteValue? {
        switch (kind, operand) {
        case (.integer, .integer(let number)), (.double, .integer(let number)), (.number, .integer(let number)): .integer(number)
        case (.integer, .double(let number)), (.double, .double(let number)), (.number, .double(let number)): number.isNaN ? nil : .real(number)
        case (.string, .string(let text)): .text(text)
        case (.bool, .bool(let flag)): .integer(flag ? 1 : 0)
        default: nil
        }
    }

    /// A clause that keeps, of the rows `filter` selects, every one that can be among the
    /// first `count` in the order of `field` (records without it last, as in memory),
    /// or nil when SQL cannot say so exactly.
    ///
    /// It holds on a column of numbers, which SQLite and the in-memory order both compare
    /// by value: the rows up to the `count`-th value (all of its ties included), and in
    /// increasing order the rows whose column holds `null`, which sorts before every number
    /// (largest first, null comes after the numbers, and a missing field always last); on
    /// ids; and on a column of text, which SQLite then orders and compares as Swift does,
    /// canonically equivalent strings equal (by their bytes, SQLite would order
    /// `"e\u{301}"` before `"f"` and `"é"` after it, and leave out ties): byte by byte
    /// when the selected values are all ASCII, else with the collation
    /// `SQLiteConnection/swiftStringOrder` (see ``SnapshotTableReader/collation(of:in:_:)``).
    /// The same query then runs in memory on these rows alone, which gives its ties their
    /// order.
    /// - Complexity: that of ``SnapshotTableReader/collation(of:in:_:)`` and
    ///   ``SnapshotTableReader/value(of:in:_:collation:descending:at:)``.
    package func candidates(
        sortedBy field: String, descending: Bool, first count: Int, of table: String, _ filter: SnapshotTableReader.Filter,
        reader: SnapshotTableReader
    ) throws -> (String, [SQLiteValue])? {
        guard count > 0, let kind = kinds[field], [.integer, .double, .number, .string].contains(kind) else { return nil }
        let collation = try reader.collation(of: field, in: table, filter)
        guard let boundary = try reader.value(of: field, in: table, filter, collation: collation, descending: descending, at: count - 1)
        else { return nil }
        let column = quoteIdentifier(field)
        let compared = column + collation
        let clause = "\(compared) \(descending ? ">=" : "<=") ?"
        let nullsFirst = !descending && nulls[field] != .absent
        return (nullsFirst ? "\(clause) OR \(column) IS NULL" : clause, [boundary])
    }

    /// The aggregate rows of a group-by, computed by SQLite, or nil when it cannot give
    /// exactly the in-memory answer: the grouping column and each aggregated column must
    /// be scalar, sums and averages only of integer columns (SQLite adds doubles in its
    /// own order, and an integer overflow is an error there).
    /// - Complexity: one pass inside SQLite over the rows `filter` selects.
    package func groups(
        of table: String, _ filter: SnapshotTableReader.Filter, by field: String?, _ aggregates: [FieldAggregate],
        reader: SnapshotTableReader
    ) throws -> [[String: JSONValue]]? {
        // Not a number column: SQLite shows one of 2 and 2.0 for their group, maybe not the first.
        let scalar: Set<ColumnKind> = [.integer, .double, .string, .bool, .null]
        if let field { guard let kind = kinds[field], scalar.contains(kind) else { return nil } }
        var expressions = field.map { [quoteIdentifier($0)] } ?? []
        for aggregate in aggregates {
            switch aggregate {
            case .count:
                expressions.append("count(*)")
            case .sum(let name), .average(let name):
                guard let kind = kinds[name], kind == .integer || kind == .null else { return nil }
                let function = if case .sum = aggregate { "sum" } else { "avg" }
                expressions.append("\(function)(\(quoteIdentifier(name)))")
            case .minimum(let name), .maximum(let name):
                guard let kind = kinds[name], [.integer, .double, .number, .string, .null].contains(kind) else { return nil }
                let function = if case .minimum = aggregate { "min" } else { "max" }
                expressions.append("\(function)(\(quoteIdentifier(name)))")
            }
        }
        let rows: [[SQLiteValue]]
        do {
            rows = try reader.select(expressions, from: table, filter, groupBy: field.map(quoteIdentifier))
        } catch {
            return nil  // an integer sum overflowed: the in-memory path turns it into a double
        }
        return rows.map { values in
            var row: [String: JSONValue] = [:]
            var position = 0
            if let field {
                row[field] = Self.json(values[0], kind: kinds[field] ?? .null)
                position = 1
            }
            for aggregate in aggregates {
                let kind: ColumnKind = switch aggregate {
                case .count, .sum: .integer
                case .average: .double
                case .minimum(let name), .maximum(let name): kinds[name] ?? .null
                }
                row[aggregate.name] = Self.json(values[position], kind: kind)
                position += 1
            }
            return row
        }
    }

    /// A value SQLite returned, as the JSON value of a column of `kind`.
    private static func json(_ value: SQLiteValue, kind: ColumnKind) -> JSONValue {
        switch value {
        case .null: .null
        case .integer(let number): kind == .bool ? .bool(number != 0) : (kind == .double ? .double(Double(number)) : .integer(number))
        case .real(let number): .double(number)
        case .text(let text): .string(text)
        case .blob: .null
        }
    }
}
