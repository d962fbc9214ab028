import ArgumentParser
import EntityStore
import EntityStoreSQLite

/// `entity-store query SNAPSHOT TABLE`: records by ID or conditions, sorted, paged and
/// projected, printed as a table, JSON, JSON lines or CSV.
public struct QueryCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Answer a query on one table of a snapshot (indexes are used where declared).",
        discussion: """
            Conditions (--where, repeatable, all must hold): FIELD=VALUE, FIELD!=VALUE, FIELD<VALUE, FIELD<=VALUE, \
            FIELD>VALUE, FIELD>=VALUE, FIELD=in:A,B,C, 'FIELD is null', 'FIELD not null' (== and <> also work; \
            spaces around the operator are ignored). VALUE is read as JSON when it parses (genre=1 is the integer 1, \
            name="AC/DC" a string) and as a plain string otherwise (name=AC/DC); on a field of strings it is always \
            text (zip=10001, as --id on a table of string ids), and on a field of numbers or booleans a VALUE of \
            another kind is an error. Numbers compare by value: year=1999 matches 1999 and 1999.0. Strings compare \
            by their exact characters. A null or missing field matches only 'is null'.

            Output: an aligned table when standard output is a terminal, else one JSON object per line \
            (--format table|json|ndjson|csv). Fields print in the snapshot's column order, or as --fields lists them. \
            Records come in id order unless --sort says otherwise.

            --group-by F prints one row per value of F (null and missing together; 1 and 1.0 together) with the \
            aggregates asked: --count, --sum F, --avg F, --min F, --max F (also without --group-by, over all matches). \
            --sort then names an output column (count, sum(F) ...), and --limit and --offset page the groups.

            --join FIELD follows a declared relation (import --relation) and prints the referenced record's fields \
            as FIELD.x columns: --join carrier --fields id,carrier.name.

            Example: entity-store query flights.sqlite flights --where carrier=UA --where "dep_delay>60" --sort dep_delay --desc --limit 5
            """)

    @Argument(help: "The snapshot file.")
    var snapshot: String

    @Argument(help: "The table to query.")
    var table: String

    @Option(help: "Only the record with this id (exit 1 if there is none).")
    var id: String?

    @Option(name: .customLong("where"), help: ArgumentHelp("A condition, e.g. carrier=UA or \"dep_delay>60\" (repeatable).", valueName: "condition"))
    var conditions: [String] = []

    @Flag(help: "Print the number of matching records alone; with --group-by or another aggregate, a count column.")
    var count = false

    @Option(name: .customLong("group-by"), help: ArgumentHelp("One row per value of this field, with the aggregates asked.", valueName: "field"))
    var groupBy: String?

    @Option(name: .customLong("sum"), help: ArgumentHelp("The sum of a numeric field, as a sum(F) column (repeatable).", valueName: "field"))
    var sums: [String] = []

    @Option(name: .customLong("avg"), help: ArgumentHelp("The mean of a numeric field, as avg(F) (repeatable).", valueName: "field"))
    var averages: [String] = []

    @Option(name: .customLong("min"), help: ArgumentHelp("The least number or string of a field, as min(F) (repeatable).", valueName: "field"))
    var minimums: [String] = []

    @Option(name: .customLong("max"), help: ArgumentHelp("The greatest number or string of a field, as max(F) (repeatable).", valueName: "field"))
    var maximums: [String] = []

    @Option(help: "Order by this field (records without it come last; null sorts before every value).")
    var sort: String?

    @Flag(help: "With --sort: largest first.")
    var desc = false

    // Unconditional, so that `--limit -1` reaches validation instead of reading as an option.
    @Option(parsing: .unconditional, help: "At most this many records.")
    var limit: Int?

    @Option(parsing: .unconditional, help: "Skip this many records first.")
    var offset: Int?

    @Option(help: ArgumentHelp("Print only these fields, in this order: a,b,c.", valueName: "fields"))
    var fields: String?

    @Option(name: .customLong("join"), help: ArgumentHelp(
        "Print with each record the record its FIELD references through a declared relation, as FIELD.x columns (repeatable).",
        valueName: "field"))
    var joins: [String] = []

    @Option(help: "table, json, ndjson or csv (default: table on a terminal, else ndjson).")
    var format: OutputFormat?

    @Flag(help: "The same as --format json.")
    var json = false

    @Flag(help: "Print how the query runs (index or scan) on standard error.")
    var explain = false

    @Flag(help: "No progress bars.")
    var quiet = false

    public init() {}

    public mutating func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit \(limit): the number of records must be 0 or more") }
        if let offset, offset < 0 { throw ValidationError("--offset \(offset): the number of records must be 0 or more") }
        if json, let format, format != .json { throw ValidationError("--json contradicts --format \(format.rawValue)") }
        if desc, sort == nil { throw ValidationError("--desc orders by --sort FIELD: give --sort") }
        let aggregating = groupBy != nil || !(sums + averages + minimums + maximums).isEmpty
        if count, !aggregating, sort != nil || fields != nil || format != nil || json || limit != nil || offset != nil || !joins.isEmpty {
            throw ValidationError("--count prints one number: it takes no --sort, --fields, --format, --limit, --offset or --join")
        }
        if aggregating, !joins.isEmpty { throw ValidationError("--join prints records; it does not combine with --group-by or aggregates") }
        if groupBy != nil, !count, (sums + averages + minimums + maximums).isEmpty {
            throw ValidationError("--group-by \(groupBy ?? ""): say what to compute per group: --count, --sum F, --avg F, --min F or --max F")
        }
        for condition in conditions { _ = try FieldCondition(parsing: condition) }
    }

    public func run() throws {
        // Table and fields are checked on the metadata, before any row is read.
        let reader = try reportingFailures { try SnapshotTableReader(path: snapshot) }
        let request = try request(metadata: reader.metadata)
        // One table's matching rows, read in place (an older format through a private copy).
        var output = StandardOutput()
        do {
            if try request.answer(from: reader, into: &output) {
                try output.flush()
                return
            }
        } catch {
            // What came before a failure mid-stream is printed, then the failure.
            try? output.flush()
            throw error
        }
        let store = try restoreDynamic(snapshot, quiet: quiet)
        CommandOutput.print(try request.answer(in: store.state), terminator: "")
    }

    /// The query these options ask, checked against the table's fields in `metadata`;
    /// names are taken in the snapshot's spelling.
    func request(metadata: StoreMetadata) throws -> QueryRequest {
        let tableFields = try TableFields(table, in: metadata, snapshot: snapshot)
        let table = tableFields.table
        let parsed = try conditions.map { text in
            let option = "--where \(text)"
            let condition = try FieldCondition(parsing: text)
            let field = try tableFields.resolve(condition.field, option: option)
            return try condition.fitted(to: tableFields.kinds[field], field: field, option: option)
        }
        var aggregates: [FieldAggregate] = count ? [.count] : []
        for (option, names, aggregate) in [
            ("--sum", sums, FieldAggregate.sum), ("--avg", averages, FieldAggregate.average),
            ("--min", minimums, FieldAggregate.minimum), ("--max", maximums, FieldAggregate.maximum),
        ] as [(String, [String], (String) -> FieldAggregate)] {
            for name in names { aggregates.append(aggregate(try tableFields.resolve(name, option: "\(option) \(name)"))) }
        }
        if let twice = aggregates.enumerated().first(where: { aggregates[..<$0.offset].contains($0.element) })?.element {
            throw CommandFailure("\(twice.name) is asked twice")
        }
        let groupBy = try self.groupBy.map { try tableFields.resolve($0, option: "--group-by \($0)") }
        let isAggregating = groupBy != nil || aggregates.contains { $0 != .count }
        // FieldAggregate rows have their own columns: the group field, then the aggregates.
        let aggregateColumns = (groupBy.map { [$0] } ?? []) + aggregates.map(\.name)
        let sort = try self.sort.map { sort in
            try isAggregating
                ? TableFields(table: table, names: aggregateColumns).resolve(sort, option: "--sort \(sort)")
                : tableFields.resolve(sort, option: "--sort \(sort)")
        }
        let stored = metadata.table(named: table)
        var joined: [QueryRequest.Join] = []
        var printable = tableFields.names
        for name in joins {
            let field = try tableFields.resolve(name, option: "--join \(name)")
            guard let relation = stored?.relations.first(where: { $0.field == field }) else {
                let declared = stored?.relations.map { Echo.name($0.field) }.joined(separator: ", ") ?? ""
                throw CommandFailure("--join \(name): table \(Echo.name(table)) declares no relation on \(Echo.name(field)) (relations: \(declared.isEmpty ? "none" : declared))")
            }
            guard !joined.contains(where: { $0.field == field }) else { throw CommandFailure("--join \(name): the relation is joined twice") }
            joined.append(QueryRequest.Join(field: field, target: relation.targetTable))
            let target = try TableFields(relation.targetTable, in: metadata, snapshot: snapshot)
            printable += target.names.map { "\(field).\($0)" }
        }
        if isAggregating { printable = aggregateColumns }
        let allFields = TableFields(table: table, names: printable)
        let shown = try fields.map { list in
            var shown: [String] = []
            for name in list.split(separator: ",", omittingEmptySubsequences: false) {
                let field = try allFields.resolve(String(name), option: "--fields \(list)")
                // Each field is one column, one JSON member.
                guard !shown.contains(field) else { throw CommandFailure("--fields \(list): \(Echo.name(field)) is named twice") }
                shown.append(field)
            }
            return shown
        } ?? printable
        // An id on a table of string ids is its text, as an unquoted value on a field of strings.
        let id = try self.id.map { text in
            try FieldCondition(field: "id", op: .equal, operands: [FieldCondition.value(text)], texts: [text])
                .fitted(to: tableFields.kinds["id"] == .string ? .string : nil, field: "id", option: "--id \(text)").operands[0]
        }
        return QueryRequest(
            table: table, id: id, conditions: parsed, sort: sort, descending: desc,
            offset: offset, limit: limit, fields: shown, countOnly: count, explain: explain,
            format: json ? .json : (format ?? .automatic), joins: joined,
            groupBy: groupBy, aggregates: isAggregating ? aggregates : [])
    }
}

extension DynamicRecord {
    /// The record's fields with its id, for printing.
    var row: [String: JSONValue] {
        var row = fields
        row["id"] = id.jsonValue
        return row
    }
}
