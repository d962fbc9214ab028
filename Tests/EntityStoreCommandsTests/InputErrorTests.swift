import EntityStoreTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Errors about inputs: specific, one short printable line", .threadsOfItsOwn)
struct InputErrorTests {
    @Test func aFIFOInTheInputDirectoryIsNotAFile() throws {
        try withScratch { scratch in
            try scratch.write("in/a.json", #"[{"id": 1}]"#)
            #expect(mkfifo(scratch.path("in/b.json"), 0o644) == 0)
            let result = run(["import", scratch.path("in"), "--output", scratch.path("out.sqlite")], timeout: .seconds(60))
            expectFailure(result, mentioning: ["in/b.json", "not a regular file", "FIFO"])
            // Given as the input itself too.
            let direct = run(["import", scratch.path("in/b.json"), "--output", scratch.path("out.sqlite")], timeout: .seconds(60))
            expectFailure(direct, mentioning: ["in/b.json", "not a regular file"])
            expectNoLeftovers(scratch, expected: ["in"])
        }
    }

    @Test func aSymbolicLinkLoopIsNamed() throws {
        try withScratch { scratch in
            try scratch.write("in/a.json", #"[{"id": 1}]"#)
            try FileManager.default.createSymbolicLink(atPath: scratch.path("in/loop.json"), withDestinationPath: "loop.json")
            try FileManager.default.createSymbolicLink(atPath: scratch.path("loop"), withDestinationPath: "loop")
            let inDirectory = run(["import", scratch.path("in"), "--output", scratch.path("out.sqlite")], timeout: .seconds(60))
            expectFailure(inDirectory, mentioning: ["in/loop.json", "too many levels of symbolic links"])
            #expect(!inDirectory.stderr.contains("NSCocoaErrorDomain"))
            let itself = run(["import", scratch.path("loop"), "--output", scratch.path("out.sqlite")], timeout: .seconds(60))
            expectFailure(itself, mentioning: [scratch.path("loop"), "too many levels of symbolic links"])
            expectNoLeftovers(scratch, expected: ["in", "loop"])
        }
    }

    /// A record of 10,000 fields: SQLite's column limit, and an id that is such an object.
    @Test func aRecordOfTenThousandFieldsGivesAShortLine() throws {
        try withScratch { scratch in
            let fields = (0..<10_000).map { "\"field\($0)\": \($0)" }.joined(separator: ", ")
            let wide = try scratch.write("wide.json", "{\"wide\": [{\"id\": 1, \(fields)}]}")
            let tooWide = run(["import", wide, "--output", scratch.path("out.sqlite")])
            expectFailure(tooWide, mentioning: ["wide.json", "'wide'", "10,000 fields", "... and 9,990 more fields"])
            #expect(tooWide.stderr.count < 600, "\(tooWide.stderr.count) characters")

            let objectID = try scratch.write("id.json", "{\"t\": [{\"id\": {\(fields)}}]}")
            let badID = run(["import", objectID, "--output", scratch.path("out.sqlite")])
            expectFailure(badID, mentioning: ["id.json", "record 1", "\"id\"", "... and 9,990 more fields"])
            #expect(badID.stderr.count < 600, "\(badID.stderr.count) characters")

            let longID = String(repeating: "x", count: 100_000)
            let duplicate = try scratch.write("dup.json", "{\"t\": [{\"id\": \"\(longID)\"}, {\"id\": \"\(longID)\"}]}")
            let result = run(["import", duplicate, "--output", scratch.path("out.sqlite")])
            expectFailure(result, mentioning: ["dup.json", "record 2", "duplicate id", "more characters"])
            #expect(result.stderr.count < 600, "\(result.stderr.count) characters")
            expectNoLeftovers(scratch, expected: ["dup.json", "id.json", "wide.json"])
        }
    }

    @Test(arguments: [
        (#"{"t\u0000x": [{"id": 1}]}"#, #"'t\u{0}x'"#),
        (#"{"t": [{"id": 1, "a\u0000b": 2}]}"#, #"'a\u{0}b'"#),
        (#"{"t\u001b[31m": [{"id": 1, "x\u0007": 2}, {"id": 1}]}"#, #"'t\u{1B}[31m'"#),
        (#"{"t": [{"id": 1}, {"id": "line\nbreak"}]}"#, "one kind"),
    ])
    func controlCharactersInNamesAreEscaped(_ input: String, _ mention: String) throws {
        try withScratch { scratch in
            let file = try scratch.write("in.json", input)
            let result = run(["import", file, "--output", scratch.path("out.sqlite")])
            expectFailure(result, mentioning: ["in.json", mention])
            let controls = result.stderr.unicodeScalars.filter { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }
            #expect(controls.isEmpty, "raw control characters on stderr: \(result.stderr.debugDescription)")
            expectNoLeftovers(scratch, expected: ["in.json"])
        }
    }

    @Test func namesAreEscapedInWhatCommandsPrint() throws {
        try withScratch { scratch in
            let file = try scratch.write("in.json", #"{"t\u001b[2J": [{"id": 1, "f\u001b": 2}]}"#)
            let snapshot = scratch.path("out.sqlite")
            let imported = run(["import", file, "--output", snapshot])
            #expect(imported.status == 0, "\(imported)")
            #expect(imported.stdout.contains(#"t\u{1B}[2J 1"#), "\(imported)")
            let inspected = run(["inspect", snapshot])
            #expect(inspected.status == 0, "\(inspected)")
            #expect(inspected.stdout.contains(#"table t\u{1B}[2J"#) && inspected.stdout.contains(#"column f\u{1B}"#), "\(inspected)")
            for result in [imported, inspected] {
                #expect(!result.stdout.unicodeScalars.contains("\u{1B}"), "\(result.stdout.debugDescription)")
            }
        }
    }
}
