import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

@Suite("Compact copies of a snapshot file")
struct CompactCopyTests {
    @Test("a destination whose name holds quotes and SQL is a plain path: the copy restores equal and verifies")
    func hostileDestinationName() throws {
        let (directory, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try populatedLibraryStore()
        try store.snapshot(to: path)
        let destination = directory.appendingPathComponent("it's'; DROP TABLE books; --.sqlite").path
        try Snapshot.compactCopy(of: path, to: destination)
        #expect(Snapshot.verify(at: destination).isSound)
        let copy = EntityStore(schema: try librarySchema())
        try copy.restore(from: destination)
        #expect(sameLibraryRows(copy.state, store.state))
        #expect(!FileManager.default.fileExists(atPath: destination + "-wal"))
    }

    @Test("an existing destination is refused and left as it was")
    func existingDestination() throws {
        let (directory, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        try populatedLibraryStore().snapshot(to: path)
        let destination = directory.appendingPathComponent("taken.sqlite").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: destination))
        #expect(throws: SnapshotError.self) { try Snapshot.compactCopy(of: path, to: destination) }
        #expect(try String(contentsOfFile: destination, encoding: .utf8) == "keep me")
    }
}
