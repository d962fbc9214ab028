import EntityStore
import StoreCore
import Synchronization
import Testing

/// The README's live-query tour, compiled and checked, so the README stays true.
@Suite("The README live-query tour")
struct ReadmeLiveTourTests {
    struct Author: Entity { var id: Int; var name: String }
    struct Book: Entity { var id: Int; var title: String; var isbn: String; var authorID: Int; var year: Int }

    @Test("a live query delivers its rows and diff; a group-by and a join follow commits")
    func liveTour() throws {
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
        }

        let recent = store.live(LiveQuery(books).where(\.authorID, equals: 1).sorted(by: \.year, descending: true).limit(10))
        let printed = Mutex<[String]>([])
        let watching = recent.observe { update in
            for removal in update.diff.removed { printed.withLock { $0.append("removed \(removal.id) at \(removal.offset)") } }
            for insertion in update.diff.inserted {
                printed.withLock { $0.append("inserted \(insertion.entity.title) at \(insertion.offset)") }
            }
            for move in update.diff.moved { printed.withLock { $0.append("moved \(move.entity.title) \(move.from) -> \(move.to)") } }
            printed.withLock { $0.append(update.value.map(\.title).joined(separator: ", ")) }
        }
        let perAuthor = store.live(LiveQuery(books), groupedBy: \.authorID, aggregating: \.year)
        #expect(perAuthor.value[1]?.count == 2)
        let withAuthors = store.live(LiveQuery(books).where(\.year, in: 1970...), joining: \.authorID, to: authors)
        #expect(withAuthors.value.first?.referenced?.name == "Ursula K. Le Guin")
        #expect(recent.value.map(\.id) == [10, 11])

        try store.write { tx in
            try tx[books].insert(Book(id: 12, title: "Always Coming Home", isbn: "978-0", authorID: 1, year: 1985))
            _ = try tx[books].update(11) { $0.year = 1990 }
        }
        #expect(printed.withLock { $0 } == [
            "inserted Always Coming Home at 1", "moved The Lathe of Heaven 1 -> 0",
            "The Lathe of Heaven, Always Coming Home, The Dispossessed",
        ])
        #expect(perAuthor.value[1]?.max == 1990 && perAuthor.value[1]?.count == 3)
        try store.write { tx in _ = try tx[authors].update(1) { $0.name = "Le Guin" } }
        #expect(withAuthors.value.allSatisfy { $0.referenced?.name == "Le Guin" })
        watching.cancel()
    }
}
