import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// SQLite's extended codes for the errors injected.
private let ioErrorWrite: Int32 = 778  // SQLITE_IOERR_WRITE
private let ioErrorRead: Int32 = 266   // SQLITE_IOERR_READ
private let diskFull: Int32 = 13       // SQLITE_FULL

/// An I/O error or a full disk at each step of a write: the write reports it, the file
/// keeps the old state (or, for a failure after the commit point, the new one), and the
/// same objects complete the write once the fault is gone.
extension FaultInjectionTests {
@Suite("An I/O error at every step of a write")
struct IOErrorTests {
    @Test("a full snapshot", arguments: [ioErrorWrite, diskFull])
    func fullSnapshot(error: Int32) throws {
        try strikeAtEveryOperation(mode: .error(error), prepare: { path in
            let (store, old) = try libraryStores()
            try store.snapshot(to: path)
            try changeLibrary(store)
            let new = store.state
            return FaultScenario(old: old, new: new, run: { try store.snapshot(to: path) }, retry: { try store.snapshot(to: path) })
        })
    }

    @Test("an incremental save", arguments: [ioErrorWrite, diskFull])
    func incrementalSave(error: Int32) throws {
        try strikeAtEveryOperation(mode: .error(error), prepare: { path in
            let (store, old) = try libraryStores()
            let file = try SnapshotFile(store: store, path: path)
            try changeLibrary(store)
            let new = store.state
            return FaultScenario(old: old, new: new, run: { try file.save() }, retry: {
                try file.save()
                try file.close()
            })
        })
    }

    @Test("a read error during a save")
    func readErrorDuringASave() throws {
        try strikeAtEveryOperation(mode: .error(ioErrorRead), counting: .read, prepare: { path in
            let (store, old) = try libraryStores()
            let file = try SnapshotFile(store: store, path: path)
            try changeLibrary(store)
            let new = store.state
            return FaultScenario(old: old, new: new, run: { try file.save() }, retry: { try file.save() })
        })
    }

    @Test("closing a snapshot file")
    func closing() throws {
        try strikeAtEveryOperation(mode: .error(ioErrorWrite), counting: .all, prepare: { path in
            let (store, _) = try libraryStores()
            let file = try SnapshotFile(store: store, path: path)
            try changeLibrary(store)
            try file.save()
            let saved = store.state
            return FaultScenario(old: saved, new: saved, run: { try file.close() }, retry: { try file.close() })
        })
    }
}
}
