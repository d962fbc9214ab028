import StoreCore
import Testing
@testable import EntityStore

// The library fixture of this target: integer book ids with an isbn (a unique index).
// EntityStoreTestingTests (no isbn) and EntityStoreSQLiteTests (string book ids) declare
// their own: the shapes differ, and EntityStoreTestSupport, which depends on no module of
// the package, cannot declare entities.
struct Author: Entity {
    var id: Int
    var name: String
}

struct Book: Entity {
    var id: Int
    var title: String
    var authorID: Int
    var isbn: String
    var year: Int
    var editorID: Int?
}

struct Review: Entity {
    var id: Int
    var bookID: Int
    var stars: Int
}

func makeBook(_ id: Int, author: Int = 1, title: String? = nil, year: Int = 2000, isbn: String? = nil, editor: Int? = nil) -> Book {
    Book(id: id, title: title ?? "Book \(id)", authorID: author, isbn: isbn ?? "isbn-\(id)", year: year, editorID: editor)
}

struct TestFailure: Error, Equatable {}

/// A store of authors, books and reviews with configurable delete rules.
struct Library {
    let authors: Table<Author>
    let books: Table<Book>
    let reviews: Table<Review>
    let store: EntityStore

    init(
        bookRule: DeleteRule = .cascade, editorRule: DeleteRule = .nullify, reviewRule: DeleteRule = .cascade,
        checkReferences: Bool = false
    ) throws {
        let authors = Table<Author>()
        let books = Table<Book>()
            .unique(\.isbn)
            .grouped(\.authorID)
            .ordered(\.year)
            .references(\.authorID, to: authors, onDelete: bookRule)
            .references(\.editorID, to: authors, onDelete: editorRule)
        let reviews = Table<Review>()
            .references(\.bookID, to: books, onDelete: reviewRule)
        self.authors = authors
        self.books = books
        self.reviews = reviews
        self.store = try EntityStore(checkReferences: checkReferences) {
            authors
            books
            reviews
        }
    }

    /// Two authors, four books (three by author 1, one by author 2 edited by author 1),
    /// and reviews on books 10 and 11.
    func seed() throws {
        try store.write { tx in
            try tx[authors].insert(contentsOf: [Author(id: 1, name: "Le Guin"), Author(id: 2, name: "Lem")])
            try tx[books].insert(contentsOf: [
                makeBook(10, author: 1, year: 1969),
                makeBook(11, author: 1, year: 1974),
                makeBook(12, author: 1, year: 1971),
                makeBook(20, author: 2, year: 1961, editor: 1),
            ])
            try tx[reviews].insert(contentsOf: [
                Review(id: 100, bookID: 10, stars: 5),
                Review(id: 101, bookID: 10, stars: 4),
                Review(id: 110, bookID: 11, stars: 3),
                Review(id: 200, bookID: 20, stars: 5),
            ])
        }
    }

    var soundness: [String] { store.state.invariantViolations() }
}

/// Collects values delivered to `@Sendable` callbacks. It guards them with the package's
/// pthread `Lock`, which ThreadSanitizer follows (it reports `Mutex`'s contended hand-over
/// on Linux as a race).
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Lock<[Value]>([])

    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
    func removeAll() { storage.withLock { $0.removeAll() } }
}
