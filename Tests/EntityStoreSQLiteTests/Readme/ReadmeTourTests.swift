import EntityStore
import EntityStoreSQLite
import Foundation
import StoreCore
import Synchronization
import Testing

/// The README's tour, compiled and checked, so the README stays true.
@Suite("The README tour")
struct ReadmeTourTests {
    struct Author: Entity { var id: Int; var name: String }
    struct Book: Entity { var id: Int; var title: String; var isbn: String; var authorID: Int; var year: Int }

    @Test("declaring, writing, querying, observing and persisting work as the README shows")
    func tour() async throws {
        let authors = Table<Author>("authors")
        let books = Table<Book>("books")
            .unique(\.isbn)
            .ordered(\.year)
            .references(\.authorID, to: authors, onDelete: .cascade)
        let store = try EntityStore {
            authors
            books
        }
        try store.write { tx in
            try tx[authors].insert(Author(id: 1, name: "Ursula K. Le Guin"))
            try tx[books].insert(contentsOf: [
                Book(id: 10, title: "The Dispossessed", isbn: "978-0-06-051275-0", authorID: 1, year: 1974),
                Book(id: 11, title: "The Lathe of Heaven", isbn: "978-1-4165-5696-0", authorID: 1, year: 1971),
            ])
            try tx[books].update(10) { $0.title = "The Dispossessed: An Ambiguous Utopia" }
        }

        let state = store.state
        #expect(state[books].find(10)?.title == "The Dispossessed: An Ambiguous Utopia")
        #expect(state[books].first(where: \.isbn, equals: "978-1-4165-5696-0")?.id == 11)
        #expect(state[books].filter(\.authorID, equals: 1).map(\.id) == [10, 11])
        #expect(state[books].sorted(by: \.year, descending: true, limit: 5).map(\.id) == [10, 11])
        #expect(state[books].query().where(\.year, in: 1970..<1980).sorted(by: \.year).limit(20).results.map(\.id) == [11, 10])
        #expect(state[books].count(\.authorID, equals: 1) == 2)
        #expect(state[books].related(state[authors], via: \.authorID, of: 10)?.name == "Ursula K. Le Guin")
        #expect(state[authors].referencing(1, from: state[books], via: \.authorID).map(\.id) == [10, 11])
        #expect(state[books].query().where(\.year, in: 1970...).joined(state[authors], via: \.authorID).map { $0.1?.id } == [1, 1])
        #expect(state[authors].query().joined(referencedBy: state[books], via: \.authorID).map { $0.1.map(\.id) } == [[10, 11]])
        #expect(state[books].query().countsByKey(\.authorID) == [1: 2])
        #expect(state[books].query().where(\.authorID, equals: 1).average(\.year) == 1972.5)
        let perAuthor = state[books].query().aggregates(groupedBy: \.authorID, of: \.year)
        #expect(perAuthor[1]?.count == 2 && perAuthor[1]?.average == 1972.5)
        #expect(state[books].query().where(.field(\.authorID, equals: 1) || .field(\.year, in: ..<1972)).results.count == 2)

        let seen = Mutex<[Int]>([])
        let token = store.observe { changes in
            let bookChanges = changes.current.changeSet[books]
            seen.withLock { $0 += bookChanges.inserted + Array(bookChanges.updated.keys) + Array(bookChanges.removed.keys) }
        }
        let book = store.derived(books, id: 10)
        let titles = Mutex<[String]>([])
        let observation = book.observe { _, new in titles.withLock { $0.append(new?.title ?? "removed") } }
        let byAuthor = store.derived(books, where: \.authorID, equals: 1)
        var values = byAuthor.values().makeAsyncIterator()
        #expect(await values.next()?.count == 2)

        try store.write { tx in _ = try tx[books].remove(10) }
        #expect(await values.next()?.map(\.id) == [11])
        #expect(titles.withLock { $0 } == ["removed"])
        #expect(seen.withLock { $0 } == [10])
        token.cancel()
        observation.cancel()

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("library.sqlite").path
        try store.snapshot(to: path)
        try store.restore(from: path)
        let file = try SnapshotFile(store: store, path: path)
        try store.write { tx in try tx[books].insert(Book(id: 12, title: "Always Coming Home", isbn: "978-0", authorID: 1, year: 1985)) }
        let saved = try file.save()
        #expect(saved.rowCount == 1)
        #expect(Snapshot.verify(at: path).isSound)
        try file.close()
        let any = try EntityStore.restoringDynamic(from: path)
        #expect(any.state.count(ofTable: "books") == 2)
    }
}
