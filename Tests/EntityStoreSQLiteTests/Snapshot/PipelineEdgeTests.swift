import EntityStore
import EntityStoreCodec
@testable import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing

private let records = Table<DynamicRecord>("records")

/// An entity that encodes `extra` additional fields when its id is `wideAt`: lets a test
/// add columns (or too many columns for SQLite) at a chosen row.
private struct Wide: Entity {
    static let wideAt = Lock<Int>(-1)
    static let extra = Lock<Int>(0)
    var id: Int
    var value: Int

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(id: Int, value: Int) { self.id = id; self.value = value }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        id = try container.decode(Int.self, forKey: Key(stringValue: "id"))
        value = try container.decode(Int.self, forKey: Key(stringValue: "value"))
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: Key(stringValue: "id"))
        try container.encode(value, forKey: Key(stringValue: "value"))
        if id == Self.wideAt.withLock({ $0 }) {
            for index in 0..<Self.extra.withLock({ $0 }) { try container.encode(index, forKey: Key(stringValue: "f\(index)")) }
        }
    }
}

private let wides = Table<Wide>("wides")

@Suite("Pipelined snapshots: edges", .serialized, .threadsOfItsOwn)
struct PipelineEdgeTests {
    static func dynamicStore(rows: Int, stringIDs: Bool = false) throws -> EntityStore {
        let store = EntityStore(schema: try Schema { records })
        try store.write { tx in
            try tx[records].insert(contentsOf: (0..<rows).map {
                DynamicRecord(id: stringIDs ? .string("k\($0)") : .integer(Int64($0)), fields: ["name": .string("n\($0)")])
            })
        }
        return store
    }

    /// The `records` table's SQL must not depend on whether it went through the pipeline.
    @Test("dynamic table: id column declared the same below and at the threshold", arguments: [4_095, 4_096])
    func dynamicIDColumn(rows: Int) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("d.sqlite").path
            try Self.dynamicStore(rows: rows).snapshot(to: path)
            let schema = try sqlRows(path, "SELECT sql FROM sqlite_schema WHERE name = 'records'")
            #expect(schema == [[.text("CREATE TABLE \"records\" (\"id\" INTEGER PRIMARY KEY, \"name\" TEXT)")]])
            let indexes = try sqlRows(path, "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'records'")
            #expect(indexes.isEmpty, "\(indexes)")
        }
    }

    @Test("dynamic table with string ids: id column TEXT", arguments: [4_095, 4_096])
    func dynamicStringIDColumn(rows: Int) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("d.sqlite").path
            try Self.dynamicStore(rows: rows, stringIDs: true).snapshot(to: path)
            let info = try sqlRows(path, "SELECT type FROM pragma_table_info('records') WHERE name = 'id'")
            #expect(info == [[.text("TEXT")]])
        }
    }

    /// Same rows through both halves of RowPipeline.write (one thread, forced with
    /// rows: 0; two threads, with the real count): layouts, SQL and rows must agree.
    @Test("one thread vs two: same layout, schema and rows", arguments: [4_096, 4_097, 4_352, 5_000, 8_192])
    func sameAsSingleThread(count: Int) throws {
        let encode: @Sendable ((RowPipeline.Fields) throws -> Void) throws -> Void = { emit in
            for i in 0..<count {
                var fields: RowPipeline.Fields = [("id", EncodedValue(value: .integer(Int64(i)), kind: .integer))]
                fields.append(("a", EncodedValue(value: .text("a\(i)"), kind: .string)))
                if i == 0 { fields.append(("n", EncodedValue(value: .null, kind: nil))) } else if i > 700 { fields.append(("n", EncodedValue(value: .integer(1), kind: .integer))) }
                if i >= 256 { fields.append(("opt", EncodedValue(value: .double(Double(i)), kind: .double))) }
                if i == 255 || i == 256 || i == count - 1 { fields.append(("edge\(i)", EncodedValue(value: .integer(Int64(i)), kind: .integer))) }
                if i % 2 == 1 { fields.reverse() }
                try emit(fields)
            }
        }
        func run(forceSingle: Bool) throws -> (String, [[SQLiteValue]], [[SQLiteValue]], [Int]) {
            try withTemporaryDirectory { directory in
                let path = directory.appendingPathComponent("x.sqlite").path
                let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
                try connection.execute("BEGIN")
                var writer = TableRowWriter(table: "t", connection: connection)
                var progress: [Int] = []
                try RowPipeline.write(rows: forceSingle ? 0 : count, table: "t", with: &writer, progress: { progress.append($0) }, encode: encode)
                try writer.finish(idKind: nil)
                let layout = writer.layout
                let described = layout.columns.map { "\($0.name):\(String(describing: $0.kind)):\($0.nullable):\($0.nulls)" }.joined(separator: ",") + " id=\(String(describing: layout.idKind)) rows=\(writer.rowsWritten)"
                try connection.execute("COMMIT")
                return (described, try connection.prepare("SELECT sql FROM sqlite_schema ORDER BY name").rows(), try connection.prepare("SELECT * FROM t ORDER BY id").rows(), progress)
            }
        }
        let single = try run(forceSingle: true)
        let piped = try run(forceSingle: false)
        #expect(single.0 == piped.0)
        #expect(single.1 == piped.1)
        #expect(single.2 == piped.2)
        #expect(single.3 == piped.3)
        #expect(piped.2.count == count)
    }

    /// Consumer-side (SQLite) failure at the first row, a middle chunk boundary and the
    /// last row: ALTER/CREATE TABLE with more columns than SQLite allows.
    @Test("SQLite side fails (too many columns) at first, chunk edge, last row", arguments: [0, 255, 256, 4_095])
    func sqliteSideFailure(at row: Int) throws {
        Wide.wideAt.withLock { $0 = row }
        Wide.extra.withLock { $0 = 2_100 }
        defer { Wide.wideAt.withLock { $0 = -1 } }
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("w.sqlite").path
            let store = EntityStore(schema: try Schema { wides })
            try store.write { tx in try tx[wides].insert(contentsOf: (0..<4_096).map { Wide(id: $0, value: $0) }) }
            let error = #expect(throws: SnapshotError.self) { try store.snapshot(to: path) }
            print("row \(row): \(String(describing: error).prefix(120))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    /// An incremental save whose only written row brings a new column: the old rows hold
    /// NULL there, so the column must be recorded nullable.
    @Test("incremental save: a column added by the first written row is nullable")
    func incrementalNewColumnNullable() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("live.sqlite").path
            let store = EntityStore(schema: try Schema { authors; books })
            try store.write { tx in
                try tx[authors].insert(contentsOf: (1...3).map { Author(id: $0, name: "A\($0)") })
                try tx[books].insert(contentsOf: (1...10).map { Book(id: "b\($0)", title: "T", authorID: 1, year: 2000, editorID: nil) })
            }
            let file = try SnapshotFile(store: store, path: path)
            try store.write { tx in _ = try tx[books].update("b1") { $0.editorID = 2 } }
            try file.save()
            try file.close()
            let column = try #require(Snapshot.metadata(at: path).table(named: "books")?.columns.first { $0.name == "editorID" })
            #expect(column.nullable)
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }

    /// A pipelined dynamic table followed by incremental saves and a restore.
    @Test("pipelined dynamic table: live file saves and restores")
    func dynamicLiveFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("d.sqlite").path
            let store = try Self.dynamicStore(rows: 5_000)
            let file = try SnapshotFile(store: store, path: path)
            try store.write { tx in
                try tx[records].insert(DynamicRecord(id: .integer(9_999), fields: ["name": .string("new")]))
                _ = try tx[records].remove(.integer(17))
            }
            try file.save()
            try file.close()
            #expect(Snapshot.verify(at: path).problems == [])
            let restored = try EntityStore.restoringDynamic(from: path)
            #expect(restored.state[records].count == 5_000)
            #expect(restored.state[records].find(.integer(9_999))?.fields["name"] == .string("new"))
        }
    }
}
