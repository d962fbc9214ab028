import ArgumentParser
import EntityStore
import EntityStoreSQLite
import Foundation

/// `entity-store shell SNAPSHOT`: restores a snapshot once, then answers queries line by
/// line, each with its time.
public struct ShellCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Load a snapshot once, then answer queries line by line, with timings.",
        discussion: """
            Each line is a query as `entity-store query` takes it, without the snapshot: \
            TABLE [--where ...] [--sort F [--desc]] [--limit N] [--fields a,b] [--count] [--format F]. \
            Other lines: `tables` lists the tables, `help` shows this, `quit` (or Ctrl-D) leaves. \
            On a terminal, lines can be edited and the arrow keys recall earlier ones (kept in \
            ~/.entity_store_history); times print on standard error.

            Example: entity-store shell flights.sqlite
            """)

    @Argument(help: "The snapshot file.")
    var snapshot: String

    @Flag(help: "No progress bars.")
    var quiet = false

    public init() {}

    public func run() throws {
        let metadata = try reportingFailures { try Snapshot.metadata(at: snapshot) }
        let started = ContinuousClock.now
        let store = try restoreDynamic(snapshot, quiet: quiet)
        var standardError = StandardError()
        print("loaded \(Echo.escaped(snapshot)): \(metadata.tables.count) tables, \(Echo.grouped(metadata.tables.reduce(0) { $0 + $1.rowCount })) records in \(Self.format(ContinuousClock.now - started)); type help for help", to: &standardError)
        let home = ProcessInfo.processInfo.environment["HOME"]
        let reader = TerminalLineReader(prompt: "entity-store> ", historyFile: home.map { ($0 as NSString).appendingPathComponent(".entity_store_history") })
        while let line = reader.next() {
            let words: [String]
            do { words = try ShellWords.split(line) } catch {
                print("error: \(error)", to: &standardError)
                continue
            }
            guard let first = words.first else { continue }
            switch first {
            case "quit", "exit", ".quit", "\\q": return
            case "help", "?", ".help":
                CommandOutput.print(Self.helpMessage(), terminator: "")
                continue
            case "tables", ".tables":
                for table in metadata.tables {
                    let fields = ["id"] + table.fields.map(\.name)
                    printEscaped("\(table.name): \(Echo.grouped(table.rowCount)) records; fields \(fields.joined(separator: ", "))")
                }
                continue
            default: break
            }
            let arguments = first == "query" ? Array(words.dropFirst()) : words
            let clock = ContinuousClock.now
            do {
                let command = try QueryCommand.parse([snapshot] + arguments)
                let request = try command.request(metadata: metadata)
                let answer = try request.answer(in: store.state)
                CommandOutput.print(answer, terminator: "")
                print("(\(Self.format(ContinuousClock.now - clock)))", to: &standardError)
            } catch let failure as CommandFailure {
                print("error: \(failure.message)", to: &standardError)
            } catch {
                print("error: \(Echo.capped(QueryCommand.message(for: error)))", to: &standardError)
            }
        }
    }

    static func helpMessage() -> String {
        """
        TABLE [--where CONDITION ...] [--sort FIELD [--desc]] [--offset N] [--limit N] [--fields a,b,c]
              [--count] [--group-by F] [--sum F] [--avg F] [--min F] [--max F] [--join F]
              [--format table|json|ndjson|csv] [--explain]
        conditions: F=V  F!=V  F<V  F<=V  F>V  F>=V  F=in:A,B  'F is null'  'F not null'
        tables      list the tables and their fields
        quit        leave (or Ctrl-D)

        """
    }

    /// `0.42 ms`, `12.3 ms`, `1.20 s`.
    static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        let milliseconds = seconds * 1_000
        return milliseconds >= 10 ? String(format: "%.1f ms", milliseconds) : String(format: "%.2f ms", milliseconds)
    }
}
