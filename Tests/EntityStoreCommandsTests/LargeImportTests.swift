import EntityStore
import EntityStoreTestSupport
import Foundation
import Testing

extension LongRunning {
    @Suite("A large import")
    struct LargeImportTests {
        /// 30,000 records (many chunks of every pipeline stage) by default, 100,000 in a soak
        /// run; a tenth of that under a sanitizer, which runs about ten times slower.
        static let size = LongRunning.isSanitized ? 3_000 : Soak.pick(30_000, soak: 100_000)

        @Test(.timeLimit(.minutes(10)))
        func aHundredThousandRecordsRoundTrip() throws {
            try withScratch { scratch in
                let (text, counts) = generatedInput(records: Self.size)
                let input = try scratch.write("big.json", text)
                let snapshot = scratch.path("big.sqlite")
                let clock = ContinuousClock(), started = clock.now
                func phase(_ name: String) { print("large import, \(name): \(clock.now - started)") }

                let imported = run(["import", input, "--output", snapshot, "--quiet"])
                #expect(imported.status == 0, "\(imported)")
                #expect(imported.stdout.contains("imported \(Self.size) records"), "\(imported)")

                phase("imported")
                let exported = run(["export", snapshot])
                phase("exported")
                #expect(exported.status == 0, "\(exported.stderr)")
                try expectLossless(exported.stdout, tables(of: try parseJSON(text)))
                phase("compared")

                // Each query restores the whole snapshot, so two of them: a count and a filtered count.
                #expect(run(["query", snapshot, "orders", "--count"]).stdout == "\(counts["orders", default: 0])\n")
                #expect(run(["query", snapshot, "orders", "--where", "total=7.0", "--count"]).stdout == "\(counts["orders", default: 0] / 100)\n")
                #expect(run(["verify", snapshot]).status == 0)
                phase("queried and verified")
            }
        }
    }
}
