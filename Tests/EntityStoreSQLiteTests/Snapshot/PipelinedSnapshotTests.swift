import EntityStore
@testable import EntityStoreSQLite
import Foundation
import StoreCore
import Testing

/// A row whose `value` encodes as an integer below `flipAt` and as text from there on:
/// the column's kind then conflicts on the SQLite side of the pipeline, mid-table.
private struct Shifting: Entity {
    static let flipAt = 15_000
    var id: Int
    var value: Int
    /// Fails to encode (on the encoding side of the pipeline) when true.
    var poisoned = false

    struct Poisoned: Error, CustomStringConvertible {
        var description: String { "this row refuses to encode" }
    }

    enum CodingKeys: String, CodingKey { case id, value, poisoned }

    func encode(to encoder: any Encoder) throws {
        if poisoned { throw Poisoned() }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if id >= Self.flipAt, value < 0 { try container.encode("text \(value)", forKey: .value) } else { try container.encode(value, forKey: .value) }
        try container.encode(poisoned, forKey: .poisoned)
    }
}

private let shifting = Table<Shifting>("shifting")

/// Full snapshots of tables large enough to be encoded on a second thread while the
/// calling thread steps SQLite (``RowPipeline``).
@Suite("Pipelined snapshots")
struct PipelinedSnapshotTests {
    static let rowCount = 20_000

    fileprivate static func store(_ change: (inout Shifting) -> Void = { _ in }) throws -> EntityStore {
        let store = EntityStore(schema: try Schema { shifting })
        try store.write { tx in
            try tx[shifting].insert(contentsOf: (0..<rowCount).map { index in
                var row = Shifting(id: (index * 7_919) % rowCount, value: index)
                change(&row)
                return row
            })
        }
        return store
    }

    @Test("every row arrives, with progress up to the total")
    func everyRowArrives() throws {
        #expect(Self.rowCount >= RowPipeline.rowsForASecondThread * 2)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("large.sqlite").path
            let store = try Self.store()
            let reported = Lock<[Int]>([])
            let summary = try store.snapshot(to: path, options: SnapshotOptions(progress: { progress in
                reported.withLock { $0.append(progress.rowsDone) }
            }))
            #expect(summary.rowCount == Self.rowCount)
            let restored = try EntityState.readSnapshot(from: path, schema: store.schema)
            #expect(Array(restored[shifting]).sorted { $0.id < $1.id } == Array(store.state[shifting]).sorted { $0.id < $1.id })
            #expect(try sqlRows(path, "SELECT count(*), sum(value) FROM shifting") == [[.integer(Int64(Self.rowCount)), .integer(Int64(Self.rowCount * (Self.rowCount - 1) / 2))]])
            let progress = reported.withLock { $0 }
            #expect(progress == progress.sorted() && progress.last == Self.rowCount)
        }
    }

    @Test("a row that fails to encode, early, midway or last: a clear error, the previous file kept, nothing left behind", arguments: [3, 12_345, rowCount - 1])
    func encodingFailure(at position: Int) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("large.sqlite").path
            let good = try Self.store()
            try good.snapshot(to: path)
            let bad = try Self.store { if $0.value == position { $0.poisoned = true } }
            let error = #expect(throws: SnapshotError.self) { try bad.snapshot(to: path) }
            guard case let .encodingFailed(table, detail)? = error else {
                Issue.record("expected encodingFailed, got \(String(describing: error))")
                return
            }
            #expect(table == "shifting")
            #expect(detail.contains("refuses to encode"), "\(detail)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["large.sqlite"])
            let kept = try EntityState.readSnapshot(from: path, schema: good.schema)
            #expect(kept[shifting].count == Self.rowCount)
            #expect(kept[shifting].find(position) == good.state[shifting].find(position))
        }
    }

    @Test("a row SQLite's side refuses midway stops the encoder: a clear error, the previous file kept")
    func writingFailure() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("large.sqlite").path
            let good = try Self.store()
            try good.snapshot(to: path)
            // From the flip on, one row in three holds text where earlier rows held integers.
            let bad = try Self.store { if $0.id >= Shifting.flipAt, $0.id % 3 == 0 { $0.value = -$0.value - 1 } }
            let error = #expect(throws: SnapshotError.self) { try bad.snapshot(to: path) }
            guard case let .encodingFailed(table, detail)? = error else {
                Issue.record("expected encodingFailed, got \(String(describing: error))")
                return
            }
            #expect(table == "shifting")
            #expect(detail.contains("'value'"), "\(detail)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["large.sqlite"])
            #expect(try EntityState.readSnapshot(from: path, schema: good.schema)[shifting].count == Self.rowCount)
        }
    }

    @Test("snapshots of one large store on several threads at once each write every row")
    func concurrentSnapshots() async throws {
        let store = try Self.store()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipelined-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<4 {
                let path = directory.appendingPathComponent("copy-\(index).sqlite").path
                group.addTask {
                    try store.write { tx in _ = try tx[shifting].update(index) { $0.value += 1 } }
                    return try store.snapshot(to: path).rowCount
                }
            }
            for try await count in group { #expect(count == Self.rowCount) }
        }
    }
}
