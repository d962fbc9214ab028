import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

@Suite("query's output: failures to write, and records streamed from odd files", .threadsOfItsOwn)
struct StandardOutputTests {
    /// Runs `entity-store ARGUMENTS` with standard output redirected as `redirection` says.
    private func redirected(_ arguments: [String], _ redirection: String) -> RunResult {
        run(
            ["-c", "\"$@\" \(redirection)", "sh", Tool.entityStore.path] + arguments, executable: URL(fileURLWithPath: "/bin/sh"))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full"))
    func anOutputThatCannotBeWrittenIsOneLine() throws {
        try withScratch { scratch in
            let library = try importLibrary(scratch)
            for arguments in [["books"], ["books", "--format", "table"], ["books", "--count"], ["books", "--sort", "title", "--limit", "2"]] {
                let full = redirected(["query", library] + arguments, "> /dev/full")
                expectFailure(full, mentioning: ["cannot write to standard output", "no space left on device"])
                let closed = redirected(["query", library] + arguments, ">&-")
                expectFailure(closed, mentioning: ["cannot write to standard output", "bad file descriptor"])
            }
        }
    }

    /// Two spellings of one id (`"é"` and `"e\u{301}"`), which a restore refuses: records
    /// streamed in id order stop there with one line.
    @Test func twoSpellingsOfOneIDStopTheStream() throws {
        try withScratch { scratch in
            let input = try scratch.write("tags.json", #"{"tags": [{"id": "a"}, {"id": "é"}, {"id": "z"}]}"#)
            let snapshot = scratch.path("tags.sqlite")
            #expect(run(["import", input, "--output", snapshot]).status == 0)
            let connection = try SQLiteConnection(path: snapshot, mode: .readWrite)
            try connection.execute("INSERT INTO tags (id) VALUES ('e\u{301}'); UPDATE entitystore_tables SET row_count = 4 WHERE name = 'tags';")
            try connection.close()
            let streamed = run(["query", snapshot, "tags"])
            expectFailure(streamed, mentioning: ["tags", "\"é\"", "twice"])
            // In Swift's order "z" comes before "é" (U+00E9), as it does before "e\u{301}".
            #expect(streamed.outputLines.prefix(2) == ["{\"id\":\"a\"}", "{\"id\":\"z\"}"], "the records before it are printed: \(streamed)")
            #expect(streamed.outputLines.count == 3)
            expectFailure(run(["export", snapshot]), mentioning: ["tags", "\"é\""])
        }
    }
}
