import EntityStoreCommands
import EntityStoreTestSupport
import Foundation
import Synchronization
import Testing
@testable import entity_store

/// A command run inside a program (`runCapturingOutput`, which most tests here use instead
/// of starting the tool) must be the built tool's run: the same exit status, standard
/// output and standard error, byte for byte, and runs at once keep their outputs apart.
@Suite("Commands run inside a program", .threadsOfItsOwn)
struct InProcessRunTests {
    /// Starts the built tool, whatever `run` would choose.
    private func process(_ arguments: [String]) throws -> RunResult {
        try start(Tool.entityStore, arguments).finish()
    }

    @Test("each kind of run gives the built tool's status, output and errors exactly")
    func sameAsTheBuiltTool() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let broken = try scratch.write("broken.sqlite", Data("not a snapshot".utf8))
            let cases: [[String]] = [
                ["inspect", snapshot],
                ["inspect", snapshot, "--json"],
                ["verify", snapshot],
                ["verify", broken],
                ["query", snapshot, "books", "--where", "year>1970", "--sort", "year", "--format", "json"],
                ["query", snapshot, "books", "--count"],
                ["query", snapshot, "books", "--where", "nofield~~1"],
                ["export", snapshot],
                ["diff", snapshot, snapshot],
                ["import", scratch.path("missing.json"), "--output", scratch.path("out.sqlite")],
                ["query", snapshot, "books", "--bogus"],
                // A password in an argument is hidden in every message, as the process hides it.
                ["inspect", "password=secret"],
                // Found only from the arguments: in a line, the password would end at its space.
                ["inspect", "password=se cret"],
                ["query", snapshot, "password=secret"],
            ]
            for arguments in cases {
                let inside = Tool.runInProcess(arguments)
                let outside = try process(arguments)
                #expect(inside.status == outside.status, "\(arguments): \(inside) vs \(outside)")
                #expect(inside.stdout == outside.stdout, "\(arguments): \(inside) vs \(outside)")
                #expect(inside.stderr == outside.stderr, "\(arguments): \(inside) vs \(outside)")
                #expect(!inside.stderr.contains("secret") && !inside.stderr.contains("cret"), "\(arguments): \(inside)")
            }
        }
    }

    @Test("runs at once on several threads each capture their own output")
    func concurrentRunsKeepTheirOutputs() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let years = Array(1960...1975)
            let results = Mutex<[Int: RunResult]>([:])
            DispatchQueue.concurrentPerform(iterations: years.count) { index in
                let year = years[index]
                let result = Tool.runInProcess(["query", snapshot, "books", "--where", "year>=\(year)", "--count"])
                results.withLock { $0[year] = result }
            }
            for year in years {
                let expected = try process(["query", snapshot, "books", "--where", "year>=\(year)", "--count"])
                let got = results.withLock { $0[year] }
                #expect(got?.status == expected.status && got?.stdout == expected.stdout && got?.stderr == expected.stderr,
                        "year \(year): \(String(describing: got)) vs \(expected)")
            }
        }
    }
}
