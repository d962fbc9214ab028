@testable import EntityStoreSQLite
import EntityStore
import EntityStoreCodec
import EntityStoreMigrations
import EntityStoreTestSupport
import Foundation
import Testing

/// Random dynamic records with the troubles of real data: nulls everywhere, missing
/// fields, doubles holding whole numbers, booleans, Unicode, nested and mixed values.
private func randomRecords(_ random: inout SplitMix64, count: Int) -> [DynamicRecord] {
    (1...count).map { id in
        var fields: [String: JSONValue] = [:]
        func maybe(_ name: String, _ value: JSONValue) {
            switch Int.random(in: 0..<6, using: &random) {
            case 0: fields[name] = .null
            case 1: break
            default: fields[name] = value
            }
        }
        maybe("delay", .double(Double(Int.random(in: -30...400, using: &random))))
        maybe("count", .integer(Int64.random(in: -5...Int64.max / 2, using: &random)))
        maybe("carrier", .string(["UA", "AA", "é", "e\u{301}", "😀", ""].randomElement(using: &random)!))
        maybe("ok", .bool(Bool.random(using: &random)))
        maybe("mixed", [.integer(1), .double(1), .string("1")].randomElement(using: &random)!)
        // Integers and doubles together, as JSON writers mix them: one number column.
        maybe("num", Bool.random(using: &random) ? .integer(Int64.random(in: -100...100, using: &random) + (1 << 60))
              : .double(Double(Int.random(in: -100...100, using: &random)) / 2))
        maybe("nested", .array([.null, .object(["a": .double(2)])]))
        if Bool.random(using: &random) { fields["always"] = Bool.random(using: &random) ? .null : .integer(7) }
        fields["onlyNull"] = id.isMultiple(of: 2) ? .null : nil
        return DynamicRecord(id: .integer(Int64(id)), fields: fields)
    }
}

/// The records of `view` by id, and the ids whose records differ between two of them.
private func differences(_ left: TableView<DynamicRecord>, _ right: TableView<DynamicRecord>) -> [RecordID] {
    let a = Dictionary(uniqueKeysWithValues: left.map { ($0.id, $0) }), b = Dictionary(uniqueKeysWithValues: right.map { ($0.id, $0) })
    return Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
}

private let table = Table<DynamicRecord>("flights").index(.ordered, field: "delay").index(.grouped, field: "carrier")

@Suite("SQL-true columns: one kind plus nulls keeps its SQL type, round trips stay exact")
struct SQLTrueColumnTests {
    @Test(arguments: Soak.seeds([11], soak: 11...40))
    func roundTripsAreExactAndSQLAnswersTruly(seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            var random = SplitMix64(seed: seed)
            let records = randomRecords(&random, count: 400)
            let store = EntityStore(schema: try Schema([table]))
            try store.write { tx in try tx[table].insert(contentsOf: records) }
            let path = directory.appendingPathComponent("f.sqlite").path
            try store.snapshot(to: path)

            let restored = try EntityStore.restoringDynamic(from: path)
            #expect(differences(restored.state[table], store.state[table]) == [])
            #expect(Snapshot.verify(at: path).problems == [])

            let metadata = try Snapshot.metadata(at: path)
            let stored = try #require(metadata.table(named: "flights"))
            let columns = stored.columns
            // The fields are the records' own: not the id, nor the hidden column of missing fields.
            #expect(columns.first?.name == "id" && columns.contains { $0.name == NullMeaning.absentFieldsColumn })
            #expect(Set(stored.fields.map(\.name)) == Set(records.flatMap(\.fields.keys)))
            // The schema a restore without Swift types declares: the table with its indexes.
            let declared = try #require(try metadata.dynamicSchema().table(named: "flights"))
            #expect(declared.indexDescriptions.map(\.field).sorted() == ["carrier", "delay"])
            let kinds = Dictionary(uniqueKeysWithValues: columns.map { ($0.name, $0.kind) })
            #expect(kinds["delay"] == .double && kinds["count"] == .integer && kinds["carrier"] == .string && kinds["ok"] == .bool)
            #expect(kinds["mixed"] == .json && kinds["nested"] == .json && kinds["onlyNull"] == .null && kinds["num"] == .number)
            let positive = records.filter { record in
                switch record.fields["num"] {
                case .integer(let number)?: number > 0
                case .double(let number)?: number > 0
                default: false
                }
            }.count
            #expect(try sqlValue(path, "SELECT count(*) FROM flights WHERE num > 0") == .integer(Int64(positive)))

            // SQL on the file compares numbers and strings, with NULL for null and missing.
            let late = records.filter { if case .double(let delay)? = $0.fields["delay"] { delay > 60 } else { false } }.count
            #expect(try sqlValue(path, "SELECT count(*) FROM flights WHERE delay > 60") == .integer(Int64(late)))
            let ua = records.filter { $0.fields["carrier"] == "UA" }.count
            #expect(try sqlValue(path, "SELECT count(*) FROM flights WHERE carrier = 'UA'") == .integer(Int64(ua)))
            let noDelay = records.filter { $0.fields["delay"] == nil || $0.fields["delay"] == .null }.count
            #expect(try sqlValue(path, "SELECT count(*) FROM flights WHERE delay IS NULL") == .integer(Int64(noDelay)))
            #expect(try sqlValue(path, "SELECT count(*) FROM flights WHERE typeof(delay) NOT IN ('real', 'null')") == .integer(0))
        }
    }

    /// Incremental saves write nulls and missing fields in place where the columns allow,
    /// and fall back to a full save where they do not; the file always restores exactly.
    @Test(arguments: Soak.seeds([21], soak: 21...50))
    func incrementalSavesStayExact(seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            var random = SplitMix64(seed: seed)
            let store = EntityStore(schema: try Schema([table]))
            try store.write { tx in try tx[table].insert(contentsOf: randomRecords(&random, count: 200)) }
            let path = directory.appendingPathComponent("f.sqlite").path
            let file = try SnapshotFile(store: store, path: path)
            for _ in 0..<30 {
                try store.write { tx in
                    for _ in 0..<Int.random(in: 1...5, using: &random) {
                        let id = RecordID.integer(Int64.random(in: 1...220, using: &random))
                        var fresh = randomRecords(&random, count: 1)[0]
                        fresh.id = id
                        switch Int.random(in: 0..<4, using: &random) {
                        case 0: _ = try tx[table].remove(id)
                        case 1:
                            // A value of another kind: the column cannot hold it in place.
                            fresh.fields["delay"] = .string("late")
                            try tx[table].upsert(fresh)
                        default: try tx[table].upsert(fresh)
                        }
                    }
                }
                try file.save()
                let restored = try EntityStore.restoringDynamic(from: path)
                let differing = differences(restored.state[table], store.state[table])
                #expect(differing == [], "\(differing.prefix(3).map { (restored.state[table].find($0), store.state[table].find($0)) })")
            }
            try file.close()
            #expect(Snapshot.verify(at: path).problems == [])
        }
    }

    /// A format 2 file (nulls made a column JSON) migrates to SQL-true columns, giving
    /// the same records.
    @Test func formatTwoFilesMigrate() throws {
        try withTemporaryDirectory { directory in
            var random = SplitMix64(seed: 31)
            let records = randomRecords(&random, count: 300)
            let path = directory.appendingPathComponent("old.sqlite").path
            try writeFormatTwo(records, table: "flights", to: path)
            #expect(try Snapshot.metadata(at: path).formatVersion == 2)
            #expect(try sqlValue(path, "SELECT typeof(delay) FROM flights WHERE delay IS NOT NULL LIMIT 1") == .text("text"))

            let migrated = try Snapshot.migrate(at: path)
            #expect(migrated.from == 2 && migrated.to == Snapshot.formatVersion)
            #expect(Snapshot.verify(at: path).problems == [])
            let restored = try EntityStore.restoringDynamic(from: path)
            let expected = Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0) })
            #expect(restored.state[Table<DynamicRecord>("flights")].filter { expected[$0.id] != $0 }.map(\.id) == [])
            #expect(restored.state[Table<DynamicRecord>("flights")].count == records.count)
            let late = records.filter { if case .double(let delay)? = $0.fields["delay"] { delay > 60 } else { false } }.count
            #expect(try sqlValue(path, "SELECT count(*) FROM flights WHERE delay > 60") == .integer(Int64(late)))
            let kinds = Dictionary(uniqueKeysWithValues: try #require(Snapshot.metadata(at: path).table(named: "flights")).columns.map { ($0.name, $0.kind) })
            #expect(kinds["delay"] == .double && kinds["carrier"] == .string && kinds["ok"] == .bool && kinds["mixed"] == .json)
            #expect(kinds["num"] == .number)
            // The SQL index of the declared index survives the table's rebuild.
            #expect(try sqlValue(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'flights' AND sql IS NOT NULL") == .integer(1))
        }
    }

    /// The hidden column of missing fields holds what the format says, or the file is refused.
    @Test(arguments: ["'not json'", "'[1, 2]'", "'{\"a\": 1}'", "x'00ff'"])
    func aDamagedHiddenColumnIsAClearError(_ stored: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("f.sqlite").path
            let store = EntityStore(schema: try Schema([table]))
            try store.write { tx in
                try tx[table].insert(DynamicRecord(id: 1, fields: ["carrier": .null]))
                try tx[table].insert(DynamicRecord(id: 2, fields: [:]))
            }
            try store.snapshot(to: path)
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("UPDATE flights SET entitystore_absent = \(stored) WHERE id = 2")
            try connection.close()
            #expect(throws: SnapshotError.self) { try EntityStore.restoringDynamic(from: path) }
            #expect(!Snapshot.verify(at: path).isSound)
        }
    }

    @Test func theHiddenColumnsNameIsReserved() throws {
        let store = EntityStore(schema: try Schema([table]))
        try store.write { tx in try tx[table].insert(DynamicRecord(id: 1, fields: [NullMeaning.absentFieldsColumn: 1])) }
        try withTemporaryDirectory { directory in
            let error = #expect(throws: SnapshotError.self) { try store.snapshot(to: directory.appendingPathComponent("f.sqlite").path) }
            #expect(error?.description.contains("reserved") == true, "\(String(describing: error))")
        }
    }
}

/// Writes `records` as format 2 wrote them: a field with a null anywhere, or values of
/// several kinds, or nested values, is a JSON text column; NULL is a missing field.
private func writeFormatTwo(_ records: [DynamicRecord], table: String, to path: String) throws {
    let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
    for migration in try FormatMigrations.bundled.get() where migration.version <= 2 { try connection.execute(migration.sql) }
    try connection.execute("PRAGMA application_id = \(entityStoreApplicationID); PRAGMA user_version = 2;")
    var kinds: [String: ColumnKind] = [:]
    for record in records {
        for (name, value) in record.fields {
            let kind: ColumnKind = switch value {
            case .null, .array, .object: .json
            case .bool: .bool
            case .integer: .integer
            case .double: .double
            case .string: .string
            }
            kinds[name] = kinds[name].map { $0 == kind ? kind : .json } ?? kind
        }
    }
    let names = kinds.keys.sorted()
    let declared = names.map { name in "\(quoteIdentifier(name)) \(kinds[name]!.declaredType)" }
    try connection.execute("CREATE TABLE \(quoteIdentifier(table)) (\"id\" INTEGER PRIMARY KEY, \(declared.joined(separator: ", ")))")
    try connection.execute("CREATE INDEX \"entitystore_index_flights_delay\" ON \(quoteIdentifier(table)) (\"delay\")")
    do {
        let insert = try connection.prepare(
            "INSERT INTO \(quoteIdentifier(table)) VALUES (?\(String(repeating: ", ?", count: names.count)))")
        for record in records {
            guard case .integer(let id) = record.id else { continue }
            var values: [SQLiteValue] = [.integer(id)]
            for name in names {
                guard let value = record.fields[name] else { values.append(.null); continue }
                values.append(kinds[name] == .json ? .text(value.serialized()) : SQLiteValue(RowEncoder.encode(value).value))
            }
            try insert.run(values)
        }
    }
    try connection.prepare("INSERT INTO entitystore_meta VALUES ('format_version', '2'), ('app_schema_version', '0'), ('library', 'EntityStore')").run()
    try connection.prepare("INSERT INTO entitystore_tables VALUES (?, 'DynamicRecord', 'integer', ?, 0)").run([.text(table), .integer(Int64(records.count))])
    try connection.prepare("INSERT INTO entitystore_columns VALUES (?, 'id', 'integer', 0, 0)").run([.text(table)])
    for (position, name) in names.enumerated() {
        try connection.prepare("INSERT INTO entitystore_columns VALUES (?, ?, ?, 1, ?)")
            .run([.text(table), .text(name), .text(kinds[name]!.rawValue), .integer(Int64(position + 1))])
    }
    try connection.prepare("INSERT INTO entitystore_indexes VALUES (?, 'delay', 'ordered', 'delay')").run([.text(table)])
    try connection.close()
}
