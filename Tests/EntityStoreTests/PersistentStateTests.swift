import EntityStoreTestSupport
import Testing
@testable import EntityStore

/// Books in insertion order, the model of the books table.
fileprivate struct BooksModel {
    var books: [Book] = []

    func book(_ id: Int) -> Book? { books.first { $0.id == id } }

    mutating func upsert(_ book: Book) {
        if let index = books.firstIndex(where: { $0.id == book.id }) { books[index] = book } else { books.append(book) }
    }

    mutating func remove(_ id: Int) { books.removeAll { $0.id == id } }
}

@Suite struct PersistentStateTests {
    /// Commits on a table large enough to span several row-map shards (and to split them
    /// as bulk inserts land in the non-empty table), with every index kind. States are
    /// held at random points, as observers keeping `previous` would; after every commit
    /// the current state matches the model and is well formed, and every held state
    /// still reads exactly as when it was taken: rows, insertion order, grouped, unique
    /// and ordered lookups.
    @Test func heldStatesNeverChange() throws {
        var rng = SplitMix64(seed: 0x57A7E)
        let lib = try Library()
        var model = BooksModel()
        var serial = 0
        func newBook(_ id: Int) -> Book {
            serial += 1
            return Book(
                id: id, title: "t\(serial)", authorID: Int.random(in: 0..<40, using: &rng), isbn: "isbn-\(serial)",
                year: Int.random(in: 1900..<2000, using: &rng), editorID: nil)
        }
        let initial = (0..<2_200).map { newBook($0) }
        try lib.store.write { tx in try tx[lib.books].insert(contentsOf: initial) }
        initial.forEach { model.upsert($0) }
        var nextID = 2_200
        var held: [(state: EntityState, model: BooksModel)] = []

        for step in 0..<Soak.pick(48, soak: 600) {
            try lib.store.write { tx in
                switch Int.random(in: 0..<10, using: &rng) {
                case 0...3:
                    // Updates of a few random rows, some moving between index keys.
                    for _ in 0..<Int.random(in: 1...3, using: &rng) {
                        guard let id = model.books.randomElement(using: &rng)?.id else { continue }
                        let year = Int.random(in: 1900..<2000, using: &rng)
                        let author = Int.random(in: 0..<40, using: &rng)
                        try tx[lib.books].update(id) { $0.year = year; $0.authorID = author }
                        model.upsert(Book(
                            id: id, title: model.book(id)!.title, authorID: author, isbn: model.book(id)!.isbn,
                            year: year, editorID: nil))
                    }
                case 4, 5:
                    let book = newBook(nextID)
                    nextID += 1
                    try tx[lib.books].insert(book)
                    model.upsert(book)
                case 6, 7:
                    guard let id = model.books.randomElement(using: &rng)?.id else { return }
                    _ = try tx[lib.books].remove(id)
                    model.remove(id)
                case 8:
                    // A new ISBN for an existing book, through upsert.
                    guard let old = model.books.randomElement(using: &rng) else { return }
                    serial += 1
                    let book = Book(
                        id: old.id, title: old.title, authorID: old.authorID, isbn: "isbn-\(serial)", year: old.year, editorID: nil)
                    _ = try tx[lib.books].upsert(book)
                    model.upsert(book)
                default:
                    // A bulk insert into the non-empty table.
                    let batch = (0..<Int.random(in: 50...400, using: &rng)).map { offset in newBook(nextID + offset) }
                    nextID += batch.count
                    try tx[lib.books].insert(contentsOf: batch)
                    batch.forEach { model.upsert($0) }
                }
            }
            let state = lib.store.state
            // The full invariant walk is O(rows); every sixth step (and each check below)
            // keeps the test at a few seconds in debug builds.
            if step % 6 == 0 {
                let problems = state.invariantViolations()
                #expect(problems.isEmpty, "step \(step): \(problems.prefix(3))")
                if !problems.isEmpty { return }
            }
            #expect(state[lib.books].count == model.books.count)
            if let probe = model.books.randomElement(using: &rng) { #expect(state[lib.books].find(probe.id) == probe) }

            if Int.random(in: 0..<8, using: &rng) == 0 {
                held.append((state, model))
                if held.count > 4 { held.remove(at: Int.random(in: 0..<4, using: &rng)) }
            }
            if let (old, expected) = held.randomElement(using: &rng), let probe = expected.books.randomElement(using: &rng) {
                #expect(old[lib.books].find(probe.id) == probe)
            }
            if step % 40 == 39 { try check(held, lib) }
        }
        try check(held, lib)
        try check([(lib.store.state, model)], lib)
    }

    /// Every held state reads as its model: rows in insertion order, each author's books
    /// (grouped index), each ISBN (unique index), books by year (ordered index); and it is
    /// well formed.
    fileprivate func check(_ held: [(state: EntityState, model: BooksModel)], _ lib: Library) throws {
        for (state, model) in held {
            let view = state[lib.books]
            #expect(Array(view) == model.books)
            #expect(state.invariantViolations().isEmpty)
            for author in 0..<40 {
                #expect(view.filter(\.authorID, equals: author) == model.books.filter { $0.authorID == author })
            }
            for book in model.books.prefix(200) {
                #expect(view.first(where: \.isbn, equals: book.isbn) == book)
            }
            let byYear = model.books.enumerated().sorted { ($0.element.year, $0.offset) < ($1.element.year, $1.offset) }.map(\.element)
            #expect(view.sorted(by: \.year) == byYear)
        }
    }
}
