import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

private struct Reading: Entity {
    var id: Int
    var sensor: String
    var value: Double
    var revision: Int
}

private let readings = Table<Reading>("readings")

@Suite("Snapshots while writers commit", .threadsOfItsOwn)
struct ConcurrencyTests {
    @Test("a snapshot holds exactly the state at the call while commits go on")
    func snapshotWhileWriting() async throws {
        let schema = try Schema { readings }
        let store = EntityStore(schema: schema)
        try store.write { tx in
            try tx[readings].insert(contentsOf: (0..<50_000).map {
                Reading(id: $0, sensor: "s\($0 % 17)", value: Double($0) / 7, revision: 0)
            })
        }
        let writerCommits = 200
        // Set once the snapshot has written rows: its state is fixed, the writer may go.
        let snapshotRunning = DispatchSemaphore(value: 0)
        // Set when the writer has committed everything.
        let writerDone = DispatchSemaphore(value: 0)
        let options = SnapshotOptions(progress: { progress in
            guard progress.tableRows == 10_000 else { return }
            snapshotRunning.signal()
            // Hold the snapshot mid-write until the writer is through (bounded, never a deadlock).
            _ = writerDone.wait(timeout: .now() + 20)
        })

        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("busy.sqlite").path
            let writer = Task.detached {
                guard snapshotRunning.wait(timeout: .now() + 20) == .success else { return 0 }
                var committed = 0
                for round in 1...writerCommits {
                    try store.write { tx in
                        _ = try tx[readings].update(round * 13 % 50_000) { $0.revision = round }
                        try tx[readings].insert(Reading(id: 100_000 + round, sensor: "new", value: -Double(round), revision: round))
                        if round % 10 == 0 { _ = try tx[readings].remove(round) }
                    }
                    committed += 1
                }
                writerDone.signal()
                return committed
            }
            let captured = store.state
            let summary = try store.snapshot(to: path, options: options)
            let committed = try await writer.value

            #expect(committed == writerCommits)
            #expect(store.revision == captured.revision + UInt64(writerCommits))
            #expect(summary.rowCount == 50_000)
            let restored = try EntityState.readSnapshot(from: path, schema: schema)
            #expect(restored.count(ofTable: "readings") == captured.count(ofTable: "readings"))
            #expect(rows(readings, in: restored) == rows(readings, in: captured))
            #expect(rows(readings, in: restored) != rows(readings, in: store.state))
            #expect(restored[readings].find(100_001) == nil && store.state[readings].find(100_001) != nil)
        }
    }
}

/// `withTemporaryDirectory` for async bodies.
private func withTemporaryDirectory<R>(_ body: (URL) async throws -> R) async throws -> R {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("EntityStoreSQLiteTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}
