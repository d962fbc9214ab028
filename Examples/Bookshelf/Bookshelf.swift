import ArgumentParser
import EntityStore
import EntityStoreCommands
import EntityStoreSQLite
import Foundation

/// An author.
struct Author: Entity {
    var id: Int
    var name: String
}

/// A book by one author.
struct Book: Entity {
    var id: Int
    var title: String
    var authorID: Int
    var year: Int
}

let authors = Table<Author>("authors")
let books = Table<Book>("books")
    .ordered(\.year)
    .references(\.authorID, to: authors, onDelete: .cascade)

/// The bookshelf's store, for the reusable snapshot commands.
enum Shelf: SnapshotCommandContext {
    static func makeStore() throws -> EntityStore {
        try EntityStore {
            authors
            books
        }
    }

    /// Reads `{"authors": [...], "books": [...]}` into the store in one transaction.
    static func load(_ store: EntityStore, from input: String) throws {
        struct Dataset: Decodable {
            var authors: [Author]
            var books: [Book]
        }
        let dataset = try JSONDecoder().decode(Dataset.self, from: Data(contentsOf: URL(fileURLWithPath: input)))
        try store.write { tx in
            try tx[authors].insert(contentsOf: dataset.authors)
            try tx[books].insert(contentsOf: dataset.books)
        }
    }

    /// The shelf's migrations: version 1 trims the titles the first importer padded.
    static let migrations = [AppMigration.sql(version: 1, name: "trim titles", "UPDATE books SET title = trim(title)")]

    static var snapshotOptions: SnapshotOptions { SnapshotOptions(appSchemaVersion: 1, migrations: migrations) }

    /// Saves the shelf to `path`: a full snapshot, atomically.
    static func save(_ store: EntityStore, to path: String) throws {
        try store.snapshot(to: path, options: snapshotOptions)
    }
}

/// `bookshelf books SNAPSHOT --author ID`: answers from a restored snapshot with the
/// grouped index the relation keeps on `authorID`.
struct BooksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "books", abstract: "List an author's books, newest first.")

    @Argument(help: "The snapshot written by `bookshelf snapshot`.")
    var snapshot: String

    @Option(help: "The author's id.")
    var author: Int

    func run() throws {
        let store = try Shelf.makeStore()
        try store.restore(from: snapshot, options: Shelf.snapshotOptions)
        let found = store.state[books].query().where(\.authorID, equals: author).sorted(by: \.year, descending: true).results
        for book in found { print("\(book.year)  \(book.title)") }
        if found.isEmpty { print("no books by author \(author)") }
    }
}

/// A small data-heavy CLI built on EntityStore's reusable snapshot commands: ingest a
/// dataset once, then answer indexed queries from the snapshot in later runs.
@main
struct Bookshelf: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookshelf",
        abstract: "Ingest a bookshelf once, then query it from its snapshot.",
        subcommands: [
            SnapshotCommand<Shelf>.self, RestoreCommand<Shelf>.self, BooksCommand.self,
            InspectCommand.self, VerifyCommand.self,
        ])
}
