import EntityStore
import Foundation
import Testing

@Suite("A large import")
struct LargeImportTests {
    /// 200,000 records: about 7 s to import and as much to export in a debug build.
    static let size = 200_000

    @Test(.timeLimit(.minutes(3)))
    func twoHundredThousandRecordsRoundTrip() throws {
        try withScratch { scratch in
            let (text, counts) = generatedInput(records: Self.size)
            let input = try scratch.write("big.json", text)
            let snapshot = scratch.path("big.sqlite")
            let clock = ContinuousClock(), started = clock.now

            let imported = run(["import", input, "--output", snapshot, "--quiet"])
            #expect(imported.status == 0, "\(imported)")
            #expect(imported.stdout.contains("imported \(Self.size) records"), "\(imported)")

            let exported = run(["export", snapshot])
            #expect(exported.status == 0, "\(exported.stderr)")
            try expectLossless(exported.stdout, tables(of: try parseJSON(text)))

            for (table, count) in counts {
                let result = run(["query", snapshot, table, "--count"])
                #expect(result.stdout == "\(count)\n", "\(table): \(result)")
            }
            #expect(run(["query", snapshot, "orders", "--where", "total=7.0", "--count"]).stdout == "\(counts["orders", default: 0] / 100)\n")
            #expect(run(["query", snapshot, "tags", "--where", "weight=1", "--count"]).stdout == "\(counts["tags", default: 0] / 2)\n")
            #expect(run(["verify", snapshot]).status == 0)
            print("large import of \(Self.size) records: import, export, compare and queries in \(clock.now - started)")
        }
    }
}
