import EntityStoreTestSupport
import Foundation
import SnapshotFixtures
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs `entity-store` with `arguments`, killing it if it outlives `limit`.
private func runBounded(_ arguments: [String], limit: Duration) throws -> (result: RunResult, timedOut: Bool) {
    let child = try start(Tool.entityStore, arguments)
    let deadline = ContinuousClock.now + limit
    while child.process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
    let timedOut = child.process.isRunning
    if timedOut { kill(child.process.processIdentifier, SIGKILL) }
    return (child.finish(), timedOut)
}

@Suite("Hostile files through every read command", .threadsOfItsOwn)
struct HostileFileCommandTests {
    /// The hostile files in four shards, run side by side: one after another, their 400
    /// runs of the tool made the suite's longest test.
    @Test("each command gives one clear line or an answer, in bounded time, never a crash", arguments: 0..<4)
    func everyCommand(shard: Int) throws {
        try withScratch { scratch in
            let input = try scratch.write("in.json", """
                {"people": [{"id": 1, "name": "Ada", "email": "ada@example.com"}, {"id": 2, "name": "Grace", "email": "grace@example.com"},
                            {"id": 3, "name": "Linus", "email": "linus@example.com", "nested": {"a": [1, 2]}}],
                 "posts": [{"id": "p1", "author": 1, "title": "On engines"}, {"id": "p2", "author": 2, "title": "On compilers"}]}
                """)
            let source = scratch.path("source.sqlite")
            let imported = run(
                ["import", input, "--output", source, "--index", "people.email=unique", "--relation", "posts.author=people:cascade", "--quiet"])
            try #require(imported.status == 0, "\(imported)")
            let hostile = try HostileSnapshots.make(from: source, in: scratch.url.path)
            let runs = hostile.enumerated().filter { $0.offset % 4 == shard }.map(\.element).flatMap { sample in
                [
                    ["verify", sample.path], ["inspect", sample.path, "--json"], ["query", sample.path, "people", "--count"],
                    ["export", sample.path], ["diff", source, sample.path],
                ].map { (label: "\(sample.name): \($0[0])", arguments: $0) }
            }
            for run in runs {
                let (result, timedOut) = try runBounded(run.arguments, limit: .seconds(20))
                #expect(!timedOut, "\(run.label) ran past 20 s")
                #expect(result.status == 0 || result.status == 1, "\(run.label): \(result)")
                for marker in crashMarkers { #expect(!result.stderr.contains(marker), "\(run.label): \(result)") }
                if result.status != 0 {
                    #expect(result.errorLines.count == 1, "\(run.label): \(result)")
                    #expect(result.stderr.count < 1_000, "\(run.label): a long error: \(result.stderr.prefix(300))")
                }
            }
        }
    }
}
