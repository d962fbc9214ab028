import EntityStore
import EntityStoreSQLite
import Foundation

/// A genre with a raw value: stored as its raw value.
enum Genre: String, Codable, Sendable { case fiction, poetry, essay }

/// A nested value: stored as JSON text.
struct Edition: Codable, Sendable, Equatable {
    var format: String
    var pages: Int
    var tags: [String]
}

/// An entity with every field kind the snapshot format maps.
struct Sample: Entity {
    var id: Int
    var name: String
    var count: Int64
    var ratio: Double
    var flag: Bool
    var note: String?
    var genre: Genre
    var when: Date
    var uuid: UUID
    var bytes: Data
    var edition: Edition
    var scores: [Double]
    var extra: [String: Int]
    var small: Int8
}

// The library fixture of this target: books with string ids, so a snapshot holds both id
// kinds. EntityStoreTests and EntityStoreTestingTests declare their own library (integer
// ids, other fields): the shapes differ, and EntityStoreTestSupport, which depends on no
// module of the package, cannot declare entities.
struct Author: Entity {
    var id: Int
    var name: String
}

struct Book: Entity {
    var id: String
    var title: String
    var authorID: Int
    var year: Int
    var editorID: Int?
}

let authors = Table<Author>("authors")
let books = Table<Book>("books")
    .ordered(\.year)
    .references(\.authorID, to: authors, onDelete: .cascade)
    .references(\.editorID, to: authors, onDelete: .nullify)
let samples = Table<Sample>("samples").unique(\.name)

func sample(_ id: Int, name: String? = nil) -> Sample {
    Sample(
        id: id, name: name ?? "sample \(id) ✨", count: Int64(id) * 1_000_000_007, ratio: Double(id) / 10, flag: id % 2 == 0,
        note: id % 3 == 0 ? nil : "note \(id)", genre: [.fiction, .poetry, .essay][id % 3],
        when: Date(timeIntervalSince1970: 1_700_000_000 + Double(id)), uuid: UUID(),
        bytes: Data([UInt8(id % 256), 0, 255]), edition: Edition(format: "paperback", pages: 100 + id, tags: ["a", "b"]),
        scores: [0.1, 2.0, -0.0], extra: ["k": id], small: Int8(id % 100))
}

func librarySchema() throws -> Schema {
    try Schema {
        authors
        books
        samples
    }
}

func temporaryPath(_ name: String = "snapshot.sqlite") -> (directory: URL, path: String) {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("EntityStoreSnapshotTests-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return (directory, directory.appendingPathComponent(name).path)
}

// MARK: - Helpers shared by the persistence tests

/// The rows of `table` in `state`, sorted by ID: states compare by identity, so tests
/// compare their contents. (A restore inserts rows in ID order, so the insertion order a
/// table iterates in is not part of what a snapshot keeps.)
func rows<E: Entity>(_ table: Table<E>, in state: EntityState) -> [E] where E.ID: Comparable {
    state[table].sorted { $0.id < $1.id }
}

/// Whether every table of `schema`'s library tables holds the same rows in both states.
func sameLibraryRows(_ lhs: EntityState, _ rhs: EntityState) -> Bool {
    rows(authors, in: lhs) == rows(authors, in: rhs)
        && rows(books, in: lhs) == rows(books, in: rhs)
        && rows(samples, in: lhs) == rows(samples, in: rhs)
}

/// Every result row of `sql` run on the database at `path`.
func sqlRows(_ path: String, _ sql: String, _ arguments: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
    let connection = try SQLiteConnection(path: path, mode: .readOnly)
    return try connection.prepare(sql).rows(arguments)
}

/// The single value `sql` answers on the database at `path`.
func sqlValue(_ path: String, _ sql: String) throws -> SQLiteValue? {
    try sqlRows(path, sql).first?.first
}

/// Runs an SQL script on the database at `path`, outside any snapshot API.
func sqlExecute(_ path: String, _ sql: String) throws {
    let connection = try SQLiteConnection(path: path, mode: .readWrite)
    try connection.execute(sql)
    try connection.close()
}

/// A store of the library schema holding a few authors and books and one sample.
func populatedLibraryStore(authorCount: Int = 4, bookCount: Int = 12) throws -> EntityStore {
    let store = EntityStore(schema: try librarySchema())
    try store.write { tx in
        try tx[authors].insert(contentsOf: (1...authorCount).map { Author(id: $0, name: "Author \($0)") })
        try tx[books].insert(contentsOf: (1...bookCount).map {
            Book(id: "b\($0)", title: "Book \($0)", authorID: 1 + $0 % authorCount, year: 1950 + $0, editorID: $0 % 3 == 0 ? 1 : nil)
        })
        try tx[samples].insert(sample(1))
    }
    return store
}

