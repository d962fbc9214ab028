import StoreCore
import Testing
@testable import EntityStore

@Suite struct RelationTests {
    @Test func cascadeIsTransitive() throws {
        let lib = try Library()
        try lib.seed()
        let sets = Recorder<ChangeSet>()
        let token = lib.store.observe { sets.append($0.current.changeSet) }
        let existed = try lib.store.write { tx in try tx[lib.authors].remove(1) }
        #expect(existed)
        let state = lib.store.state
        #expect(state[lib.authors].ids == [2])
        #expect(state[lib.books].ids == [20])
        #expect(state[lib.reviews].ids == [200])
        let changes = try #require(sets.values.first)
        #expect(sets.count == 1)
        #expect(Set(changes[lib.books].removed.keys) == [10, 11, 12])
        #expect(Set(changes[lib.reviews].removed.keys) == [100, 101, 110])
        #expect(changes[lib.authors].removed[1]?.name == "Le Guin")
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }

    @Test func removeCountsTheGivenIDsNotTheRowsASameTableCascadeReaches() throws {
        struct Category: Entity {
            var id: Int
            var parentID: Int?
        }
        let categories = Table<Category>("categories").references(\.parentID, to: Table<Category>("categories"), onDelete: .cascade)
        let store = try EntityStore { categories }
        // 1 <- 2 <- 3, 1 <- 4, and 5 <- 6.
        func seed() throws {
            try store.write { tx in
                try tx[categories].upsert(contentsOf: [
                    Category(id: 1), Category(id: 2, parentID: 1), Category(id: 3, parentID: 2),
                    Category(id: 4, parentID: 1), Category(id: 5), Category(id: 6, parentID: 5),
                ])
            }
        }
        try seed()
        #expect(try store.write { tx in try tx[categories].remove(1) } == true)
        #expect(store.state[categories].ids == [5, 6])
        #expect(try store.write { tx in try tx[categories].remove(1) } == false)

        try seed()
        #expect(try store.write { tx in try tx[categories].remove([1]) } == 1)
        try seed()
        #expect(try store.write { tx in try tx[categories].remove([1, 2, 99, 1, 5]) } == 3)
        #expect(store.state[categories].ids.isEmpty)
        try seed()
        #expect(try store.write { tx in try tx[categories].removeAll { $0.parentID == nil } } == 2)
        #expect(store.state[categories].ids.isEmpty)
        #expect(store.state.invariantViolations().isEmpty)
    }

    @Test func nullifyClearsTheReference() throws {
        let lib = try Library()
        try lib.seed()
        let sets = Recorder<ChangeSet>()
        let token = lib.store.observe { sets.append($0.current.changeSet) }
        try lib.store.write { tx in try tx[lib.authors].remove(1) }
        let book = try #require(lib.store.state[lib.books].find(20))
        #expect(book.editorID == nil)
        #expect(book.authorID == 2)
        #expect(sets.values.first?[lib.books].updated[20]?.editorID == 1)
        #expect(lib.store.state[lib.books].query().where(\.editorID, equals: 1).count == 0)
        #expect(lib.soundness.isEmpty)
        token.cancel()
    }

    @Test func restrictRefusesTheWholeDeleteIncludingTheCascade() throws {
        let lib = try Library(reviewRule: .restrict)
        try lib.seed()
        let before = lib.store.state
        #expect(throws: EntityStoreError.self) {
            try lib.store.write { tx in try tx[lib.authors].remove(1) }
        }
        do {
            try lib.store.write { tx in try tx[lib.authors].remove(1) }
            Issue.record("the delete should have been refused")
        } catch let error as EntityStoreError {
            guard case let .restrictViolation(table, id, referencingTable, field, referencingID) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(table == "Book")
            #expect(["10", "11"].contains(id))
            #expect(referencingTable == "Review")
            #expect(field == "bookID")
            #expect(["100", "101", "110"].contains(referencingID))
        }
        let after = lib.store.state
        #expect(after == before)
        #expect(after[lib.authors].count == 2)
        #expect(after[lib.books].count == 4)
        #expect(after[lib.reviews].count == 4)
        #expect(after[lib.books].find(20)?.editorID == 1)

        // Caught inside a transaction, the refused delete leaves no trace either.
        try lib.store.write { tx in
            #expect(throws: EntityStoreError.restrictViolation(
                table: "Book", id: "20", referencingTable: "Review", field: "bookID", referencingID: "200")) {
                try tx[lib.books].remove(20)
            }
            #expect(tx[lib.books].count == 4)
            try tx[lib.books].remove(12)
        }
        #expect(lib.store.state[lib.books].ids == [10, 11, 20])
        // Once the referencing rows are gone the delete goes through.
        try lib.store.write { tx in
            try tx[lib.reviews].removeAll { $0.bookID != 20 }
            try tx[lib.authors].remove(1)
        }
        #expect(lib.store.state[lib.books].ids == [20])
        #expect(lib.soundness.isEmpty)
    }

    @Test func ruleNoneLeavesReferencesDangling() throws {
        let lib = try Library(bookRule: .none, editorRule: .none)
        try lib.seed()
        try lib.store.write { tx in try tx[lib.authors].remove(1) }
        let view = lib.store.state[lib.books]
        #expect(view.count == 4)
        #expect(view.filter(\.authorID, equals: 1).map(\.id) == [10, 11, 12])
        #expect(view.find(20)?.editorID == 1)
        #expect(lib.store.state[lib.reviews].count == 4)
        #expect(lib.soundness.isEmpty)
    }

    @Test func checkReferencesRefusesDanglingInsert() throws {
        let lib = try Library(checkReferences: true)
        try lib.seed()
        let revision = lib.store.revision
        #expect(throws: EntityStoreError.danglingReference(
            table: "Book", id: "30", field: "authorID", targetTable: "Author", targetID: "7")) {
            try lib.store.write { tx in
                try tx[lib.authors].insert(Author(id: 3, name: "Banks"))
                try tx[lib.books].insert(makeBook(30, author: 7))
            }
        }
        #expect(throws: EntityStoreError.danglingReference(
            table: "Book", id: "10", field: "editorID", targetTable: "Author", targetID: "9")) {
            try lib.store.write { tx in try tx[lib.books].update(10) { $0.editorID = 9 } }
        }
        #expect(lib.store.revision == revision)
        #expect(lib.store.state[lib.authors].count == 2)
        #expect(lib.store.state[lib.books].find(30) == nil)
        // Order inside the transaction does not matter; only the committed state is checked.
        try lib.store.write { tx in
            try tx[lib.books].insert(makeBook(30, author: 7))
            try tx[lib.authors].insert(Author(id: 7, name: "Tiptree"))
        }
        #expect(lib.store.state[lib.books].find(30)?.authorID == 7)
        #expect(lib.soundness.isEmpty)
    }

    @Test func checkReferencesRefusesRemovingATargetWithRuleNone() throws {
        let lib = try Library(bookRule: .none, checkReferences: true)
        try lib.seed()
        #expect(throws: EntityStoreError.self) {
            try lib.store.write { tx in try tx[lib.authors].remove(1) }
        }
        #expect(lib.store.state[lib.authors].count == 2)
        #expect(lib.store.state[lib.books].find(20)?.editorID == 1)
        #expect(throws: EntityStoreError.danglingReference(
            table: "Book", id: "20", field: "authorID", targetTable: "Author", targetID: "2")) {
            try lib.store.write { tx in try tx[lib.authors].remove(2) }
        }
        // Removing the referencing rows first makes it legal.
        try lib.store.write { tx in
            try tx[lib.authors].remove(2)
            try tx[lib.books].remove(20)
        }
        #expect(lib.store.state[lib.authors].ids == [1])
        #expect(lib.store.state[lib.reviews].ids == [100, 101, 110])
        #expect(lib.soundness.isEmpty)
    }

    @Test func invalidSchemasAreRejected() throws {
        let authors = Table<Author>()
        #expect(throws: EntityStoreError.self) {
            _ = try Schema {
                authors
                authors
            }
        }
        #expect(throws: EntityStoreError.self) {
            _ = try Schema { Table<Book>().references(\.authorID, to: authors, onDelete: .nullify); authors }
        }
        #expect(throws: EntityStoreError.self) {
            _ = try Schema { Table<Book>().references(\.authorID, to: authors) }
        }
        _ = try Schema { authors; Table<Book>().references(\.authorID, to: authors, onDelete: .cascade) }
    }
}
