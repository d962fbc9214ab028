import EntityStoreTestSupport
import Testing
@testable import EntityStore

/// A deliberately naive model of the library schema (books cascade from authors and
/// nullify their editor; reviews cascade from books), kept in insertion-ordered arrays.
private struct LibraryModel: Equatable {
    var authors: [Author] = []
    var books: [Book] = []
    var reviews: [Review] = []

    private func isbnTaken(_ isbn: String, by other: Int) -> Bool {
        books.contains { $0.isbn == isbn && $0.id != other }
    }

    mutating func insertBook(_ book: Book) -> Bool {
        if books.contains(where: { $0.id == book.id }) || isbnTaken(book.isbn, by: book.id) { return false }
        books.append(book)
        return true
    }

    mutating func upsertBook(_ book: Book) -> Bool {
        guard let index = books.firstIndex(where: { $0.id == book.id }) else { return insertBook(book) }
        if isbnTaken(book.isbn, by: book.id) { return false }
        books[index] = book
        return true
    }

    mutating func updateBook(_ id: Int, year: Int, isbn: String?) -> Bool {
        guard let index = books.firstIndex(where: { $0.id == id }) else { return false }
        if let isbn, isbnTaken(isbn, by: id) { return false }
        books[index].year = year
        if let isbn { books[index].isbn = isbn }
        return true
    }

    /// Applies `body` to a copy; keeps it only if every step succeeded (bulk atomicity).
    mutating func atomically(_ body: (inout LibraryModel) -> Bool) -> Bool {
        var copy = self
        guard body(&copy) else { return false }
        self = copy
        return true
    }

    mutating func removeBook(_ id: Int) -> Bool {
        guard books.contains(where: { $0.id == id }) else { return false }
        books.removeAll { $0.id == id }
        reviews.removeAll { $0.bookID == id }
        return true
    }

    mutating func removeAuthor(_ id: Int) -> Bool {
        guard authors.contains(where: { $0.id == id }) else { return false }
        authors.removeAll { $0.id == id }
        for book in books where book.authorID == id { _ = removeBook(book.id) }
        for index in books.indices where books[index].editorID == id { books[index].editorID = nil }
        return true
    }

    mutating func insertReview(_ review: Review) -> Bool {
        if reviews.contains(where: { $0.id == review.id }) { return false }
        reviews.append(review)
        return true
    }
}

@Suite struct ModelPropertyTests {
    @Test func randomOperationSequencesMatchTheModel() throws {
        var rng = SplitMix64(seed: 0x5EED_0F_EB00C5)
        var serial = 0
        var failures = 0
        var committed = 0
        for _ in 0..<200 {
            let lib = try Library()
            var model = LibraryModel()
            for _ in 0..<12 {
                let snapshot = model
                let revision = lib.store.revision
                let failMidway = Int.random(in: 0..<6, using: &rng) == 0
                let operations = Int.random(in: 1...4, using: &rng)
                func randomBook() -> Book {
                    serial += 1
                    let editor = Int.random(in: 0..<3, using: &rng) == 0 ? nil : Int.random(in: 0..<5, using: &rng)
                    return Book(
                        id: Int.random(in: 0..<16, using: &rng), title: "t\(serial)",
                        authorID: Int.random(in: 0..<5, using: &rng), isbn: "i\(Int.random(in: 0..<20, using: &rng))",
                        year: Int.random(in: 1990..<2000, using: &rng), editorID: editor)
                }
                do {
                    try lib.store.write { tx in
                        for step in 0..<operations {
                            if failMidway && step == operations / 2 { throw TestFailure() }
                            let succeeded: Bool
                            let expected: Bool
                            switch Int.random(in: 0..<11, using: &rng) {
                            case 0:
                                let author = Author(id: Int.random(in: 0..<5, using: &rng), name: "a\(serial)")
                                serial += 1
                                expected = model.authors.contains { $0.id == author.id } == false
                                if expected { model.authors.append(author) }
                                succeeded = (try? tx[lib.authors].insert(author)) != nil
                            case 1, 2:
                                let book = randomBook()
                                expected = model.insertBook(book)
                                succeeded = (try? tx[lib.books].insert(book)) != nil
                            case 3:
                                let book = randomBook()
                                expected = model.upsertBook(book)
                                succeeded = (try? tx[lib.books].upsert(book)) != nil
                            case 4:
                                let id = Int.random(in: 0..<16, using: &rng)
                                let year = Int.random(in: 1990..<2000, using: &rng)
                                let isbn = Bool.random(using: &rng) ? "i\(Int.random(in: 0..<20, using: &rng))" : nil
                                expected = model.updateBook(id, year: year, isbn: isbn)
                                succeeded = (try? tx[lib.books].update(id) { book in
                                    book.year = year
                                    if let isbn { book.isbn = isbn }
                                }) != nil
                            case 5:
                                let id = Int.random(in: 0..<16, using: &rng)
                                let existed = model.removeBook(id)
                                expected = true
                                succeeded = (try? tx[lib.books].remove(id)) == existed
                            case 6:
                                let id = Int.random(in: 0..<5, using: &rng)
                                let existed = model.removeAuthor(id)
                                expected = true
                                succeeded = (try? tx[lib.authors].remove(id)) == existed
                            case 7:
                                let batch = (0..<Int.random(in: 1...4, using: &rng)).map { _ in randomBook() }
                                expected = model.atomically { copy in batch.allSatisfy { copy.insertBook($0) } }
                                succeeded = (try? tx[lib.books].insert(contentsOf: batch)) != nil
                            case 8:
                                let batch = (0..<Int.random(in: 1...4, using: &rng)).map { _ in randomBook() }
                                expected = model.atomically { copy in batch.allSatisfy { copy.upsertBook($0) } }
                                succeeded = (try? tx[lib.books].upsert(contentsOf: batch)) != nil
                            case 9:
                                let ids = (0..<Int.random(in: 1...3, using: &rng)).map { _ in Int.random(in: 0..<16, using: &rng) }
                                let existing = Set(ids).filter { id in model.books.contains { $0.id == id } }.count
                                for id in ids { _ = model.removeBook(id) }
                                expected = true
                                succeeded = (try? tx[lib.books].remove(ids)) == existing
                            default:
                                let review = Review(
                                    id: Int.random(in: 0..<30, using: &rng), bookID: Int.random(in: 0..<16, using: &rng),
                                    stars: Int.random(in: 1...5, using: &rng))
                                expected = model.insertReview(review)
                                succeeded = (try? tx[lib.reviews].insert(review)) != nil
                            }
                            #expect(succeeded == expected)
                            if succeeded != expected { throw TestFailure() }
                            if !expected { failures += 1 }
                            #expect(Array(tx[lib.books].view) == model.books)
                        }
                    }
                    committed += 1
                } catch is TestFailure {
                    model = snapshot
                    #expect(lib.store.revision == revision)
                }
                let state = lib.store.state
                #expect(Array(state[lib.authors]) == model.authors)
                #expect(Array(state[lib.books]) == model.books)
                #expect(Array(state[lib.reviews]) == model.reviews)
                #expect(state.invariantViolations().isEmpty)
                let author = Int.random(in: 0..<5, using: &rng)
                #expect(state[lib.books].filter(\.authorID, equals: author) == model.books.filter { $0.authorID == author })
                let byYear = model.books.enumerated().sorted { ($0.element.year, $0.offset) < ($1.element.year, $1.offset) }.map(\.element)
                #expect(state[lib.books].sorted(by: \.year) == byYear)
                let byYearDescending = model.books.enumerated()
                    .sorted { ($1.element.year, $0.offset) < ($0.element.year, $1.offset) }.map(\.element)
                #expect(state[lib.books].sorted(by: \.year, descending: true) == byYearDescending)
                for book in model.books {
                    #expect(state[lib.books].first(where: \.isbn, equals: book.isbn) == book)
                }
            }
        }
        // The generator must actually exercise failures and commits.
        #expect(failures > 100)
        #expect(committed > 1000)
    }
}
