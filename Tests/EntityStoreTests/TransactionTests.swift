import StoreCore
import Testing
@testable import EntityStore

@Suite struct TransactionTests {
    @Test func throwingWriteLeavesEverythingAsBefore() throws {
        let lib = try Library()
        try lib.seed()
        let before = lib.store.state
        let revision = lib.store.revision
        let tableVersions = before.tableNames.map { before.version(ofTable: $0) }
        let entityVersions = before[lib.books].map { before[lib.books].version(of: $0.id) }
        let commits = Recorder<UInt64>()
        let token = lib.store.observe { commits.append($0.version) }

        #expect(throws: TestFailure()) {
            try lib.store.write { tx in
                try tx[lib.books].insert(makeBook(30, author: 2, year: 1950, isbn: "new"))
                try tx[lib.books].update(10) { $0.year = 2020 }
                try tx[lib.books].update(20) { $0.authorID = 1 }
                try tx[lib.authors].remove(1)
                try tx[lib.reviews].upsert(Review(id: 999, bookID: 20, stars: 1))
                throw TestFailure()
            }
        }
        let after = lib.store.state
        #expect(commits.count == 0)
        #expect(lib.store.revision == revision)
        #expect(after == before)
        #expect(after.tableNames.map { after.version(ofTable: $0) } == tableVersions)
        #expect(after[lib.books].map { after[lib.books].version(of: $0.id) } == entityVersions)
        #expect(Array(after[lib.authors]) == Array(before[lib.authors]))
        #expect(Array(after[lib.books]) == Array(before[lib.books]))
        #expect(Array(after[lib.reviews]) == Array(before[lib.reviews]))
        #expect(after[lib.books].first(where: \.isbn, equals: "new") == nil)
        #expect(after[lib.books].filter(\.authorID, equals: 1).map(\.id) == [10, 11, 12])
        #expect(after[lib.books].sorted(by: \.year).map(\.id) == [20, 10, 12, 11])
        #expect(after[lib.books].query().where(\.year, in: 2010...).count == 0)
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }

    @Test func readsInsideTransactionSeeItsOwnWrites() throws {
        let lib = try Library()
        try lib.seed()
        try lib.store.write { tx in
            try tx[lib.books].insert(makeBook(30, author: 2, year: 1930))
            try tx[lib.books].update(10) { $0.authorID = 2 }
            try tx[lib.authors].remove(1)
            #expect(tx[lib.books].find(30)?.year == 1930)
            #expect(tx[lib.books].count == 3)
            #expect(!tx[lib.books].contains(11))
            #expect(tx[lib.books].view.filter(\.authorID, equals: 2).map(\.id) == [10, 20, 30])
            #expect(tx[lib.books].view.sorted(by: \.year, limit: 1).map(\.id) == [30])
            #expect(tx.current[lib.reviews].ids == [100, 101, 200])
            #expect(tx[lib.books].find(20)?.editorID == nil)
            #expect(lib.store.state[lib.books].count == 4)
        }
        #expect(lib.store.state[lib.books].ids == [10, 20, 30])
        #expect(lib.soundness.isEmpty)
    }

    @Test func changeSetsReportNetChangesWithOldValues() throws {
        let lib = try Library()
        let sets = Recorder<ChangeSet>()
        let token = lib.store.observe { sets.append($0.current.changeSet) }
        try lib.store.write { tx in try tx[lib.books].insert(contentsOf: [makeBook(3), makeBook(1), makeBook(2)]) }
        try lib.store.write { tx in
            try tx[lib.books].update(1) { $0.title = "One" }
            try tx[lib.books].update(1) { $0.title = "Uno" }
            try tx[lib.books].remove(2)
            try tx[lib.books].insert(makeBook(9))
            try tx[lib.books].remove(9)
        }
        try lib.store.write { tx in
            try tx[lib.books].remove(3)
            try tx[lib.books].insert(makeBook(3, title: "Three again"))
        }
        let values = sets.values
        #expect(values.count == 3)
        guard values.count == 3 else { return }
        #expect(values[0][lib.books].inserted == [3, 1, 2])
        #expect(values[0].changedTables == ["Book"])
        #expect(values[1][lib.books].inserted.isEmpty)
        #expect(values[1][lib.books].updated == [1: makeBook(1)])
        #expect(values[1][lib.books].removed == [2: makeBook(2)])
        #expect(!values[1][lib.books].contains(9))
        #expect(values[1].counts(forTable: "Book") == (0, 1, 1))
        #expect(values[2][lib.books].updated == [3: makeBook(3)])
        #expect(values[2][lib.books].inserted.isEmpty && values[2][lib.books].removed.isEmpty)
        #expect(values[2][lib.authors].isEmpty)
        token.cancel()
    }

    @Test func insertThenRemoveInOneTransactionPublishesNothing() throws {
        let lib = try Library()
        let commits = Recorder<UInt64>()
        let token = lib.store.observe { commits.append($0.version) }
        try lib.store.write { tx in
            try tx[lib.books].insert(makeBook(1))
            try tx[lib.books].update(1) { $0.year = 1 }
            try tx[lib.books].remove(1)
        }
        #expect(commits.count == 0)
        #expect(lib.store.revision == 0)
        #expect(lib.store.state.version(ofTable: "Book") == 0)
        token.cancel()
    }

    @Test func tableAndEntityVersionsTrackTheRevisionThatChangedThem() throws {
        let lib = try Library()
        try lib.seed()
        let seeded = lib.store.revision
        #expect(seeded == 1)
        #expect(lib.store.state[lib.books].version == seeded)
        #expect(lib.store.state[lib.books].version(of: 10) == seeded)
        try lib.store.write { tx in try tx[lib.books].update(11) { $0.year = 1975 } }
        let state = lib.store.state
        #expect(state.revision == seeded + 1)
        #expect(state[lib.books].version == seeded + 1)
        #expect(state[lib.books].version(of: 11) == seeded + 1)
        #expect(state[lib.books].version(of: 10) == seeded)
        #expect(state[lib.authors].version == seeded)
        #expect(state.version(ofTable: "Review") == seeded)
        #expect(state[lib.books].version(of: 999) == nil)
        #expect(state.version(ofTable: "Nope") == nil)
    }

    @Test func batchPublishesOneMergedChangeSet() throws {
        let lib = try Library()
        try lib.seed()
        let received = Recorder<Changes<EntityState>>()
        let token = lib.store.observe { received.append($0) }
        try lib.store.batch {
            try lib.store.write { tx in try tx[lib.books].insert(makeBook(30, author: 2)) }
            try lib.store.write { tx in try tx[lib.books].update(30) { $0.title = "Edited" } }
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 1970 } }
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 1980 } }
            try lib.store.write { tx in try tx[lib.books].insert(makeBook(31)) }
            try lib.store.write { tx in try tx[lib.books].remove(31) }
            try lib.store.write { tx in try tx[lib.reviews].remove(200) }
            try lib.store.write { tx in try tx[lib.books].remove(12) }
            try lib.store.write { tx in try tx[lib.books].insert(makeBook(12, title: "Back")) }
        }
        #expect(received.count == 1)
        guard let changes = received.values.first else { return }
        let books = changes.current.changeSet[lib.books]
        #expect(books.inserted == [30])
        #expect(books.updated[10]?.year == 1969)
        #expect(books.updated[12] == makeBook(12, author: 1, year: 1971))
        #expect(books.updated.count == 2)
        #expect(books.removed.isEmpty)
        #expect(changes.current.changeSet[lib.reviews].removed[200]?.bookID == 20)
        #expect(changes.previous[lib.books].count == 4)
        #expect(changes.current[lib.books].find(30)?.title == "Edited")
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }

    @Test func batchMergesUpdateThenRemoveAndRemoveThenReinsert() throws {
        let lib = try Library()
        try lib.seed()
        let received = Recorder<ChangeSet>()
        let token = lib.store.observe { received.append($0.current.changeSet) }
        try lib.store.batch {
            try lib.store.write { tx in try tx[lib.books].update(11) { $0.title = "Edited" } }
            try lib.store.write { tx in try tx[lib.books].remove(11) }
            try lib.store.write { tx in try tx[lib.reviews].remove(200) }
            try lib.store.write { tx in try tx[lib.reviews].insert(Review(id: 200, bookID: 20, stars: 5)) }
            try lib.store.write { tx in try tx[lib.reviews].remove(101) }
            try lib.store.write { tx in try tx[lib.reviews].insert(Review(id: 101, bookID: 10, stars: 1)) }
            try lib.store.write { tx in try tx[lib.reviews].remove(101) }
        }
        #expect(received.count == 1)
        let changes = try #require(received.values.first)
        #expect(changes[lib.books].removed == [11: makeBook(11, author: 1, year: 1974)])
        #expect(changes[lib.books].updated.isEmpty)
        #expect(changes[lib.reviews].removed == [101: Review(id: 101, bookID: 10, stars: 4), 110: Review(id: 110, bookID: 11, stars: 3)])
        // Removed and inserted again with the same value: it took a new insertion position,
        // so it is reported updated (insertion-ordered readers must see it move).
        #expect(changes[lib.reviews].updated == [200: Review(id: 200, bookID: 20, stars: 5)])
        #expect(changes[lib.reviews].inserted.isEmpty)
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }

    @Test func anUpdateSetBackInsideABatchIsNotReportedAsInOneWrite() throws {
        let lib = try Library()
        try lib.seed()
        let received = Recorder<ChangeSet>()
        let token = lib.store.observe { received.append($0.current.changeSet) }
        try lib.store.write { tx in
            try tx[lib.books].update(10) { $0.title = "Edited" }
            try tx[lib.books].update(10) { $0.title = "Book 10" }
        }
        #expect(received.count == 0)
        try lib.store.batch {
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.title = "Edited" } }
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.title = "Book 10" } }
            try lib.store.write { tx in try tx[lib.books].update(11) { $0.year = 1 } }
            try lib.store.write { tx in try tx[lib.books].update(11) { $0.year = 2 } }
            try lib.store.write { tx in try tx[lib.books].update(12) { $0.year = 1 } }
            try lib.store.write { tx in try tx[lib.books].upsert(makeBook(12, author: 1, year: 1971)) }
            try lib.store.write { tx in try tx[lib.authors].update(2) { $0.name = "Other" } }
            try lib.store.write { tx in try tx[lib.authors].update(2) { $0.name = "Lem" } }
        }
        let changes = try #require(received.values.last)
        #expect(received.count == 1)
        #expect(changes[lib.books].updated == [11: makeBook(11, author: 1, year: 1974)])
        #expect(changes[lib.books].inserted.isEmpty && changes[lib.books].removed.isEmpty)
        #expect(changes.changedTables == ["Book"])
        #expect(changes.counts(forTable: "Author") == (0, 0, 0))
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }

    @Test func failingWriteInsideBatchDropsOnlyThatWrite() throws {
        let lib = try Library()
        let received = Recorder<ChangeSet>()
        let token = lib.store.observe { received.append($0.current.changeSet) }
        try lib.store.batch {
            try lib.store.write { tx in try tx[lib.books].insert(makeBook(1)) }
            #expect(throws: TestFailure()) {
                try lib.store.write { tx in
                    try tx[lib.books].insert(makeBook(2))
                    throw TestFailure()
                }
            }
            try lib.store.write { tx in try tx[lib.books].insert(makeBook(3)) }
        }
        #expect(received.values.map { $0[lib.books].inserted } == [[1, 3]])
        #expect(lib.store.state[lib.books].ids == [1, 3])
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }
}
