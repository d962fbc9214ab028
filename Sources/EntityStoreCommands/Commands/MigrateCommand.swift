import ArgumentParser
import EntityStoreSQLite

/// `entity-store migrate SNAPSHOT`: upgrade an older snapshot in place.
public struct MigrateCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Upgrade an older snapshot to the current format in place; each step is atomic.",
        discussion: "Example: entity-store migrate old.sqlite")

    @Argument(help: "The snapshot file.")
    var snapshot: String

    public init() {}

    public func run() throws {
        let (from, to) = try reportingFailures { try Snapshot.migrate(at: snapshot) }
        printEscaped(from == to
            ? "\(snapshot) is already at format version \(to)"
            : "migrated \(snapshot) from format version \(from) to \(to)")
    }
}
