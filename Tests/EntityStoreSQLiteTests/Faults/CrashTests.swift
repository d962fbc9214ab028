import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// A process killed at each step of every kind of write: afterwards every reader sees the
/// old complete state or the new one, and the file can be written again.
///
extension FaultInjectionTests {
@Suite("Killed at every step of a write")
struct CrashTests {
    @Test("a full snapshot over a file at rest")
    func fullSnapshot() throws {
        try strikeAtEveryOperation(prepare: { path in
            let (store, old) = try libraryStores()
            try store.snapshot(to: path)
            try changeLibrary(store)
            let new = store.state
            return FaultScenario(old: old, new: new) { try store.snapshot(to: path) }
        }, afterFault: { path, states in
            // The next run of the same write completes over whatever was left.
            let store = EntityStore(schema: states.new.schema)
            try store.replaceAll(with: states.new)
            try store.snapshot(to: path)
            #expect(readWithEveryReader(path, old: states.old, new: states.new) == .new)
        })
    }

    @Test("a full snapshot over a file whose saver was killed with saves still in its log")
    func fullSnapshotOverAnUncheckpointedLog() throws {
        try strikeAtEveryOperation(prepare: { path in
            let (store, _) = try libraryStores()
            try leaveSavesInTheLog(store, path: path)
            let old = store.state
            try changeLibrary(store)
            let new = store.state
            return FaultScenario(old: old, new: new) { try store.snapshot(to: path) }
        })
    }

    @Test("an incremental save")
    func incrementalSave() throws {
        try strikeAtEveryOperation(prepare: { path in
            let (store, old) = try libraryStores()
            let file = try SnapshotFile(store: store, path: path)
            try changeLibrary(store)
            let new = store.state
            return FaultScenario(old: old, new: new) { try file.save() }
        }, afterFault: { path, states in
            try restartAndSave(path, states: states)
        })
    }

    @Test("opening a snapshot file for saves (the switch to the write-ahead log)")
    func openingForSaves() throws {
        try strikeAtEveryOperation(prepare: { path in
            let (store, old) = try libraryStores()
            try store.snapshot(to: path)
            return FaultScenario(old: old, new: old) {
                _ = try SnapshotFile(store: store, path: path, writeInitialSnapshot: false)
            }
        })
    }

    @Test("closing a snapshot file (the checkpoint and the switch back)")
    func closing() throws {
        try strikeAtEveryOperation(prepare: { path in
            let (store, _) = try libraryStores()
            let file = try SnapshotFile(store: store, path: path)
            try changeLibrary(store)
            try file.save()
            let saved = store.state
            return FaultScenario(old: saved, new: saved) { try file.close() }
        })
    }

    @Test("a snapshot file's first full snapshot over an older file")
    func initialSnapshot() throws {
        try strikeAtEveryOperation(prepare: { path in
            let (store, old) = try libraryStores()
            try store.snapshot(to: path)
            try changeLibrary(store)
            let new = store.state
            return FaultScenario(old: old, new: new) { _ = try SnapshotFile(store: store, path: path) }
        })
    }
}

}

/// Writes `store` to `path` through a snapshot file, saves twice, and stops its "process"
/// before the log is folded in: the file then needs its `-wal` to read as the last save.
func leaveSavesInTheLog(_ store: EntityStore, path: String) throws {
    var file: SnapshotFile? = try SnapshotFile(store: store, path: path)
    try store.write { tx in _ = try tx[books].update("b3") { $0.title = "saved once" } }
    try file?.save()
    try store.write { tx in _ = try tx[authors].update(1) { $0.name = "saved twice" } }
    try file?.save()
    // Killed before its first operation: closing does nothing on disk.
    try FaultInjection.arm(directory: FileSystemPath.directory(of: path), mode: .kill, at: 0)
    file = nil
    FaultInjection.disarm(directory: FileSystemPath.directory(of: path))
    #expect(FileManager.default.fileExists(atPath: path + "-wal"))
}

/// Opens the file left by a fault as an app restarting would (restore, then follow the
/// file), saves one more change, and checks the file holds it.
func restartAndSave(_ path: String, states: FaultScenario.States) throws {
    let store = EntityStore(schema: states.old.schema)
    try store.restore(from: path)
    let file = try SnapshotFile(store: store, path: path, writeInitialSnapshot: false)
    try store.write { tx in _ = try tx[authors].update(2) { $0.name = "after the restart" } }
    try file.save()
    try file.close()
    let reread = try EntityState.readSnapshot(from: path, schema: states.old.schema)
    #expect(sameLibraryRows(reread, store.state), "the save after a restart did not reach the file")
}

/// Path helpers for tests.
enum FileSystemPath {
    static func directory(of path: String) -> String { (path as NSString).deletingLastPathComponent }
}
