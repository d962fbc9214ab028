import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

private struct Visit: Entity {
    var id: Int
    var at: Date
    var left: Date?
    var who: String
}

private let visits = Table<Visit>("visits")
private let dynamicVisits = Table<DynamicRecord>("visits")

@Suite("SnapshotOptions.dateFields: dynamic records' dates written as dates")
struct DynamicDateFieldsTests {
    private static func kinds(_ path: String) throws -> [String: ColumnKind] {
        let columns = try #require(try Snapshot.metadata(at: path).tables.first?.columns)
        return Dictionary(uniqueKeysWithValues: columns.map { ($0.name, $0.kind) })
    }

    @Test("a typed store's dates, read as dynamic records and written with dateFields, are dates the typed app reads")
    func roundTrip() throws {
        try withTemporaryDirectory { directory in
            let typed = try EntityStore { visits }
            try typed.write { tx in
                try tx[visits].insert(Visit(id: 1, at: Date(timeIntervalSince1970: 1_795_773_062.75), left: nil, who: "a"))
                try tx[visits].insert(Visit(id: 2, at: .distantPast, left: Date(timeIntervalSinceReferenceDate: 0.1), who: "b"))
            }
            let original = directory.appendingPathComponent("typed.sqlite").path
            try typed.snapshot(to: original)
            let dynamic = try EntityStore.restoringDynamic(from: original)

            let plain = directory.appendingPathComponent("plain.sqlite").path
            try dynamic.state.writeSnapshot(to: plain)
            #expect(try Self.kinds(plain)["at"] == .string)

            let dated = directory.appendingPathComponent("dated.sqlite").path
            var options = SnapshotOptions()
            options.dateFields = ["visits": ["at", "left"]]
            try dynamic.state.writeSnapshot(to: dated, options: options)
            let kinds = try Self.kinds(dated)
            #expect(kinds["at"] == .date && kinds["left"] == .date && kinds["who"] == .string)
            #expect(Snapshot.verify(at: dated).isSound)
            let back = try EntityStore { visits }
            try back.restore(from: dated)
            #expect(back.state[visits].all() == typed.state[visits].all())
        }
    }

    @Test("a date's text as people write it is stored in the format's one text; anything else is refused, naming the field")
    func valuesAreChecked() throws {
        try withTemporaryDirectory { directory in
            let store = EntityStore(schema: try Schema([dynamicVisits]))
            try store.write { tx in
                try tx[dynamicVisits].insert(DynamicRecord(id: .integer(1), fields: ["at": "2026-11-27 09:51:02.750Z", "who": "a"]))
            }
            var options = SnapshotOptions()
            options.dateFields = ["visits": ["at"]]
            let path = directory.appendingPathComponent("dated.sqlite").path
            try store.state.writeSnapshot(to: path, options: options)
            let back = try EntityStore.restoringDynamic(from: path)
            #expect(back.state[dynamicVisits].find(1)?[field: "at"] == .string("2026-11-27T09:51:02.75+00:00"))

            options.dateFields = ["visits": ["who"]]
            let refused = #expect(throws: SnapshotError.self) {
                try store.state.writeSnapshot(to: directory.appendingPathComponent("refused.sqlite").path, options: options)
            }
            let message = refused?.description ?? ""
            #expect(message.contains("visits") && message.contains("field 'who' holds \"a\", not a date"), "\(message)")
        }
    }
}
