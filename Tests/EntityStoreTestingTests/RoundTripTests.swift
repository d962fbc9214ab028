import EntityStore
import EntityStoreSQLite
@testable import EntityStoreTesting
import Foundation
import Testing

/// An entity whose coding drops its note: a snapshot cannot keep it.
struct Lossy: Entity {
    var id: Int
    var note: String

    init(id: Int, note: String) {
        self.id = id
        self.note = note
    }

    enum CodingKeys: String, CodingKey { case id }

    init(from decoder: any Decoder) throws {
        id = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .id)
        note = ""
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
    }
}

let lossy = Table<Lossy>("lossy")

/// Runs `body` with the helpers' temporary directories in a directory of its own, and
/// returns what they left there.
func leftovers(_ body: () throws -> Void) throws -> [String] {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("RoundTripTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    try TemporaryRoot.$override.withValue(root) { try body() }
    return try FileManager.default.contentsOfDirectory(atPath: root.path)
}

@Suite("Round trips")
struct RoundTripTests {
    @Test("a typed and a dynamic store survive a snapshot round trip; nothing is left behind")
    func passes() throws {
        var failures: [TestFailure] = []
        let left = try leftovers {
            failures = try withRecordedFailures {
                let typed = try libraryStore().assertRoundTrip()
                let dynamic = try dynamicStore().assertRoundTrip()
                #expect(typed && dynamic)
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(left.isEmpty, "\(left)")
    }

    @Test("a field the snapshot loses fails the round trip, naming table, ID and field; the file is removed")
    func lossyFails() throws {
        let store = try EntityStore { lossy }
        try store.write { tx in try tx[lossy].insert(contentsOf: [Lossy(id: 1, note: ""), Lossy(id: 2, note: "kept?")]) }
        var line = 0
        var failures: [TestFailure] = []
        let left = try leftovers {
            failures = try withRecordedFailures {
                line = lineAfter()
                let matched = try store.assertRoundTrip()
                #expect(!matched)
            }
        }
        let failure = try #require(failures.single())
        #expect(failure.location.line == line)
        #expect(failure.message.contains("lossy 2: differs\n    note: expected \"kept?\", restored has \"\""), "\(failure.message)")
        #expect(!failure.message.contains("lossy 1"))
        #expect(left.isEmpty, "\(left)")
    }

    @Test("a write that fails (a full snapshot of a reserved table name) throws, and the file is removed")
    func throwsAndCleansUp() throws {
        let store = try EntityStore { Table<Author>("entitystore_reserved") }
        let left = try leftovers {
            #expect(throws: SnapshotError.self) { try store.assertRoundTrip() }
        }
        #expect(left.isEmpty, "\(left)")
    }

    @Test("saves through the session's file itself are the session's saves")
    func savesThroughTheFile() throws {
        let failures = try withRecordedFailures {
            try assertSnapshotFileRoundTrip(schema: try librarySchema()) { session in
                try session.store.write { tx in try tx[authors].insert(Author(id: 1, name: "Ursula")) }
                try session.file.save()
                try session.store.write { tx in try tx[authors].insert(Author(id: 2, name: "unsaved")) }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("through a snapshot file with saves between writes, the file holds the last save")
    func snapshotFile() throws {
        var failures: [TestFailure] = []
        var lossyFailures: [TestFailure] = []
        var line = 0
        let left = try leftovers {
            failures = try withRecordedFailures {
                try assertSnapshotFileRoundTrip(schema: try librarySchema()) { session in
                    try session.store.write { tx in
                        try tx[authors].insert(Author(id: 1, name: "Ursula"))
                        try tx[books].insert(Book(id: 10, title: "The Dispossessed", authorID: 1, editorID: nil, year: 1974))
                    }
                    try session.save()
                    try session.store.write { tx in _ = try tx[books].update(10) { $0.editorID = 1 } }
                    try session.save()
                    try session.store.write { tx in _ = try tx[authors].remove(1) }
                    try session.save()
                    // Not saved: the file must not hold it.
                    try session.store.write { tx in try tx[authors].insert(Author(id: 5, name: "unsaved")) }
                }
            }
            lossyFailures = try withRecordedFailures {
                line = lineAfter()
                try assertSnapshotFileRoundTrip(schema: try Schema { lossy }) { session in
                    try session.store.write { tx in try tx[lossy].insert(Lossy(id: 3, note: "lost")) }
                    try session.save()
                }
            }
            #expect(throws: CancellationError.self) {
                try assertSnapshotFileRoundTrip(schema: try librarySchema()) { _ in throw CancellationError() }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        let lossyMessage = try #require(lossyFailures.single(at: line)).message
        #expect(lossyMessage.contains("lossy 3: differs"), "\(lossyMessage)")
        #expect(lossyMessage.contains("note: expected \"lost\", restored has \"\""), "\(lossyMessage)")
        #expect(left.isEmpty, "\(left)")
    }
}
