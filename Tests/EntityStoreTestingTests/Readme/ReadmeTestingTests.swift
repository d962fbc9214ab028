import EntityStore
import EntityStoreSQLite
import EntityStoreTesting
import Foundation
import Testing

/// The section "Testing an app that uses EntityStore" of docs/Testing.md, compiled and run,
/// so that page stays true.
@Suite("The testing section of docs/Testing.md", .serialized)
struct ReadmeTestingTests {
    struct Author: Entity { var id: Int; var name: String }
    struct Book: Entity { var id: Int; var title: String; var authorID: Int }

    static let authors = Table<Author>("authors")
    static let books = Table<Book>("books").references(\.authorID, to: authors, onDelete: .cascade)

    /// The app whose save routine and options the section uses.
    enum Shelf {
        static let snapshotOptions = SnapshotOptions(appSchemaVersion: 1)
        static func save(_ store: EntityStore, to path: String) throws {
            try store.snapshot(to: path, options: snapshotOptions)
        }
    }

    @Test("the four kinds of test, as docs/Testing.md shows them")
    func section() throws {
        let authors = Self.authors, books = Self.books
        let store = try EntityStore {
            authors
            books
        }
        try store.write { tx in
            try tx[authors].insert(Author(id: 1, name: "Ursula K. Le Guin"))
            try tx[books].insert(Book(id: 10, title: "The Dispossessed", authorID: 1))
        }

        try store.assertWrite { tx in
            _ = try tx[authors].remove(1)
        } expected: { state in
            state[authors].remove(1)
            state[books].remove(10)  // the cascade: leave it out and the test fails
        }

        try store.assertRoundTrip()
        try assertSnapshotFileRoundTrip(schema: store.schema) { session in
            try session.store.write { tx in try tx[authors].insert(Author(id: 2, name: "Jon Fosse")) }
            try session.save()
        }

        try assertCrashSafe(schema: store.schema) { run in
            try run.store.write { tx in try tx[authors].insert(Author(id: 1, name: "Ursula K. Le Guin")) }
            try run.save("first save") { try Shelf.save(run.store, to: run.path) }
        }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ReadmeTesting-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let olderFixture = directory.appendingPathComponent("v0.sqlite").path
        let newerFixture = directory.appendingPathComponent("v9.sqlite").path
        try MigrationFixture.record(store, to: olderFixture, appSchemaVersion: 0)
        try MigrationFixture.record(store, to: newerFixture, appSchemaVersion: 9)

        try MigrationFixture.assertMigrates(olderFixture, schema: store.schema, options: Shelf.snapshotOptions)
        try MigrationFixture.assertRefused(newerFixture, schema: store.schema, options: Shelf.snapshotOptions,
                                           with: .newerAppSchema(found: 9, supported: 1))
    }
}
