import ArgumentParser
import EntityStore
import EntityStoreSQLite

/// `snapshot INPUT --output SNAPSHOT`: loads the app's input into its typed store and
/// writes a snapshot atomically.
public struct SnapshotCommand<Context: SnapshotCommandContext>: ParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "snapshot", abstract: "Load the input into the store and write a snapshot.")
    }

    @Argument(help: "The input to load.")
    var input: String

    @Option(name: .shortAndLong, help: "The snapshot file to write.")
    var output: String

    @Flag(help: "Replace the output file if it exists.")
    var force = false

    @Flag(help: "No progress bars.")
    var quiet = false

    public init() {}

    public func run() throws {
        try OutputFile.checkWritable(output, force: force)
        let store = try reportingFailures { try Context.makeStore() }
        try reportingFailures(input) { try Context.load(store, from: input) }
        let bar = ProgressBar("snapshot", quiet: quiet)
        var options = Context.snapshotOptions
        options.progress = { bar.update($0.rowsDone, of: $0.totalRows) }
        let summary = try reportingFailures(output) {
            try OutputFile.writingSnapshot(to: output) { try store.snapshot(to: output, options: options) }
        }
        bar.finish()
        printEscaped("wrote \(summary.rowCount) rows to \(output) (\(summary.tables.map { "\($0.name) \($0.rows)" }.joined(separator: ", ")))")
    }
}

/// `restore SNAPSHOT`: restores a snapshot into the app's typed store, checking it fits
/// the Swift types, and prints the row counts.
public struct RestoreCommand<Context: SnapshotCommandContext>: ParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "restore", abstract: "Restore a snapshot into the typed store and report what it holds.")
    }

    @Argument(help: "The snapshot file.")
    var snapshot: String

    @Flag(help: "No progress bars.")
    var quiet = false

    public init() {}

    public func run() throws {
        let store = try reportingFailures { try Context.makeStore() }
        let bar = ProgressBar("restore", quiet: quiet)
        var options = Context.snapshotOptions
        options.progress = { bar.update($0.rowsDone, of: $0.totalRows) }
        let summary = try reportingFailures(snapshot) { try store.restore(from: snapshot, options: options) }
        bar.finish()
        printEscaped("restored \(summary.rowCount) rows from \(snapshot) (\(summary.tables.map { "\($0.name) \($0.rows)" }.joined(separator: ", ")))")
    }
}
