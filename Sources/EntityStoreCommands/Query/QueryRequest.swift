import EntityStore

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

    /// The printed answer.
    /// - Throws: ``CommandFailure`` when an `id` asked alone names no record.
    func answer(in state: EntityState) throws -> String {
        let query = query(in: state)
        if explain {
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
