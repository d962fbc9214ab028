import EntityStore
import EntityStoreSQLite

/// A query on one table of dynamic records, checked against the table's fields, and how
/// to print its answer: what `query` and the shell run on the library's query engine.
struct QueryRequest {
    let table: String
    /// Only the record with this id.
    let id: JSONValue?
    let conditions: [FieldCondition]
    let sort: String?
    let descending: Bool
    let offset: Int?
    let limit: Int?
    /// The fields to print, in order.
    let fields: [String]
    /// Print the number of matches alone.
    let countOnly: Bool
    /// Print the plan on standard error.
    let explain: Bool
    let format: OutputFormat

    /// The query on `state`'s table.
    func query(in state: EntityState) -> Query<DynamicRecord> {
        var query = state[Table<DynamicRecord>(table)].query()
        if let id { query = query.where(field: "id", equals: id) }
        for condition in conditions { query = condition.apply(to: query) }
        query = query.sorted(byField: sort ?? "id", descending: descending)
        if let offset { query = query.offset(offset) }
        if let limit { query = query.limit(limit) }
        return query
    }

    /// The printed answer, read from the snapshot without restoring it: SQLite counts
    /// the matches when it can say every condition exactly, else it selects the rows the
    /// conditions it can say allow (all of the table's, if none), and the same query runs
    /// on those alone in memory. Either way the answer is the one a full restore gives.
    /// - Returns: nil when the file is of an older format (a restore upgrades it).
    func answer(from reader: SnapshotTableReader) throws -> String? {
        guard reader.isCurrent, let stored = reader.metadata.table(named: table) else { return nil }
        let pushdown = SQLPushdown(stored)
        let selecting = conditions + (id.map { [FieldCondition(field: "id", op: .equal, operands: [$0])] } ?? [])
        let (filter, isExact) = pushdown.filter(selecting)
        if explain {
            var standardError = StandardError()
            let clauses = filter.clauses.isEmpty ? "every row" : filter.clauses.joined(separator: " AND ")
            print("plan: read from the snapshot: \(clauses)\(isExact ? "" : ", the rest in memory")", to: &standardError)
        }
        if countOnly, isExact {
            return "\(try reportingFailures { try reader.count(table, filter) })\n"
        }
        let records = try reportingFailures { try reader.records(table, filter) }
        let state = try reportingFailures {
            try EntityState.build(schema: try Schema([Table<DynamicRecord>(table)])) { transaction in
                try transaction[Table<DynamicRecord>(table)].insert(contentsOf: records)
            }
        }
        return try answer(in: state, explaining: false)
    }

    /// The printed answer.
    /// - Throws: ``CommandFailure`` when an `id` asked alone names no record.
    func answer(in state: EntityState, explaining: Bool = true) throws -> String {
        let query = query(in: state)
        if explain, explaining {
            var standardError = StandardError()
            print("plan: \(query.plan)", to: &standardError)
        }
        if countOnly { return "\(query.count)\n" }
        let records = query.results
        if let id, records.isEmpty, conditions.isEmpty {
            throw CommandFailure("no record with id \(Echo.summary(id)) in \(Echo.name(table))")
        }
        return RowPrinter(format: format, fields: fields).text(records.map(\.row))
    }
}
