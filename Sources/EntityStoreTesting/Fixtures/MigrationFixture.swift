import EntityStore
import EntityStoreSQLite
import Foundation

/// Snapshot fixtures for migration tests: record one from a store into the app's test
/// resources, then check, release after release, that files written by older versions of
/// the app still open, and that files of newer versions are refused.
///
/// Every check works on a copy of the fixture in a temporary directory (removed on every
/// path), so the fixture in the test resources is never changed.
public enum MigrationFixture {
    /// Writes `store`'s state as a fixture at `path`, recording `appSchemaVersion`, with
    /// no creation time (the same state writes the same bytes), and verifies it.
    /// `entity-store fixture SNAPSHOT FIXTURE` makes one from an existing snapshot.
    /// - Returns: what the snapshot wrote.
    /// - Throws: a `SnapshotError` writing it, or `SnapshotError.invalidData`
    ///   naming the verification's problems.
    /// - Complexity: O(n) in the rows, plus a verification O(n log n).
    @discardableResult
    public static func record(_ store: EntityStore, to path: String, appSchemaVersion: Int) throws -> SnapshotSummary {
        var options = SnapshotOptions(appSchemaVersion: appSchemaVersion)
        options.recordsCreationTime = false
        let summary = try store.snapshot(to: path, options: options)
        let report = Snapshot.verify(at: path)
        guard report.isSound else { throw SnapshotError.invalidData(table: "?", detail: report.problems.joined(separator: "; ")) }
        return summary
    }

    /// Checks that the fixture at `fixture` (written by an older version of the app, or in
    /// an older snapshot format) migrates with `options.migrations` and the library's
    /// format migrations, verifies, restores into today's types, and writes and reads
    /// back under today's app schema version.
    ///
    /// In order, on a copy: the fixture verifies; `Snapshot.migrate` brings it to the
    /// current format; a restore with `options` into a fresh store of `schema` runs the
    /// app migrations and decodes every row into today's types (with `schema` nil, a
    /// dynamic restore reads it with no Swift types); the migrated file verifies and
    /// records the current format and `options.appSchemaVersion`; the restored store's
    /// indexes agree with its rows; and its snapshot, restored again, holds the same rows.
    /// - Returns: the restored store, for checks of what the migrations did; nil after a
    ///   failure, which is reported at the caller's line.
    /// - Throws: only if the temporary copy cannot be made.
    /// - Complexity: O(n log n) in the fixture's rows: a few restores and verifications.
    @discardableResult
    public static func assertMigrates(
        _ fixture: String, schema: Schema?, options: SnapshotOptions = SnapshotOptions(),
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) throws -> EntityStore? {
        let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let name = (fixture as NSString).lastPathComponent
        func fail(_ problem: String) -> EntityStore? {
            FailureReporter.report("the fixture \(name) does not migrate: \(problem)", at: location)
            return nil
        }
        return try withTemporaryDirectory("EntityStoreFixture") { directory in
            let copy = directory + "/" + name
            try FileManager.default.copyItem(atPath: fixture, toPath: copy)
            let before: StoreMetadata
            do { before = try Snapshot.metadata(at: copy) } catch { return fail("its metadata cannot be read: \(error)") }
            if before.appSchemaVersion > options.appSchemaVersion {
                return fail("it was written by a newer app (app schema version \(before.appSchemaVersion), this app knows \(options.appSchemaVersion)); check it with assertRefused")
            }
            let initial = Snapshot.verify(at: copy)
            if !initial.isSound { return fail("it does not verify before migrating: \(initial.problems.joined(separator: "; "))") }
            do {
                let (from, to) = try Snapshot.migrate(at: copy)
                if from != before.formatVersion || to != Snapshot.formatVersion {
                    return fail("migrate reported format \(from) → \(to), the file said \(before.formatVersion) and the library writes \(Snapshot.formatVersion)")
                }
            } catch {
                return fail("migrate failed: \(error)")
            }
            let store: EntityStore
            do {
                if let schema {
                    store = EntityStore(schema: schema)
                    try store.restore(from: copy, options: options)
                } else {
                    store = try EntityStore.restoringDynamic(from: copy, options: options)
                }
            } catch {
                return fail("it does not restore into today's \(schema == nil ? "dynamic records" : "types"): \(error)")
            }
            let migrated = Snapshot.verify(at: copy)
            if !migrated.isSound { return fail("the migrated file does not verify: \(migrated.problems.joined(separator: "; "))") }
            do {
                let after = try Snapshot.metadata(at: copy)
                if after.formatVersion != Snapshot.formatVersion {
                    return fail("the migrated file records format \(after.formatVersion), not \(Snapshot.formatVersion)")
                }
                if schema != nil && before.appSchemaVersion < options.appSchemaVersion && after.appSchemaVersion != options.appSchemaVersion {
                    return fail("the migrated file records app schema version \(after.appSchemaVersion), not \(options.appSchemaVersion)")
                }
            } catch {
                return fail("the migrated file's metadata cannot be read: \(error)")
            }
            let violations = store.state.invariantViolations()
            if !violations.isEmpty { return fail("the restored indexes disagree with their rows: \(violations.joined(separator: "; "))") }
            let rewritten = directory + "/rewritten.sqlite"
            do {
                try store.snapshot(to: rewritten, options: options)
                let again = EntityStore(schema: store.schema)
                try again.restore(from: rewritten, options: options)
                let differences = StateEquivalence.differences(expected: store.state, actual: again.state, actualName: "re-read")
                if !differences.isEmpty { return fail("written again under today's version, it reads back differently: \(differences.joined(separator: "; "))") }
            } catch {
                return fail("written again under today's version, it cannot be read back: \(error)")
            }
            return store
        }
    }

    /// Checks that the fixture at `fixture` (written by a newer version of the app, or in
    /// a newer format) is refused by a restore with `options` into a store of `schema`,
    /// with `expected` (typically `SnapshotError.newerAppSchema`), and
    /// that the refusal leaves the file's bytes unchanged.
    /// - Returns: whether it was refused as expected.
    /// - Throws: only if the temporary copy cannot be made.
    /// - Complexity: O(1) for a refusal from the metadata; O(n log n) in the rows if the
    ///   restore goes further.
    @discardableResult
    public static func assertRefused(
        _ fixture: String, schema: Schema, options: SnapshotOptions = SnapshotOptions(), with expected: SnapshotError,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) throws -> Bool {
        let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let name = (fixture as NSString).lastPathComponent
        return try withTemporaryDirectory("EntityStoreFixture") { directory in
            let copy = directory + "/" + name
            try FileManager.default.copyItem(atPath: fixture, toPath: copy)
            let bytes = FileManager.default.contents(atPath: copy)
            let store = EntityStore(schema: schema)
            var problem: String?
            do {
                try store.restore(from: copy, options: options)
                problem = "it was accepted, expected \(expected)"
            } catch let error as SnapshotError where error == expected {
            } catch {
                problem = "it was refused with \(error), expected \(expected)"
            }
            if problem == nil, FileManager.default.contents(atPath: copy) != bytes {
                problem = "it was refused, but the refusal changed the file"
            }
            if problem == nil, store.state.tableNames.contains(where: { (store.state.count(ofTable: $0) ?? 0) > 0 }) {
                problem = "it was refused, but the store holds rows"
            }
            if let problem { FailureReporter.report("the fixture \(name) is not refused as expected: \(problem)", at: location) }
            return problem == nil
        }
    }
}
