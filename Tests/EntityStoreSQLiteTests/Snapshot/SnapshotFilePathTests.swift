import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

/// Incremental saves whose bookkeeping could be fooled: a state set back through the raw
/// core, two snapshot files on one path, a plain snapshot over a kept path.
@Suite("Snapshot files: revisions, replaced files and kept paths", .threadsOfItsOwn)
struct SnapshotFilePathTests {
    @Test("a state set back through the core, then written, is saved (its revision is not reused)")
    func undoThenWriteReusesARevision() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try populatedLibraryStore()
            let earlier = store.state
            try store.write { tx in _ = try tx[books].update("b1") { $0.title = "second" } }
            let file = try SnapshotFile(store: store, path: path)
            // An undo: the core takes back an earlier state (revision goes back by one).
            try store.core.commit("undo") { (state: inout EntityState) in state = earlier }
            // A new write on top of it takes the revision the file already holds.
            try store.write { tx in _ = try tx[books].update("b2") { $0.title = "after undo" } }
            let summary = try file.save()
            #expect(summary.revision == store.revision)
            let reread = try EntityState.readSnapshot(from: path, schema: store.schema)
            let holdsTheSavedState = sameLibraryRows(reread, store.state)
            #expect(holdsTheSavedState, "the save reported revision \(summary.revision) but the file holds another state")
        }
    }

    @Test("a snapshot file replaced by a new one on the same path: the old one's release keeps the new one's log")
    func replacingASnapshotFileKeepsTheNewLog() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try populatedLibraryStore()
            // The common pattern: the property gets a new file object; the old one is
            // released once the new one exists.
            var file = try SnapshotFile(store: store, path: path)
            file = try SnapshotFile(store: store, path: path)
            try store.write { tx in _ = try tx[books].update("b1") { $0.title = "saved by the new file" } }
            try file.save()
            #expect(FileManager.default.fileExists(atPath: path + "-wal"), "the log of the completed save is gone from the directory")
            // What another process sees now.
            let seen = try externalSQLite(path, "select title from books where id = 'b1'")
            #expect(seen == "saved by the new file", "another process reads '\(seen)' after the save returned")
            try file.close()
        }
    }
}

/// Runs `sql` with the sqlite3 shell, in another process, and returns its output trimmed.
func externalSQLite(_ path: String, _ sql: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path, sql]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

extension SnapshotFilePathTests {
    @Test("a snapshot to the path of an open snapshot file is refused, and the file keeps its saves")
    func snapshotOverAnOpenSnapshotFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try populatedLibraryStore()
            let file = try SnapshotFile(store: store, path: path)
            try store.write { tx in _ = try tx[books].update("b1") { $0.title = "saved" } }
            try file.save()
            // A snapshot of another state (another store's, or this one's taken earlier)
            // would replace the completed save.
            let other = try populatedLibraryStore()
            #expect(throws: SnapshotError.fileInUse(path: path)) { try other.snapshot(to: path) }
            let spelledOtherwise = directory.appendingPathComponent("./sub/../live.sqlite").path
            try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("sub").path, withIntermediateDirectories: true)
            #expect(throws: SnapshotError.self) { try other.state.writeSnapshot(to: spelledOtherwise) }
            #expect(try externalSQLite(path, "select title from books where id = 'b1'") == "saved")
            try file.close()
            // Closed, it no longer keeps the path once released.
        }
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try populatedLibraryStore()
            do { _ = try SnapshotFile(store: store, path: path) }
            try store.snapshot(to: path)
        }
    }
}

extension FaultInjectionTests {
    @Suite("Kills after a snapshot file was replaced")
    struct ReplacedSnapshotFileKillTests {
        @Test("killed after a save, with an older snapshot file for the same path released earlier: the save survives")
        func killAfterReplacingASnapshotFile() throws {
            try withTemporaryDirectory { url in
                let directory = (url.path as NSString).resolvingSymlinksInPath
                let path = directory + "/live.sqlite"
                try FaultInjection.install()
                let store = try populatedLibraryStore()
                let first = try SnapshotFile(store: store, path: path)
                var second: SnapshotFile? = try SnapshotFile(store: store, path: path)
                try first.close()
                try store.write { tx in _ = try tx[books].update("b1") { $0.title = "saved before the kill" } }
                let summary = try second?.save()
                // The process is killed: nothing more reaches the disk.
                try FaultInjection.arm(directory: directory, mode: .kill, at: 0)
                second = nil
                FaultInjection.disarm(directory: directory)
                let reread = try EntityState.readSnapshot(from: path, schema: store.schema)
                let survived = sameLibraryRows(reread, store.state)
                #expect(survived, "save of revision \(summary?.revision ?? 0) returned but is lost after the kill")
            }
        }
    }
}
