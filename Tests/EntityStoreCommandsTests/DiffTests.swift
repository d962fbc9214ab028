import EntityStore
import EntityStoreTestSupport
import Foundation
import Testing

@Suite("diff reports added, removed and changed ids", .threadsOfItsOwn)
struct DiffTests {
    static let before = """
        {"books": [{"id": 1, "title": "a"}, {"id": 2, "title": "b"}, {"id": 3, "title": "c"}, {"id": 4, "rating": 2}],
         "tags": [{"id": "x"}, {"id": "y"}],
         "gone": [{"id": 1}]}
        """
    // 1 same, 2 changed, 3 removed, 4 changed kind (2 -> 2.0), 5 added; tag y changed, z added; table gone removed, new added.
    static let after = """
        {"books": [{"id": 1, "title": "a"}, {"id": 2, "title": "B"}, {"id": 4, "rating": 2.0}, {"id": 5, "title": "e"}],
         "tags": [{"id": "x"}, {"id": "y", "color": null}, {"id": "z"}],
         "new": [{"id": 7}]}
        """

    func snapshots(_ scratch: Scratch) throws -> (String, String) {
        let a = scratch.path("a.sqlite"), b = scratch.path("b.sqlite")
        #expect(run(["import", try scratch.write("a.json", Self.before), "--output", a]).status == 0)
        #expect(run(["import", try scratch.write("b.json", Self.after), "--output", b]).status == 0)
        return (a, b)
    }

    @Test func textReport() throws {
        try withScratch { scratch in
            let (a, b) = try snapshots(scratch)
            let result = run(["diff", a, b])
            #expect(result.status == 0, "\(result)")
            #expect(result.outputLines == [
                "books: 1 added, 1 removed, 2 changed",
                "  added: 5",
                "  removed: 3",
                "  changed: 2 4",
                "gone: 0 added, 1 removed, 0 changed",
                "  removed: 1",
                "new: 1 added, 0 removed, 0 changed",
                "  added: 7",
                "tags: 1 added, 0 removed, 1 changed",
                "  added: \"z\"",
                "  changed: \"y\"",
            ], "\(result)")
        }
    }

    @Test func jsonReport() throws {
        try withScratch { scratch in
            let (a, b) = try snapshots(scratch)
            let result = run(["diff", a, b, "--json"])
            #expect(result.status == 0, "\(result)")
            let report = try parseJSON(result.stdout)
            let books = report["tables"]?["books"]
            #expect(books?["added"] == [5])
            #expect(books?["removed"] == [3])
            #expect(books?["changed"] == [2, 4])
            #expect(report["tables"]?["tags"]?["added"] == ["z"])
            #expect(report["tables"]?["tags"]?["changed"] == ["y"])
            #expect(report["tables"]?["gone"]?["removed"] == [1])
            #expect(report["tables"]?["new"]?["added"] == [7])

            // The other way round, added and removed swap.
            let reverse = try parseJSON(run(["diff", b, a, "--json"]).stdout)
            #expect(reverse["tables"]?["books"]?["added"] == [3])
            #expect(reverse["tables"]?["books"]?["removed"] == [5])
            #expect(reverse["tables"]?["books"]?["changed"] == [2, 4])
        }
    }
}
