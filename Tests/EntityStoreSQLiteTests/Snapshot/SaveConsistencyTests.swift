import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

/// One saved file, read back right after its save returned.
private struct SavedCheck: Sendable {
    let revision: UInt64
    let restored: EntityState?
    let error: String?
}

@Suite("Incremental saves write one published state", .threadsOfItsOwn)
struct SaveConsistencyTests {
    @Test("a save made by an observer that sees a commit contains that commit")
    func saveFromAnObserver() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try populatedLibraryStore()
            let file = Lock<SnapshotFile?>(nil)
            let failures = Lock<[String]>([])
            // Registered before the file's own bookkeeping, so it is told of each commit first.
            let observation = store.observe { changes in
                guard let snapshotFile = file.withLock({ $0 }) else { return }
                do {
                    let summary = try snapshotFile.save()
                    let restored = try EntityState.readSnapshot(from: path, schema: store.schema)
                    if summary.revision < changes.current.revision || !sameLibraryRows(restored, changes.current) {
                        failures.withLock { $0.append("save after revision \(changes.current.revision) wrote revision \(summary.revision)") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            file.withLock { $0 = try? SnapshotFile(store: store, path: path) }
            try #require(file.withLock { $0 } != nil)
            for round in 1...20 {
                try store.write { tx in _ = try tx[books].update("b\(1 + round % 12)") { $0.year += round } }
            }
            observation.cancel()
            #expect(failures.withLock { $0 } == [])
            #expect(sameLibraryRows(try EntityState.readSnapshot(from: path, schema: store.schema), store.state))
        }
    }

    @Test("saves on several threads while writers commit and a delivery is held back", arguments: [UInt64(1), 2])
    func savesWhileWritersCommit(seed: UInt64) async throws {
        let directory = temporaryPath().directory
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("live.sqlite").path
        let store = try populatedLibraryStore()
        let published = PublishedStates(store)
        // Holds the delivering thread now and then, so that commits of the other writers
        // are published but not yet delivered while saves run.
        let recorder = store.observe { changes in
            published.record(changes.current)
            if changes.current.revision % 7 == 0 { Thread.sleep(forTimeInterval: 0.002) }
        }
        let file = try SnapshotFile(store: store, path: path)
        // A save and the read-back of its file, one at a time (a later save changes the file).
        let checkpoint = Lock<[SavedCheck]>([])
        func saveAndRead() {
            checkpoint.withLock { checks in
                do {
                    let summary = try file.save()
                    let restored = try EntityState.readSnapshot(from: path, schema: store.schema)
                    checks.append(SavedCheck(revision: summary.revision, restored: restored, error: nil))
                } catch {
                    checks.append(SavedCheck(revision: 0, restored: nil, error: "\(error)"))
                }
            }
        }

        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                group.addTask {
                    var random = SplitMix64(seed: seed &* 31 &+ UInt64(writer))
                    for step in 0..<150 {
                        try randomWrite(store, random: &random, nextID: writer * 10_000 + step)
                    }
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<25 {
                        saveAndRead()
                        try await Task.sleep(for: .milliseconds(1))
                    }
                }
            }
            try await group.waitForAll()
        }
        saveAndRead()
        recorder.cancel()
        try file.close()

        let checks = checkpoint.withLock { $0 }
        #expect(checks.compactMap(\.error) == [])
        for check in checks where check.error == nil {
            let state = try #require(published[check.revision], "revision \(check.revision) was never published")
            #expect(sameLibraryRows(try #require(check.restored), state), "the file saved as revision \(check.revision) holds another state")
        }
        #expect(checks.last?.revision == store.revision)
        #expect(sameLibraryRows(try EntityState.readSnapshot(from: path, schema: store.schema), store.state))
        #expect(Snapshot.verify(at: path).problems == [])
    }

    @Test("a save inside a batch writes the last published state, not the batch's work")
    func saveInsideABatch() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = try populatedLibraryStore()
            let file = try SnapshotFile(store: store, path: path)
            let before = store.state
            let summary = try store.batch {
                try store.write { tx in _ = try tx[books].remove("b1") }
                return try file.save()
            }
            #expect(summary.revision == before.revision)
            #expect(sameLibraryRows(try EntityState.readSnapshot(from: path, schema: store.schema), before))
            try file.save()
            #expect(sameLibraryRows(try EntityState.readSnapshot(from: path, schema: store.schema), store.state))
        }
    }
}
