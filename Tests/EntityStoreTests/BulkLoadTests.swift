import EntityStoreTestSupport
import StoreCore
import Testing
@testable import EntityStore

/// `insert(contentsOf:)` into an empty table takes the bulk-load path (rows, order and
/// indexes built in one pass); it must be indistinguishable from inserting one at a time.
@Suite struct BulkLoadTests {
    /// Books with repeated authors and years (so groups and equal ordered keys occur) and
    /// distinct ISBNs.
    static func randomBooks(count: Int, seed: UInt64) -> [Book] {
        var rng = SplitMix64(seed: seed)
        var ids = Array(1...count * 3)
        ids.shuffle(using: &rng)
        return ids.prefix(count).map { id in
            makeBook(id, author: Int.random(in: 1...7, using: &rng), year: Int.random(in: 1950...1960, using: &rng))
        }
    }

    @Test(arguments: [1, 2, 63, 64, 65, 500, 3_000])
    func bulkLoadBuildsTheSameTableAsSingleInserts(count: Int) throws {
        let books = Self.randomBooks(count: count, seed: UInt64(count))
        let bulk = try Library()
        let single = try Library()
        try bulk.store.write { tx in try tx[bulk.books].insert(contentsOf: books) }
        try single.store.write { tx in for book in books { try tx[single.books].insert(book) } }
        let (loaded, reference) = (bulk.store.state[bulk.books], single.store.state[single.books])

        #expect(bulk.soundness.isEmpty)
        #expect(loaded.ids == books.map(\.id))
        #expect(loaded.ids == reference.ids)
        #expect(loaded.all(offset: count / 2, limit: 10) == reference.all(offset: count / 2, limit: 10))
        for author in 1...7 {
            #expect(loaded.filter(\.authorID, equals: author) == reference.filter(\.authorID, equals: author))
        }
        #expect(loaded.sorted(by: \.year) == reference.sorted(by: \.year))
        #expect(loaded.sorted(by: \.year, descending: true, limit: 5) == reference.sorted(by: \.year, descending: true, limit: 5))
        #expect(loaded.query().where(\.year, in: 1953...1955).results == reference.query().where(\.year, in: 1953...1955).results)
        for book in books.prefix(20) {
            #expect(loaded.first(where: \.isbn, equals: book.isbn) == book)
            #expect(loaded.find(book.id) == book)
        }
        #expect(bulk.store.state.changeSet[bulk.books].inserted == books.map(\.id))
    }

    @Test func aRepeatedIDInABulkLoadLeavesNoTrace() throws {
        let lib = try Library()
        let revision = lib.store.revision
        let batch = [makeBook(1), makeBook(2), makeBook(3), makeBook(2, isbn: "other")]
        #expect(throws: EntityStoreError.duplicateID(table: "Book", id: "2")) {
            try lib.store.write { tx in try tx[lib.books].insert(contentsOf: batch) }
        }
        #expect(lib.store.revision == revision)
        #expect(lib.store.state[lib.books].isEmpty)
        #expect(lib.store.state[lib.books].version == 0)
        #expect(lib.store.state[lib.books].filter(\.authorID, equals: 1).isEmpty)
        #expect(lib.store.state[lib.books].first(where: \.isbn, equals: "isbn-1") == nil)
        #expect(lib.soundness.isEmpty)
    }

    @Test func aUniqueViolationInABulkLoadLeavesNoTrace() throws {
        let lib = try Library()
        let batch = [makeBook(1, isbn: "same"), makeBook(2), makeBook(3, isbn: "same")]
        #expect(throws: EntityStoreError.uniqueViolation(table: "Book", index: "isbn", key: "\"same\"", existingID: "1", newID: "3")) {
            try lib.store.write { tx in try tx[lib.books].insert(contentsOf: batch) }
        }
        #expect(lib.store.state[lib.books].isEmpty)
        #expect(lib.store.state[lib.books].sorted(by: \.year).isEmpty)
        #expect(lib.soundness.isEmpty)
    }

    @Test func aCaughtBulkLoadErrorKeepsTheTransactionsEarlierWrites() throws {
        let lib = try Library()
        try lib.store.write { tx in
            try tx[lib.authors].insert(Author(id: 1, name: "Le Guin"))
            #expect(throws: EntityStoreError.self) {
                try tx[lib.books].insert(contentsOf: [makeBook(1), makeBook(1)])
            }
            try tx[lib.books].insert(contentsOf: [makeBook(5)])
        }
        #expect(lib.store.state[lib.authors].count == 1)
        #expect(lib.store.state[lib.books].ids == [5])
        #expect(lib.store.state.changeSet[lib.books].inserted == [5])
        #expect(lib.soundness.isEmpty)
    }

    @Test func aBulkLoadAfterEmptyingTheTableReportsNetChanges() throws {
        let lib = try Library()
        try lib.seed()
        let recorder = Recorder<ChangeSet>()
        let token = lib.store.observe { recorder.append($0.current.changeSet) }
        try lib.store.write { tx in
            try tx[lib.reviews].removeAll { _ in true }
            _ = try tx[lib.books].removeAll { _ in true }
            try tx[lib.books].insert(contentsOf: [makeBook(10, author: 1, title: "Renamed", year: 1969), makeBook(30, author: 2)])
        }
        token.cancel()
        let changes = try #require(recorder.values.first)[lib.books]
        #expect(changes.inserted == [30])
        #expect(changes.updated.keys.sorted() == [10])
        #expect(changes.removed.keys.sorted() == [11, 12, 20])
        #expect(lib.store.state[lib.books].filter(\.authorID, equals: 2).map(\.id) == [30])
        #expect(lib.soundness.isEmpty)
    }

    @Test func anEmptyBatchChangesNothing() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(contentsOf: [Book]()) }
        #expect(lib.store.state[lib.books].version == 0)
        #expect(lib.store.state.changeSet[lib.books].isEmpty)
    }

    /// A source of reversed chunks, as a restore hands them over, that also checks each
    /// array it gets back was emptied.
    static func reversedChunks(of books: [Book], sizes: [Int]) -> (inout [Book]) -> Bool {
        var rest = books[...]
        var sizeIndex = 0
        return { chunk in
            #expect(chunk.isEmpty)
            guard !rest.isEmpty else { return false }
            let size = sizes[sizeIndex % sizes.count]
            sizeIndex += 1
            chunk = Array(rest.prefix(size).reversed())
            rest = rest.dropFirst(size)
            return true
        }
    }

    @Test(arguments: [[1], [3, 1, 64], [1_000]])
    func drainedChunksBuildTheSameTableAsSingleInserts(sizes: [Int]) throws {
        let books = Self.randomBooks(count: 300, seed: 7)
        let drained = try Library()
        let single = try Library()
        try drained.store.write { tx in
            try tx[drained.books].insert(expectedCount: books.count, drainingChunks: Self.reversedChunks(of: books, sizes: sizes))
        }
        try single.store.write { tx in for book in books { try tx[single.books].insert(book) } }
        let (loaded, reference) = (drained.store.state[drained.books], single.store.state[single.books])

        #expect(drained.soundness.isEmpty)
        #expect(loaded.ids == books.map(\.id))
        for author in 1...7 {
            #expect(loaded.filter(\.authorID, equals: author) == reference.filter(\.authorID, equals: author))
        }
        #expect(loaded.sorted(by: \.year) == reference.sorted(by: \.year))
        #expect(loaded.first(where: \.isbn, equals: books[150].isbn) == books[150])
        #expect(drained.store.state.changeSet[drained.books].inserted == books.map(\.id))
    }

    @Test func drainedChunksIntoAFilledTableKeepTheirOrder() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(1)) }
        let books = (2...9).map { makeBook($0) }
        try lib.store.write { tx in
            try tx[lib.books].insert(expectedCount: books.count, drainingChunks: Self.reversedChunks(of: books, sizes: [3]))
        }
        #expect(lib.store.state[lib.books].ids == Array(1...9))
        #expect(lib.soundness.isEmpty)
    }

    @Test func aUniqueViolationAmongDrainedChunksLeavesNoTrace() throws {
        let lib = try Library()
        let books = [makeBook(1, isbn: "same"), makeBook(2), makeBook(3), makeBook(4, isbn: "same")]
        #expect(throws: EntityStoreError.uniqueViolation(table: "Book", index: "isbn", key: "\"same\"", existingID: "1", newID: "4")) {
            try lib.store.write { tx in
                try tx[lib.books].insert(expectedCount: books.count, drainingChunks: Self.reversedChunks(of: books, sizes: [2]))
            }
        }
        #expect(lib.store.state[lib.books].isEmpty)
        #expect(lib.soundness.isEmpty)
    }
}
