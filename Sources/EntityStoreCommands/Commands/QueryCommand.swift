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

    @Option(help: "At most this many records.")
    var limit: Int?

    @Flag(help: "Print a JSON array instead of one record per line.")
    var json = false

    @Flag(help: "Print how the query runs (index or scan) on standard error.")
    var explain = false

    @Flag(help: "No progress bars.")
    var quiet = false

    public init() {}

    public mutating func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        for condition in conditions where !condition.contains("=") || condition.hasPrefix("=") {
            throw ValidationError("--where \(condition): expected FIELD=VALUE")
        }
    }

    /// VALUE as JSON if it parses, else as a plain string.
    static func value(_ text: String) -> JSONValue {
        (try? JSONValue(parsing: text)) ?? .string(text)
    }

    public func run() throws {
        let store = try restoreDynamic(snapshot, quiet: quiet)
        guard store.state.tableNames.contains(table) else {
            throw CommandFailure("\(snapshot): no table '\(table)' (tables: \(store.state.tableNames.joined(separator: ", ")))")
        }
        var query = store.state[Table<DynamicRecord>(table)].query()
        if let id {
            query = query.where(field: "id", equals: Self.value(id))
        }
        for condition in conditions {
            guard let equals = condition.firstIndex(of: "=") else { continue }
            let field = String(condition[..<equals])
            query = query.where(field: field, equals: Self.value(String(condition[condition.index(after: equals)...])))
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
        if let limit { records = Array(records.prefix(limit)) }
        if json {
            print(JSONValue.array(records.map(\.jsonValue)).serialized())
        } else {
            for record in records { print(record.jsonValue.serialized()) }
        }
    }
}
