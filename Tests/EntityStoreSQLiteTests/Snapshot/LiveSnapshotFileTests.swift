import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// Restores the file at `path` into a fresh store of the library schema.
private func restored(from path: String) throws -> EntityStore {
    let store = EntityStore(schema: try librarySchema())
    try store.restore(from: path)
    return store
}

private func journalMode(_ path: String) throws -> SQLiteValue? {
    try sqlValue(path, "PRAGMA journal_mode")
}

/// Another snapshot at `other.sqlite` in `directory`, switched to WAL mode with committed
/// frames never checkpointed (every book retitled "from the stale log"). Returns its path
/// and its connection, to be closed once the log has been copied: closing folds the log in.
private func snapshotWithStaleLog(in directory: URL) throws -> (path: String, connection: SQLiteConnection) {
    let otherPath = directory.appendingPathComponent("other.sqlite").path
    try populatedLibraryStore(authorCount: 2, bookCount: 30).snapshot(to: otherPath)
    let connection = try SQLiteConnection(path: otherPath, mode: .readWrite)
    try connection.setPragma("journal_mode", "WAL")
    try connection.setPragma("wal_autocheckpoint", "0")
    try connection.execute("UPDATE books SET title = 'from the stale log'")
    return (otherPath, connection)
}

/// Runs `body` with a populated library store and a `SnapshotFile` for it at `path`, in a
/// temporary directory.
private func withLiveFile(_ body: (_ path: String, _ store: EntityStore, _ file: SnapshotFile) throws -> Void) throws {
    try withTemporaryDirectory { directory in
        let path = directory.appendingPathComponent("live.sqlite").path
        let store = try populatedLibraryStore()
        try body(path, store, try SnapshotFile(store: store, path: path))
    }
}

/// The write-ahead-log life of a `SnapshotFile`, and saves that rewrite only changed columns.
@Suite("Snapshot files between saves")
struct LiveSnapshotFileTests {
    @Test func savesGoThroughTheWriteAheadLogAndCloseLeavesOneFile() throws {
        try withLiveFile { path, store, file in
            try store.write { tx in _ = try tx[books].update("b1") { $0.title = "Renamed" } }
            try file.save()
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(try journalMode(path) == .text("wal"))
            // Any reader sees the saved row while the log holds it.
            #expect(try restored(from: path).state[books].find("b1")?.title == "Renamed")

            try file.close()
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(try journalMode(path) == .text("delete"))
            #expect(sameLibraryRows(try restored(from: path).state, store.state))

            // A save after close reopens the file.
            try store.write { tx in _ = try tx[books].update("b2") { $0.year = 2024 } }
            try file.save()
            #expect(try restored(from: path).state[books].find("b2")?.year == 2024)
        }
    }

    @Test func releasingTheFileFoldsTheLogIn() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try populatedLibraryStore()
            do {
                let file = try SnapshotFile(store: store, path: path)
                try store.write { tx in try tx[authors].insert(Author(id: 50, name: "New")) }
                try file.save()
            }
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(try restored(from: path).state[authors].find(50)?.name == "New")
        }
    }

    @Test func aStaleLogBesideARollbackFileIsDiscardedNotReplayed() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("target.sqlite").path
            let store = try populatedLibraryStore()
            try store.snapshot(to: path)

            // A log left by another file, copied beside the target while still open.
            let (otherPath, connection) = try snapshotWithStaleLog(in: directory)
            try FileManager.default.copyItem(atPath: otherPath + "-wal", toPath: path + "-wal")
            try connection.close()

            let file = try SnapshotFile(store: store, path: path, writeInitialSnapshot: false)
            try store.write { tx in _ = try tx[books].update("b3") { $0.title = "Saved" } }
            try file.save()
            try file.close()
            let back = try restored(from: path)
            #expect(sameLibraryRows(back.state, store.state))
            #expect(!back.state[books].contains { $0.title == "from the stale log" })
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }

    @Test func aFullSnapshotOverAFileWithALeftoverLogIsNotCorruptedByIt() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("target.sqlite").path
            let (otherPath, connection) = try snapshotWithStaleLog(in: directory)
            // As a saving process that stopped leaves its file: the log beside it.
            try FileManager.default.copyItem(atPath: otherPath, toPath: path)
            try FileManager.default.copyItem(atPath: otherPath + "-wal", toPath: path + "-wal")
            try connection.close()

            let store = try populatedLibraryStore()
            try store.snapshot(to: path)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(sameLibraryRows(try restored(from: path).state, store.state))
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }

    @Test func aFileReplacedUnderTheSamePathIsFollowed() throws {
        try withLiveFile { path, store, file in
            try store.write { tx in _ = try tx[books].update("b1") { $0.year = 1 } }
            // Another full snapshot renamed over the path, behind the file's back (a plain
            // snapshot to the path is refused while the file is open).
            let other = path + ".other"
            try store.snapshot(to: other)
            #expect(rename(other, path) == 0)
            #expect(throws: SnapshotError.fileInUse(path: path)) { try store.snapshot(to: path) }
            try store.write { tx in _ = try tx[books].update("b2") { $0.year = 2 } }
            try file.save()
            let back = try restored(from: path)
            #expect(back.state[books].find("b1")?.year == 1)
            #expect(back.state[books].find("b2")?.year == 2)
            #expect(sameLibraryRows(back.state, store.state))
        }
    }

    @Test func aSaveRewritesOnlyTheColumnsThatChanged() throws {
        try withLiveFile { path, store, file in
            // A value written behind the library's back in a column the update leaves alone
            // survives: the save sets only the changed column.
            try sqlExecute(path, "UPDATE books SET title = 'outside' WHERE id = 'b4'")
            try store.write { tx in _ = try tx[books].update("b4") { $0.year = 3000 } }
            try file.save()
            let row = try sqlRows(path, "SELECT title, year FROM books WHERE id = 'b4'")
            #expect(row == [[.text("outside"), .integer(3000)]])
        }
    }

    @Test func negativeZeroIsAChangeWorthSaving() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try populatedLibraryStore()
            try store.write { tx in _ = try tx[samples].update(1) { $0.ratio = 0.0 } }
            let file = try SnapshotFile(store: store, path: path)
            // -0.0 == 0.0, so only the name makes the row changed; the column diff must still
            // see the ratio's sign change.
            try store.write { tx in _ = try tx[samples].update(1) { $0.ratio = -0.0; $0.name = "signed" } }
            try file.save()
            let ratio = try #require(try restored(from: path).state[samples].find(1)?.ratio)
            #expect(ratio == 0 && ratio.sign == .minus)
        }
    }

    @Test func anUpdatedRowMissingFromTheFileIsWrittenWhole() throws {
        try withLiveFile { path, store, file in
            try sqlExecute(path, "DELETE FROM books WHERE id = 'b5'")
            try store.write { tx in _ = try tx[books].update("b5") { $0.title = "Back" } }
            try file.save()
            let back = try restored(from: path)
            #expect(back.state[books].find("b5") == store.state[books].find("b5"))
        }
    }
}
