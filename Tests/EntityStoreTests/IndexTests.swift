import Testing
@testable import EntityStore

@Suite struct IndexTests {
    /// Twelve books by three authors, years 1990...2001 in a scrambled insertion order,
    /// with two books sharing 1995.
    static let years = [1997, 1992, 1995, 2001, 1990, 1999, 1995, 1993, 2000, 1991, 1998, 1996]

    func stocked() throws -> Library {
        let lib = try Library()
        try lib.store.write { tx in
            try tx[lib.books].insert(contentsOf: Self.years.enumerated().map { offset, year in
                makeBook(offset + 1, author: offset % 3 + 1, year: year)
            })
        }
        return lib
    }

    /// The IDs whose year passes `include`, sorted by year, ties in insertion order.
    func expected(_ lib: Library, _ include: (Int) -> Bool) -> [Int] {
        Array(lib.store.state[lib.books]).enumerated()
            .filter { include($0.element.year) }
            .sorted { ($0.element.year, $0.offset) < ($1.element.year, $1.offset) }
            .map(\.element.id)
    }

    @Test func uniqueViolationNamesTableIndexAndBothIDsAndLeavesNoTrace() throws {
        let lib = try stocked()
        let revision = lib.store.revision
        #expect(throws: EntityStoreError.uniqueViolation(
            table: "Book", index: "isbn", key: "\"isbn-3\"", existingID: "3", newID: "50")) {
            try lib.store.write { tx in try tx[lib.books].insert(makeBook(50, isbn: "isbn-3")) }
        }
        #expect(throws: EntityStoreError.uniqueViolation(
            table: "Book", index: "isbn", key: "\"isbn-3\"", existingID: "3", newID: "4")) {
            try lib.store.write { tx in try tx[lib.books].update(4) { $0.isbn = "isbn-3" } }
        }
        #expect(throws: EntityStoreError.uniqueViolation(
            table: "Book", index: "isbn", key: "\"isbn-1\"", existingID: "1", newID: "2")) {
            try lib.store.write { tx in try tx[lib.books].upsert(makeBook(2, isbn: "isbn-1")) }
        }
        let view = lib.store.state[lib.books]
        #expect(lib.store.revision == revision)
        #expect(view.count == 12)
        #expect(view.first(where: \.isbn, equals: "isbn-3")?.id == 3)
        #expect(view.first(where: \.isbn, equals: "isbn-4")?.id == 4)
        #expect(view.find(4)?.isbn == "isbn-4")
        #expect(lib.soundness.isEmpty)
    }

    @Test func uniqueKeyFreedInATransactionCanBeReusedInIt() throws {
        let lib = try stocked()
        try lib.store.write { tx in
            try tx[lib.books].update(1) { $0.isbn = "tmp" }
            try tx[lib.books].update(2) { $0.isbn = "isbn-1" }
            try tx[lib.books].update(1) { $0.isbn = "isbn-2" }
            try tx[lib.books].remove(3)
            try tx[lib.books].insert(makeBook(60, isbn: "isbn-3"))
        }
        let view = lib.store.state[lib.books]
        #expect(view.first(where: \.isbn, equals: "isbn-1")?.id == 2)
        #expect(view.first(where: \.isbn, equals: "isbn-2")?.id == 1)
        #expect(view.first(where: \.isbn, equals: "isbn-3")?.id == 60)
        #expect(view.first(where: \.isbn, equals: "tmp") == nil)
        #expect(view.query().where(\.isbn, equals: "isbn-1").plan.hasPrefix("index lookup"))
        #expect(lib.soundness.isEmpty)
    }

    @Test func groupedLookupReturnsInsertionOrder() throws {
        let lib = try Library()
        try lib.store.write { tx in
            for id in [5, 2, 9, 7, 1] { try tx[lib.books].insert(makeBook(id, author: id == 7 ? 2 : 1)) }
        }
        try lib.store.write { tx in try tx[lib.books].upsert(makeBook(2, title: "Replaced")) }
        let view = lib.store.state[lib.books]
        #expect(view.filter(\.authorID, equals: 1).map(\.id) == [5, 2, 9, 1])
        #expect(view.filter(\.authorID, equals: 2).map(\.id) == [7])
        #expect(view.filter(\.authorID, equals: 3).isEmpty)
        let query = view.query().where(\.authorID, equals: 1)
        #expect(query.plan.hasPrefix("index lookup"))
        #expect(query.count == 4)
        #expect(query.offset(1).limit(2).ids == [2, 9])
        #expect(query.filter { $0.id > 4 }.ids == [5, 9])
        #expect(view.query().where(\.title, equals: "Replaced").plan == "table scan")
        #expect(view.query().where(\.title, equals: "Replaced").ids == [2])
    }

    @Test func orderedRangeQueriesMatchAScan() throws {
        let lib = try stocked()
        let view = lib.store.state[lib.books]
        #expect(view.query().where(\.year, in: 1993...1997).ids == expected(lib) { (1993...1997).contains($0) })
        #expect(view.query().where(\.year, in: 1993..<1997).ids == expected(lib) { (1993..<1997).contains($0) })
        #expect(view.query().where(\.year, in: 1998...).ids == expected(lib) { $0 >= 1998 })
        #expect(view.query().where(\.year, in: ...1992).ids == expected(lib) { $0 <= 1992 })
        #expect(view.query().where(\.year, in: ..<1992).ids == expected(lib) { $0 < 1992 })
        #expect(view.query().where(\.year, in: 1995...1995).ids == [3, 7])
        #expect(view.query().where(\.year, in: 2050...).ids.isEmpty)
        #expect(view.query().where(\.year, in: 1995..<1995).ids.isEmpty)
        #expect(view.query().where(\.year, in: 1990...2001).count == 12)
        #expect(view.query().where(\.year, in: 1990...1999).where(\.authorID, equals: 2).ids
            == expected(lib) { $0 <= 1999 }.filter { view.find($0)?.authorID == 2 })
        #expect(view.query().where(\.year, in: 1993...1997).plan.hasPrefix("index lookup"))
        #expect(view.query().filter { $0.year > 1995 }.plan == "table scan")
        #expect(view.query().sorted(by: \.year).plan.hasPrefix("ordered index scan"))
    }

    @Test func topKFollowsTheIndexOrder() throws {
        let lib = try stocked()
        let view = lib.store.state[lib.books]
        let ascending = expected(lib) { _ in true }
        #expect(view.sorted(by: \.year).map(\.id) == ascending)
        #expect(view.sorted(by: \.year, limit: 3).map(\.id) == Array(ascending.prefix(3)))
        #expect(view.sorted(by: \.year, descending: true, limit: 3).map(\.year) == [2001, 2000, 1999])
        #expect(view.sorted(by: \.year, descending: true).map(\.year) == Self.years.sorted(by: >))
        #expect(view.query().sorted(by: \.year).offset(2).limit(2).ids == Array(ascending[2..<4]))
        #expect(view.query().sorted(by: \.year).first?.year == 1990)
        // The same order without an index (a sort of the scan).
        #expect(view.sorted(by: \.title).count == 12)
        #expect(view.query().where(\.year, in: 1991...1996).sorted(by: \.year, descending: true).ids.map { view.find($0)!.year }
            == [1996, 1995, 1995, 1993, 1992, 1991])
    }

    @Test func descendingTiesKeepInsertionOrderOnEveryPath() throws {
        let lib = try stocked()
        let view = lib.store.state[lib.books]
        // Books 3 and 7 share 1995. Sorting candidates (here from a range lookup) keeps
        // ties in insertion order, as `sorted(by:)` documents.
        let scanned = view.query().where(\.year, in: 1900...).sorted(by: \.year, descending: true).ids
        #expect(scanned.firstIndex(of: 3)! < scanned.firstIndex(of: 7)!)
        #expect(view.sorted(by: \.year, descending: true).map(\.id) == scanned)
        #expect(view.query().sorted(by: \.year, descending: true).plan.hasPrefix("ordered index scan"))
        let page = view.query().sorted(by: \.year, descending: true).offset(6).limit(2).ids
        #expect(page == [3, 7])
        #expect(view.sorted(by: \.year, descending: true, limit: 7).last?.id == 3)
    }

    @Test func indexesFollowUpdatesAndRemovals() throws {
        let lib = try stocked()
        try lib.store.write { tx in
            try tx[lib.books].update(5) { $0.year = 2005 }
            try tx[lib.books].update(1) { $0.authorID = 3 }
            try tx[lib.books].remove(4)
            try tx[lib.books].remove(7)
            try tx[lib.books].update(2) { $0.isbn = "changed" }
        }
        let view = lib.store.state[lib.books]
        #expect(view.sorted(by: \.year, descending: true, limit: 1).map(\.id) == [5])
        #expect(view.sorted(by: \.year, limit: 1).map(\.id) == [10])
        #expect(view.query().where(\.year, in: 2001...).ids == [5])
        #expect(view.query().where(\.year, in: 1995...1995).ids == [3])
        #expect(view.filter(\.authorID, equals: 1).map(\.id) == [10])
        #expect(view.filter(\.authorID, equals: 3).map(\.id) == [1, 3, 6, 9, 12])
        #expect(view.first(where: \.isbn, equals: "isbn-2") == nil)
        #expect(view.first(where: \.isbn, equals: "changed")?.id == 2)
        #expect(view.first(where: \.isbn, equals: "isbn-4") == nil)
        #expect(lib.soundness.isEmpty)
    }

    @Test func allPagesInInsertionOrder() throws {
        let lib = try stocked()
        let view = lib.store.state[lib.books]
        #expect(view.all(offset: 10).map(\.id) == [11, 12])
        #expect(view.all(offset: 3, limit: 2).map(\.id) == [4, 5])
        #expect(view.all(limit: 0).isEmpty)
        #expect(view.all(offset: 50).isEmpty)
        #expect(view.all().map(\.id) == Array(1...12))
    }
}
