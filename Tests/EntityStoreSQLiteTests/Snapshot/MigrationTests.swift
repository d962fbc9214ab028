import EntityStore
import EntityStoreMigrations
import EntityStoreSQLite
import Foundation
import Synchronization
import Testing

/// Counts how often each migration body runs.
private final class RunLog: Sendable {
    private let entries = Mutex<[String]>([])

    func record(_ name: String) { entries.withLock { $0.append(name) } }
    var names: [String] { entries.withLock { $0 } }
}

private func appMigrations(_ log: RunLog, failAt failing: Int? = nil) -> [AppMigration] {
    [
        // Deliberately out of order: they must run by version.
        AppMigration(version: 3, name: "sign titles") { database in
            log.record("3")
            // Step 2 must have run first.
            let unmarked = try database.rows("SELECT count(*) FROM books WHERE title NOT LIKE '% [2]'")
            guard unmarked.first?.first == .integer(0) else { throw MigrationTestFailure(reason: "step 3 ran before step 2") }
            try database.execute("UPDATE books SET title = title || ' [3]'")
            if failing == 3 { throw MigrationTestFailure(reason: "step 3 fails on purpose") }
        },
        .sql(version: 2, name: "mark titles", "UPDATE books SET title = title || ' [2]'; UPDATE authors SET name = upper(name);"),
        AppMigration(version: 4, name: "renumber years") { database in
            log.record("4")
            try database.execute("UPDATE books SET year = year + 1000")
        },
    ]
}

private struct MigrationTestFailure: Error {
    let reason: String
}

private func migrationRows(_ path: String) throws -> [[SQLiteValue]] {
    try sqlRows(path, "SELECT version, name FROM entitystore_app_migrations ORDER BY version")
}

@Suite("App and format migrations")
struct MigrationTests {
    @Test("app migrations run once, in version order, and are recorded")
    func appMigrationsRunOnce() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            let source = try populatedLibraryStore(authorCount: 3, bookCount: 6)
            try source.snapshot(to: path, options: SnapshotOptions(appSchemaVersion: 1))
            #expect(try Snapshot.metadata(at: path).appSchemaVersion == 1)

            let log = RunLog()
            let options = SnapshotOptions(appSchemaVersion: 4, migrations: appMigrations(log))
            let store = EntityStore(schema: try librarySchema())
            try store.restore(from: path, options: options)
            #expect(log.names == ["3", "4"])
            for book in source.state[books] {
                let restored = try #require(store.state[books].find(book.id))
                #expect(restored.title == book.title + " [2] [3]")
                #expect(restored.year == book.year + 1000)
            }
            #expect(store.state[authors].find(1)?.name == "AUTHOR 1")
            #expect(try migrationRows(path) == [
                [.integer(2), .text("mark titles")], [.integer(3), .text("sign titles")], [.integer(4), .text("renumber years")],
            ])
            #expect(try Snapshot.metadata(at: path).appSchemaVersion == 4)

            // A second restore finds the file up to date: nothing runs again.
            let again = EntityStore(schema: try librarySchema())
            try again.restore(from: path, options: options)
            #expect(log.names == ["3", "4"])
            #expect(sameLibraryRows(again.state, store.state))
        }
    }

    @Test("only the steps above the file's version run")
    func onlyNewerSteps() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("app.sqlite").path
            try populatedLibraryStore().snapshot(to: path, options: SnapshotOptions(appSchemaVersion: 3))
            let log = RunLog()
            let store = EntityStore(schema: try librarySchema())
            try store.restore(from: path, options: SnapshotOptions(appSchemaVersion: 4, migrations: appMigrations(log)))
            #expect(log.names == ["4"])
            #expect(try migrationRows(path) == [[.integer(4), .text("renumber years")]])
            #expect(store.state[books].find("b1")?.title == "Book 1")
        }
    }

    @Test("a file with a newer app schema version is refused")
    func newerAppSchema() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("newer.sqlite").path
            try populatedLibraryStore(authorCount: 5, bookCount: 9).snapshot(to: path, options: SnapshotOptions(appSchemaVersion: 5))
            let store = try populatedLibraryStore(authorCount: 2, bookCount: 2)
            let before = store.state
            #expect(throws: SnapshotError.newerAppSchema(found: 5, supported: 3)) {
                try store.restore(from: path, options: SnapshotOptions(appSchemaVersion: 3))
            }
            #expect(store.state == before)
            #expect(try Snapshot.metadata(at: path).appSchemaVersion == 5)
        }
    }

    @Test("a failing migration keeps the file at the last complete step and the store untouched")
    func failingMigration() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("failing.sqlite").path
            let source = try populatedLibraryStore(authorCount: 3, bookCount: 6)
            try source.snapshot(to: path, options: SnapshotOptions(appSchemaVersion: 1))
            let store = try populatedLibraryStore(authorCount: 2, bookCount: 2)
            let before = store.state
            let log = RunLog()
            let error = #expect(throws: SnapshotError.self) {
                try store.restore(from: path, options: SnapshotOptions(appSchemaVersion: 4, migrations: appMigrations(log, failAt: 3)))
            }
            #expect(error != nil)
            #expect(log.names == ["3"], "step 4 must not run after step 3 failed")
            #expect(store.state == before)
            #expect(sameLibraryRows(store.state, before))
            // Step 2 committed; step 3's update was rolled back with it.
            #expect(try Snapshot.metadata(at: path).appSchemaVersion == 2)
            #expect(try migrationRows(path) == [[.integer(2), .text("mark titles")]])
            #expect(try sqlValue(path, "SELECT title FROM books WHERE id = 'b1'") == .text("Book 1 [2]"))
            #expect(Snapshot.verify(at: path).problems == [])

            // Fixed, the migration resumes from step 3.
            let fixed = RunLog()
            try store.restore(from: path, options: SnapshotOptions(appSchemaVersion: 4, migrations: appMigrations(fixed)))
            #expect(fixed.names == ["3", "4"])
            #expect(store.state[books].find("b1")?.title == "Book 1 [2] [3]")
        }
    }

    @Test("migrating a current file is a no-op")
    func migrateCurrentFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("current.sqlite").path
            try populatedLibraryStore().snapshot(to: path)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let result = try Snapshot.migrate(at: path)
            #expect(result.from == Snapshot.formatVersion && result.to == Snapshot.formatVersion)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
            #expect(throws: SnapshotError.fileNotFound(path: path + ".missing")) { try Snapshot.migrate(at: path + ".missing") }
        }
    }

    @Test("an empty SQLite database is not a snapshot, and a file built from the bundled migration is one")
    func formatVersions() throws {
        try withTemporaryDirectory { directory in
            // user_version 0, no tables.
            let emptyPath = directory.appendingPathComponent("empty.sqlite").path
            let empty = try SQLiteConnection(path: emptyPath, mode: .readWriteCreate)
            try empty.execute("PRAGMA user_version = 0")
            try empty.close()
            let store = try populatedLibraryStore()
            let before = store.state
            let error = #expect(throws: SnapshotError.self) { try store.restore(from: emptyPath) }
            guard case .notASnapshot(let reportedPath, _)? = error else {
                Issue.record("expected notASnapshot, got \(String(describing: error))")
                return
            }
            #expect(reportedPath == emptyPath)
            #expect(store.state == before)
            #expect(throws: SnapshotError.self) { try Snapshot.migrate(at: emptyPath) }

            // Version 1 by hand: the bundled SQL, the application_id and the user_version.
            let handPath = directory.appendingPathComponent("by-hand.sqlite").path
            let initial = try #require(try FormatMigrations.bundled.get().first)
            #expect(initial.version == 1)
            let byHand = try SQLiteConnection(path: handPath, mode: .readWriteCreate)
            try byHand.execute(initial.sql)
            try byHand.execute("PRAGMA application_id = \(entityStoreApplicationID); PRAGMA user_version = 1;")
            try byHand.close()
            // The current version by the migrator.
            let migratorPath = directory.appendingPathComponent("by-migrator.sqlite").path
            let migrated = try SQLiteConnection(path: migratorPath, mode: .readWriteCreate)
            try FormatMigrator().migrate(migrated)
            try migrated.close()

            let schemaSQL = "SELECT type, name, sql FROM sqlite_schema ORDER BY name"
            for path in [handPath, migratorPath] {
                let result = try Snapshot.migrate(at: path)
                #expect(result.from == (path == handPath ? 1 : Snapshot.formatVersion) && result.to == Snapshot.formatVersion)
                #expect(try Snapshot.metadata(at: path).tables.isEmpty)
                // A snapshot with no entity tables restores every table empty.
                let restored = try populatedLibraryStore()
                try restored.restore(from: path)
                #expect(restored.state.tableNames.allSatisfy { restored.state.count(ofTable: $0) == 0 })
            }
            // Once the version 1 file is migrated, both have the same schema.
            #expect(try sqlRows(handPath, schemaSQL) == sqlRows(migratorPath, schemaSQL))
        }
    }
}
