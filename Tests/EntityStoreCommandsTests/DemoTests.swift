import EntityStoreTestSupport
import Foundation
import Testing

@Suite("demo", .threadsOfItsOwn)
struct DemoTests {
    @Test func aSmallDemoRestoresEqualAndSound() throws {
        let result = run(["demo", "--size", "3000", "--quiet"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Loaded 3000 entities"), "\(result)")
        #expect(result.stdout.contains("restored store equals the original"), "\(result)")
        #expect(result.stdout.contains("the snapshot is sound"), "\(result)")
        #expect(result.stdout.contains("Invariants: all indexes agree"), "\(result)")
        #expect(result.stdout.contains("Summary: 3000 entities"), "\(result)")
        #expect(!result.stdout.contains("DIFFERS"))
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test func keepWritesASnapshotThatVerifies() throws {
        try withScratch { scratch in
            let kept = scratch.path("demo.sqlite")
            let result = run(["demo", "--size", "3000", "--keep", kept])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("to \(kept)"), "\(result)")
            let verify = run(["verify", kept])
            #expect(verify.status == 0, "\(verify)")
            #expect(verify.stdout.hasPrefix("OK"))
            #expect(verify.stdout.contains("3 tables, 3000 rows"), "\(verify)")
            #expect(run(["query", kept, "books", "--count"]).stdout == "1050\n")
            #expect(run(["query", kept, "authors", "--count"]).stdout == "150\n")
            #expect(scratch.contents() == ["demo.sqlite"])
        }
    }
}
