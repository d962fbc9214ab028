import ArgumentParser
import EntityStore
import EntityStoreSQLite

/// `entity-store diff A B`: per table, the IDs added, removed and changed from A to B.
public struct DiffCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two snapshots: per table, the ids added, removed and changed from A to B.",
        discussion: "Exit status 0 either way; --json prints {\"tables\": {NAME: {\"added\": [...], \"removed\": [...], \"changed\": [...]}}}.\n\nExample: entity-store diff monday.sqlite tuesday.sqlite --json")

    @Argument(help: "The first snapshot.")
    var first: String

    @Argument(help: "The second snapshot.")
    var second: String

    @Flag(help: "Print one JSON object.")
    var json = false

    @Flag(help: "No progress bars.")
    var quiet = false

    public init() {}

    /// The differences of one table.
    struct TableDiff {
        var added: [RecordID] = []
        var removed: [RecordID] = []
        var changed: [RecordID] = []
        var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }
    }

    public func run() throws {
        let left = try restoreDynamic(first, quiet: quiet).state
        let right = try restoreDynamic(second, quiet: quiet).state
        let names = Set(left.tableNames).union(right.tableNames).sorted()
        var diffs: [(String, TableDiff)] = []
        for name in names {
            let table = Table<DynamicRecord>(name)
            let before = left[table], after = right[table]
            var diff = TableDiff()
            for record in after {
                if let old = before.find(record.id) {
                    if old != record { diff.changed.append(record.id) }
                } else {
                    diff.added.append(record.id)
                }
            }
            for record in before where !after.contains(record.id) { diff.removed.append(record.id) }
            diff.added.sort(); diff.removed.sort(); diff.changed.sort()
            diffs.append((name, diff))
        }
        if json {
            var tables: [String: JSONValue] = [:]
            for (name, diff) in diffs {
                tables[name] = .object([
                    "added": .array(diff.added.map(\.jsonValue)),
                    "removed": .array(diff.removed.map(\.jsonValue)),
                    "changed": .array(diff.changed.map(\.jsonValue)),
                ])
            }
            CommandOutput.print(JSONValue.object(["tables": .object(tables)]).serialized(sortedKeys: true, pretty: true))
            return
        }
        var any = false
        for (name, diff) in diffs where !diff.isEmpty {
            any = true
            printEscaped("\(name): \(diff.added.count) added, \(diff.removed.count) removed, \(diff.changed.count) changed")
            if !diff.added.isEmpty { printEscaped("  added: \(diff.added.map(\.description).joined(separator: " "))") }
            if !diff.removed.isEmpty { printEscaped("  removed: \(diff.removed.map(\.description).joined(separator: " "))") }
            if !diff.changed.isEmpty { printEscaped("  changed: \(diff.changed.map(\.description).joined(separator: " "))") }
        }
        if !any { CommandOutput.print("no differences") }
    }
}
