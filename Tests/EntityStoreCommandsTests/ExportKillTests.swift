import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The files of the export directory at `path`, by name (nil when there is none).
private func exportFiles(_ path: String) -> [String: Data]? {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return nil }
    var files: [String: Data] = [:]
    for name in names { files[name] = try? Data(contentsOf: URL(fileURLWithPath: path).appendingPathComponent(name)) }
    return files
}

extension LongRunning {
    @Suite("Crash safety of ndjson exports")
    struct ExportKillTests {
        /// `export --format ndjson --force` over a previous export, killed (SIGKILL) at random
        /// moments, some while it builds or swaps its directory: the path always holds a
        /// complete export, the old or the new, and the next run removes what was left.
        @Test(.timeLimit(.minutes(10)))
        func killedReplacementsLeaveAWholeExport() throws {
            try withScratch { scratch in
                let (text, _) = generatedInput(records: 6_000)
                let first = scratch.path("a.sqlite"), second = scratch.path("b.sqlite")
                #expect(run(["import", try scratch.write("a.json", text), "--output", first, "--quiet"]).status == 0)
                let other = (0..<3_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}" }.joined(separator: ",")
                #expect(run(["import", try scratch.write("b.json", "{\"x\": [\(other)]}"), "--output", second, "--quiet"]).status == 0)
                var references: [[String: Data]] = []
                for (snapshot, name) in [(first, "ref-a"), (second, "ref-b")] {
                    #expect(run(["export", snapshot, "--format", "ndjson", "--output", scratch.path(name), "--quiet"]).status == 0)
                    references.append(try #require(exportFiles(scratch.path(name))))
                }
                let output = scratch.path("out")
                let started = ContinuousClock.now
                #expect(run(["export", first, "--format", "ndjson", "--output", output, "--quiet"]).status == 0)
                let fullRun = ContinuousClock.now - started

                var generator = SystemRandomNumberGenerator()
                var killed = 0, killedWhileBuilding = 0, iterations = 0
                // A number of runs, not a time: a busy machine makes each run slower, and
                // both kinds of kill must have struck before it stops.
                while iterations < 12 || ((killed == 0 || killedWhileBuilding == 0) && iterations < 200) {
                    iterations += 1
                    let snapshot = iterations % 2 == 0 ? first : second
                    let child = try start(Tool.entityStore, ["export", snapshot, "--format", "ndjson", "--output", output, "--force", "--quiet"])
                    if Bool.random(using: &generator) {
                        // Anywhere in the run.
                        let delay = Double.random(in: 0...1.2, using: &generator) * Double(fullRun.components.attoseconds) / 1e18
                            + Double.random(in: 0...1.2, using: &generator) * Double(fullRun.components.seconds)
                        Thread.sleep(forTimeInterval: delay)
                    } else {
                        // Once its new directory exists: while it writes, swaps or deletes.
                        while child.process.isRunning, !scratch.contents().contains(where: { $0.hasPrefix(".out.tmp-") }) {
                            Thread.sleep(forTimeInterval: 0.0005)
                        }
                        Thread.sleep(forTimeInterval: Double.random(in: 0...0.02, using: &generator))
                        killedWhileBuilding += child.process.isRunning ? 1 : 0
                    }
                    kill(child.process.processIdentifier, SIGKILL)
                    let result = child.finish()
                    if child.process.terminationReason == .uncaughtSignal { killed += 1 } else {
                        #expect(result.status == 0, "\(result)")
                    }
                    let found = exportFiles(output)
                    guard let found, references.contains(found) else {
                        Issue.record("after run \(iterations), '\(output)' holds \(found.map { "\($0.keys.sorted())" } ?? "nothing"), not a whole export")
                        return
                    }
                }
                #expect(killed > 0, "no run was killed in \(iterations)")
                #expect(killedWhileBuilding > 0, "no run was killed while building its directory in \(iterations)")

                // What the killed runs left goes with the next run, once stale.
                for name in scratch.contents() where name.hasPrefix(".out.tmp-") { try backdate(scratch.path(name)) }
                #expect(run(["export", first, "--format", "ndjson", "--output", output, "--force", "--quiet"]).status == 0)
                #expect(exportFiles(output) == references[0])
                expectNoLeftovers(scratch, expected: ["a.json", "a.sqlite", "b.json", "b.sqlite", "out", "ref-a", "ref-b"])
            }
        }
    }
}
