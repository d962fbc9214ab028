import ArgumentParser
import EntityStore
import EntityStoreSQLite

/// `entity-store query SNAPSHOT TABLE`: records by ID or field values, from the restored
/// in-memory store, using the snapshot's indexes where it declares them.
public struct QueryCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Restore a snapshot and answer a query on one table (indexes are used where declared).",
        discussion: """
            VALUE is read as JSON when it parses as JSON (genre=1 is the integer 1, name="AC/DC" a string) \
            and as a plain string otherwise (name=AC/DC). Records print one JSON object per line, ordered by id.

            Example: entity-store query flights.sqlite flights --where carrier=UA --count
            """)

    @Argument(help: "The snapshot file.")
    var snapshot: String

    @Argument(help: "The table to query.")
    var table: String

    @Option(help: "Only the record with this id.")
    var id: String?

    @Option(name: .customLong("where"), help: ArgumentHelp("Only records whose FIELD equals VALUE (repeatable).", valueName: "field=value"))
    var conditions: [String] = []

    @Flag(help: "Print the number of matching records alone.")
    var count = false

    // Unconditional, so that `--limit -1` reaches validation instead of reading as an option.
    @Option(parsing: .unconditional, help: "At most this many records.")
    var limit: Int?

    @Flag(help: "Print a JSON array instead of one record per line.")
    var json = false

    @Flag(help: "Print how the query runs (index or scan) on standard error.")
    var explain = false

    @Flag(help: "No progress bars.")
    var quiet = false

    public init() {}

    public mutating func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit \(limit): the number of records must be 0 or more") }
        for condition in conditions where !condition.contains("=") || condition.hasPrefix("=") {
            throw ValidationError("--where \(condition): expected FIELD=VALUE")
        }
    }

    /// VALUE as JSON if it parses, else as a plain string.
    static func value(_ text: String) -> JSONValue {
        (try? JSONValue(parsing: text)) ?? .string(text)
    }

    public func run() throws {
        // Table and fields are checked on the metadata, before the snapshot is read.
        let metadata = try reportingFailures { try Snapshot.metadata(at: snapshot) }
        let fields = try TableFields(table, in: metadata, snapshot: snapshot)
        let parsed = try conditions.map { condition in
            let equals = condition.firstIndex(of: "=") ?? condition.endIndex
            let field = String(condition[..<equals])
            try fields.check(field, option: "--where \(condition)")
            let value = equals < condition.endIndex ? String(condition[condition.index(after: equals)...]) : ""
            return (field: field, value: Self.value(value))
        }
        let store = try restoreDynamic(snapshot, quiet: quiet)
        var query = store.state[Table<DynamicRecord>(table)].query()
        if let id {
            query = query.where(field: "id", equals: Self.value(id))
        }
        for condition in parsed {
            query = query.where(field: condition.field, equals: condition.value)
        }
        if explain {
            var standardError = StandardError()
            print("plan: \(query.plan)", to: &standardError)
        }
        if count {
            print(query.count)
            return
        }
        var records = query.results.sorted { $0.id < $1.id }
        if let id, records.isEmpty {
            throw CommandFailure("no record with id \(Echo.summary(Self.value(id))) in \(Echo.name(table))")
        }
        if let limit { records = Array(records.prefix(limit)) }
        if json {
            print(JSONValue.array(records.map(\.jsonValue)).serialized())
        } else {
            for record in records { print(record.jsonValue.serialized()) }
        }
    }
}
