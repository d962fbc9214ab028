import EntityStore
@testable import EntityStoreSQLite
import Foundation
import Synchronization
import Testing

/// Progress reports collected from any thread.
private final class ProgressLog: Sendable {
    private let rows = Mutex<[Int]>([])
    func append(_ value: Int) { rows.withLock { $0.append(value) } }
    var values: [Int] { rows.withLock { $0 } }
}

/// Restores of tables large enough to be decoded by two threads (over each half of the
/// IDs) while the calling thread builds the table.
@Suite("Large restores")
struct LargeRestoreTests {
    static let bookCount = 25_000

    /// A library store whose books table is above the two-decoder threshold.
    static func largeStore() throws -> EntityStore {
        let store = EntityStore(schema: try librarySchema())
        try store.write { tx in
            try tx[authors].insert(contentsOf: (1...50).map { Author(id: $0, name: "Author \($0)") })
            // Inserted out of ID order, so a restore (ID order) differs from insertion order.
            try tx[books].insert(contentsOf: (1...bookCount).reversed().map {
                Book(id: String(format: "b%06d", $0), title: "Book \($0)", authorID: 1 + $0 % 50, year: 1900 + $0 % 120,
                     editorID: $0 % 7 == 0 ? 3 : nil)
            })
        }
        return store
    }

    @Test func everyRowComesBackInIDOrderWithItsIndexes() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("large.sqlite").path
            let store = try Self.largeStore()
            try store.snapshot(to: path)
            let restored = EntityStore(schema: try librarySchema())
            let log = ProgressLog()
            try restored.restore(from: path, options: SnapshotOptions(progress: { log.append($0.rowsDone) }))
            let reported = log.values
            let view = restored.state[books]
            #expect(view.count == Self.bookCount)
            #expect(view.ids == view.ids.sorted())
            #expect(sameLibraryRows(restored.state, store.state))
            #expect(view.filter(\.authorID, equals: 7) == store.state[books].filter(\.authorID, equals: 7).sorted { $0.id < $1.id })
            #expect(view.sorted(by: \.year, limit: 3).map(\.year) == [1900, 1900, 1900])
            #expect(view.invariantViolations() == [])
            #expect(reported == reported.sorted() && reported.last == Self.bookCount + 50)
        }
    }

    @Test func aBadRowInTheUpperHalfFailsTheRestoreAndLeavesTheStoreUntouched() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("large.sqlite").path
            try Self.largeStore().snapshot(to: path)
            try sqlExecute(path, "UPDATE books SET year = 'not a year' WHERE id = 'b024000'")
            let target = try populatedLibraryStore()
            let before = target.state
            #expect(throws: SnapshotError.self) { try target.restore(from: path) }
            #expect(sameLibraryRows(target.state, before))
            #expect(target.revision == before.revision)
        }
    }

    @Test func aBadRowInTheLowerHalfFailsTheRestoreToo() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("large.sqlite").path
            try Self.largeStore().snapshot(to: path)
            try sqlExecute(path, "UPDATE books SET title = NULL WHERE id = 'b000010'")
            let target = EntityStore(schema: try librarySchema())
            #expect(throws: SnapshotError.self) { try target.restore(from: path) }
            #expect(target.state[books].isEmpty)
        }
    }
}

/// How much room a restore reserves before the rows arrive.
@Suite("Restore reservations")
struct RestoreReservationTests {
    @Test("the claimed row count; above 4,194,304 rows, never more than the table holds")
    func boundedByTheTable() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("small.sqlite").path
            let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
            try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3)")
            defer { try? connection.close() }
            #expect(try SnapshotReader.rowsToReserve(claimed: 100, table: "t", connection: connection) == 100)
            #expect(try SnapshotReader.rowsToReserve(claimed: -5, table: "t", connection: connection) == 0)
            #expect(try SnapshotReader.rowsToReserve(claimed: 1 << 40, table: "t", connection: connection) == 3)
            #expect(try SnapshotReader.rowsToReserve(claimed: Int.max, table: "t", connection: connection) == 3)
        }
    }

    @Test("a small table whose metadata claims billions of rows restores with a clear error, reserving nothing like it")
    func aHostileCountIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("lying.sqlite").path
            try LargeRestoreTests.largeStore().snapshot(to: path)
            try sqlExecute(path, "UPDATE entitystore_tables SET row_count = 4000000000 WHERE name = 'books'")
            let target = EntityStore(schema: try librarySchema())
            #expect(throws: SnapshotError.self) { try target.restore(from: path) }
            #expect(target.state[books].isEmpty)
        }
    }
}
