import ArgumentParser
import EntityStoreSQLite
import Foundation

/// `entity-store fixture SNAPSHOT FIXTURE`: a compact, self-contained copy of a snapshot to
/// keep in an app's test resources, as EntityStoreTesting's migration checks read it.
public struct FixtureCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "fixture",
        abstract: "Record a snapshot as a migration-test fixture: a compact copy in rollback mode, verified.",
        discussion: """
            The copy keeps the snapshot's format and app schema version, so a test can check, \
            release after release, that files of this version still migrate and restore \
            (MigrationFixture.assertMigrates in EntityStoreTesting). The snapshot is only read.
            Example: entity-store fixture shelf.sqlite Tests/ShelfTests/Fixtures/shelf-v1.sqlite
            """)

    @Argument(help: "The snapshot to record.")
    var snapshot: String

    @Argument(help: "The fixture file to write; it must not exist unless --force.")
    var fixture: String

    @Flag(help: "Replace an existing fixture file.")
    var force = false

    public init() {}

    public func run() throws {
        let metadata = try reportingFailures(snapshot) { try Snapshot.metadata(at: snapshot) }
        if FileManager.default.fileExists(atPath: fixture) {
            guard force else { throw CommandFailure("\(fixture): the file exists (pass --force to replace it)") }
            try reportingFailures(fixture) { try FileManager.default.removeItem(atPath: fixture) }
        }
        do {
            try Snapshot.compactCopy(of: snapshot, to: fixture)
        } catch {
            try? FileManager.default.removeItem(atPath: fixture)
            throw CommandFailure("\(fixture): cannot copy \(snapshot): \(error)")
        }
        let report = Snapshot.verify(at: fixture)
        guard report.isSound else {
            try? FileManager.default.removeItem(atPath: fixture)
            throw CommandFailure("\(fixture): the copy does not verify: " + report.problems.joined(separator: "; "))
        }
        let rows = metadata.tables.reduce(0) { $0 + $1.rowCount }
        let tables = metadata.tables.map { "\($0.name) \($0.rowCount)" }.joined(separator: ", ")
        printEscaped(
            "wrote fixture \(fixture): format version \(metadata.formatVersion), app schema version \(metadata.appSchemaVersion), \(rows) rows (\(tables))")
    }
}
