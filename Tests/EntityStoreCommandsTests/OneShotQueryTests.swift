@testable import EntityStoreCommands
import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

/// The one-shot path (SQLite counts or selects, the rest in memory) against a full
/// restore, on random data and random conditions: the answers must be identical.
@Suite("One-shot queries agree with a full restore", .threadsOfItsOwn)
struct OneShotQueryTests {
    /// Random records: numbers of both kinds, nulls and missing fields everywhere, strings
    /// with canonically equivalent spellings, booleans, a mixed column, a null column and
    /// references to a table of string ids, some dangling.
    static func records(seed: UInt64, count: Int) -> [DynamicRecord] {
        var random = SplitMix64(seed: seed)
        let words = [
            "é", "e\u{301}", "a", "A", "b", "ab", "", "Ω", "\u{2126}", "z", "10", "😀", "K", "\u{212A}", "Å", "\u{212B}", "A\u{30A}",
            "a\u{301}\u{323}", "a\u{323}\u{301}", "f", "E", "a\u{0}b", "e\u{301}z", "éa",
        ]
        return (1...count).map { id in
            var fields: [String: JSONValue] = [:]
            func maybe(_ name: String, _ value: @autoclosure () -> JSONValue) {
                switch Int.random(in: 0..<8, using: &random) {
                case 0: fields[name] = .null
                case 1: break
                default: fields[name] = value()
                }
            }
            maybe("n", Bool.random(using: &random) ? .integer(Int64.random(in: -5...5, using: &random)) : .double(Double(Int.random(in: -10...10, using: &random)) / 2))
            maybe("i", .integer(Int64.random(in: -3...3, using: &random)))
            maybe("s", .string(words.randomElement(using: &random)!))
            maybe("b", .bool(Bool.random(using: &random)))
            maybe("mixed", [.integer(1), .string("1"), .bool(true), .array([1])].randomElement(using: &random)!)
            if id.isMultiple(of: 3) { fields["nothing"] = .null }
            // Columns with missing fields but no null: scalar columns in every format.
            if Int.random(in: 0..<5, using: &random) > 0 { fields["k"] = .integer(Int64.random(in: -4...4, using: &random) * 1_000_000_007) }
            if Int.random(in: 0..<5, using: &random) > 0 { fields["t"] = .string(words.randomElement(using: &random)!) }
            fields["d"] = .double(Double(Int.random(in: -8...8, using: &random)) / 4)
            // ASCII alone, which SQLite orders by its bytes, as Swift does.
            maybe("w", .string(["a", "A", "", "ab", "a\u{0}b", "B", "b", "10", "9", "~"].randomElement(using: &random)!))
            // A reference to a record of `u` (string ids; "zz" names none, 1 is of another kind).
            maybe("r", [.string("a"), .string("b"), .string("c"), .string("zz"), .integer(1), .string("e\u{301}"), .string("\u{212A}")]
                .randomElement(using: &random)!)
            return DynamicRecord(id: .integer(Int64(id)), fields: fields)
        }
    }

    static func randomCondition(_ random: inout SplitMix64) -> FieldCondition {
        let field = ["n", "i", "s", "b", "mixed", "nothing", "id", "k", "t", "d", "r", "w"].randomElement(using: &random)!
        let operands: [JSONValue] = [.integer(0), .integer(2), .double(2), .double(-1.5), .integer(7), .string("é"), .string("e\u{301}"),
                                     .string("a"), .string("\u{2126}"), .string("10"), .bool(true), .bool(false), .array([1])]
        let op = [FieldCondition.Operator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .oneOf, .isNull, .isNotNull]
            .randomElement(using: &random)!
        switch op {
        case .isNull, .isNotNull: return FieldCondition(field: field, op: op, operands: [])
        case .oneOf: return FieldCondition(field: field, op: op, operands: (0..<Int.random(in: 1...3, using: &random)).map { _ in operands.randomElement(using: &random)! })
        default: return FieldCondition(field: field, op: op, operands: [operands.randomElement(using: &random)!])
        }
    }

    /// The ids of `u`: one spelling of each, some referenced by `t` in another (`"é"` as
    /// `"e\u{301}"`, `"K"` as the Kelvin sign).
    static let referencedIDs = ["a", "b", "c", "é", "K", "\u{2126}", "Å", "e\u{301}z", "z", "10", "😀", "a\u{0}b", "A"]

    /// Queries on a table of string ids, with ids asked in other spellings, sorted by id
    /// and by text with ties: the one-shot answer must be the restore's.
    @Test(arguments: Soak.seeds([4], soak: 4...20))
    func stringIDsAgree(seed: UInt64) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("one-shot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("u.sqlite").path
        var random = SplitMix64(seed: seed)
        let names = ["é", "e\u{301}", "E", "f", "\u{212A}", "K", "k", "Å", "A\u{30A}", "a\u{301}\u{323}", "a\u{323}\u{301}", "z"]
        let table = Table<DynamicRecord>("u").index(.grouped, field: "name")
        let state = try EntityState.build(schema: try Schema([table])) { tx in
            try tx[table].insert(contentsOf: Self.referencedIDs.map { id in
                var fields: [String: JSONValue] = ["n": .integer(Int64.random(in: 0...3, using: &random))]
                switch Int.random(in: 0..<6, using: &random) {
                case 0: fields["name"] = .null
                case 1: break
                default: fields["name"] = .string(names.randomElement(using: &random)!)
                }
                return DynamicRecord(id: .string(id), fields: fields)
            })
        }
        _ = try state.writeSnapshot(to: path)
        let restored = try EntityStore.restoringDynamic(from: path).state
        let reader = try SnapshotTableReader(path: path)
        let probes = Self.referencedIDs + ["e\u{301}", "\u{212A}", "Ω", "A\u{30A}", "\u{212B}", "zz", "1"]
        for _ in 0..<200 {
            let conditions = Bool.random(using: &random) ? [] : [Self.randomCondition(&random)]
                .map { FieldCondition(field: ["s", "t"].contains($0.field) ? "name" : $0.field, op: $0.op, operands: $0.operands) }
                .filter { ["n", "name", "id"].contains($0.field) }
            let sort = [nil, "id", "name", "n"].randomElement(using: &random)!
            let request = QueryRequest(
                table: "u", id: Int.random(in: 0..<3, using: &random) == 0 ? .string(probes.randomElement(using: &random)!) : nil,
                conditions: conditions, sort: sort, descending: sort != nil && Bool.random(using: &random),
                offset: Bool.random(using: &random) ? Int.random(in: 0...3, using: &random) : nil,
                limit: Bool.random(using: &random) ? [0, 1, 2, 5].randomElement(using: &random) : nil,
                fields: ["id", "n", "name"], countOnly: false, explain: false, format: [.ndjson, .json, .csv, .table].randomElement(using: &random)!)
            func answer(_ body: () throws -> String?) -> String {
                do { return try body() ?? "nil" } catch { return "error: \(error)" }
            }
            #expect(answer { try request.answer(from: reader) } == answer { try request.answer(in: restored) },
                    "\(conditions) id \(String(describing: request.id)) sort \(String(describing: sort))")
        }
    }

    @Test(arguments: Soak.seeds([1], soak: 1...20))
    func randomQueriesAgree(seed: UInt64) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("one-shot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("t.sqlite").path
        let referenced = Table<DynamicRecord>("u")
        let table = Table<DynamicRecord>("t").index(.grouped, field: "s").index(.ordered, field: "n")
            .references(field: "r", to: referenced, onDelete: .none)
        let state = try EntityState.build(schema: try Schema([table, referenced])) { tx in
            try tx[table].insert(contentsOf: Self.records(seed: seed, count: 300))
            try tx[referenced].insert(contentsOf: Self.referencedIDs.map { DynamicRecord(id: .string($0), fields: ["name": .string("name of \($0)")]) })
        }
        _ = try state.writeSnapshot(to: path)
        let restored = try EntityStore.restoringDynamic(from: path).state
        let reader = try SnapshotTableReader(path: path)
        let fields = try TableFields("t", in: reader.metadata, snapshot: path)
        var random = SplitMix64(seed: seed &* 7919)
        var exactCounts = 0, sqlGroups = 0, joinedAnswers = 0, pagedBySQL = 0
        func pushdown(_ reader: SnapshotTableReader) -> SQLPushdown { SQLPushdown(reader.metadata.table(named: "t")!) }
        for _ in 0..<300 {
            let conditions = (0..<Int.random(in: 0...2, using: &random)).map { _ in Self.randomCondition(&random) }
                .filter { fields.names.contains($0.field) }
            for countOnly in [true, false] {
                let names = ["n", "i", "s", "b", "mixed", "nothing", "k", "t", "d", "r", "w"]
                let groupBy = Int.random(in: 0..<3, using: &random) == 0 ? names.randomElement(using: &random) : nil
                var aggregates: [FieldAggregate] = groupBy != nil || Bool.random(using: &random) ? [.count] : []
                for _ in 0..<(groupBy == nil && aggregates.isEmpty ? 0 : Int.random(in: 0...3, using: &random)) {
                    let field = names.randomElement(using: &random)!
                    aggregates.append([FieldAggregate.sum(field), .average(field), .minimum(field), .maximum(field)].randomElement(using: &random)!)
                }
                let aggregating = groupBy != nil || aggregates.count > 1
                let columns = (groupBy.map { [$0] } ?? []) + aggregates.map(\.name)
                let joins = !aggregating && Bool.random(using: &random) ? [QueryRequest.Join(field: "r", target: "u")] : []
                let request = QueryRequest(
                    table: "t", id: Bool.random(using: &random) ? nil : .integer(Int64.random(in: 1...310, using: &random)),
                    conditions: conditions,
                    sort: aggregating
                        ? (Bool.random(using: &random) ? columns.randomElement(using: &random) : nil)
                        : (Bool.random(using: &random) ? ["n", "i", "k", "d", "id", "s", "t", "w", "mixed", "r"].randomElement(using: &random) : nil),
                    descending: Bool.random(using: &random),
                    offset: Bool.random(using: &random) ? Int.random(in: 0...4, using: &random) : nil,
                    limit: Bool.random(using: &random) ? [0, 1, 3, 5, 40].randomElement(using: &random) : nil,
                    fields: aggregating ? columns : fields.names + (joins.isEmpty ? [] : ["r.id", "r.name"]),
                    countOnly: countOnly, explain: false, format: [.ndjson, .table, .json, .csv].randomElement(using: &random)!, joins: joins,
                    groupBy: groupBy, aggregates: aggregating ? aggregates : [])
                // A missing id fails both ways, with the same message.
                func answer(_ body: () throws -> String?) -> String {
                    do { return try body() ?? "nil" } catch { return "error: \(error)" }
                }
                let oneShot = answer { try request.answer(from: reader) }
                let full = answer { try request.answer(in: restored) }
                #expect(oneShot == full, "\(conditions) id \(String(describing: request.id)) count \(countOnly)")
                if !countOnly, oneShot.contains("name of ") { joinedAnswers += 1 }
                if !countOnly, !aggregating, let limit = request.limit, pushdown(reader).filter(conditions).isExact,
                   try pushdown(reader).candidates(
                    sortedBy: request.sort ?? "id", descending: request.descending, first: (request.offset ?? 0) + limit, of: "t",
                    pushdown(reader).filter(conditions).filter, reader: reader) != nil {
                    pagedBySQL += 1
                }
                let pushdown = SQLPushdown(reader.metadata.table(named: "t")!)
                if countOnly, pushdown.filter(conditions).isExact { exactCounts += 1 }
                if aggregating, pushdown.filter(conditions).isExact,
                   try pushdown.groups(of: "t", pushdown.filter(conditions).filter, by: groupBy, aggregates, reader: reader) != nil {
                    sqlGroups += 1
                }
            }
        }
        #expect(exactCounts > 50, "SQLite answered too few counts alone: \(exactCounts)")
        #expect(joinedAnswers > 10, "too few answers printed joined records: \(joinedAnswers)")
        #expect(pagedBySQL > 8, "SQLite chose the rows of too few pages: \(pagedBySQL)")
        #expect(sqlGroups > 5, "SQLite answered too few group-bys: \(sqlGroups)")
    }
}
