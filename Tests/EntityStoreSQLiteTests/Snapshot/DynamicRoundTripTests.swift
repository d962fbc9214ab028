import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

private let owners = Table<DynamicRecord>("owners").index(.unique, field: "email")
private let items = Table<DynamicRecord>("items")
    .index(.grouped, field: "kind")
    .index(.ordered, field: "rank")
    .references(field: "owner", to: owners, onDelete: .cascade)
    .references(field: "reviewer", to: owners, onDelete: .nullify)

private func dynamicSchema() throws -> Schema {
    try Schema {
        owners
        items
    }
}

/// Owners with integer IDs, items with string IDs, and fields of every JSON kind:
/// explicit nulls next to absent fields, 2.0 next to 2, nested objects and arrays.
private func dynamicStore() throws -> EntityStore {
    let store = EntityStore(schema: try dynamicSchema())
    try store.write { tx in
        try tx[owners].insert(contentsOf: [
            DynamicRecord(id: 1, fields: ["email": "ada@example.org", "name": "Ada", "active": true, "score": .double(2.0)]),
            DynamicRecord(id: 2, fields: ["email": "bob@example.org", "name": "Bob 👨‍💻", "active": false, "score": .double(-0.0)]),
            DynamicRecord(id: 3, fields: ["email": "cy@example.org", "name": "", "score": .double(0.1)]),
        ])
        try tx[items].insert(contentsOf: [
            DynamicRecord(id: "a", fields: [
                "owner": 1, "kind": "tool", "rank": 3, "amount": .double(2.0), "note": .null, "reviewer": 2,
                "tags": ["x", 1, .double(1.5), .null, true], "meta": ["depth": ["deeper": [.null, [:]]], "n": .double(2.0)],
            ]),
            DynamicRecord(id: "b", fields: [
                "owner": 1, "kind": "book", "rank": 1, "amount": 2, "note": "hello\u{0}world", "reviewer": 3,
                "tags": [], "meta": [:],
            ]),
            DynamicRecord(id: "c", fields: ["owner": 2, "kind": "tool", "rank": 2, "amount": "2", "flag": false]),
            DynamicRecord(id: "d", fields: ["owner": 3, "kind": .null, "rank": .double(2.5), "flag": true, "mixed": 1]),
            DynamicRecord(id: "e", fields: ["owner": 2, "rank": -7, "mixed": "one", "emptyText": ""]),
        ])
    }
    return store
}

@Suite("Dynamic stores survive a round trip")
struct DynamicRoundTripTests {
    @Test("restoringDynamic gives back exactly equal records, kinds included")
    func recordsComeBackExactly() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("dynamic.sqlite").path
            let store = try dynamicStore()
            try store.snapshot(to: path)
            let restored = try EntityStore.restoringDynamic(from: path)

            #expect(restored.state.tableNames == ["owners", "items"])
            #expect(rows(owners, in: restored.state) == rows(owners, in: store.state))
            #expect(rows(items, in: restored.state) == rows(items, in: store.state))
            let a = try #require(restored.state[items].find("a"))
            let b = try #require(restored.state[items].find("b"))
            let d = try #require(restored.state[items].find("d"))
            let e = try #require(restored.state[items].find("e"))
            // JSONValue equality already tells integers from doubles; spell out the cases that matter.
            #expect(a[field: "amount"] == .double(2.0) && b[field: "amount"] == .integer(2))
            #expect(a[field: "note"] == .null)
            #expect(restored.state[items].find("c")?.fields.keys.contains("note") == false)
            #expect(d[field: "kind"] == .null && e.fields["kind"] == nil)
            #expect(a[field: "meta"]?["n"] == .double(2.0))
            #expect(b[field: "note"]?.stringValue.map { Array($0.utf8) } == Array("hello\u{0}world".utf8))
            #expect(e[field: "emptyText"] == .string(""))
            #expect(restored.state[owners].find(1)?[field: "active"] == .bool(true))
            #expect(restored.state[owners].find(3)?.fields["active"] == nil)
            // -0.0 == 0.0 for JSONValue: check the sign bit.
            let negativeZero = try #require(restored.state[owners].find(2)?[field: "score"]?.doubleValue)
            #expect(negativeZero == 0 && negativeZero.sign == .minus)
            #expect(restored.state.invariantViolations().isEmpty)
        }
    }

    @Test("indexes and relations are declared again from the metadata and work")
    func indexesAndRelations() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("dynamic.sqlite").path
            let store = try dynamicStore()
            try store.snapshot(to: path)

            let metadata = try Snapshot.metadata(at: path)
            for table in [owners, items] {
                let stored = try #require(metadata.table(named: table.name))
                #expect(Set(stored.indexes) == Set(table.indexDescriptions), "indexes of \(table.name)")
                #expect(Set(stored.relations) == Set(table.relations), "relations of \(table.name)")
                #expect(stored.entityType == "DynamicRecord")
            }
            #expect(metadata.table(named: "owners")?.idKind == .integer)
            #expect(metadata.table(named: "items")?.idKind == .string)

            let restored = try EntityStore.restoringDynamic(from: path)
            let restoredItems = try #require(restored.schema.table(named: "items"))
            #expect(Set(restoredItems.indexDescriptions) == Set(items.indexDescriptions))
            #expect(Set(restoredItems.relations) == Set(items.relations))
            #expect(Set(try #require(restored.schema.table(named: "owners")).indexDescriptions) == Set(owners.indexDescriptions))

            let tools = restored.state[items].query().where(field: "kind", equals: "tool")
            #expect(tools.plan == store.state[items].query().where(field: "kind", equals: "tool").plan)
            #expect(tools.ids.sorted() == ["a", "c"])
            #expect(restored.state[items].query().sorted(by: \.id).where(field: "owner", equals: 2).ids.sorted() == ["c", "e"])

            // The unique index is enforced again.
            #expect(throws: (any Error).self) {
                try restored.write { tx in try tx[owners].insert(DynamicRecord(id: 9, fields: ["email": "ada@example.org"])) }
            }
            // Cascade and nullify still run after the restore.
            try restored.write { tx in _ = try tx[owners].remove(1) }
            #expect(restored.state[items].find("a") == nil && restored.state[items].find("b") == nil)
            try restored.write { tx in _ = try tx[owners].remove(3) }
            #expect(restored.state[items].find("d") == nil)
            #expect(restored.state[items].ids.sorted() == ["c", "e"])
            try restored.write { tx in
                try tx[items].insert(DynamicRecord(id: "f", fields: ["owner": 2, "reviewer": 2]))
                _ = try tx[owners].remove(2)
            }
            #expect(restored.state[items].isEmpty)
            #expect(restored.state.invariantViolations().isEmpty)
        }
    }

    @Test("a field of one scalar kind keeps its column kind, nulls included; mixed kinds are stored as JSON")
    func columnKinds() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("dynamic.sqlite").path
            try dynamicStore().snapshot(to: path)
            let columns = try #require(Snapshot.metadata(at: path).table(named: "items")).columns
            let kinds = Dictionary(uniqueKeysWithValues: columns.map { ($0.name, $0.kind) })
            #expect(kinds["owner"] == .integer)
            #expect(kinds["flag"] == .bool)
            #expect(kinds["amount"] == .json)
            #expect(kinds["rank"] == .number, "integers and doubles share a number column")
            #expect(try sqlValue(path, "SELECT typeof(rank) FROM items WHERE id = 'a'") == .text("integer"))
            #expect(try sqlValue(path, "SELECT typeof(rank) FROM items WHERE id = 'd'") == .text("real"))
            // One kind plus nulls: the kind's column, NULL for null, missing fields listed per row.
            #expect(kinds["kind"] == .string)
            #expect(kinds["note"] == .string)
            let nulls = Dictionary(uniqueKeysWithValues: columns.map { ($0.name, $0.nulls) })
            #expect(nulls["kind"] == .either && nulls["note"] == .either && nulls["owner"] == .absent && nulls["flag"] == .absent)
            #expect(kinds["tags"] == .json)
            #expect(kinds["emptyText"] == .string)
            #expect(try sqlValue(path, "SELECT amount FROM items WHERE id = 'a'") == .text("2.0"))
            #expect(try sqlValue(path, "SELECT amount FROM items WHERE id = 'b'") == .text("2"))
            #expect(try sqlValue(path, "SELECT typeof(flag) FROM items WHERE id = 'd'") == .text("integer"))
            #expect(try sqlValue(path, "SELECT typeof(score) FROM owners WHERE id = 1") == .text("real"))
            #expect(try sqlValue(path, "SELECT note IS NULL FROM items WHERE id = 'c'") == .integer(1))
            #expect(try sqlValue(path, "SELECT note IS NULL FROM items WHERE id = 'a'") == .integer(1))
            #expect(try sqlValue(path, "SELECT count(*) FROM items WHERE kind = 'tool'") == .integer(2))
            #expect(try sqlValue(path, "SELECT entitystore_absent IS NULL FROM items WHERE id = 'a'") == .integer(1))
            #expect(try sqlValue(path, "SELECT entitystore_absent FROM items WHERE id = 'c'") == .text("[\"note\"]"))
            #expect(try sqlValue(path, "SELECT entitystore_absent FROM items WHERE id = 'e'") == .text("[\"kind\",\"note\"]"))
        }
    }

    @Test("a table mixing integer and string IDs is refused with a specific error, leaving the previous file")
    func mixedIDKinds() throws {
        let mixed = Table<DynamicRecord>("mixed")
        let store = EntityStore(schema: try Schema { mixed })
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("mixed.sqlite").path
            try store.write { tx in try tx[mixed].insert(DynamicRecord(id: 1, fields: ["v": 1])) }
            try store.snapshot(to: path)
            try store.write { tx in try tx[mixed].insert(DynamicRecord(id: "1", fields: ["v": 2])) }
            let restoredBefore = try EntityStore.restoringDynamic(from: path)
            switch Result(catching: { () throws(SnapshotError) in try store.snapshot(to: path) }) {
            case .success:
                // If the format ever stores mixed IDs, they must come back with their kinds.
                let restored = try EntityStore.restoringDynamic(from: path)
                #expect(rows(mixed, in: restored.state) == rows(mixed, in: store.state))
            case .failure(let error):
                guard case .encodingFailed(let table, _) = error else {
                    Issue.record("expected encodingFailed, got \(error)")
                    return
                }
                #expect(table == "mixed")
                let afterFailure = try EntityStore.restoringDynamic(from: path)
                #expect(rows(mixed, in: afterFailure.state) == rows(mixed, in: restoredBefore.state))
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["mixed.sqlite"])
            }
        }
    }

    /// SQLite ignores ASCII case in column names: fields that differ only in case are
    /// refused, naming both, whether they meet in one row or in rows far apart; a row of
    /// 1,500 distinct fields saves and comes back whole.
    @Test("fields differing only in case are refused, naming both; distinct fields are not")
    func fieldsDifferingOnlyInCase() throws {
        let cased = Table<DynamicRecord>("cased")
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("cased.sqlite").path
            for rows in [
                [DynamicRecord(id: 1, fields: ["Name": "a", "name": "b"])],
                [DynamicRecord(id: 1, fields: ["Name": "a"])] + (2..<300).map { DynamicRecord(id: .integer(Int64($0)), fields: ["x": 1]) }
                    + [DynamicRecord(id: 300, fields: ["NAME": "c"])],
            ] {
                let store = EntityStore(schema: try Schema { cased })
                try store.write { tx in try tx[cased].insert(contentsOf: rows) }
                let error = #expect(throws: SnapshotError.self) { try store.snapshot(to: path) }
                guard case .encodingFailed(let table, let detail)? = error else {
                    Issue.record("expected encodingFailed, got \(String(describing: error))")
                    continue
                }
                #expect(table == "cased")
                #expect(detail.contains("differ only in case"), "\(detail)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
            }

            let wide = EntityStore(schema: try Schema { cased })
            var fields: [String: JSONValue] = [:]
            for n in 0..<1_500 { fields["field\(n)"] = .integer(Int64(n)) }
            try wide.write { tx in try tx[cased].insert(DynamicRecord(id: 1, fields: fields)) }
            try wide.snapshot(to: path)
            #expect(try EntityStore.restoringDynamic(from: path).state[cased].find(1)?.fields.count == 1_500)
        }
    }
}
