import EntityStoreTestSupport
import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// How many rows of `table` differ between two states: inserted, removed or changed.
private func changedRows<E: Entity>(_ table: Table<E>, from old: EntityState, to new: EntityState) -> Int {
    var count = 0
    for entity in old[table] where new[table].find(entity.id) != entity { count += 1 }
    for entity in new[table] where old[table].find(entity.id) == nil { count += 1 }
    return count
}

private func rowCounts(_ summary: SnapshotSummary) -> [String: Int] {
    Dictionary(uniqueKeysWithValues: summary.tables.map { ($0.name, $0.rows) })
}

/// Restores the file at `path` into a fresh store of the library schema.
private func restoredLibrary(from path: String) throws -> EntityStore {
    let store = EntityStore(schema: try librarySchema())
    try store.restore(from: path)
    return store
}

/// A store of authors and books whose optional `editorID` is nil everywhere.
private func storeWithoutEditors(authorCount: Int, bookCount: Int) throws -> EntityStore {
    let store = EntityStore(schema: try librarySchema())
    try store.write { tx in
        try tx[authors].insert(contentsOf: (1...authorCount).map { Author(id: $0, name: "Author \($0)") })
        try tx[books].insert(contentsOf: (1...bookCount).map {
            Book(id: "b\($0)", title: "Book \($0)", authorID: 1 + $0 % authorCount, year: 1900 + $0, editorID: nil)
        })
        try tx[samples].insert(contentsOf: (1...3).map { sample($0) })
    }
    return store
}

@Suite("Incremental saves")
struct IncrementalSaveTests {
    @Test("random batches: after every save the file equals the live store", arguments: Soak.seeds([11], soak: 11...40))
    func randomBatches(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let fullPath = directory.appendingPathComponent("full.sqlite").path
            let store = try storeWithoutEditors(authorCount: 8, bookCount: 40)
            let file = try SnapshotFile(store: store, path: path)
            let booksMetadata = try #require(Snapshot.metadata(at: path).table(named: "books"))
            #expect(!booksMetadata.columns.contains { $0.name == "editorID" })
            #expect(Snapshot.verify(at: path).problems == [])

            var nextAuthor = 100
            var nextBook = 1000
            var nextSample = 100
            for batch in 0..<10 {
                let before = store.state
                // Removes first (cascading to books, nullifying editors) ...
                try store.write { tx in
                    if random.next() % 3 == 0, let victim = tx[authors].view.ids.randomElement(using: &random) {
                        _ = try tx[authors].remove(victim)
                    }
                    for _ in 0..<Int(random.next() % 3) {
                        if let victim = tx[books].view.ids.randomElement(using: &random) { _ = try tx[books].remove(victim) }
                    }
                }
                // ... then updates of surviving rows, the first non-nil editorID among them ...
                try store.write { tx in
                    let authorIDs = tx[authors].view.ids
                    for (position, id) in tx[books].view.ids.shuffled(using: &random).prefix(Int(random.next() % 4) + (batch == 0 ? 1 : 0)).enumerated() {
                        _ = try tx[books].update(id) { book in
                            book.year += 1
                            if batch == 0 && position == 0 || random.next() % 2 == 0 { book.editorID = authorIDs.randomElement(using: &random) }
                        }
                    }
                    if random.next() % 2 == 0, let id = authorIDs.randomElement(using: &random) {
                        _ = try tx[authors].update(id) { $0.name += " ✎" }
                    }
                    if random.next() % 4 == 0, let id = tx[samples].view.ids.randomElement(using: &random) {
                        _ = try tx[samples].update(id) { $0.note = $0.note == nil ? "now noted" : nil }
                    }
                }
                // ... then inserts that reference surviving authors.
                try store.write { tx in
                    for _ in 0..<Int(random.next() % 2) {
                        try tx[authors].insert(Author(id: nextAuthor, name: "New author \(nextAuthor)"))
                        nextAuthor += 1
                    }
                    let authorIDs = tx[authors].view.ids
                    for _ in 0..<Int(random.next() % 4) {
                        guard let author = authorIDs.randomElement(using: &random) else { break }
                        try tx[books].insert(Book(id: "n\(nextBook)", title: "New \(nextBook)", authorID: author, year: 2000, editorID: nil))
                        nextBook += 1
                    }
                    if random.next() % 4 == 0 {
                        try tx[samples].insert(sample(nextSample))
                        nextSample += 1
                    }
                }

                let summary = try file.save()
                let after = store.state
                #expect(rowCounts(summary) == [
                    "authors": changedRows(authors, from: before, to: after),
                    "books": changedRows(books, from: before, to: after),
                    "samples": changedRows(samples, from: before, to: after),
                ], "seed \(seed) batch \(batch): the save wrote other rows than those that changed")
                #expect(file.pendingCommits == 0)
                #expect(Snapshot.verify(at: path).problems == [], "seed \(seed) batch \(batch)")
                #expect(sameLibraryRows(try restoredLibrary(from: path).state, after), "seed \(seed) batch \(batch): file differs")
                try store.snapshot(to: fullPath)
                #expect(sameLibraryRows(try restoredLibrary(from: fullPath).state, after), "seed \(seed) batch \(batch): full snapshot differs")
                let metadata = try Snapshot.metadata(at: path)
                for table in ["authors", "books", "samples"] {
                    #expect(metadata.table(named: table)?.rowCount == after.count(ofTable: table))
                }
                if batch == 0 {
                    let editor = try #require(metadata.table(named: "books")?.columns.first { $0.name == "editorID" })
                    #expect(editor.kind == .integer && editor.nullable)
                }
            }
        }
    }

    @Test("an incremental save writes only the changed rows")
    func onlyChangedRows() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try storeWithoutEditors(authorCount: 10, bookCount: 300)
            let file = try SnapshotFile(store: store, path: path)
            try store.write { tx in
                for id in ["b7", "b70", "b170"] { _ = try tx[books].update(id) { $0.title += " (2nd edition)" } }
            }
            try store.write { tx in _ = try tx[books].remove("b8") }
            let summary = try file.save()
            #expect(rowCounts(summary) == ["authors": 0, "books": 4, "samples": 0])
            #expect(try sqlValue(path, "SELECT count(*) FROM books") == .integer(299))
            #expect(try sqlValue(path, "SELECT title FROM books WHERE id = 'b70'") == .text("Book 70 (2nd edition)"))
            #expect(try sqlValue(path, "SELECT count(*) FROM books WHERE id = 'b8'") == .integer(0))

            // Nothing changed: nothing written.
            #expect(try file.save().rowCount == 0)
            // A cascade counts the removed author and each of its books.
            let cascaded = store.state[books].filter(\.authorID, equals: 3).count
            try store.write { tx in _ = try tx[authors].remove(3) }
            #expect(rowCounts(try file.save()) == ["authors": 1, "books": cascaded, "samples": 0])
            #expect(sameLibraryRows(try restoredLibrary(from: path).state, store.state))
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }

    @Test("a save after a restore or replaceAll writes a full snapshot")
    func fullSnapshotAfterReplacingEverything() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let otherPath = directory.appendingPathComponent("other.sqlite").path
            try populatedLibraryStore(authorCount: 3, bookCount: 5).snapshot(to: otherPath)

            let store = try storeWithoutEditors(authorCount: 10, bookCount: 50)
            let file = try SnapshotFile(store: store, path: path)
            try store.restore(from: otherPath)
            let afterRestore = try file.save()
            #expect(rowCounts(afterRestore) == ["authors": 3, "books": 5, "samples": 1])
            #expect(sameLibraryRows(try restoredLibrary(from: path).state, store.state))
            #expect(Snapshot.verify(at: path).problems == [])

            let replacement = try EntityState.build(schema: store.schema) { tx in
                try tx[authors].insert(Author(id: 42, name: "Only"))
                try tx[books].insert(Book(id: "z", title: "Z", authorID: 42, year: 1, editorID: 42))
            }
            try store.replaceAll(with: replacement)
            try store.write { tx in try tx[samples].insert(sample(9)) }
            #expect(rowCounts(try file.save()) == ["authors": 1, "books": 1, "samples": 1])
            let restored = try restoredLibrary(from: path)
            #expect(sameLibraryRows(restored.state, store.state))
            #expect(restored.state[authors].find(3) == nil)
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }

    @Test("a save falls back to a full snapshot when the file is gone or a dynamic field changes kind")
    func fallbacks() throws {
        let records = Table<DynamicRecord>("records")
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("dynamic.sqlite").path
            let store = EntityStore(schema: try Schema { records })
            try store.write { tx in
                try tx[records].insert(contentsOf: (1...20).map { DynamicRecord(id: .integer($0), fields: ["v": .integer($0)]) })
            }
            let file = try SnapshotFile(store: store, path: path)
            try store.write { tx in _ = try tx[records].update(5) { $0.fields["v"] = "five" } }
            #expect(try file.save().rowCount == 20)
            #expect(try rows(records, in: EntityStore.restoringDynamic(from: path).state) == rows(records, in: store.state))
            #expect(try Snapshot.metadata(at: path).table(named: "records")?.columns.first { $0.name == "v" }?.kind == .json)

            try FileManager.default.removeItem(atPath: path)
            try store.write { tx in _ = try tx[records].remove(1) }
            #expect(try file.save().rowCount == 19)
            #expect(try rows(records, in: EntityStore.restoringDynamic(from: path).state) == rows(records, in: store.state))
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }
}
