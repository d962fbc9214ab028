#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

/// A row whose optional fields first appear late in the table, so a push changes the
/// table's columns after several `COPY` messages.
struct LateRow: Entity {
    var id: Int
    var body: String
    var tag: String?
    var score: Double?
    var when: Date?
}

let lateRows = Table<LateRow>("notes")

/// Rows of about 70 bytes of `COPY` text: 3,000 of them fill three messages of
/// ``smallMessages(_:)``'s 64 KiB, as 45,000 would fill three of the default 1 MiB.
func sampleLateRows(_ count: Int, tagFrom: Int, scoreAt: Int) -> [LateRow] {
    (0..<count).map { index in
        LateRow(
            id: index, body: "note \(index) " + String(repeating: "x", count: 50),
            tag: index >= tagFrom ? "t\(index % 7)" : nil, score: index == scoreAt ? 2.5 : nil, when: nil)
    }
}

/// A target whose snapshots send `COPY` messages of 64 KiB, so that a table of a few
/// thousand rows spans several messages, as a large table does with the default 1 MiB.
func smallMessages(_ target: PostgresTarget) -> PostgresTarget {
    var target = target
    target.bytesPerCopyMessage = 64 << 10
    return target
}

@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct PostgresLargePushTests {
    @Test("columns that first appear after several COPY messages, and at the last row, round-trip")
    func columnsAppearMidTable() async throws {
        let target = smallMessages(try await TestServer.target("midtable"))
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { lateRows }
        try store.write { tx in try tx[lateRows].insert(contentsOf: sampleLateRows(3_000, tagFrom: 2_000, scoreAt: 2_999)) }
        let summary = try await store.snapshot(to: target)
        #expect(summary.rows == 3_000)
        let copy = try EntityStore { lateRows }
        try await copy.restore(from: target)
        #expect(copy.state[lateRows].all() == store.state[lateRows].all())
        let counts = try await TestServer.rows(target, "SELECT count(tag), count(score), count(*) FROM \"\(target.schema)\".notes")
        #expect(counts == [["1000", "1", "3000"]])
    }

    @Test("a row that cannot be stored late in a large table: a clear error, the previous contents kept, no stage left", arguments: [3, 2_500, 2_999])
    func failureLateInATable(at position: Int) async throws {
        let target = smallMessages(try await TestServer.target("latefail"))
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { lateRows }
        try store.write { tx in try tx[lateRows].insert(contentsOf: sampleLateRows(100, tagFrom: 0, scoreAt: 0)) }
        try await store.snapshot(to: target)
        try store.write { tx in
            try tx[lateRows].insert(contentsOf: sampleLateRows(3_000, tagFrom: 0, scoreAt: 1).map { note in
                var note = note
                note.id += 1_000
                if note.id == 1_000 + position { note.when = Date(timeIntervalSinceReferenceDate: .infinity) }
                return note
            })
        }
        let error = await #expect(throws: PostgresStoreError.self) { try await store.snapshot(to: target) }
        guard case let .encodingFailed(table, _)? = error else {
            Issue.record("expected encodingFailed, got \(String(describing: error))")
            return
        }
        #expect(table == "notes")
        let copy = try EntityStore { lateRows }
        try await copy.restore(from: target)
        #expect(copy.state[lateRows].count == 100)
        let stages = try await TestServer.rows(target, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'entitystore_stage_%'")
        #expect(stages == [["0"]])
    }
}

@Suite("The push's hand-off from its encoding thread")
struct CopyFeedTests {
    static func piece(_ byte: UInt8) -> CopyPiece { .rows([byte]) }

    @Test("every piece arrives once, in order, though the encoder runs ahead up to the capacity")
    func inOrder() async throws {
        let feed = CopyFeed(capacity: 2)
        let thread = Thread {
            for byte in 0..<200 { _ = feed.send(Self.piece(UInt8(byte))) }
            feed.finish()
        }
        thread.start()
        let received = try await onOwnThread { () throws -> [UInt8] in
            var received: [UInt8] = []
            while let piece = try feed.next() {
                guard case let .rows(bytes) = piece, let byte = bytes.first else {
                    Issue.record("unexpected piece")
                    continue
                }
                received.append(byte)
                if received.count % 50 == 0 { Thread.sleep(forTimeInterval: 0.005) }
            }
            return received
        }
        #expect(received == (0..<200).map { UInt8($0) })
    }

    @Test("the encoder's error reaches the sender after the pieces before it")
    func errorAfterPieces() async throws {
        struct Broken: Error {}
        let feed = CopyFeed(capacity: 4)
        #expect(feed.send(Self.piece(1)))
        feed.finish(throwing: Broken())
        #expect(try feed.next() != nil)
        #expect(throws: Broken.self) { try feed.next() }
    }

    @Test("cancelling frees an encoder waiting on a full feed; its later sends are refused")
    func cancelFreesTheEncoder() async throws {
        let feed = CopyFeed(capacity: 1)
        let refused = Lock(false)
        let exited = Lock(false)
        let started = Lock(false)
        let thread = Thread {
            _ = feed.send(Self.piece(1))
            started.withLock { $0 = true }
            let accepted = feed.send(Self.piece(2))
            refused.withLock { $0 = !accepted }
            exited.withLock { $0 = true }
        }
        thread.start()
        while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))
        #expect(!exited.withLock { $0 })
        feed.cancel()
        while !exited.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        #expect(refused.withLock { $0 })
        #expect(throws: CancellationError.self) { try feed.next() }
    }

    @Test("cancelling frees a sender waiting for a piece, and stops the encoder")
    func cancelFreesTheSender() async throws {
        let feed = CopyFeed(capacity: 1)
        let waiting = Task { try await onOwnThread { try feed.next() } }
        try await Task.sleep(for: .milliseconds(20))
        feed.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(!feed.send(Self.piece(1)))
    }
}
#endif
