import EntityStoreTestSupport
import Testing
@testable import EntityStore

@Suite("Dynamic records: ranges and sorting through an ordered index")
struct DynamicOrderedQueryTests {
    /// The same records in a table with an ordered index on `year` and in one without.
    struct Shelves {
        let indexed = Table<DynamicRecord>("indexed").index(.ordered, field: "year")
        let plain = Table<DynamicRecord>("plain")
        let store: EntityStore

        init(_ years: [JSONValue?]) throws {
            let indexed = indexed, plain = plain
            store = try EntityStore {
                indexed
                plain
            }
            let records = years.enumerated().map { position, year in
                DynamicRecord(id: .integer(Int64(position)), fields: year.map { ["year": $0, "n": .integer(Int64(position))] } ?? [:])
            }
            try store.write { tx in
                try tx[indexed].insert(contentsOf: records)
                try tx[plain].insert(contentsOf: records)
            }
        }

        /// The IDs `query` gives on both tables; they must agree.
        func ids(_ query: (Query<DynamicRecord>) -> Query<DynamicRecord>) -> [Int64] {
            let fromIndex = query(store.state[indexed].query()).ids
            let fromScan = query(store.state[plain].query()).ids
            #expect(fromIndex == fromScan, "index and scan disagree")
            return fromIndex.map { id in if case .integer(let value) = id { value } else { -1 } }
        }
    }

    @Test("ranges follow the documented order and use the index")
    func ranges() throws {
        // 0: 1969, 1: 1970, 2: 1975.5, 3: 1979, 4: 1979.0, 5: 1980, 6: "1975",
        // 7: null, 8: true, 9: missing, 10: [1975], 11: 1970
        let shelves = try Shelves([1969, 1970, 1975.5, 1979, .double(1979), 1980, "1975", .some(.null), true, nil, [1975], 1970])
        let state = shelves.store.state
        #expect(state[shelves.indexed].query().where(field: "year", in: 1970...1979).plan.hasPrefix("index lookup"))
        #expect(state[shelves.plain].query().where(field: "year", in: 1970...1979).plan == "table scan")

        let sortedByYear: (Query<DynamicRecord>) -> Query<DynamicRecord> = { $0.sorted(byField: "year") }
        #expect(shelves.ids { sortedByYear($0.where(field: "year", in: 1970...1979)) } == [1, 11, 2, 3])
        #expect(shelves.ids { sortedByYear($0.where(field: "year", in: 1970..<1980)) } == [1, 11, 2, 3, 4])
        // One-sided ranges stay within their bound's kind.
        #expect(shelves.ids { sortedByYear($0.where(field: "year", in: 1975...)) } == [2, 3, 4, 5])
        #expect(shelves.ids { sortedByYear($0.where(field: "year", in: ..<1970)) } == [0])
        #expect(shelves.ids { sortedByYear($0.where(field: "year", in: ...JSONValue.string("2"))) } == [6])
        #expect(shelves.ids { sortedByYear($0.where(field: "year", in: JSONValue.null...JSONValue.null)) } == [7])
        // A two-sided range spans kinds.
        #expect(shelves.ids { sortedByYear($0.where(field: "year", in: JSONValue.bool(false)...JSONValue.string("1975"))) }
            == [8, 0, 1, 11, 2, 3, 4, 5, 6])
        #expect(shelves.ids { $0.where(field: "year", in: 2000...) }.isEmpty)
        // With another condition.
        #expect(shelves.ids { sortedByYear($0.where(field: "year", in: 1970...1979).where(field: "n", equals: 11)) } == [11])
        #expect(state[shelves.indexed].query().where(field: "year", in: 1970..<1980).count == 5)
    }

    @Test("sorting uses the index, stops at the limit and puts records without the field last")
    func sorting() throws {
        let shelves = try Shelves([3, "b", nil, 1.5, [1], 1, nil, "a", 1, false, ["k": 1], .double(1)])
        // Records 2 and 6 lack the field.
        let view = shelves.store.state[shelves.indexed]
        #expect(view.query().sorted(byField: "year").plan == "ordered index scan (year)")
        #expect(shelves.store.state[shelves.plain].query().sorted(byField: "year").plan == "table scan")
        #expect(shelves.ids { $0.sorted(byField: "year") } == [9, 5, 8, 11, 3, 0, 7, 1, 4, 10, 2, 6])
        #expect(shelves.ids { $0.sorted(byField: "year", descending: true) } == [10, 4, 1, 7, 0, 3, 11, 5, 8, 9, 2, 6])
        #expect(shelves.ids { $0.sorted(byField: "year").limit(3) } == [9, 5, 8])
        #expect(shelves.ids { $0.sorted(byField: "year").offset(10).limit(5) } == [2, 6])
        #expect(view.sorted(byField: "year", descending: true, limit: 2).map(\.id) == [.integer(10), .integer(4)])
        #expect(shelves.ids { $0.sorted(byField: "id", descending: true).limit(2) } == [11, 10])
    }

    @Test("index and scan agree on random values, ranges and sorts")
    func randomized() throws {
        var generator = SplitMix64(seed: 2024)
        let years: [JSONValue?] = (0..<200).map { _ in
            Int.random(in: 0..<10, using: &generator) == 0
                ? nil : JSONValueSamples.random(using: &generator, depth: 1)
        }
        let shelves = try Shelves(years)
        let present = years.compactMap { $0 }
        for _ in 0..<60 {
            let a = present[Int.random(in: 0..<present.count, using: &generator)]
            let b = present[Int.random(in: 0..<present.count, using: &generator)]
            let (low, high) = a < b ? (a, b) : (b, a)
            let descending = Bool.random(using: &generator)
            let limit = Int.random(in: 1...20, using: &generator)
            func sorted(_ query: Query<DynamicRecord>) -> Query<DynamicRecord> {
                query.sorted(byField: "year", descending: descending)
            }
            let closed = shelves.ids { sorted($0.where(field: "year", in: low...high)) }
            let expected = years.indices.filter { years[$0].map { low <= $0 && $0 <= high } ?? false }
            #expect(Set(closed) == Set(expected.map(Int64.init)))
            _ = shelves.ids { sorted($0.where(field: "year", in: low..<high)) }
            // `low...` ends where the next kind begins.
            let from = shelves.ids { sorted($0.where(field: "year", in: low...)) }
            let sameKind = years.indices.filter { index in
                guard let year = years[index], low <= year else { return false }
                return low.leastOfNextKind.map { year < $0 } ?? true
            }
            #expect(Set(from) == Set(sameKind.map(Int64.init)))
            _ = shelves.ids { sorted($0.where(field: "year", in: ...high)) }
            _ = shelves.ids { sorted($0).limit(limit) }
        }
        let all = shelves.ids { $0.sorted(byField: "year") }
        #expect(all.count == years.count)
        let order = all.map { years[Int($0)] }
        let withField = order.prefix { $0 != nil }.compactMap { $0 }
        #expect(withField.count == present.count)
        #expect(zip(withField, withField.dropFirst()).allSatisfy { !($1 < $0) })
    }
}
