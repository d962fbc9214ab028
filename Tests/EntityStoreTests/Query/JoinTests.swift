import EntityStore
import Testing

@Suite("Joins along relations")
struct JoinTests {
    @Test func bothDirectionsAndDanglingReferences() throws {
        // A remove that leaves references behind: rule none.
        let library = try Library(bookRule: .none, editorRule: .none)
        try library.seed()
        let (authors, books) = (library.authors, library.books)
        let state = library.store.state
        #expect(state[books].related(state[authors], via: \.authorID, of: 20)?.name == "Lem")
        #expect(state[books].related(state[authors], via: \.editorID, of: 20)?.name == "Le Guin")
        #expect(state[books].related(state[authors], via: \.editorID, of: 10) == nil)
        #expect(state[books].related(state[authors], via: \.authorID, of: 99) == nil)
        #expect(state[authors].referencing(1, from: state[books], via: \.authorID).map(\.id) == [10, 11, 12])
        #expect(state[authors].referencing(3, from: state[books], via: \.authorID).isEmpty)
        let pairs = state[books].query().where(\.year, in: 1960...1970).sorted(by: \.year).joined(state[authors], via: \.authorID)
        #expect(pairs.map { $0.0.id } == [20, 10] && pairs.map { $0.1?.name } == ["Lem", "Le Guin"])
        // A reference to a missing author joins to nil.
        try library.store.write { tx in _ = try tx[authors].remove(2) }
        let after = library.store.state
        #expect(after[books].query().where(\.authorID, equals: 2).joined(after[authors], via: \.authorID).map { $0.1 == nil } == [true])
    }
}

@Suite("The reverse join in queries")
struct ReverseJoinTests {
    @Test func authorsWithTheirBooks() throws {
        let library = try Library()
        try library.seed()
        let (authors, books) = (library.authors, library.books)
        let state = library.store.state
        let shelves = state[authors].query().joined(referencedBy: state[books], via: \.authorID)
        #expect(shelves.map { $0.0.id } == [1, 2] && shelves.map { $0.1.map(\.id) } == [[10, 11, 12], [20]])
        // Through an optional reference: books edited by each author.
        let edited = state[authors].query().joined(referencedBy: state[books], via: \.editorID)
        #expect(edited.map { $0.1.map(\.id) } == [[20], []])
        // In the query's order and page, each list as `referencing` gives it.
        let page = state[authors].query().sorted(by: \.name, descending: true).limit(1).joined(referencedBy: state[books], via: \.authorID)
        #expect(page.map { $0.0.name } == ["Lem"] && page.map { $0.1.map(\.id) } == [[20]])
        for (author, written) in shelves {
            #expect(written == state[authors].referencing(author.id, from: state[books], via: \.authorID))
        }
    }

    @Test func withoutAnIndexOrThroughAUniqueOne() throws {
        let authors = Table<Author>("plainAuthors")
        let plainBooks = Table<Book>("plainBooks")
        let soleBooks = Table<Book>("soleBooks").unique(\.authorID)
        let store = try EntityStore { authors; plainBooks; soleBooks }
        try store.write { tx in
            try tx[authors].insert(contentsOf: (1...4).map { Author(id: $0, name: "A\($0)") })
            try tx[plainBooks].insert(contentsOf: [
                makeBook(30, author: 2, editor: 1), makeBook(31, author: 1), makeBook(32, author: 2), makeBook(33, author: 9, editor: 1),
            ])
            try tx[soleBooks].insert(contentsOf: [makeBook(40, author: 3), makeBook(41, author: 1)])
        }
        let state = store.state
        let byAuthor = state[authors].query().where(\.id, in: 1...3).joined(referencedBy: state[plainBooks], via: \.authorID)
        #expect(byAuthor.map { $0.0.id } == [1, 2, 3] && byAuthor.map { $0.1.map(\.id) } == [[31], [30, 32], []])
        let byEditor = state[authors].query().limit(2).joined(referencedBy: state[plainBooks], via: \.editorID)
        #expect(byEditor.map { $0.1.map(\.id) } == [[30, 33], []])
        let sole = state[authors].query().joined(referencedBy: state[soleBooks], via: \.authorID)
        #expect(sole.map { $0.1.map(\.id) } == [[41], [], [40], []])
    }
}
