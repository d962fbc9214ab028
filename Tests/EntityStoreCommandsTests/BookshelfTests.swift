import EntityStore
import EntityStoreTestSupport
import Foundation
import Testing

@Suite("The bookshelf example", .threadsOfItsOwn)
struct BookshelfTests {
    static let shelf = """
        {"authors": [{"id": 1, "name": "Jon Fosse"}, {"id": 2, "name": "Ursula K. Le Guin"}],
         "books": [
           {"id": 10, "title": "The Dispossessed", "authorID": 2, "year": 1974},
           {"id": 11, "title": "Septology", "authorID": 1, "year": 2019},
           {"id": 12, "title": "Melancholia", "authorID": 1, "year": 1995},
           {"id": 13, "title": "Morning and Evening", "authorID": 1, "year": 2000}
         ]}
        """

    @Test func snapshotBooksRestoreVerify() throws {
        try withScratch { scratch in
            let input = try scratch.write("shelf.json", Self.shelf)
            let snapshot = scratch.path("shelf.sqlite")
            let written = bookshelf(["snapshot", input, "-o", snapshot])
            #expect(written.status == 0, "\(written)")
            #expect(written.stdout == "wrote 6 rows to \(snapshot) (authors 2, books 4)\n", "\(written)")

            let books = bookshelf(["books", snapshot, "--author", "1"])
            #expect(books.status == 0, "\(books)")
            #expect(books.outputLines == ["2019  Septology", "2000  Morning and Evening", "1995  Melancholia"], "\(books)")
            #expect(bookshelf(["books", snapshot, "--author", "3"]).stdout == "no books by author 3\n")

            let restored = bookshelf(["restore", snapshot])
            #expect(restored.status == 0, "\(restored)")
            #expect(restored.stdout == "restored 6 rows from \(snapshot) (authors 2, books 4)\n", "\(restored)")

            let verified = bookshelf(["verify", snapshot])
            #expect(verified.status == 0, "\(verified)")
            #expect(verified.stdout.hasPrefix("OK"), "\(verified)")

            let inspected = try parseJSON(bookshelf(["inspect", snapshot, "--json"]).stdout)
            #expect(inspected["appSchemaVersion"] == .integer(1))

            // The generic tool reads the typed snapshot too.
            let exported = tables(of: try parseJSON(run(["export", snapshot]).stdout))
            #expect(exported["books"]?.count == 4)
            #expect(exported["authors"]?.first?["name"] == .string("Jon Fosse"))

            // An existing snapshot is kept without --force.
            expectFailure(bookshelf(["snapshot", input, "-o", snapshot]), mentioning: [snapshot, "--force"])
            #expect(bookshelf(["snapshot", input, "-o", snapshot, "--force"]).status == 0)
        }
    }

    @Test func restoringASnapshotOfOtherTypesFails() throws {
        try withScratch { scratch in
            let foreign = try importLibrary(scratch)
            let restored = bookshelf(["restore", foreign])
            expectFailure(restored, mentioning: [foreign])
            #expect(restored.stdout.isEmpty)
            let books = bookshelf(["books", foreign, "--author", "1"])
            expectFailure(books, mentioning: ["genres"])
        }
    }

    @Test func badInputForSnapshot() throws {
        try withScratch { scratch in
            let input = try scratch.write("bad.json", #"{"authors": [{"id": 1}], "books": []}"#)
            let result = bookshelf(["snapshot", input, "-o", scratch.path("out.sqlite")])
            expectFailure(result, mentioning: ["bad.json"])
            #expect(!scratch.exists("out.sqlite"))
            let missing = bookshelf(["snapshot", scratch.path("missing.json"), "-o", scratch.path("out.sqlite")])
            expectFailure(missing, mentioning: ["missing.json"])
            #expect(bookshelf(["restore"]).status == 64)
            #expect(scratch.contents() == ["bad.json"])
        }
    }
}
