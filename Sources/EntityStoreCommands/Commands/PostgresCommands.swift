import ArgumentParser
import EntityStore
import EntityStoreSQLite
import Foundation
#if PostgreSQL
import EntityStorePostgres
#endif

/// Where a PostgreSQL command connects: a `postgres://` URL, or libpq's `PG*` variables.
struct PostgresConnectionOptions: ParsableArguments {
    @Option(help: "The PostgreSQL schema holding the store (default: the URL's ?schema=, else entitystore).")
    var schema: String?

    /// Whether `text` is a PostgreSQL URL rather than a file.
    static func isURL(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// The message of a tool built without the trait.
    static let unavailable = "this entity-store was built without PostgreSQL support; build it with `swift build --traits PostgreSQL`"

    #if PostgreSQL
    /// The target of `url`, or of the `PG*` variables when there is none.
    func target(_ url: String?) throws -> PostgresTarget {
        do {
            if let url { return try PostgresTarget(url: url, schema: schema) }
            return try PostgresTarget.fromEnvironment(schema: schema)
        } catch {
            throw CommandFailure(error.description)
        }
    }
    #endif
}

/// Runs an async body from a synchronous command, turning errors into one-line failures.
func runAsync<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
    let box = ResultBox<R>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    switch box.result {
    case let .success(value)?: return value
    case let .failure(error as CommandFailure)?: throw error
    case let .failure(error)?: throw CommandFailure(String(describing: error))
    case nil: throw CommandFailure("the operation did not complete")
    }
}

/// The result of a task, handed to the thread waiting for it.
private final class ResultBox<R: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `result` is written once by the task before it
    // signals the semaphore, and read only after the wait on it returns.
    var result: Result<R, any Error>?
}

/// `entity-store push SNAPSHOT [URL]`: the whole snapshot into PostgreSQL, atomically.
public struct PushCommand: ParsableCommand {
    /// The command's name, help and example.
    public static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Write a snapshot into a PostgreSQL schema, replacing its contents atomically.",
        discussion: """
            The connection comes from URL (postgres://user:password@host:port/database?sslmode=require&schema=s) \
            or, without it, from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE. Readers see the old \
            contents or the new, never a mix; a failure leaves the old. The password is never printed.
            Example: entity-store push flights.sqlite postgres://me@localhost/flights
            """)

    @Argument(help: "The snapshot file to push.")
    var snapshot: String

    @Argument(help: "postgres:// URL (default: the PG* variables).")
    var url: String?

    @OptionGroup var connection: PostgresConnectionOptions

    /// A command with no arguments yet (the argument parser fills them).
    public init() {}

    /// Reads the snapshot (O(n log n)), then writes it in one transaction (O(n)).
    public func run() throws {
        #if PostgreSQL
        let target = try connection.target(url)
        let store = try reportingFailures(snapshot) { try EntityStore.restoringDynamic(from: snapshot) }
        // Dynamic records hold a date as its text: the file's kinds say which fields are dates.
        let metadata = try reportingFailures(snapshot) { try Snapshot.metadata(at: snapshot) }
        let dates = metadata.dateFields
        let state = store.state
        let summary = try runAsync { try await state.writeSnapshot(to: target, dateFields: dates) }
        printEscaped("pushed \(summary.rows) rows in \(summary.tables.count) tables to \(target) at position \(summary.position) in \(summary.duration)")
        #else
        throw CommandFailure(PostgresConnectionOptions.unavailable)
        #endif
    }
}

/// `entity-store pull [URL] --output SNAPSHOT [--table T ...]`: a snapshot of the store in PostgreSQL.
public struct PullCommand: ParsableCommand {
    /// The command's name, help and example.
    public static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Write the store in a PostgreSQL schema (or some of its tables) to a snapshot file.",
        discussion: """
            The connection comes from URL or the PG* variables (see push). With --table, only those tables \
            are read; the others are empty in the snapshot. The file is replaced atomically.
            Example: entity-store pull postgres://me@localhost/flights --output flights.sqlite --table flights
            """)

    @Argument(help: "postgres:// URL (default: the PG* variables).")
    var url: String?

    @Option(name: .shortAndLong, help: "The snapshot file to write.")
    var output: String

    @Option(name: .customLong("table"), help: "A table to read (repeatable; default: all).")
    var tables: [String] = []

    @OptionGroup var connection: PostgresConnectionOptions

    /// A command with no arguments yet (the argument parser fills them).
    public init() {}

    /// Reads the store (or the chosen tables) in one transaction (O(n log n)), then writes the file (O(n)).
    public func run() throws {
        #if PostgreSQL
        let target = try connection.target(url)
        let selection: PostgresSelection = tables.isEmpty ? .all : .tables(tables)
        let wanted = tables
        let (state, metadata) = try runAsync { () async throws -> (EntityState, PostgresStoreMetadata) in
            let metadata = try await PostgresStore.metadata(of: target)
            for name in wanted where metadata.table(named: name) == nil {
                throw CommandFailure("the store in schema '\(target.schema)' has no table '\(name)'")
            }
            return (try await EntityStore.restoringDynamic(from: target, selection: selection).state, metadata)
        }
        // Dynamic records hold a date as its text: the store's kinds say which fields are dates.
        var options = SnapshotOptions()
        options.dateFields = metadata.dateFields
        let summary = try reportingFailures(output) { try state.writeSnapshot(to: output, options: options) }
        let rows = summary.tables.reduce(0) { $0 + $1.rows }
        printEscaped("pulled \(rows) rows in \(summary.tables.count) tables from \(target) into \(output)")
        #else
        throw CommandFailure(PostgresConnectionOptions.unavailable)
        #endif
    }
}

#if PostgreSQL
extension InspectCommand {
    /// `inspect URL`: the store's tables, columns, indexes and relations in PostgreSQL.
    static func inspectPostgres(_ url: String, schema: String?, json: Bool) throws {
        let options = try PostgresConnectionOptions.parse(schema.map { ["--schema", $0] } ?? [])
        let target = try options.target(url)
        let metadata = try runAsync { try await PostgresStore.metadata(of: target) }
        if json {
            let place: [String: JSONValue] = [
                "target": .string(target.description), "schema": .string(metadata.schema),
                "position": .integer(metadata.head), "logStart": .integer(metadata.logStart),
            ]
            CommandOutput.print(Self.json(metadata.metadata, at: place).serialized(sortedKeys: true, pretty: true))
            return
        }
        // A snapshot starts the log afresh (log_start = head): no position to show yet.
        let log = metadata.logStart < metadata.head
            ? "change log positions \(metadata.logStart + 1)...\(metadata.head)" : "change log empty, head \(metadata.head)"
        printEscaped("\(target): format version \(metadata.formatVersion), app schema version \(metadata.appSchemaVersion), \(log)")
        Self.printTables(metadata.metadata) { $0.sqlType }
    }
}
#endif

/// `entity-store repair [URL]`: recover a store whose tables were written by hand.
public struct RepairCommand: ParsableCommand {
    /// The command's name, help and example.
    public static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Recount a PostgreSQL store's tables after they were written by hand, and make every replica reload.",
        discussion: """
            Rows written with psql or another program bypass the change log: replicas never pull them, and an \
            insert or delete leaves the recorded row counts wrong, which every open and pull then refuses. This \
            recounts every table into the metadata and moves the change log past its head, in one transaction \
            (pushes wait for it), so every replica reloads on its next pull. The connection is as for push.
            Example: entity-store repair postgres://me@localhost/app?schema=shop
            """)

    @Argument(help: "postgres:// URL (default: the PG* variables).")
    var url: String?

    @OptionGroup var connection: PostgresConnectionOptions

    /// A command with no arguments yet (the argument parser fills them).
    public init() {}

    /// One `count(*)` per table (O(n)), in one transaction.
    public func run() throws {
        #if PostgreSQL
        let target = try connection.target(url)
        let summary = try runAsync { try await target.repairStore() }
        printEscaped(summary.description)
        #else
        throw CommandFailure(PostgresConnectionOptions.unavailable)
        #endif
    }
}
