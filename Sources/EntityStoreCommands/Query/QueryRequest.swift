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
    /// Relations whose referenced record is printed with each record, as `FIELD.x` columns.
    var joins: [Join] = []
    /// Group the matches by this field, one printed row per value.
    var groupBy: String?
    /// The aggregates printed per group (or once for all matches).
    var aggregates: [FieldAggregate] = []

    /// Whether the answer is aggregate rows rather than records (a bare `--count` is not:
    /// it prints one number).
    var isAggregating: Bool { groupBy != nil || !aggregates.isEmpty }

    /// A declared relation to follow: `field` holds the id of a record of `target`.
    struct Join {
        let field: String
        let target: String
    }

    /// The query on `state`'s table (without order and paging when aggregating: those
    /// apply to the groups).
    func query(in state: EntityState) -> Query<DynamicRecord> {
        var query = state[Table<DynamicRecord>(table)].query()
        if let id { query = query.where(field: "id", equals: id) }
        for condition in conditions { query = condition.apply(to: query) }
        if isAggregating { return query.sorted(byField: "id") }
        query = query.sorted(byField: sort ?? "id", descending: descending)
        if let offset { query = query.offset(offset) }
        if let limit { query = query.limit(limit) }
        return query
    }

    /// FieldAggregate rows ordered by `--sort` (ties, and by default, in group key order) and paged.
    private func ordered(_ rows: [[String: JSONValue]]) -> [[String: JSONValue]] {
        var rows = rows
        if let sort {
            // A stable sort: rows arrive in group key order.
            rows = rows.enumerated().sorted { left, right in
                let order = GroupKey.order(left.element[sort] ?? .null, right.element[sort] ?? .null)
                if order != 0 { return descending ? order > 0 : order < 0 }
                return left.offset < right.offset
            }.map(\.element)
        } else if descending {
            rows.reverse()
        }
        let paged = rows.dropFirst(offset ?? 0)
        return Array(limit.map { paged.prefix($0) } ?? paged)
    }

    /// The printed answer, read from the snapshot without restoring it: SQLite counts
    /// the matches when it can say every condition exactly, else it selects the rows the
    /// conditions it can say allow (all of the table's, if none), and the same query runs
    /// on those alone in memory. Either way the answer is the one a full restore gives.
    /// - Returns: nil when the snapshot lacks the table.
    func answer(from reader: SnapshotTableReader) throws -> String? {
        guard let stored = reader.metadata.table(named: table) else { return nil }
        let pushdown = SQLPushdown(stored)
        // `--id` finds ids as the store does (canonically equivalent strings are one id):
        // SQL then selects the stored spelling.
        var storedID = id
        if case .string(let text)? = id, stored.idKind == .string {
            let found = try reportingFailures { try reader.records(table, withIDs: [.string(text)]) }
            storedID = found.values.first?.id.jsonValue ?? id
        }
        let selecting = conditions + (storedID.map { [FieldCondition(field: "id", op: .equal, operands: [$0])] } ?? [])
        let (filter, isExact) = pushdown.filter(selecting)
        var selected = filter
        // A page of records in an order SQL can say: only the rows that can be on it.
        if isExact, !countOnly, !isAggregating, let limit {
            let (first, overflow) = (offset ?? 0).addingReportingOverflow(limit)
            let candidates = overflow ? nil : try reportingFailures {
                try pushdown.candidates(sortedBy: sort ?? "id", descending: descending, first: first, of: table, filter, reader: reader)
            }
            if let (clause, arguments) = candidates {
                selected.clauses.append(clause)
                selected.arguments += arguments
            }
        }
        if explain {
            var standardError = StandardError()
            let clauses = selected.clauses.isEmpty ? "every row" : selected.clauses.joined(separator: " AND ")
            print("plan: read from the snapshot: \(clauses)\(isExact ? "" : ", the rest in memory")", to: &standardError)
        }
        if countOnly, !isAggregating, isExact {
            return "\(try reportingFailures { try reader.count(table, filter) })\n"
        }
        if isAggregating, isExact, let grouped = try pushdown.groups(of: table, filter, by: groupBy, aggregates, reader: reader) {
            return RowPrinter(format: format, fields: fields).text(ordered(grouped))
        }
        let records = try reportingFailures { try reader.records(table, selected) }
        // The snapshot's whole schema, its other tables empty: the same indexes give the
        // same plan, so records that tie under --sort come in the order a restore gives.
        let state = try reportingFailures {
            try EntityState.build(schema: try Snapshot.dynamicSchema(for: reader.metadata)) { transaction in
                try transaction[Table<DynamicRecord>(table)].insert(contentsOf: records)
            }
        }
        // The referenced records of the rows printed, read by id.
        return try answer(in: state, explaining: false) { join, ids in
            try reportingFailures { try reader.records(join.target, withIDs: ids) }
        }
    }

    /// The printed answer.
    /// - Parameter referenced: the records of a join's target with these ids; by default
    ///   looked up in `state`.
    /// - Throws: ``CommandFailure`` when an `id` asked alone names no record.
    func answer(
        in state: EntityState, explaining: Bool = true,
        referenced: ((Join, [RecordID]) throws -> [RecordID: DynamicRecord])? = nil
    ) throws -> String {
        let query = query(in: state)
        if explain, explaining {
            var standardError = StandardError()
            print("plan: \(query.plan)", to: &standardError)
        }
        if countOnly, !isAggregating { return "\(query.count)\n" }
        if isAggregating {
            return RowPrinter(format: format, fields: fields).text(ordered(query.aggregated(groupedByField: groupBy, aggregates)))
        }
        let records = query.results
        if let id, records.isEmpty, conditions.isEmpty {
            throw CommandFailure("no record with id \(Echo.summary(id)) in \(Echo.name(table))")
        }
        var rows = records.map(\.row)
        for join in joins {
            var ids: [RecordID] = []
            var seen = Set<RecordID>()
            for record in records {
                if let id = record.fields[join.field].flatMap(RecordID.init), seen.insert(id).inserted { ids.append(id) }
            }
            let found = try referenced?(join, ids) ?? Dictionary(uniqueKeysWithValues: ids.compactMap { id in
                state[Table<DynamicRecord>(join.target)].find(id).map { (id, $0) }
            })
            for (position, record) in records.enumerated() {
                guard let id = record.fields[join.field].flatMap(RecordID.init), let target = found[id] else { continue }
                for (name, value) in target.row { rows[position]["\(join.field).\(name)"] = value }
            }
        }
        return RowPrinter(format: format, fields: fields).text(rows)
    }
}
