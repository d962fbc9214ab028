import ArgumentParser
import EntityStoreSQLite

/// `entity-store verify SNAPSHOT`: exit 0 with one line when sound, 1 with the reason.
public struct VerifyCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a snapshot: integrity, metadata, row counts, kinds, relations. Exit 0 if sound, 1 if not.",
        discussion: "Example: entity-store verify flights.sqlite")

    @Argument(help: "The snapshot file.")
    var snapshot: String

    public init() {}

    public func run() throws {
        let report = Snapshot.verify(at: snapshot)
        guard report.isSound else {
            throw CommandFailure("\(snapshot): " + report.problems.joined(separator: "; "))
        }
        let rows = report.rowCounts.values.reduce(0, +)
        printEscaped("OK: \(snapshot): format version \(report.formatVersion ?? 0), \(report.rowCounts.count) tables, \(rows) rows")
        for note in report.notes { printEscaped("note: \(note)") }
    }
}
