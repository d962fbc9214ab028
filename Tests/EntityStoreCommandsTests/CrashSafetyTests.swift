import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension LongRunning {
    @Suite("Crash safety")
    struct CrashSafetyTests {
        @Test(.timeLimit(.minutes(10)))
        func killedWhileWritingKeepsThePreviousSnapshot() throws {
            try withScratch { scratch in
                // The previous snapshot only has to be a sound one to compare against; the
                // one killed must write long enough to be caught at it: 40,000 records take
                // over a second to write in a debug build, against a kill 50 ms after its
                // temporary file appears.
                let (small, smallCounts) = generatedInput(records: 5_000)
                let snapshot = scratch.path("s.sqlite")
                let first = run(["import", try scratch.write("small.json", small), "--output", snapshot, "--quiet"])
                try #require(first.status == 0, "\(first)")
                let original = try scratch.read("s.sqlite")

                let (big, _) = generatedInput(records: 40_000)
                let bigInput = try scratch.write("big.json", big)
                let child = try start(Tool.entityStore, ["import", bigInput, "--output", snapshot, "--force", "--quiet"])
                // Wait until the snapshot writer has created its temporary file, then kill.
                var sawTemporary = false
                let deadline = ContinuousClock.now + .seconds(120)
                while child.process.isRunning, ContinuousClock.now < deadline {
                    if scratch.contents().contains(where: { $0.hasPrefix(".s.sqlite.tmp-") }) {
                        sawTemporary = true
                        Thread.sleep(forTimeInterval: 0.05)
                        kill(child.process.processIdentifier, SIGKILL)
                        break
                    }
                    Thread.sleep(forTimeInterval: 0.005)
                }
                if child.process.isRunning, !sawTemporary { kill(child.process.processIdentifier, SIGKILL) }
                let result = child.finish()
                try #require(sawTemporary, "the import ended before its temporary file was seen: \(result)")
                #expect(child.process.terminationReason == .uncaughtSignal, "\(result)")
                #expect(result.status == SIGKILL)

                #expect(try scratch.read("s.sqlite") == original, "the previous snapshot must be untouched")
                let verify = run(["verify", snapshot])
                #expect(verify.status == 0, "\(verify)")
                #expect(verify.stdout.contains("3 tables, 5000 rows"), "\(verify)")
                for (table, count) in smallCounts {
                    #expect(run(["query", snapshot, table, "--count"]).stdout == "\(count)\n", "\(table)")
                }

                // The killed run's temporary file does not get in the way of the next one,
                // which removes it once it is stale.
                let leftovers = scratch.contents().filter { $0.hasPrefix(".s.sqlite.tmp-") }
                #expect(!leftovers.isEmpty)
                for name in leftovers { try backdate(scratch.path(name)) }
                let again = run(["import", scratch.path("small.json"), "--output", snapshot, "--force", "--quiet"])
                #expect(again.status == 0, "\(again)")
                #expect(run(["verify", snapshot]).status == 0)
                expectNoLeftovers(scratch, expected: ["big.json", "s.sqlite", "small.json"])
            }
        }
    }
}
