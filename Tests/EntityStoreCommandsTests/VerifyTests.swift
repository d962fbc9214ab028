import EntityStoreTestSupport
import Foundation
import Testing

@Suite("verify: exit 0 with OK, exit 1 with the reason", .threadsOfItsOwn)
struct VerifyTests {
    @Test func aSoundSnapshot() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let result = run(["verify", snapshot])
            #expect(result.status == 0, "\(result)")
            #expect(result.outputLines.count == 1)
            #expect(result.outputLines.first?.hasPrefix("OK") == true, "\(result)")
            #expect(result.outputLines.first?.contains(snapshot) == true)
            #expect(result.stderr.isEmpty)
        }
    }

    @Test func aDamagedSnapshot() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            var bytes = try scratch.read("library.sqlite")
            // Overwrite everything after the first page (the schema page) with junk.
            let start = min(4_096, bytes.count / 2)
            for offset in start..<bytes.count { bytes[offset] = UInt8(truncatingIfNeeded: offset &* 31) }
            try scratch.write("damaged.sqlite", bytes)
            let result = run(["verify", scratch.path("damaged.sqlite")])
            expectFailure(result, mentioning: ["damaged.sqlite"])
            #expect(result.stdout.isEmpty)
            #expect(run(["verify", snapshot]).status == 0, "the original is still sound")
        }
    }

    @Test func aSnapshotWhoseMetadataDisagreesWithItsRows() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            // Another program deletes a row behind the metadata's back.
            let sqlite = run(["-batch", snapshot, "delete from books where id = 11;"], executable: sqlite3)
            try #require(sqlite.status == 0, "\(sqlite)")
            let result = run(["verify", snapshot])
            expectFailure(result, mentioning: [snapshot, "books"])
        }
    }

    @Test func aSQLiteFileThatIsNoSnapshot() throws {
        try withScratch { scratch in
            let plain = scratch.path("plain.sqlite")
            let sqlite = run(["-batch", plain, "create table t (id integer primary key); insert into t values (1);"], executable: sqlite3)
            try #require(sqlite.status == 0, "\(sqlite)")
            expectFailure(run(["verify", plain]), mentioning: [plain])
            expectFailure(run(["export", plain]), mentioning: [plain])
        }
    }
}
