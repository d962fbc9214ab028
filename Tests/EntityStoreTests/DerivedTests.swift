import StoreCore
import Testing
@testable import EntityStore

@Suite struct DerivedTests {
    @Test func derivedByIDRecomputesOnlyForItsOwnID() throws {
        let lib = try Library()
        try lib.seed()
        let a = lib.store.derived(lib.books, id: 10)
        let b = lib.store.derived(lib.books, id: 11)
        #expect(a.value == makeBook(10, author: 1, year: 1969))
        #expect(a.recomputations == 0 && b.recomputations == 0)

        try lib.store.write { tx in try tx[lib.books].update(11) { $0.title = "Changed" } }
        #expect(a.recomputations == 0)
        #expect(b.recomputations == 1)
        #expect(b.value?.title == "Changed")

        try lib.store.write { tx in
            try tx[lib.books].insert(makeBook(30))
            try tx[lib.authors].update(2) { $0.name = "Stanisław Lem" }
            try tx[lib.reviews].remove(100)
        }
        #expect(a.recomputations == 0)
        #expect(b.recomputations == 1)

        try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 1970 } }
        #expect(a.recomputations == 1)
        #expect(a.value?.year == 1970)
        #expect(b.recomputations == 1)
    }

    @Test func batchWakesADerivedOnceWithTheFinalValue() throws {
        let lib = try Library()
        try lib.seed()
        let derived = lib.store.derived(lib.books, id: 10)
        let seen = Recorder<[Int?]>()
        let token = derived.observe { old, new in seen.append([old?.year, new?.year]) }
        try lib.store.batch {
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 1 } }
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 2 } }
        }
        #expect(derived.recomputations == 1)
        #expect(seen.values == [[1969, 2]])
        token.cancel()
    }

    @Test func aQueryCreatedInsideABatchStartsFromThePublishedStateAndFollowsTheBatch() throws {
        let lib = try Library()
        try lib.seed()
        var kept: DerivedQuery<Book?>?
        try lib.store.batch {
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 1 } }
            kept = lib.store.derived(lib.books, id: 10)
            #expect(kept?.value?.year == 1969)
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 2 } }
        }
        #expect(kept?.value?.year == 2)
        #expect(kept?.recomputations == 1)

        // A batch that throws publishes nothing: the query never saw its writes.
        var dropped: DerivedQuery<Book?>?
        #expect(throws: TestFailure()) {
            try lib.store.batch {
                try lib.store.write { tx in try tx[lib.books].update(11) { $0.year = 1 } }
                dropped = lib.store.derived(lib.books, id: 11)
                throw TestFailure()
            }
        }
        try lib.store.write { tx in try tx[lib.books].update(12) { $0.year = 3 } }
        #expect(dropped?.value == lib.store.state[lib.books].find(11))
        try lib.store.write { tx in try tx[lib.books].update(11) { $0.title = "After" } }
        #expect(dropped?.value == lib.store.state[lib.books].find(11))
    }

    @Test func observersGetOldAndNewValuesAndRemovalYieldsNil() throws {
        let lib = try Library()
        try lib.seed()
        let derived = lib.store.derived(lib.books, id: 12)
        let seen = Recorder<[Int?]>()
        let token = derived.observe { old, new in seen.append([old?.year, new?.year]) }
        try lib.store.write { tx in try tx[lib.books].update(12) { $0.year = 1972 } }
        try lib.store.write { tx in try tx[lib.books].update(12) { $0.title = "Retitled" } }
        try lib.store.write { tx in try tx[lib.books].remove(12) }
        #expect(derived.value == nil)
        #expect(derived.recomputations == 3)
        #expect(seen.values == [[1971, 1972], [1972, 1972], [1972, nil]])
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(12, year: 1900)) }
        #expect(derived.value?.year == 1900)
        token.cancel()
        try lib.store.write { tx in try tx[lib.books].update(12) { $0.year = 1901 } }
        #expect(seen.count == 4)
        #expect(derived.value?.year == 1901)
    }

    @Test func cascadeRemovalReachesDerivedOfReferencingRows() throws {
        let lib = try Library()
        try lib.seed()
        let review = lib.store.derived(lib.reviews, id: 110)
        let other = lib.store.derived(lib.reviews, id: 200)
        try lib.store.write { tx in try tx[lib.authors].remove(1) }
        #expect(review.value == nil)
        #expect(review.recomputations == 1)
        #expect(other.recomputations == 0)
    }

    @Test func derivedKeepingLastKeepsTheLastValue() throws {
        let lib = try Library()
        try lib.seed()
        #expect(throws: EntityStoreError.missingID(table: "Book", id: "99")) {
            _ = try lib.store.derivedKeepingLast(lib.books, id: 99)
        }
        let derived = try lib.store.derivedKeepingLast(lib.books, id: 11)
        try lib.store.write { tx in try tx[lib.books].update(11) { $0.title = "Last" } }
        try lib.store.write { tx in try tx[lib.books].remove(11) }
        #expect(derived.value.title == "Last")
        #expect(derived.recomputations == 2)
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(11, title: "Again")) }
        #expect(derived.value.title == "Again")
    }

    @Test func derivedForSeveralIDsFollowsTheirOrder() throws {
        let lib = try Library()
        try lib.seed()
        let derived = lib.store.derived(lib.books, ids: [20, 40, 10])
        #expect(derived.value.map(\.id) == [20, 10])
        try lib.store.write { tx in try tx[lib.books].update(11) { $0.year = 1 } }
        #expect(derived.recomputations == 0)
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(40)) }
        #expect(derived.value.map(\.id) == [20, 40, 10])
        try lib.store.write { tx in try tx[lib.books].remove(20) }
        #expect(derived.value.map(\.id) == [40, 10])
        #expect(derived.recomputations == 2)
    }

    @Test func indexKeyDerivedFollowsMembership() throws {
        let lib = try Library()
        try lib.seed()
        let byAuthor = lib.store.derived(lib.books, where: \.authorID, equals: 1)
        #expect(byAuthor.value.map(\.id) == [10, 11, 12])
        try lib.store.write { tx in try tx[lib.books].update(20) { $0.title = "Not a member" } }
        #expect(byAuthor.recomputations == 0)
        try lib.store.write { tx in try tx[lib.books].update(11) { $0.authorID = 2 } }
        #expect(byAuthor.value.map(\.id) == [10, 12])
        try lib.store.write { tx in try tx[lib.books].update(20) { $0.authorID = 1 } }
        #expect(byAuthor.value.map(\.id) == [10, 12, 20])
        try lib.store.write { tx in try tx[lib.books].update(10) { $0.title = "Member edit" } }
        #expect(byAuthor.value.first?.title == "Member edit")
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(5, author: 1)) }
        #expect(byAuthor.value.map(\.id) == [10, 12, 20, 5])
        try lib.store.write { tx in try tx[lib.reviews].remove(100) }
        #expect(byAuthor.recomputations == 4)
        #expect(byAuthor.value == lib.store.state[lib.books].filter(\.authorID, equals: 1))
    }

    @Test func rangeDerivedIsSortedByKey() throws {
        let lib = try Library()
        try lib.seed()
        let sixties = lib.store.derived(lib.books, where: \.year, in: 1965...1975)
        #expect(sixties.value.map(\.id) == [10, 12, 11])
        try lib.store.write { tx in try tx[lib.books].update(20) { $0.year = 1970 } }
        #expect(sixties.value.map(\.id) == [10, 20, 12, 11])
        try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 1980 } }
        #expect(sixties.value.map(\.id) == [20, 12, 11])
        try lib.store.write { tx in try tx[lib.books].insert(makeBook(7, year: 1971)) }
        #expect(sixties.value.map(\.id) == [20, 12, 7, 11])
        #expect(sixties.value == lib.store.state[lib.books].query().where(\.year, in: 1965...1975).results)
    }

    @Test func valuesStreamsCurrentThenNewValues() async throws {
        let lib = try Library()
        try lib.seed()
        let derived = lib.store.derived(lib.books, id: 10)
        let stream = derived.values()
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next()??.year == 1969)
        try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 1990 } }
        try lib.store.write { tx in try tx[lib.books].update(11) { $0.year = 1990 } }
        try lib.store.write { tx in try tx[lib.books].remove(10) }
        #expect(await iterator.next()??.year == 1990)
        let removed = await iterator.next()
        #expect(removed != nil && removed! == nil)
    }

    @Test func releasedDerivedStopsBeingWatched() throws {
        let lib = try Library()
        try lib.seed()
        var derived: DerivedQuery<Book?>? = lib.store.derived(lib.books, id: 10)
        var group: DerivedQuery<[Book]>? = lib.store.derived(lib.books, ids: [11, 12])
        weak let weakDerived = derived
        #expect(lib.store.watchers.watchedIDCount == 3)
        derived = nil
        #expect(weakDerived == nil)
        #expect(lib.store.watchers.watchedIDCount == 2)
        group = nil
        #expect(group == nil)
        #expect(lib.store.watchers.watchedIDCount == 0)
        var members: DerivedQuery<LiveRows<Book>>? = lib.store.derived(lib.books, where: \.authorID, equals: 1)
        weak let weakMembers = members
        members = nil
        #expect(weakMembers == nil)
        try lib.store.write { tx in try tx[lib.books].update(10) { $0.year = 2 } }
        #expect(lib.soundness.isEmpty)
    }
}
