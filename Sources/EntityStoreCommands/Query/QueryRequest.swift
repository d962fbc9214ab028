import EntityStore
import EntityStoreSQLite
import Foundation

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

    /// The printed answer, read from the snapshot without restoring it; nil if the
    /// snapshot lacks the table. See ``answer(from:into:)``.
    func answer(from reader: SnapshotTableReader) throws -> String? {
        var text = ""
        return try answer(from: reader, into: &text) ? text : nil
    }

    /// Writes the answer to `output`, read from the snapshot without restoring it: SQLite
    /// counts the matches when it can say every condition exactly, else it selects the
    /// rows the conditions it can say allow (all of the table's, if none), and the same
    /// query runs on those alone in memory. Records in id order (no `--sort`, or by id)
    /// stream from SQLite to `output` instead, a few at a time, and stop at the page's
    /// end (a table reads them twice, to align its columns first). Either way the answer
    /// is the one a full restore gives.
    /// - Returns: false when the snapshot lacks the table (nothing written).
    func answer(from reader: SnapshotTableReader, into output: inout some AnswerOutput) throws -> Bool {
        guard let stored = reader.metadata.table(named: table) else { return false }
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
        if !countOnly, !isAggregating, sort == nil || sort == "id" {
            try stream(from: reader, filter, isExact: isExact, into: &output)
            return true
        }
        var selected = filter
        // A page of records in an order SQL can say: only the rows that can be on it.
        if isExact, !countOnly, !isAggregating, let limit {
            let (first, overflow) = (offset ?? 0).addingReportingOverflow(limit)
            let candidates = overflow ? nil : try reportingFailures {
                try pushdown.candidates(sortedBy: sort ?? "id", descending: descending, first: first, of: table, filter, reader: reader)
            }
            if let (clause, arguments) = candidates {
                // The ids first, by themselves: SQLite then finds them through the column's
                // index where it has one, instead of scanning the table in id order.
                selected.clauses.append(clause)
                selected.arguments += arguments
                selected = selected.selectingIDsFirst(of: table)
            }
        }
        if explain {
            var standardError = StandardError()
            let clauses = selected.clauses.isEmpty ? "every row" : selected.clauses.joined(separator: " AND ")
            print("plan: read from the snapshot: \(clauses)\(isExact ? "" : ", the rest in memory")", to: &standardError)
        }
        if countOnly, !isAggregating, isExact {
            try output.write("\(try reportingFailures { try reader.count(table, filter) })\n")
            return true
        }
        if isAggregating, isExact, let grouped = try pushdown.groups(of: table, filter, by: groupBy, aggregates, reader: reader) {
            try output.write(RowPrinter(format: format, fields: fields).text(ordered(grouped)))
            return true
        }
        let records = try reportingFailures { try reader.records(table, selected) }
        // The snapshot's whole schema, its other tables empty: the same indexes give the
        // same plan, so records that tie under --sort come in the order a restore gives.
        let state = try reportingFailures {
            try EntityState.build(schema: try reader.metadata.snapshotSchema()) { transaction in
                try transaction[Table<DynamicRecord>(table)].insert(contentsOf: records)
            }
        }
        // The referenced records of the rows printed, read by id.
        try output.write(try answer(in: state, explaining: false) { join, ids in
            try reportingFailures { try reader.records(join.target, withIDs: ids) }
        })
        return true
    }

    /// Streams the records `filter` selects (and, unless `isExact`, the conditions allow)
    /// in id order to `output`, paged, with their joined records. A table reads them twice:
    /// once to align its columns, once to print them.
    private func stream(
        from reader: SnapshotTableReader, _ filter: SnapshotTableReader.Filter, isExact: Bool, into output: inout some AnswerOutput
    ) throws {
        // The snapshot's schema must build, as for a restore.
        _ = try reportingFailures { try reader.metadata.snapshotSchema() }
        // Ids in the store's order: text as Swift orders it.
        let collation = try reportingFailures { try reader.collation(of: "id", in: table, filter) }
        let order = SnapshotTableReader.idOrder(collation: collation, descending: descending)
        if explain {
            var standardError = StandardError()
            let clauses = filter.clauses.isEmpty ? "every row" : filter.clauses.joined(separator: " AND ")
            print("plan: stream from the snapshot in id order: \(clauses)\(isExact ? "" : ", the rest in memory")", to: &standardError)
        }
        func missing(_ count: Int) throws {
            if let id, count == 0, conditions.isEmpty {
                throw CommandFailure("no record with id \(Echo.summary(id)) in \(Echo.name(table))")
            }
        }
        if var streamer = RowStreamer(format: format, fields: fields) {
            try missing(try forEachStreamed(from: reader, filter, orderBy: order, isExact: isExact) { try output.write(streamer.text($0)) })
            try output.write(streamer.end())
            return
        }
        var aligner = TableAligner(fields: fields)
        try missing(try forEachStreamed(from: reader, filter, orderBy: order, isExact: isExact) { aligner.measure($0) })
        try output.write(aligner.header())
        let count = try forEachStreamed(from: reader, filter, orderBy: order, isExact: isExact) { try output.write(aligner.line($0)) }
        try output.write(aligner.footer(rows: count))
    }

    /// Calls `body` with the printed fields (`record[field: name]`, and the joined records'
    /// `F.x`) of each record `filter` selects (and, unless `isExact`, the conditions
    /// allow) in the SQL order `orderBy`, paged; a few hundred records are read at a time,
    /// with their joins. Returns how many. On a failure, the records read before it are
    /// passed on first.
    private func forEachStreamed(
        from reader: SnapshotTableReader, _ filter: SnapshotTableReader.Filter, orderBy order: String, isExact: Bool,
        _ body: ((String) -> JSONValue?) throws -> Void
    ) throws -> Int {
        var batch: [DynamicRecord] = []
        var skipped = 0, taken = 0
        var previous: RecordID?
        func flush() throws {
            defer { batch.removeAll(keepingCapacity: true) }
            if joins.isEmpty {
                for record in batch { try body { record[field: $0] } }
            } else {
                for row in try rows(of: batch, referenced: { join, ids in try reader.records(join.target, withIDs: ids) }) {
                    try body { row[$0] }
                }
            }
        }
        guard limit != 0 else { return 0 }
        do {
            try reportingFailures {
                try reader.forEachRecord(table, filter, orderBy: order) { record in
                    // Two spellings of one id (a restore refuses the file).
                    if let previous, previous == record.id {
                        throw CommandFailure("table \(Echo.name(table)) holds the id \(Echo.summary(record.id.jsonValue)) twice")
                    }
                    previous = record.id
                    guard isExact || conditions.allSatisfy({ $0.matches(record) }) else { return true }
                    if skipped < offset ?? 0 {
                        skipped += 1
                        return true
                    }
                    batch.append(record)
                    taken += 1
                    if batch.count == Self.streamBatch { try flush() }
                    return limit.map { taken < $0 } ?? true
                }
            }
        } catch {
            try? flush()
            throw error
        }
        try flush()
        return taken
    }

    /// Records streamed are printed this many at a time (their joins read together).
    static let streamBatch = 512

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
        let rows = try rows(of: records, referenced: referenced ?? { join, ids in
            Dictionary(uniqueKeysWithValues: ids.compactMap { id in
                state[Table<DynamicRecord>(join.target)].find(id).map { (id, $0) }
            })
        })
        return RowPrinter(format: format, fields: fields).text(rows)
    }

    /// The printed rows of `records`, with the fields of the records their joins reference
    /// (`referenced` gives those of a join's target with the ids asked).
    private func rows(
        of records: [DynamicRecord], referenced: (Join, [RecordID]) throws -> [RecordID: DynamicRecord]
    ) throws -> [[String: JSONValue]] {
        var rows = records.map(\.row)
        for join in joins {
            var ids: [RecordID] = []
            var seen = Set<RecordID>()
            for record in records {
                if let id = record.fields[join.field].flatMap(RecordID.init), seen.insert(id).inserted { ids.append(id) }
            }
            let found = try referenced(join, ids)
            for (position, record) in records.enumerated() {
                guard let id = record.fields[join.field].flatMap(RecordID.init), let target = found[id] else { continue }
                for (name, value) in target.row { rows[position]["\(join.field).\(name)"] = value }
            }
        }
        return rows
    }
}

/// Where `query` writes its answer, piece by piece.
protocol AnswerOutput {
    mutating func write(_ text: String) throws
}

extension String: AnswerOutput {}

/// Standard output, written in blocks of 64 KiB; ``flush()`` writes the rest.
struct StandardOutput: AnswerOutput {
    private var buffer = ""

    mutating func write(_ text: String) throws {
        buffer += text
        if buffer.utf8.count >= 1 << 16 { try flush() }
    }

    /// - Throws: ``CommandFailure`` naming the system's reason ("no space left on device").
    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        defer { buffer = "" }
        do {
            try CommandOutput.writeOutput(Data(buffer.utf8))
        } catch {
            throw CommandFailure("cannot write to standard output: \(error)")
        }
    }
}
