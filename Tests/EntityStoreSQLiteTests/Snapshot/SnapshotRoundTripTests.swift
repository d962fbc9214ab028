import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

@Suite("Snapshot round trips")
struct SnapshotRoundTripTests {
    @Test("a typed store survives snapshot and restore exactly, with indexes rebuilt")
    func typedRoundTrip() throws {
        let (directory, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = EntityStore(schema: try librarySchema())
        try store.write { tx in
            try tx[authors].insert(contentsOf: (1...5).map { Author(id: $0, name: "Author \($0)") })
            try tx[books].insert(contentsOf: (1...20).map {
                Book(id: "b\($0)", title: "Book \($0)", authorID: 1 + $0 % 5, year: 1990 + $0, editorID: $0 % 2 == 0 ? 2 : nil)
            })
            try tx[samples].insert(contentsOf: (1...30).map { sample($0) })
        }
        let summary = try store.snapshot(to: path)
        #expect(summary.rowCount == 55)
        let bytesOnDisk = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).intValue
        #expect(bytesOnDisk > 0)
        #expect(summary.fileSize == bytesOnDisk)

        let restored = EntityStore(schema: try librarySchema())
        let restoreSummary = try restored.restore(from: path)
        #expect(restoreSummary.fileSize == bytesOnDisk)
        for table in ["authors", "books", "samples"] {
            #expect(restored.state.count(ofTable: table) == store.state.count(ofTable: table))
        }
        for original in store.state[samples] {
            #expect(restored.state[samples].find(original.id) == original)
        }
        for original in store.state[books] {
            #expect(restored.state[books].find(original.id) == original)
        }
        #expect(restored.state[books].filter(\.authorID, equals: 2).count == store.state[books].filter(\.authorID, equals: 2).count)
        #expect(restored.state[samples].first(where: \.name, equals: "sample 7 ✨")?.id == 7)
        #expect(restored.state.invariantViolations().isEmpty)
        try restored.write { tx in _ = try tx[authors].remove(2) }
        #expect(restored.state[books].filter(\.authorID, equals: 2).isEmpty)
    }

    @Test("a dynamic store restores any snapshot with exact value types")
    func dynamicRestore() throws {
        let (directory, path) = temporaryPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = EntityStore(schema: try librarySchema())
        try store.write { tx in
            try tx[authors].insert(Author(id: 1, name: "A"))
            try tx[samples].insert(sample(4))
        }
        try store.snapshot(to: path)
        let dynamic = try EntityStore.restoringDynamic(from: path)
        let records = Table<DynamicRecord>("samples")
        let record = try #require(dynamic.state[records].find(.integer(4)))
        #expect(record[field: "flag"] == .bool(true))
        #expect(record[field: "ratio"] == .double(0.4))
        #expect(record[field: "genre"] == .string("poetry"))
        #expect(record[field: "note"] == .string("note 4"))
        #expect(record[field: "edition"]?["pages"] == .integer(104))
        #expect(dynamic.state.count(ofTable: "authors") == 1)
    }
}
