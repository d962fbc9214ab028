import EntityStore
import EntityStoreTesting
import Foundation
import Testing

// The library fixture of this target: integer book ids and an optional editor, no isbn.
// EntityStoreTests (with an isbn) and EntityStoreSQLiteTests (string book ids) declare
// their own: the shapes differ, and EntityStoreTestSupport, which depends on no module of
// the package, cannot declare entities.
struct Author: Entity {
    var id: Int
    var name: String
}

struct Book: Entity {
    var id: Int
    var title: String
    var authorID: Int
    var editorID: Int?
    var year: Int
}

let authors = Table<Author>("authors")
let books = Table<Book>("books")
    .ordered(\.year)
    .references(\.authorID, to: authors, onDelete: .cascade)
    .references(\.editorID, to: authors, onDelete: .nullify)

func librarySchema() throws -> Schema {
    try Schema {
        authors
        books
    }
}

/// Two authors; books 10 and 11 by author 1 (11 edited by author 2), 12 by author 2
/// edited by author 1.
func libraryStore() throws -> EntityStore {
    let store = EntityStore(schema: try librarySchema())
    try store.write { tx in
        try tx[authors].insert(contentsOf: [Author(id: 1, name: "Ursula"), Author(id: 2, name: "Jon")])
        try tx[books].insert(contentsOf: [
            Book(id: 10, title: "The Dispossessed", authorID: 1, editorID: nil, year: 1974),
            Book(id: 11, title: "The Lathe of Heaven", authorID: 1, editorID: 2, year: 1971),
            Book(id: 12, title: "Septology", authorID: 2, editorID: 1, year: 2019),
        ])
    }
    return store
}

let dynamicAuthors = Table<DynamicRecord>("people")
let dynamicBooks = Table<DynamicRecord>("works")
    .index(.ordered, field: "year")
    .references(field: "author", to: dynamicAuthors, onDelete: .cascade)

func dynamicStore() throws -> EntityStore {
    let store = try EntityStore {
        dynamicAuthors
        dynamicBooks
    }
    try store.write { tx in
        try tx[dynamicAuthors].insert(DynamicRecord(id: 1, fields: ["name": "Ursula"]))
        try tx[dynamicAuthors].insert(DynamicRecord(id: 2, fields: ["name": "Jon"]))
        try tx[dynamicBooks].insert(DynamicRecord(id: "a", fields: ["title": "The Dispossessed", "author": 1, "year": 1974]))
        try tx[dynamicBooks].insert(DynamicRecord(id: "b", fields: ["title": "Septology", "author": 2, "year": 2019]))
    }
    return store
}

/// The line of the statement that follows the call, for checking reported locations.
func lineAfter(_ line: Int = #line) -> Int { line + 1 }

extension [TestFailure] {
    /// The only failure, or a recorded issue.
    func single(sourceLocation: SourceLocation = #_sourceLocation) -> TestFailure? {
        #expect(count == 1, "expected one failure, got \(count): \(self)", sourceLocation: sourceLocation)
        return first
    }

    /// The only failure, checked to be reported at `line` of the file that checks it: the
    /// caller's line, not one inside the library.
    func single(at line: Int, sourceLocation: SourceLocation = #_sourceLocation) -> TestFailure? {
        guard let failure = single(sourceLocation: sourceLocation) else { return nil }
        #expect(failure.location.line == line, "reported at \(failure.location)", sourceLocation: sourceLocation)
        #expect(failure.location.fileID == sourceLocation.fileID, "reported at \(failure.location)", sourceLocation: sourceLocation)
        return failure
    }
}
