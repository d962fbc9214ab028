import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import SnapshotFixtures
import Testing

@Suite("entity-store fixture records a migration-test fixture", .threadsOfItsOwn)
struct FixtureCommandTests {
    @Test("a compact, verified copy that keeps the format and app schema version; the snapshot is only read")
    func records() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let before = try scratch.read("library.sqlite")
            let fixture = scratch.path("library-v0.sqlite")
            let result = run(["fixture", snapshot, fixture])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.hasPrefix("wrote fixture \(fixture): format version \(Snapshot.formatVersion), app schema version 0, "), "\(result)")
            #expect(try scratch.read("library.sqlite") == before)
            #expect(Snapshot.verify(at: fixture).isSound)
            #expect(!FileManager.default.fileExists(atPath: fixture + "-journal"))
            let original = try EntityStore.restoringDynamic(from: snapshot).state
            let copy = try EntityStore.restoringDynamic(from: fixture).state
            #expect(original.tableNames == copy.tableNames)
            for table in original.tableNames { #expect(original.count(ofTable: table) == copy.count(ofTable: table)) }

            let again = run(["fixture", snapshot, fixture])
            #expect(again.status == 1 && again.stderr.contains("the file exists (pass --force to replace it)"), "\(again)")
            #expect(run(["fixture", snapshot, fixture, "--force"]).status == 0)
        }
    }

    @Test("a format 2 snapshot stays a format 2 fixture")
    func keepsOlderFormat() throws {
        try withScratch { scratch in
            let old = scratch.path("old.sqlite")
            try OldFormatSnapshots.formatTwo(at: old)
            let fixture = scratch.path("fixture.sqlite")
            let result = run(["fixture", old, fixture])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("format version 2, app schema version 0, 10 rows (flights 7, carriers 3)"), "\(result)")
            #expect(try Snapshot.metadata(at: fixture).formatVersion == 2)
        }
    }

    @Test("a missing snapshot fails with one line and leaves no fixture")
    func missing() throws {
        try withScratch { scratch in
            let fixture = scratch.path("fixture.sqlite")
            let result = run(["fixture", scratch.path("missing.sqlite"), fixture])
            #expect(result.status == 1, "\(result)")
            #expect(!FileManager.default.fileExists(atPath: fixture))
        }
    }
}
