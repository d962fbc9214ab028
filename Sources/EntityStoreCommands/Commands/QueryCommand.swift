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
            FIELD>VALUE, FIELD>=VALUE, FIELD=in:A,B,C, 'FIELD is null', 'FIELD not null'. VALUE is read as JSON when it \
            parses (genre=1 is the integer 1, name="AC/DC" a string) and as a plain string otherwise (name=AC/DC). \
            Numbers compare by value: year=1999 matches 1999 and 1999.0. Strings compare by their exact characters. \
            A null or missing field matches only 'is null'.

            Output: an aligned table when standard output is a terminal, else one JSON object per line \
            (--format table|json|ndjson|csv). Fields print in the snapshot's column order, or as --fields lists them. \
            Records come in id order unless --sort says otherwise.

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

    @Flag(help: "Print the number of matching records alone.")
    var count = false

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
        if count, sort != nil || fields != nil || format != nil || json {
            throw ValidationError("--count prints one number: it takes no --sort, --fields or --format")
        }
        for condition in conditions { _ = try FieldCondition(parsing: condition) }
    }

    public func run() throws {
        // Table and fields are checked on the metadata, before any row is read.
        let reader = try reportingFailures { try SnapshotTableReader(path: snapshot) }
        let request = try request(metadata: reader.metadata)
        // One table's matching rows, read in place; an older format is restored (and upgraded).
        if let answer = try request.answer(from: reader) {
            print(answer, terminator: "")
            return
        }
        let store = try restoreDynamic(snapshot, quiet: quiet)
        print(try request.answer(in: store.state), terminator: "")
    }

    /// The query these options ask, checked against the table's fields in `metadata`.
    func request(metadata: SnapshotMetadata) throws -> QueryRequest {
        let tableFields = try TableFields(table, in: metadata, snapshot: snapshot)
        let parsed = try conditions.map { text in
            let condition = try FieldCondition(parsing: text)
            try tableFields.check(condition.field, option: "--where \(text)")
            return condition
        }
        if let sort { try tableFields.check(sort, option: "--sort \(sort)") }
        let stored = metadata.table(named: table)
        var joined: [QueryRequest.Join] = []
        var printable = tableFields.names
        for field in joins {
            try tableFields.check(field, option: "--join \(field)")
            guard let relation = stored?.relations.first(where: { $0.field == field }) else {
                let declared = stored?.relations.map { Echo.name($0.field) }.joined(separator: ", ") ?? ""
                throw CommandFailure("--join \(field): table \(Echo.name(table)) declares no relation on \(Echo.name(field)) (relations: \(declared.isEmpty ? "none" : declared))")
            }
            joined.append(QueryRequest.Join(field: field, target: relation.targetTable))
            let target = try TableFields(relation.targetTable, in: metadata, snapshot: snapshot)
            printable += target.names.map { "\(field).\($0)" }
        }
        let allFields = TableFields(table: table, names: printable)
        let shown = try fields.map { list in
            try list.split(separator: ",", omittingEmptySubsequences: false).map { name in
                let field = String(name).trimmingSpaces
                try allFields.check(field, option: "--fields \(list)")
                return field
            }
        } ?? printable
        return QueryRequest(
            table: table, id: id.map(FieldCondition.value), conditions: parsed, sort: sort, descending: desc,
            offset: offset, limit: limit, fields: shown, countOnly: count, explain: explain,
            format: json ? .json : (format ?? .automatic), joins: joined)
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
