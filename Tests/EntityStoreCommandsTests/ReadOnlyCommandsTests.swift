import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import SnapshotFixtures
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The bytes and the modification time of a file, to tell whether anything wrote to it.
private struct FileState: Equatable {
    let bytes: Data
    let seconds: Int
    let nanoseconds: Int

    init(_ path: String) throws {
        bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var info = stat()
        guard stat(path, &info) == 0 else { throw CocoaError(.fileNoSuchFile) }
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
    }
}

@Suite("Read-only commands leave an older snapshot as it is", .threadsOfItsOwn)
struct ReadOnlyCommandsTests {
    /// Every read-only command on a format 1 or 2 file: the file keeps its bytes and its
    /// modification time, nothing is left in its directory or the temporary directory,
    /// and each answer is the one the same command gives on a copy upgraded by `migrate`.
    @Test(arguments: [1, 2])
    func olderFormatsAreReadWithoutWriting(format: Int) throws {
        try withScratch { scratch in
            let old = scratch.path("old.sqlite")
            if format == 1 { try OldFormatSnapshots.formatOne(at: old) } else { try OldFormatSnapshots.formatTwo(at: old) }
            try backdate(old)
            let before = try FileState(old)
            let upgraded = try scratch.write("upgraded.sqlite", try scratch.read("old.sqlite"))
            #expect(run(["migrate", upgraded]).status == 0)
            let temporary = scratch.path("tmp")
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
            let environment = ["TMPDIR": temporary, "SQLITE_TMPDIR": temporary]

            let table = format == 1 ? "events" : "flights"
            let text = format == 1 ? "name" : "tailnum"
            var questions: [[String]] = [
                ["query", "%", table], ["query", "%", table, "--format", "table"], ["query", "%", table, "--format", "csv"],
                ["query", "%", table, "--sort", text, "--limit", "3"], ["query", "%", table, "--sort", text, "--desc", "--format", "json"],
                ["query", "%", table, "--where", "id>1", "--limit", "2", "--offset", "1"], ["query", "%", table, "--id", "3"],
                ["query", "%", table, "--count"], ["query", "%", table, "--group-by", text, "--count"],
                ["export", "%"], ["export", "%", "--table", table],
            ]
            if format == 2 {
                questions += [
                    ["query", "%", "flights", "--where", "dep_delay>60", "--count"], ["query", "%", "flights", "--where", "carrier=UA"],
                    ["query", "%", "flights", "--join", "carrier", "--fields", "id,carrier,carrier.name"],
                    ["query", "%", "carriers", "--id", "e\u{301}"], ["query", "%", "carriers", "--sort", "id", "--desc"],
                ]
            }
            for question in questions {
                let onOld = run(question.map { $0 == "%" ? old : $0 }, environment: environment)
                let onUpgraded = run(question.map { $0 == "%" ? upgraded : $0 })
                #expect(onOld.status == 0, "\(question): \(onOld)")
                #expect(onOld.stdout == onUpgraded.stdout, "\(question)")
                #expect(onOld.stderr == onUpgraded.stderr, "\(question)")
            }
            if format == 2 {
                #expect(run(["query", old, "flights", "--where", "dep_delay>60", "--count"]).stdout == "2\n")
                #expect(run(["query", old, "carriers", "--id", "e\u{301}", "--fields", "name"]).stdout == "{\"name\":\"Accented\"}\n")
                let sorted = run(["query", old, "flights", "--sort", "tailnum", "--fields", "id", "--limit", "5"])
                // "E", "N14228", "f", then "é" and its decomposed spelling tied, in id order.
                #expect(sorted.stdout == "{\"id\":6}\n{\"id\":1}\n{\"id\":5}\n{\"id\":2}\n{\"id\":3}\n", "\(sorted)")
            }
            for command in [
                ["inspect", old], ["inspect", old, "--json"], ["verify", old], ["diff", old, upgraded], ["diff", upgraded, old, "--json"],
                ["export", old, "--format", "ndjson", "--output", scratch.path("ndjson")],
                ["export", old, "--format", "csv", "--output", scratch.path("csv")], ["export", old, "--output", scratch.path("all.json")],
            ] {
                let result = run(command, environment: environment)
                #expect(result.status == 0, "\(command): \(result)")
            }
            #expect(run(["diff", old, upgraded]).stdout == "no differences\n")
            let shell = run(["shell", old, "--quiet"], stdin: Data("\(table) --count\nquit\n".utf8), environment: environment)
            #expect(shell.status == 0 && shell.stdout == "\(format == 1 ? 4 : 7)\n", "\(shell)")

            #expect(try FileState(old) == before, "the file was written")
            #expect(scratch.contents() == ["all.json", "csv", "ndjson", "old.sqlite", "tmp", "upgraded.sqlite"])
            #expect(scratch.contents("tmp") == [])
            // migrate still upgrades it.
            #expect(run(["migrate", old]).status == 0)
            #expect(try FileState(old) != before)
        }
    }

    /// The private copy of an older file is unlinked as soon as it exists: a query killed
    /// while it reads leaves nothing behind, and the file as it was.
    @Test func aKilledQueryLeavesNoTemporary() throws {
        try withScratch { scratch in
            let old = scratch.path("old.sqlite")
            try OldFormatSnapshots.formatTwo(at: old, extraFlights: 300_000)
            let before = try FileState(old)
            let temporary = scratch.path("tmp")
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: false)
            for arguments in [["query", old, "flights"], ["query", old, "flights", "--sort", "dep_delay"], ["export", old]] {
                let running = try start(Tool.entityStore, arguments, environment: ["TMPDIR": temporary, "SQLITE_TMPDIR": temporary])
                Thread.sleep(forTimeInterval: 0.3)
                #expect(running.process.isRunning, "\(arguments) ended before it could be killed")
                #expect(scratch.contents("tmp") == [], "a temporary is visible while \(arguments) runs")
                kill(running.process.processIdentifier, SIGKILL)
                _ = running.finish()
                #expect(scratch.contents("tmp") == [])
                #expect(scratch.contents() == ["old.sqlite", "tmp"])
                #expect(try FileState(old) == before)
            }
        }
    }
}
