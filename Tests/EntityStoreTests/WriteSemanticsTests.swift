import StoreCore
import Testing
@testable import EntityStore

@Suite struct WriteSemanticsTests {
    @Test func insertRefusesDuplicateIDAndLeavesStoreUnchanged() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(1, title: "First")) }
        let revision = lib.store.revision
        #expect(throws: EntityStoreError.duplicateID(table: "Book", id: "1")) {
            try lib.store.write { tx in try tx[lib.books].insert(makeBook(1, title: "Second", isbn: "other")) }
        }
        #expect(lib.store.revision == revision)
        #expect(lib.store.state[lib.books].find(1)?.title == "First")
        #expect(lib.store.state[lib.books].count == 1)
        #expect(lib.store.state[lib.books].first(where: \.isbn, equals: "other") == nil)
        #expect(lib.soundness.isEmpty)
    }

    @Test func upsertInsertsOrReplacesKeepingPosition() throws {
        let lib = try Library()
        var results: [Bool] = []
        try lib.store.write { tx in
            for id in [1, 2, 3] { results.append(try tx[lib.books].upsert(makeBook(id))) }
        }
        try lib.store.write { tx in results.append(try tx[lib.books].upsert(makeBook(2, title: "Replaced", year: 1990))) }
        #expect(results == [true, true, true, false])
        let view = lib.store.state[lib.books]
        #expect(view.ids == [1, 2, 3])
        #expect(view.map(\.title) == ["Book 1", "Replaced", "Book 3"])
        #expect(view.filter(\.year, equals: 1990).map(\.id) == [2])
        #expect(lib.soundness.isEmpty)
    }

    @Test func updateOfMissingIDThrowsMissingID() throws {
        let lib = try Library()
        #expect(throws: EntityStoreError.missingID(table: "Book", id: "7")) {
            try lib.store.write { tx in try tx[lib.books].update(7) { $0.title = "x" } }
        }
        #expect(lib.store.revision == 0)
    }

    @Test func updateThatChangesIDIsRefused() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(1)) }
        #expect(throws: EntityStoreError.idChanged(table: "Book", from: "1", to: "99")) {
            try lib.store.write { tx in
                try tx[lib.books].update(1) { book in
                    book.id = 99
                    book.title = "Moved"
                }
            }
        }
        let view = lib.store.state[lib.books]
        #expect(view.ids == [1])
        #expect(view.find(1)?.title == "Book 1")
        #expect(view.find(99) == nil)
        #expect(lib.soundness.isEmpty)
    }

    @Test func updateReturnsNewValueAndNoOpUpdateEmitsNoCommit() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(1)) }
        let commits = Recorder<UInt64>()
        let token = lib.store.observe { commits.append($0.version) }
        let revision = lib.store.revision
        let entityVersion = lib.store.state[lib.books].version(of: 1)
        try lib.store.write { tx in
            let same = try tx[lib.books].update(1) { $0.title = "Book 1" }
            #expect(same == makeBook(1))
            try tx[lib.books].upsert(makeBook(1))
        }
        #expect(commits.count == 0)
        #expect(lib.store.revision == revision)
        #expect(lib.store.state[lib.books].version(of: 1) == entityVersion)

        let updated = try lib.store.write { tx in try tx[lib.books].update(1) { $0.year = 1999 } }
        #expect(updated.year == 1999)
        #expect(commits.count == 1)
        #expect(lib.store.revision == revision + 1)
        token.cancel()
    }

    @Test func removeReportsWhetherTheEntityExisted() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(contentsOf: [makeBook(1), makeBook(2)]) }
        let (first, second, bulk) = try lib.store.write { tx in
            (try tx[lib.books].remove(1), try tx[lib.books].remove(1), try tx[lib.books].remove([1, 2, 3]))
        }
        #expect(first)
        #expect(!second)
        #expect(bulk == 1)
        #expect(lib.store.state[lib.books].isEmpty)
        #expect(lib.soundness.isEmpty)
    }

    @Test func removeAllWhereRemovesMatchingEntities() throws {
        let lib = try Library()
        try lib.store.write { tx in
            try tx[lib.books].insert(contentsOf: (1...10).map { makeBook($0, year: 1990 + $0) })
        }
        let removed = try lib.store.write { tx in try tx[lib.books].removeAll { $0.year % 2 == 0 } }
        #expect(removed == 5)
        #expect(lib.store.state[lib.books].ids == [1, 3, 5, 7, 9])
        let none = try lib.store.write { tx in try tx[lib.books].removeAll { $0.year > 3000 } }
        #expect(none == 0)
        #expect(lib.soundness.isEmpty)
    }

    @Test func duplicateInsideInsertContentsOfAppliesNothingOfTheCall() throws {
        let lib = try Library()
        let commits = Recorder<[Int]>()
        let token = lib.store.observe { commits.append($0.current.changeSet[lib.books].inserted) }
        try lib.store.write { tx in
            try tx[lib.books].insert(makeBook(1))
            #expect(throws: EntityStoreError.duplicateID(table: "Book", id: "2")) {
                try tx[lib.books].insert(contentsOf: [makeBook(2), makeBook(3), makeBook(2, isbn: "again")])
            }
            #expect(tx[lib.books].count == 1)
            #expect(!tx[lib.books].contains(2))
            #expect(!tx[lib.books].contains(3))
            #expect(tx[lib.books].view.invariantViolations().isEmpty)
        }
        #expect(lib.store.state[lib.books].ids == [1])
        #expect(commits.values == [[1]])
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }

    @Test func insertContentsOfCollidingWithStoredIDAppliesNothing() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(5)) }
        #expect(throws: EntityStoreError.duplicateID(table: "Book", id: "5")) {
            try lib.store.write { tx in try tx[lib.books].insert(contentsOf: [makeBook(1), makeBook(5, isbn: "x")]) }
        }
        #expect(lib.store.state[lib.books].ids == [5])
    }

    @Test func upsertContentsOfLastOccurrenceWins() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(1)) }
        try lib.store.write { tx in
            try tx[lib.books].upsert(contentsOf: [
                makeBook(2, title: "A"), makeBook(1, title: "X"), makeBook(2, title: "B"), makeBook(1, title: "Y"),
            ])
        }
        let view = lib.store.state[lib.books]
        #expect(view.ids == [1, 2])
        #expect(view.map(\.title) == ["Y", "B"])
        #expect(lib.soundness.isEmpty)
    }

    @Test func failingUpsertContentsOfRestoresReplacedEntities() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(contentsOf: [makeBook(1), makeBook(2)]) }
        try lib.store.write { tx in
            #expect(throws: EntityStoreError.uniqueViolation(
                table: "Book", index: "isbn", key: "\"isbn-2\"", existingID: "2", newID: "3")) {
                try tx[lib.books].upsert(contentsOf: [
                    makeBook(1, title: "Changed", year: 1800), makeBook(4), makeBook(3, isbn: "isbn-2"),
                ])
            }
            #expect(tx[lib.books].find(1) == makeBook(1))
            #expect(!tx[lib.books].contains(4))
            #expect(tx[lib.books].view.invariantViolations().isEmpty)
        }
        #expect(lib.store.revision == 1)
        #expect(lib.store.state[lib.books].ids == [1, 2])
        #expect(lib.store.state[lib.books].filter(\.year, equals: 1800).isEmpty)
        #expect(lib.soundness.isEmpty)
    }

    @Test func failingBulkUpdateLeavesEveryElementUnchanged() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(contentsOf: [makeBook(1), makeBook(2)]) }
        #expect(throws: EntityStoreError.missingID(table: "Book", id: "9")) {
            try lib.store.write { tx in
                try tx[lib.books].update([1, 2, 9]) { $0.year = 1500 }
            }
        }
        try lib.store.write { tx in
            try? tx[lib.books].update([2, 1, 2, 9]) { $0.year += 1 }
            try tx[lib.books].update([1, 2]) { $0.title += "!" }
        }
        let view = lib.store.state[lib.books]
        #expect(view.map(\.year) == [2000, 2000])
        #expect(view.map(\.title) == ["Book 1!", "Book 2!"])
        #expect(view.sorted(by: \.year).count == 2)
        #expect(lib.soundness.isEmpty)
    }

    @Test func caughtErrorInsideWriteLeavesNoTrace() throws {
        let lib = try Library()
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(1)) }
        let seen = Recorder<TableChanges<Book>>()
        let token = lib.store.observe { seen.append($0.current.changeSet[lib.books]) }
        try lib.store.write { tx in
            try tx[lib.books].insert(makeBook(2))
            #expect(throws: EntityStoreError.self) { try tx[lib.books].insert(makeBook(2)) }
            #expect(throws: EntityStoreError.self) { try tx[lib.books].update(1) { $0.isbn = "isbn-2" } }
            #expect(throws: EntityStoreError.self) { try tx[lib.books].update(1) { $0.id = 5 } }
            #expect(throws: EntityStoreError.self) { try tx[lib.books].insert(makeBook(3, isbn: "isbn-1")) }
            try tx[lib.books].insert(makeBook(3))
        }
        #expect(lib.store.state[lib.books].ids == [1, 2, 3])
        #expect(lib.store.state[lib.books].find(1) == makeBook(1))
        #expect(seen.count == 1)
        #expect(seen.values.first?.inserted == [2, 3])
        #expect(seen.values.first?.updated.isEmpty == true)
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }

    @Test func updateRethrowsTheAppsOwnErrorUnchangedAndLeavesNoTrace() throws {
        struct OutOfStock: Error, Equatable { let id: Int }
        let lib = try Library()
        try lib.seed()
        let before = lib.store.revision
        let seen = Recorder<TableChanges<Book>>()
        let token = lib.store.observe { seen.append($0.current.changeSet[lib.books]) }

        // Escaping the write: nothing is published.
        #expect(throws: OutOfStock(id: 10)) {
            try lib.store.write { tx in
                try tx[lib.books].update(11) { $0.title = "Applied, then dropped with the write" }
                try tx[lib.books].update(10) { book in
                    book.year = 1
                    if book.id == 10 { throw OutOfStock(id: book.id) }
                }
            }
        }
        #expect(lib.store.revision == before)
        #expect(seen.count == 0)

        // Caught inside the write: the failed updates changed nothing, the others apply.
        try lib.store.write { tx in
            do {
                try tx[lib.books].update(10) { book in
                    book.title = "Never stored"
                    throw OutOfStock(id: book.id)
                }
                Issue.record("the closure's error was not rethrown")
            } catch let error as OutOfStock {
                #expect(error == OutOfStock(id: 10))
            }
            #expect(throws: OutOfStock(id: 12)) {
                try tx[lib.books].update([11, 12, 20]) { book in
                    book.year += 1
                    if book.id == 12 { throw OutOfStock(id: 12) }
                }
            }
            try tx[lib.books].update(20) { $0.title = "Kept" }
        }
        let view = lib.store.state[lib.books]
        #expect(view.find(10) == makeBook(10, author: 1, year: 1969))
        #expect(view.find(11) == makeBook(11, author: 1, year: 1974))
        #expect(view.find(12) == makeBook(12, author: 1, year: 1971))
        #expect(view.find(20)?.title == "Kept")
        #expect(view.find(20)?.year == 1961)
        #expect(seen.values.map { Array($0.updated.keys) } == [[20]])
        #expect(lib.soundness.isEmpty)
        token.cancel()

        // A closure that throws nothing, or only store errors, keeps the typed error.
        func typed(_ tx: Transaction) throws(EntityStoreError) {
            try tx[lib.books].update(10) { $0.year = 1970 }
            try tx[lib.books].update([10, 11]) { (book: inout Book) throws(EntityStoreError) in book.year += 1 }
        }
        try lib.store.write { tx in try typed(tx) }
        #expect(lib.store.state[lib.books].find(10)?.year == 1971)
    }
}
