import EntityStoreTestSupport
import Foundation
import Testing

@Suite("Temporaries left by a killed run are removed by the next run, and only those", .threadsOfItsOwn)
struct StaleTemporaryTests {
    @Test func staleTemporariesOfTheOutputAreRemoved() throws {
        try withScratch { scratch in
            let library = try importLibrary(scratch)
            // Temporaries as runs killed a while ago leave them: files, and export directories.
            let stale = [".out.json.tmp-0123ABCD", ".library.sqlite.tmp-89ABCDEF", ".export.tmp-00000000", ".export.tmp-FFFFFFFF", ".export.tmp-12345678"]
            try scratch.write(".out.json.tmp-0123ABCD", "{\"half\": ")
            try scratch.write(".library.sqlite.tmp-89ABCDEF", "SQLite format 3")
            try scratch.write(".export.tmp-00000000/.entity-store-export", "entity-store ndjson export\n")
            try scratch.write(".export.tmp-00000000/books.ndjson", "{\"id\":1}\n")
            try scratch.write(".export.tmp-FFFFFFFF/.entity-store-export", "")
            try FileManager.default.createDirectory(atPath: scratch.path(".export.tmp-12345678"), withIntermediateDirectories: false)
            // Not this tool's, or not of these outputs, or not stale: all kept.
            let kept = [
                ".out.json.tmp-0123abcd", ".out.json.tmp-0123ABC", ".out.json.tmp-0123ABCDE", "out.json.tmp-0123ABCD",
                ".out.json.tmp-0123ABCD.keep", ".other.json.tmp-0123ABCD", ".export.tmp-AAAAAAAA", ".export.tmp-BBBBBBBB",
                ".out.json.tmp-CCCCCCCC", ".out.json.tmp-DDDDDDDD",
            ]
            for name in kept.prefix(6) { try scratch.write(name, "not a temporary of ours") }
            try scratch.write(".export.tmp-AAAAAAAA/books.ndjson", "no marker: not known as an export")
            try scratch.write(".export.tmp-BBBBBBBB/.entity-store-export", "entity-store ndjson export\n")
            try scratch.write(".export.tmp-BBBBBBBB/photo.jpg", "not an export's")
            try scratch.write(".out.json.tmp-DDDDDDDD", "in use by a concurrent run")
            for name in stale + kept where name != ".out.json.tmp-CCCCCCCC" { try backdate(scratch.path(name)) }
            // A concurrent run's fresh temporary, and an old one it holds locked.
            try scratch.write(".out.json.tmp-CCCCCCCC", "being written right now")
            let held = try #require(HeldLock(scratch.path(".out.json.tmp-DDDDDDDD")))

            #expect(run(["export", library, "--output", scratch.path("out.json")]).status == 0)
            #expect(run(["export", library, "--format", "ndjson", "--output", scratch.path("export")]).status == 0)
            #expect(run(["import", scratch.path("library.json"), "--output", library, "--force"]).status == 0)
            withExtendedLifetime(held) {}

            expectNoLeftovers(scratch, expected: kept + ["export", "library.json", "library.sqlite", "out.json"])
            #expect(scratch.contents(".export.tmp-BBBBBBBB") == [".entity-store-export", "photo.jpg"])
        }
    }
}
