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
