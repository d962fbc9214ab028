@testable import bookshelf
import EntityStore
import EntityStoreSQLite
import EntityStoreTesting
import Foundation
import Testing

/// The bookshelf's tests, as an app writes them with EntityStoreTesting: each write
/// changes exactly what it should, the shelf survives a snapshot, its save routine
/// survives a crash, and files of other app versions open or are refused.
@Suite("Bookshelf")
struct BookshelfTests {
    static let shelf = """
        {"authors": [{"id": 1, "name": "Jon Fosse"}, {"id": 2, "name": "Ursula K. Le Guin"}],
         "books": [{"id": 10, "title": "The Dispossessed", "authorID": 2, "year": 1974},
                   {"id": 11, "title": "Septology", "authorID": 1, "year": 2019}]}
        """

    /// A store loaded through the app's own loader.
    func loadedShelf() throws -> EntityStore {
        let store = try Shelf.makeStore()
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-\(UUID().uuidString).json")
        try Data(Self.shelf.utf8).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        try Shelf.load(store, from: input.path)
        return store
    }

    @Test("removing an author removes their books and nothing else")
    func removingAnAuthorCascades() throws {
        let store = try loadedShelf()
        try store.assertWrite { tx in
            _ = try tx[authors].remove(2)
        } expected: { shelf in
            shelf[authors].remove(2)
            shelf[books].remove(10)
        }
        try store.assertChangeSet {
            try store.write { tx in _ = try tx[books].update(11) { $0.year = 2021 } }
        } expected: { changes in
            changes[books].updated = [11]
        }
    }

    @Test("the shelf survives a snapshot, and a snapshot file with saves between writes")
    func roundTrips() throws {
        try loadedShelf().assertRoundTrip(options: Shelf.snapshotOptions)
        try assertSnapshotFileRoundTrip(schema: try Shelf.makeStore().schema, options: Shelf.snapshotOptions) { session in
            try session.store.write { tx in try tx[authors].insert(Author(id: 3, name: "Tove Jansson")) }
            try session.save()
            try session.store.write { tx in try tx[books].insert(Book(id: 12, title: "The Summer Book", authorID: 3, year: 1972)) }
            try session.save()
        }
    }

    @Test("Shelf.save survives a kill, a power loss or an I/O error at every step")
    func saveIsCrashSafe() throws {
        let schema = try Shelf.makeStore().schema
        try assertCrashSafe(schema: schema, options: CrashSafetyOptions(maxRunsPerFault: 100, snapshotOptions: Shelf.snapshotOptions)) { run in
            try run.store.write { tx in
                try tx[authors].insert(Author(id: 1, name: "Jon Fosse"))
                try tx[books].insert(Book(id: 11, title: "Septology", authorID: 1, year: 2019))
            }
            try run.save("first save") { try Shelf.save(run.store, to: run.path) }
            try run.store.write { tx in _ = try tx[books].update(11) { $0.year = 2022 } }
            try run.save("second save") { try Shelf.save(run.store, to: run.path) }
        }
    }

    /// The fixtures in this target's resources.
    func fixture(_ name: String) throws -> String {
        try #require(Bundle.module.path(forResource: name, ofType: "sqlite", inDirectory: "Fixtures"))
    }

    @Test("a shelf saved before the app versioned its files migrates: titles are trimmed")
    func olderShelfMigrates() throws {
        let store = try MigrationFixture.assertMigrates(try fixture("bookshelf-v0"), schema: try Shelf.makeStore().schema, options: Shelf.snapshotOptions)
        #expect(store?.state[books].find(11)?.title == "Septology")
    }

    @Test("a shelf saved by a newer app is refused")
    func newerShelfIsRefused() throws {
        try MigrationFixture.assertRefused(
            try fixture("bookshelf-v2"), schema: try Shelf.makeStore().schema, options: Shelf.snapshotOptions,
            with: .newerAppSchema(found: 2, supported: 1))
    }

    @Test("generated shelves keep their references through a save and a restore", arguments: GeneratedCase.seeds(3))
    func generatedShelves(_ generated: GeneratedCase) throws {
        var random = generated.randomness
        let store = try Shelf.makeStore()
        let shelfAuthors = EntityGenerator<Author> { random, position in Author(id: position, name: random.words(2...3)) }
        let shelfBooks = EntityGenerator<Book> { random, position in
            Book(id: 100 + position, title: random.words(), authorID: random.int(in: 0..<4), year: random.int(in: 1900...2024))
        }
        try store.write { tx in
            try tx[authors].insert(contentsOf: shelfAuthors.make(4, using: &random))
            try tx[books].insert(contentsOf: shelfBooks.make(25, using: &random))
        }
        try store.assertRoundTrip(options: Shelf.snapshotOptions)
    }

    /// Records the fixtures above. Run once with `RECORD_FIXTURES=1 swift test --filter BookshelfTests`
    /// when a release changes the shelf's files, then keep the new fixture: the old ones stay.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["RECORD_FIXTURES"] != nil))
    func recordFixtures() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let store = try Shelf.makeStore()
        try store.write { tx in
            try tx[authors].insert(Author(id: 1, name: "Jon Fosse"))
            try tx[books].insert(Book(id: 11, title: "  Septology ", authorID: 1, year: 2019))
        }
        try MigrationFixture.record(store, to: directory.appendingPathComponent("bookshelf-v0.sqlite").path, appSchemaVersion: 0)
        try MigrationFixture.record(store, to: directory.appendingPathComponent("bookshelf-v2.sqlite").path, appSchemaVersion: 2)
    }
}
