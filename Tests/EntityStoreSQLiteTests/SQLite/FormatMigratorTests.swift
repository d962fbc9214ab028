import EntityStoreMigrations
import EntityStoreSQLite
import Foundation
import Testing

@Suite("FormatMigrator")
struct FormatMigratorTests {
    static let metadataTables = [
        "entitystore_meta", "entitystore_tables", "entitystore_columns",
        "entitystore_indexes", "entitystore_relations", "entitystore_app_migrations",
    ]

    @Test func currentVersionIsTheHighestBundledVersion() throws {
        let bundled = try FormatMigrations.bundled.get()
        #expect(FormatMigrator.currentVersion == bundled.last?.version)
        #expect(FormatMigrator.currentVersion >= 1)
    }

    @Test func everyCodeStepBelongsToABundledVersion() throws {
        let bundled = Set(try FormatMigrations.bundled.get().map(\.version))
        #expect(FormatCodeSteps.versions.isSubset(of: bundled))
    }

    @Test func aFreshFileIsMigratedToTheCurrentVersion() throws {
        try withTemporaryDatabase { connection, _ in
            try FormatMigrator().migrate(connection)
            #expect(try connection.userVersion == Int32(FormatMigrator.currentVersion))
            #expect(try connection.applicationID == entityStoreApplicationID)
            for table in Self.metadataTables {
                let exists = try connection.tableExists(table)
                #expect(exists, "missing \(table)")
            }
            #expect(try connection.integrityCheck() == [])
            #expect(!connection.isInTransaction)
        }
    }

    @Test func migratingAnUpToDateFileChangesNothing() throws {
        try withTemporaryDatabase { connection, url in
            try FormatMigrator().migrate(connection)
            try connection.close()
            let before = try Data(contentsOf: url)
            let reopened = try SQLiteConnection(path: url.path, mode: .readWrite)
            try FormatMigrator().migrate(reopened)
            try reopened.close()
            #expect(try Data(contentsOf: url) == before)
        }
    }

    @Test func aReadOnlyUpToDateFileCanBeChecked() throws {
        try withTemporaryDatabase { connection, url in
            try FormatMigrator().migrate(connection)
            try connection.close()
            let reader = try SQLiteConnection(path: url.path, mode: .readOnly)
            try FormatMigrator().migrate(reader)
            #expect(try reader.userVersion == Int32(FormatMigrator.currentVersion))
        }
    }

    @Test func aNewerFormatIsRefusedAndTheFileLeftUntouched() throws {
        try withTemporaryDatabase { connection, url in
            try FormatMigrator().migrate(connection)
            let newer = FormatMigrator.currentVersion + 1
            try connection.setUserVersion(Int32(newer))
            try connection.close()
            let before = try Data(contentsOf: url)

            let reopened = try SQLiteConnection(path: url.path, mode: .readWrite)
            let error = #expect(throws: SnapshotError.self) { try FormatMigrator().migrate(reopened) }
            #expect(error == .newerFormat(found: newer, supported: FormatMigrator.currentVersion))
            #expect(error?.description.contains("upgrade") == true)
            try reopened.close()
            #expect(try Data(contentsOf: url) == before)
        }
    }

    @Test func anotherApplicationsFileIsRefused() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.setApplicationID(0x1234)
            let error = #expect(throws: SnapshotError.self) { try FormatMigrator().migrate(connection) }
            #expect(error == .wrongApplicationID(found: 0x1234, expected: entityStoreApplicationID))
            let created = try connection.tableExists("entitystore_meta")
            #expect(!created)
        }
    }

    @Test func aDatabaseWithTablesButNoVersionIsNotASnapshot() throws {
        try withTemporaryDatabase { connection, url in
            try connection.execute("CREATE TABLE unrelated (x)")
            let error = #expect(throws: SnapshotError.self) { try FormatMigrator().migrate(connection) }
            guard case .notASnapshot(let path, let reason) = error else {
                Issue.record("expected notASnapshot, got \(String(describing: error))")
                return
            }
            #expect(path == url.path)
            #expect(reason.contains("no EntityStore format version"))
            #expect(try connection.userVersion == 0)
        }
    }

    @Test func aVersionWithoutTheApplicationIDIsNotASnapshot() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.setUserVersion(1)
            let error = #expect(throws: SnapshotError.self) { try FormatMigrator().migrate(connection) }
            guard case .notASnapshot(_, let reason) = error else {
                Issue.record("expected notASnapshot, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("application_id"))
        }
    }

    @Test func aNegativeVersionIsNotASnapshot() throws {
        try withTemporaryDatabase { connection, _ in
            try connection.setApplicationID(entityStoreApplicationID)
            try connection.setUserVersion(-1)
            let error = #expect(throws: SnapshotError.self) { try FormatMigrator().migrate(connection) }
            guard case .notASnapshot(_, let reason) = error else {
                Issue.record("expected notASnapshot, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("negative"))
        }
    }

    @Test func aFailingMigrationIsRolledBack() throws {
        try withTemporaryDatabase { connection, _ in
            // Too few pages for all metadata tables: the script fails halfway with SQLITE_FULL.
            try connection.setPragma("max_page_count", "3")
            let error = #expect(throws: SnapshotError.self) { try FormatMigrator().migrate(connection) }
            guard case .diskFull(let path, let underlying) = error else {
                Issue.record("expected a full-disk error, got \(String(describing: error))")
                return
            }
            #expect(path == connection.path)
            #expect(underlying.isFull)
            #expect(underlying.sql?.contains("CREATE TABLE entitystore_meta") == true)
            #expect(!connection.isInTransaction)
            #expect(try connection.userVersion == 0)
            #expect(try connection.applicationID == 0)
            let created = try connection.tableExists("entitystore_meta")
            #expect(!created)

            // With room again, the same file migrates completely.
            try connection.setPragma("max_page_count", "1000")
            try FormatMigrator().migrate(connection)
            #expect(try connection.userVersion == Int32(FormatMigrator.currentVersion))
        }
    }

    @Test func snapshotErrorsClassifySQLiteFailures() {
        let corrupt = SQLiteError(extendedCode: SQLiteError.notADatabase, message: "file is not a database")
        // A file without SQLite's header is not a snapshot; one with it is damaged.
        #expect(SnapshotError(corrupt, path: "/x.sqlite") == .notASnapshot(path: "/x.sqlite", reason: "it is not an SQLite database"))
        let damaged = SQLiteError(extendedCode: SQLiteError.corrupt, message: "database disk image is malformed")
        #expect(SnapshotError(damaged, path: "/x.sqlite") == .corrupt(path: "/x.sqlite", message: "database disk image is malformed"))
        let full = SQLiteError(extendedCode: SQLiteError.full, message: "database or disk is full")
        #expect(SnapshotError(full, path: "/x.sqlite") == .diskFull(path: "/x.sqlite", full))
        #expect(SnapshotError(full, path: "/x.sqlite").description.contains("'/x.sqlite': the disk is full"))
        let busy = SQLiteError(extendedCode: SQLiteError.busy, message: "database is locked")
        #expect(SnapshotError(busy, path: "/x.sqlite") == .sqlite(busy))
        #expect(SnapshotError.sqlite(busy).description == busy.description)
        #expect(SnapshotError.corrupt(path: "/x.sqlite", message: "bad").description.contains("/x.sqlite"))
        #expect(SnapshotError.fileNotFound(path: "/y").description.contains("/y"))
        #expect(SnapshotError.notASnapshot(path: "/z", reason: "why").description.contains("why"))
        #expect(SnapshotError.wrongApplicationID(found: 1, expected: 2).description.contains("another application"))
        #expect(SnapshotError.invalidFormatMigrations(reason: "gap").description.contains("gap"))
    }

    @Test func aCorruptFileIsReportedAsCorrupt() throws {
        try withTemporaryDatabase { connection, url in
            try FormatMigrator().migrate(connection)
            try connection.close()
            // Overwrite the schema page (page 1 after the 100-byte header) with garbage.
            var bytes = try Data(contentsOf: url)
            for index in 100..<min(bytes.count, 4096) { bytes[index] = 0xA5 }
            try bytes.write(to: url)
            do {
                let damaged = try SQLiteConnection(path: url.path, mode: .readWrite)
                try FormatMigrator().migrate(damaged)
                Issue.record("a damaged schema page went unnoticed")
            } catch let error as SQLiteError {
                // Damage can already show when opening, which reads the schema.
                #expect(error.isCorrupt)
            } catch let error as SnapshotError {
                guard case .corrupt(let path, let message) = error else {
                    Issue.record("expected corrupt, got \(error)")
                    return
                }
                #expect(path == url.path)
                #expect(!message.isEmpty)
            }
        }
    }
}
