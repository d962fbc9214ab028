import EntityStore
import EntityStoreCodec
import Testing

/// The one scan both back ends decide a dynamic table's columns from.
@Suite("Dynamic field scan: the kinds, nulls and presence of each field")
struct DynamicFieldScanTests {
    private let table = Table<DynamicRecord>("records")

    private func scan(_ rows: [[String: JSONValue]], ids: [RecordID]? = nil) throws -> DynamicFieldScan {
        let store = EntityStore(schema: try Schema([table]))
        let ids = ids ?? rows.indices.map { RecordID.integer(Int64($0 + 1)) }
        try store.write { tx in
            try tx[table].insert(contentsOf: zip(ids, rows).map { DynamicRecord(id: $0, fields: $1) })
        }
        return DynamicFieldScan(store.state[table])
    }

    @Test("values of one kind keep it; integers and doubles share number; any other mix is json")
    func sharedKinds() throws {
        let result = try scan([
            ["int": 1, "mixed": 1, "text": "a", "flag": true, "list": [1], "other": 1, "nulls": .null],
            ["int": 2, "mixed": 2.5, "text": "b", "flag": false, "list": ["x": 1], "other": "one", "nulls": .null],
        ])
        #expect(result.rowCount == 2)
        #expect(result.idKinds == [.integer])
        #expect(result.fields["int"]?.sharedKind == .integer)
        #expect(result.fields["mixed"]?.sharedKind == .number)
        #expect(result.fields["text"]?.sharedKind == .string)
        #expect(result.fields["flag"]?.sharedKind == .bool)
        #expect(result.fields["list"]?.sharedKind == .json)
        #expect(result.fields["other"]?.sharedKind == .json)
        #expect(result.fields["nulls"]?.sharedKind == nil)
    }

    @Test("null and absence are told apart: hasNull for a null value, count for the records that have the field")
    func nullsAndPresence() throws {
        let result = try scan([["a": 1, "b": .null], ["a": .null], ["a": 3.5]])
        let a = try #require(result.fields["a"])
        #expect(a.hasNull && a.count == 3 && a.sharedKind == .number)
        let b = try #require(result.fields["b"])
        #expect(b.hasNull && b.count == 1 && b.sharedKind == nil)
        #expect(result.fields["c"] == nil)
    }

    @Test("the IDs' kinds are collected, so a table mixing them can be refused")
    func idKinds() throws {
        let result = try scan([[:], [:]], ids: [.integer(1), .string("two")])
        #expect(result.idKinds == [.integer, .string])
        #expect(try scan([]).rowCount == 0)
    }
}
