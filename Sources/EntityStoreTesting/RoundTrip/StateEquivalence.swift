import EntityStore
import Foundation

/// Compares two states of the same schema by content: the same tables, and in each the
/// same IDs holding equal entities (insertion order aside: a restore inserts rows in ID
/// order), with every table's indexes agreeing with its rows.
enum StateEquivalence {
    /// Each difference between `expected` and `actual`, one line each (with indented field
    /// lines), at most `limit` rows per table.
    /// - Complexity: O(n) over every table's rows, plus an invariant check of `actual`.
    static func differences(expected: EntityState, actual: EntityState, actualName: String, limit: Int = 20) -> [String] {
        var problems: [String] = []
        if expected.tableNames != actual.tableNames {
            problems.append("tables: expected \(expected.tableNames), \(actualName) has \(actual.tableNames)")
            return problems
        }
        for table in expected.schema.tables {
            guard let typed = table as? any TypedTable else { continue }
            problems += compare(typed, expected: expected, actual: actual, actualName: actualName, limit: limit)
        }
        for violation in actual.invariantViolations() {
            problems.append("the \(actualName) state's indexes disagree with its rows: \(violation)")
        }
        return problems
    }

    private static func compare<T: TypedTable>(_ table: T, expected: EntityState, actual: EntityState, actualName: String, limit: Int) -> [String] {
        let want = expected[table.typed], have = actual[table.typed]
        var problems: [String] = []
        var shown = 0
        func add(_ line: String) {
            shown += 1
            if shown <= limit { problems.append(line) }
        }
        for entity in want {
            let label = "\(table.name) \(ValueDiff.describe(entity.id))"
            guard let found = have.find(entity.id) else {
                add("\(label): missing from the \(actualName) state: \(ValueDiff.describe(entity))")
                continue
            }
            if found != entity {
                let fields = ValueDiff.differences(entity, found).map { "    \($0.path.isEmpty ? "value" : $0.path): expected \($0.old), \(actualName) has \($0.new)" }
                add(([label + ": differs"] + fields).joined(separator: "\n"))
            }
        }
        if have.count != want.count || shown > 0 {
            for entity in have where !want.contains(entity.id) {
                add("\(table.name) \(ValueDiff.describe(entity.id)): only in the \(actualName) state: \(ValueDiff.describe(entity))")
            }
        }
        if shown > limit { problems.append("\(table.name): \(shown - limit) more rows differ") }
        return problems
    }

    /// Whether `expected` and `actual` hold the same rows. O(n).
    static func sameRows(_ expected: EntityState, _ actual: EntityState) -> Bool {
        guard expected.tableNames == actual.tableNames else { return false }
        for table in expected.schema.tables {
            guard let typed = table as? any TypedTable else { continue }
            if !sameRows(typed, expected, actual) { return false }
        }
        return true
    }

    private static func sameRows<T: TypedTable>(_ table: T, _ expected: EntityState, _ actual: EntityState) -> Bool {
        let want = expected[table.typed], have = actual[table.typed]
        guard want.count == have.count else { return false }
        for entity in want where have.find(entity.id) != entity { return false }
        return true
    }
}

/// Where the helpers make their temporary directories: the system's temporary directory,
/// unless a test of this library sets another to watch what is left there.
enum TemporaryRoot {
    @TaskLocal static var override: URL?
}

/// A directory of its own under the system's temporary directory, removed when `body`
/// returns or throws.
func withTemporaryDirectory<Result>(_ prefix: String, _ body: (String) throws -> Result) throws -> Result {
    let root = TemporaryRoot.override ?? FileManager.default.temporaryDirectory
    let url = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    // SQLite names files by their real path; the fault plan matches on it.
    return try body((url.path as NSString).resolvingSymlinksInPath)
}
