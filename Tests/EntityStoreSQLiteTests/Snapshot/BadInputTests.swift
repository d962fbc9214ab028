import EntityStoreTestSupport
import EntityStore
import EntityStoreSQLite
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Restores `path` into `store`, expecting a `SnapshotError`, and checks that the store
/// is exactly as it was: no commit happened and every row is the same.
private func failedRestore(
    into store: EntityStore, from path: String, options: SnapshotOptions = SnapshotOptions(),
    sourceLocation: SourceLocation = #_sourceLocation
) -> SnapshotError? {
    let before = store.state
    let error = #expect(throws: SnapshotError.self, sourceLocation: sourceLocation) {
        try store.restore(from: path, options: options)
    }
    #expect(store.state == before, "the failed restore committed", sourceLocation: sourceLocation)
    #expect(sameLibraryRows(store.state, before), sourceLocation: sourceLocation)
    #expect(store.state.count(ofTable: "books") ?? 0 > 0, sourceLocation: sourceLocation)
    return error
}

/// A live store holding data, and a real snapshot of a different store at `path`.
private func liveStoreAndSnapshot(at path: String, bookCount: Int = 30) throws -> EntityStore {
    try populatedLibraryStore(authorCount: 5, bookCount: bookCount).snapshot(to: path)
    return try populatedLibraryStore(authorCount: 2, bookCount: 3)
}

/// An entity whose unsigned field SQLite cannot hold above `Int64.max`.
private struct Counter: Entity {
    var id: Int
    var value: UInt64
}

private let counters = Table<Counter>("counters")

@Suite("Bad input gives specific errors and leaves the store untouched")
struct BadInputTests {
    @Test func missingFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("absent.sqlite").path
            let store = try populatedLibraryStore()
            #expect(failedRestore(into: store, from: path) == .fileNotFound(path: path))
            #expect(throws: SnapshotError.fileNotFound(path: path)) { try Snapshot.metadata(at: path) }
            #expect(!Snapshot.verify(at: path).isSound)
        }
    }

    @Test func emptyFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("empty.sqlite").path
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            let error = failedRestore(into: try populatedLibraryStore(), from: path)
            guard case .notASnapshot(let reportedPath, _)? = error else {
                Issue.record("expected notASnapshot, got \(String(describing: error))")
                return
            }
            #expect(reportedPath == path)
            #expect(FileManager.default.contents(atPath: path) == Data(), "a failed restore must not write to the file")
        }
    }

    @Test func randomBytes() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("noise.sqlite").path
            var random = SplitMix64(seed: 99)
            let noise = Data((0..<8192).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            try noise.write(to: URL(fileURLWithPath: path))
            // Noise has no SQLite header: it is not a snapshot at all, rather than a damaged one.
            let error = failedRestore(into: try populatedLibraryStore(), from: path)
            guard case .notASnapshot(let reportedPath, let reason)? = error else {
                Issue.record("expected notASnapshot, got \(String(describing: error))")
                return
            }
            #expect(reportedPath == path && reason.contains("not an SQLite database"))
            #expect(FileManager.default.contents(atPath: path) == noise)
            #expect(!Snapshot.verify(at: path).isSound)
        }
    }

    @Test func truncatedSnapshot() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("truncated.sqlite").path
            let store = try liveStoreAndSnapshot(at: path, bookCount: 4000)
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).uint64Value
            #expect(size > 8192)
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: size / 2)
            try handle.close()

            let error = failedRestore(into: store, from: path)
            switch error {
            case .corrupt?, .sqlite?: break
            default: Issue.record("expected corrupt or an SQLite error, got \(String(describing: error))")
            }
            let report = Snapshot.verify(at: path)
            #expect(!report.isSound)
            #expect(!report.problems.joined().isEmpty)
        }
    }

    @Test func sqliteFileThatIsNotASnapshot() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("other.sqlite").path
            let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
            try connection.execute("CREATE TABLE books (id TEXT PRIMARY KEY, title TEXT); INSERT INTO books VALUES ('x', 'X');")
            try connection.close()
            let error = failedRestore(into: try populatedLibraryStore(), from: path)
            guard case .notASnapshot(let reportedPath, _)? = error else {
                Issue.record("expected notASnapshot, got \(String(describing: error))")
                return
            }
            #expect(reportedPath == path)
            #expect(try sqlValue(path, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'entitystore%'") == .integer(0), "the file must not be migrated")
            #expect(try sqlValue(path, "PRAGMA application_id") == .integer(0))
        }
    }

    @Test func wrongApplicationID() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("foreign.sqlite").path
            let store = try liveStoreAndSnapshot(at: path)
            try sqlExecute(path, "PRAGMA application_id = 1234")
            #expect(failedRestore(into: store, from: path) == .wrongApplicationID(found: 1234, expected: entityStoreApplicationID))
            #expect(throws: SnapshotError.wrongApplicationID(found: 1234, expected: entityStoreApplicationID)) {
                try Snapshot.migrate(at: path)
            }
        }
    }

    @Test func newerFormat() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("future.sqlite").path
            let store = try liveStoreAndSnapshot(at: path)
            try sqlExecute(path, "PRAGMA user_version = 99")
            #expect(failedRestore(into: store, from: path) == .newerFormat(found: 99, supported: Snapshot.formatVersion))
            #expect(throws: SnapshotError.newerFormat(found: 99, supported: Snapshot.formatVersion)) { try Snapshot.migrate(at: path) }
            #expect(try sqlValue(path, "PRAGMA user_version") == .integer(99), "a newer file is left untouched")
        }
    }

    @Test func columnWithTheWrongType() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("typed.sqlite").path
            let store = try liveStoreAndSnapshot(at: path)
            try sqlExecute(path, "UPDATE books SET year = 'nineteen sixty' WHERE id = 'b7'")
            #expect(try sqlValue(path, "SELECT typeof(year) FROM books WHERE id = 'b7'") == .text("text"))
            let error = failedRestore(into: store, from: path)
            guard case .schemaMismatch(let table, let detail)? = error else {
                Issue.record("expected schemaMismatch, got \(String(describing: error))")
                return
            }
            #expect(table == "books")
            #expect(detail.contains("'year'"), "the detail names the column: \(detail)")
            #expect(Snapshot.verify(at: path).problems.contains { $0.contains("'year'") })
        }
    }

    @Test func missingColumnForANonOptionalField() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("dropped.sqlite").path
            let store = try liveStoreAndSnapshot(at: path)
            try sqlExecute(path, "ALTER TABLE books DROP COLUMN title")
            // The metadata still lists the column: the file contradicts itself.
            guard case .invalidData("books", let inconsistency)? = failedRestore(into: store, from: path) else {
                Issue.record("expected invalidData for a listed column that is missing")
                return
            }
            #expect(inconsistency.contains("'title'"))
            #expect(Snapshot.verify(at: path).problems.contains { $0.contains("'title'") })
            // Consistent metadata without the column: the Swift field has nothing to read.
            try sqlExecute(path, "DELETE FROM entitystore_columns WHERE table_name = 'books' AND name = 'title'")
            let error = failedRestore(into: store, from: path)
            guard case .schemaMismatch(let table, let detail)? = error else {
                Issue.record("expected schemaMismatch, got \(String(describing: error))")
                return
            }
            #expect(table == "books")
            #expect(detail.contains("'title'"), "the detail names the column: \(detail)")
        }
    }

    @Test func duplicateID() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("duplicate.sqlite").path
            let store = try liveStoreAndSnapshot(at: path)
            try sqlExecute(path, """
                CREATE TABLE authors_copy AS SELECT * FROM authors;
                DROP TABLE authors;
                ALTER TABLE authors_copy RENAME TO authors;
                INSERT INTO authors SELECT * FROM authors WHERE id = 2;
                UPDATE entitystore_tables SET row_count = row_count + 1 WHERE name = 'authors';
                """)
            #expect(try sqlValue(path, "SELECT count(*) FROM authors WHERE id = 2") == .integer(2))
            let error = failedRestore(into: store, from: path)
            guard case .invalidData(let table, _)? = error else {
                Issue.record("expected invalidData, got \(String(describing: error))")
                return
            }
            #expect(table == "authors")
        }
    }

    @Test func rowCountDisagreesWithTheMetadata() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("count.sqlite").path
            let store = try liveStoreAndSnapshot(at: path)
            try sqlExecute(path, "DELETE FROM books WHERE id = 'b4'")
            let error = failedRestore(into: store, from: path)
            guard case .invalidData(let table, _)? = error else {
                Issue.record("expected invalidData, got \(String(describing: error))")
                return
            }
            #expect(table == "books")
            #expect(Snapshot.verify(at: path).problems.contains { $0.contains("'books'") && $0.contains("rows") })
        }
    }

    @Test func danglingReferenceIsReportedByVerify() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("dangling.sqlite").path
            _ = try liveStoreAndSnapshot(at: path)
            #expect(Snapshot.verify(at: path).problems == [])
            try sqlExecute(path, """
                DELETE FROM authors WHERE id = 2;
                UPDATE entitystore_tables SET row_count = row_count - 1 WHERE name = 'authors';
                """)
            let problems = Snapshot.verify(at: path).problems
            #expect(problems.count == 1)
            #expect(problems.first?.contains("authorID") == true, "\(problems)")
        }
    }

    @Test func tableTheSchemaDoesNotDeclare() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("extra.sqlite").path
            try populatedLibraryStore().snapshot(to: path)
            let store = EntityStore(schema: try Schema {
                authors
                books
            })
            try store.write { tx in
                try tx[authors].insert(Author(id: 1, name: "Kept"))
                try tx[books].insert(Book(id: "k", title: "Kept", authorID: 1, year: 2000, editorID: nil))
            }
            let before = store.state
            let error = #expect(throws: SnapshotError.self) { try store.restore(from: path) }
            guard case .schemaMismatch(let table, _)? = error else {
                Issue.record("expected schemaMismatch, got \(String(describing: error))")
                return
            }
            #expect(table == "samples")
            #expect(store.state == before)
            #expect(rows(books, in: store.state) == rows(books, in: before))
        }
    }

    @Test func unwritableDirectory() throws {
        try withTemporaryDirectory { directory in
            let store = try populatedLibraryStore()
            let target: URL
            if getuid() == 0 {
                // Permission checks pass for root: use a directory that does not exist.
                target = directory.appendingPathComponent("missing/snapshot.sqlite")
            } else {
                let locked = directory.appendingPathComponent("locked", isDirectory: true)
                try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
                #expect(chmod(locked.path, 0o500) == 0)
                target = locked.appendingPathComponent("snapshot.sqlite")
            }
            defer { chmod(target.deletingLastPathComponent().path, 0o700) }
            let error = #expect(throws: SnapshotError.self) { try store.snapshot(to: target.path) }
            guard case .io(let path, _)? = error else {
                Issue.record("expected io, got \(String(describing: error))")
                return
            }
            #expect(path == target.path)
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(throws: SnapshotError.self) { _ = try SnapshotFile(store: store, path: target.path) }
        }
    }

    @Test func missingParentDirectory() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("no/such/dir/snapshot.sqlite").path
            let error = #expect(throws: SnapshotError.self) { try populatedLibraryStore().snapshot(to: target) }
            guard case .io(let path, _)? = error else {
                Issue.record("expected io, got \(String(describing: error))")
                return
            }
            #expect(path == target)
        }
    }

    @Test("a full disk during a restore's migration fails with SQLITE_FULL and leaves the previous snapshot intact")
    func fullDisk() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("full.sqlite").path
            let source = try populatedLibraryStore(authorCount: 5, bookCount: 200)
            try source.snapshot(to: path, options: SnapshotOptions(appSchemaVersion: 1))
            let store = try populatedLibraryStore(authorCount: 2, bookCount: 3)
            // The migration caps the file at its current size, then needs more pages.
            let fill = AppMigration(version: 2, name: "fill") { database in
                try database.execute("PRAGMA max_page_count = 1")
                try database.execute("""
                    CREATE TABLE filler (x BLOB);
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                    INSERT INTO filler SELECT zeroblob(4096) FROM n;
                    """)
            }
            let error = failedRestore(into: store, from: path, options: SnapshotOptions(appSchemaVersion: 2, migrations: [fill]))
            switch error {
            case .diskFull(let failedPath, let sqliteError)?:
                #expect(sqliteError.isFull, "\(sqliteError)")
                #expect(failedPath == path)
                #expect(error?.description.contains(path) == true, "the message names the file: \(String(describing: error))")
            case .io?: break
            default: Issue.record("expected a full-disk error, got \(String(describing: error))")
            }
            #expect(Snapshot.verify(at: path).problems == [])
            #expect(try Snapshot.metadata(at: path).appSchemaVersion == 1)
            #expect(try sqlValue(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'filler'") == .integer(0))
            let restored = EntityStore(schema: try librarySchema())
            try restored.restore(from: path, options: SnapshotOptions(appSchemaVersion: 1))
            #expect(sameLibraryRows(restored.state, source.state))
        }
    }

    @Test("a snapshot that fails midway leaves the previous file intact and no temporary file")
    func failedWriteKeepsThePreviousSnapshot() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("counters.sqlite").path
            let schema = try Schema { counters }
            let store = EntityStore(schema: schema)
            try store.write { tx in try tx[counters].insert(contentsOf: (1...500).map { Counter(id: $0, value: UInt64($0)) }) }
            try store.snapshot(to: path)
            let saved = store.state
            try store.write { tx in _ = try tx[counters].update(400) { $0.value = .max } }
            let error = #expect(throws: SnapshotError.self) { try store.snapshot(to: path) }
            guard case .encodingFailed(let table, _)? = error else {
                Issue.record("expected encodingFailed, got \(String(describing: error))")
                return
            }
            #expect(table == "counters")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["counters.sqlite"])
            #expect(Snapshot.verify(at: path).problems == [])
            let restored = try EntityState.readSnapshot(from: path, schema: schema)
            #expect(rows(counters, in: restored) == rows(counters, in: saved))
        }
    }
}
