import EntityStore
import EntityStoreSQLite
import Foundation
import Synchronization
import Testing

/// Books as version 1 of an app stored them: `name` and `published` became `title` and
/// `year` in version 2 (the fixtures' `Book`).
private struct BookV1: Entity {
    var id: String
    var name: String
    var authorID: Int
    var published: Int
    var editorID: Int?
}

private let booksV1 = Table<BookV1>("books")
    .ordered(\.published)
    .references(\.authorID, to: authors, onDelete: .cascade)
    .references(\.editorID, to: authors, onDelete: .nullify)

/// Books as version 2 of another app stores them: no editor, a page count and a date.
private struct BookV2: Entity {
    var id: String
    var title: String
    var authorID: Int
    var year: Int
    var pages: Int
    var added: Date?
}

private let booksV2 = Table<BookV2>("books")
    .ordered(\.year)
    .references(\.authorID, to: authors, onDelete: .cascade)

/// A table an app migration creates.
private struct Note: Entity {
    var id: Int
    var text: String
    var bookID: String
}

private let notes = Table<Note>("notes")

/// Collects values from inside migration bodies.
private final class Log: Sendable {
    private let entries = Mutex<[[SQLiteValue]]>([])
    func record(_ rows: [[SQLiteValue]]) { entries.withLock { $0 += rows } }
    var rows: [[SQLiteValue]] { entries.withLock { $0 } }
}

/// A version 1 snapshot of authors and `BookV1` books at `path`; returns the store.
@discardableResult
private func writeVersionOne(to path: String, bookCount: Int = 12) throws -> EntityStore {
    let store = EntityStore(schema: try Schema {
        authors
        booksV1
    })
    try store.write { tx in
        try tx[authors].insert(contentsOf: (1...4).map { Author(id: $0, name: "Author \($0)") })
        try tx[booksV1].insert(contentsOf: (1...bookCount).map {
            BookV1(id: "b\($0)", name: "Book \($0)", authorID: 1 + $0 % 4, published: 1950 + $0, editorID: $0 % 3 == 0 ? 1 : nil)
        })
    }
    try store.snapshot(to: path, options: SnapshotOptions(appSchemaVersion: 1))
    return store
}

private func columns(_ path: String, _ table: String) throws -> [String] {
    try #require(try Snapshot.metadata(at: path).table(named: table)).columns.map { "\($0.name):\($0.kind.rawValue)\($0.nullable ? "?" : "")" }
}

@Suite("App migrations keep the snapshot's metadata in line with its tables")
struct AppMigrationMetadataTests {
    @Test("a migration's queries take arguments")
    func rowsWithArguments() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("arguments.sqlite").path
            try writeVersionOne(to: path)
            let log = Log()
            let step = AppMigration(version: 2, name: "count") { database in
                log.record(try database.rows("SELECT count(*), min(name) FROM books WHERE authorID = ? AND published > ?2", [.integer(2), .integer(1950)]))
                log.record(try database.rows("SELECT ?1 || ?1", [.text("twice")]))
                #expect(throws: SQLiteError.self) { try database.rows("SELECT ?", []) }
            }
            let store = EntityStore(schema: try Schema {
                authors
                booksV1
            })
            try store.restore(from: path, options: SnapshotOptions(appSchemaVersion: 2, migrations: [step]))
            #expect(log.rows == [[.integer(3), .text("Book 1")], [.text("twicetwice")]])
        }
    }

    @Test("renamed columns keep their kinds and indexes; verify, restore and an incremental save work")
    func renamedColumns() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("renamed.sqlite").path
            let source = try writeVersionOne(to: path)
            let rename = AppMigration.sql(
                version: 2, name: "title and year",
                "ALTER TABLE books RENAME COLUMN name TO title; ALTER TABLE books RENAME COLUMN published TO year;")
            let options = SnapshotOptions(appSchemaVersion: 2, migrations: [rename])
            let store = EntityStore(schema: try Schema {
                authors
                books
            })
            try store.restore(from: path, options: options)
            #expect(Snapshot.verify(at: path).problems == [])
            #expect(try columns(path, "books") == ["id:string", "title:string", "authorID:integer", "year:integer", "editorID:integer?"])
            let metadata = try #require(try Snapshot.metadata(at: path).table(named: "books"))
            #expect(metadata.indexes.map(\.field).sorted() == ["authorID", "editorID", "year"])
            #expect(metadata.relations.map(\.field).sorted() == ["authorID", "editorID"])
            for old in source.state[booksV1] {
                let book = try #require(store.state[books].find(old.id))
                #expect(book.title == old.name && book.year == old.published && book.editorID == old.editorID)
            }

            // Later saves write the renamed columns in place.
            let file = try SnapshotFile(store: store, path: path, options: options, writeInitialSnapshot: false)
            try store.write { tx in
                try tx[books].update("b1") { $0.title = "Renamed"; $0.year = 2001 }
                try tx[books].insert(Book(id: "b99", title: "New", authorID: 2, year: 2020, editorID: 3))
            }
            let saved = try file.save()
            #expect(saved.rowCount == 2)
            try file.close()
            #expect(Snapshot.verify(at: path).problems == [])
            #expect(try columns(path, "books") == ["id:string", "title:string", "authorID:integer", "year:integer", "editorID:integer?"])
            let again = EntityStore(schema: try Schema {
                authors
                books
            })
            try again.restore(from: path, options: options)
            #expect(rows(books, in: again.state) == rows(books, in: store.state))
            #expect(try EntityStore.restoringDynamic(from: path).state.count(ofTable: "books") == 13)
        }
    }

    @Test("a rename through renameColumn is followed without an index; a plain unindexed rename is a drop and an add")
    func declaredRenames() throws {
        try withTemporaryDirectory { directory in
            let declared = directory.appendingPathComponent("declared.sqlite").path
            try writeVersionOne(to: declared)
            let step = AppMigration(version: 2, name: "editor") { database in
                try database.execute("DROP INDEX entitystore_index_books_editorID")
                try database.renameColumn("editorID", in: "books", to: "editorKey")
                try database.renameColumn("editorKey", in: "books", to: "editor")
            }
            _ = try EntityStore.restoringDynamic(from: declared, options: SnapshotOptions(appSchemaVersion: 2, migrations: [step]))
            #expect(try columns(declared, "books").last == "editor:integer?")
            #expect(try #require(try Snapshot.metadata(at: declared).table(named: "books")).relations.map(\.field).sorted() == ["authorID", "editor"])
            #expect(Snapshot.verify(at: declared).problems == [])

            let plain = directory.appendingPathComponent("plain.sqlite").path
            try writeVersionOne(to: plain)
            let script = AppMigration.sql(
                version: 2, name: "editor",
                "DROP INDEX entitystore_index_books_editorID; ALTER TABLE books RENAME COLUMN editorID TO editor;")
            _ = try EntityStore.restoringDynamic(from: plain, options: SnapshotOptions(appSchemaVersion: 2, migrations: [script]))
            #expect(try columns(plain, "books").last == "editor:integer?")
            #expect(try #require(try Snapshot.metadata(at: plain).table(named: "books")).relations.map(\.field) == ["authorID"])
            #expect(Snapshot.verify(at: plain).problems == [])
        }
    }

    @Test("added, dropped and deleted: new columns get kinds, dropped columns and tables leave, row counts follow")
    func addedAndDropped() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("reshaped.sqlite").path
            try writeVersionOne(to: path)
            let reshape = AppMigration.sql(version: 2, name: "reshape", """
                ALTER TABLE books RENAME COLUMN name TO title;
                ALTER TABLE books RENAME COLUMN published TO year;
                DROP INDEX entitystore_index_books_editorID;
                ALTER TABLE books DROP COLUMN editorID;
                ALTER TABLE books ADD COLUMN pages INTEGER NOT NULL DEFAULT 0;
                UPDATE books SET pages = 100 + year % 7;
                ALTER TABLE books ADD COLUMN added DATETIME;
                UPDATE books SET added = '2020-01-0' || (1 + year % 9) || 'T00:00:00Z' WHERE year % 2 = 0;
                DELETE FROM books WHERE id = 'b12';
                CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL, bookID TEXT NOT NULL);
                INSERT INTO notes (text, bookID) VALUES ('first', 'b1'), ('second', 'b2');
                """)
            let options = SnapshotOptions(appSchemaVersion: 2, migrations: [reshape])
            let schema = try Schema {
                authors
                booksV2
                notes
            }
            let store = EntityStore(schema: schema)
            try store.restore(from: path, options: options)
            #expect(Snapshot.verify(at: path).problems == [])
            #expect(try columns(path, "books") == [
                "id:string", "title:string", "authorID:integer", "year:integer", "pages:integer", "added:date?",
            ])
            let metadata = try Snapshot.metadata(at: path)
            let bookTable = try #require(metadata.table(named: "books"))
            #expect(bookTable.rowCount == 11)
            #expect(bookTable.indexes.map(\.field).sorted() == ["authorID", "year"])
            #expect(bookTable.relations.map(\.field) == ["authorID"])
            let noteTable = try #require(metadata.table(named: "notes"))
            #expect(noteTable.entityType == "created by app migration 2" && noteTable.idKind == .integer && noteTable.rowCount == 2)
            #expect(try columns(path, "notes") == ["id:integer", "text:string", "bookID:string"])

            #expect(store.state[booksV2].count == 11)
            let b2 = try #require(store.state[booksV2].find("b2"))
            #expect(b2.pages == 100 + 1952 % 7)
            #expect(b2.added == Date(timeIntervalSince1970: 1_577_836_800 + 86_400 * Double(1952 % 9)))
            #expect(store.state[booksV2].find("b1")?.added == nil)
            #expect(store.state[notes].find(2)?.text == "second")

            let file = try SnapshotFile(store: store, path: path, options: options, writeInitialSnapshot: false)
            try store.write { tx in
                try tx[booksV2].update("b1") { $0.pages = 7; $0.added = Date(timeIntervalSinceReferenceDate: 0.1) }
                try tx[notes].insert(Note(id: 3, text: "third", bookID: "b3"))
            }
            try file.save()
            try file.close()
            #expect(Snapshot.verify(at: path).problems == [])
            let again = EntityStore(schema: schema)
            try again.restore(from: path, options: options)
            #expect(rows(booksV2, in: again.state) == rows(booksV2, in: store.state))
            #expect(rows(notes, in: again.state) == rows(notes, in: store.state))
        }
    }

    @Test(
        "a step whose tables cannot be described is refused and rolled back",
        arguments: [
            ("ALTER TABLE books ADD COLUMN junk; UPDATE books SET junk = CASE WHEN published % 2 = 0 THEN 1 ELSE 'x' END;",
             "column 'junk' holds integer and text values"),
            ("ALTER TABLE books ADD COLUMN flag BOOLEAN; UPDATE books SET flag = published % 3;", "which is not 0 or 1"),
            ("ALTER TABLE books ADD COLUMN added DATETIME; UPDATE books SET added = 'soon';", "'soon' is not a date"),
            ("ALTER TABLE books ADD COLUMN pages INTEGER; UPDATE books SET pages = 'many';", "declared INTEGER but holds text"),
            ("CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1);", "no 'id' column"),
            ("CREATE TABLE books2 AS SELECT name, published FROM books; DROP TABLE books; ALTER TABLE books2 RENAME TO books;",
             "without an 'id' column"),
        ])
    func refused(script: String, reason: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("refused.sqlite").path
            try writeVersionOne(to: path)
            let before = try sqlRows(path, "SELECT type, name, sql FROM sqlite_schema ORDER BY name")
            let store = try populatedLibraryStore()
            let state = store.state
            let error = #expect(throws: SnapshotError.self) {
                try store.restore(from: path, options: SnapshotOptions(appSchemaVersion: 2, migrations: [.sql(version: 2, name: "bad", script)]))
            }
            guard case .invalidData(_, let detail)? = error else {
                Issue.record("expected invalidData, got \(String(describing: error))")
                return
            }
            #expect(detail.contains("app migration 2 'bad'") && detail.contains(reason), "\(detail)")
            #expect(store.state == state)
            #expect(try sqlRows(path, "SELECT type, name, sql FROM sqlite_schema ORDER BY name") == before)
            #expect(try Snapshot.metadata(at: path).appSchemaVersion == 1)
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }

    @Test("a file from a newer app is refused by default, and read when asked to")
    func newerAppRefusedByDefault() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("newer.sqlite").path
            let source = try populatedLibraryStore(authorCount: 3, bookCount: 5)
            try source.snapshot(to: path, options: SnapshotOptions(appSchemaVersion: 3))
            let store = EntityStore(schema: try librarySchema())
            #expect(throws: SnapshotError.newerAppSchema(found: 3, supported: 0)) { try store.restore(from: path) }
            #expect(throws: SnapshotError.newerAppSchema(found: 3, supported: 2)) {
                try store.restore(from: path, options: SnapshotOptions(appSchemaVersion: 2))
            }
            #expect(store.state.tableNames.allSatisfy { store.state.count(ofTable: $0) == 0 })
            #expect(throws: SnapshotError.self) { try EntityState.readSnapshot(from: path, schema: try librarySchema()) }

            try store.restore(from: path, options: SnapshotOptions(acceptsNewerAppSchema: true))
            #expect(sameLibraryRows(store.state, source.state))
            try store.restore(from: path, options: SnapshotOptions(appSchemaVersion: 3))
            // Dynamic records have no app types: any version is read unless one is declared.
            #expect(try EntityStore.restoringDynamic(from: path).state.count(ofTable: "books") == 5)
            #expect(throws: SnapshotError.newerAppSchema(found: 3, supported: 1)) {
                try EntityStore.restoringDynamic(from: path, options: SnapshotOptions(appSchemaVersion: 1))
            }
            #expect(try Snapshot.metadata(at: path).appSchemaVersion == 3)
        }
    }
}
