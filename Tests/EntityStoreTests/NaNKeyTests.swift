import EntityStoreTestSupport
import Testing
@testable import EntityStore

/// A measurement whose value may be NaN, indexed every way a Double can be.
struct Measurement: Entity {
    var id: Int
    var value: Double
    var limit: Double?
}

/// NaN is not equal to itself, so no lookup finds it and no comparison places it: indexes
/// leave such keys out (as they leave out `nil`), and every structure ordered by a value
/// keeps a total order. Random commits with NaN, ±0, ±infinity and ordinary values, checked
/// against a plain filter and the structures' invariants after every step.
@Suite struct NaNKeyTests {
    static let values: [Double] = [.nan, -.nan, 0, -0.0, 1, 2.5, .infinity, -.infinity]

    @Test(arguments: Soak.seeds([1], soak: 1...30))
    func indexesAndLiveQueriesStayExactWithNaNKeys(seed: UInt64) throws {
        let measurements = Table<Measurement>("measurements").grouped(\.value, name: "byValue").ordered(\.value).ordered(\.limit)
        let store = try EntityStore { measurements }
        var random = SplitMix64(seed: seed)
        func value() -> Double { Self.values[Int.random(in: 0..<Self.values.count, using: &random)] }
        func limit() -> Double? { Bool.random(using: &random) ? nil : value() }
        try store.write { tx in
            try tx[measurements].insert(contentsOf: (0..<40).map { Measurement(id: $0, value: value(), limit: limit()) })
        }
        let top = store.live(LiveQuery(measurements).where(\.value, in: 0...).sorted(by: \.value).limit(3))
        let window = store.live(LiveQuery(measurements).sorted(by: \.value).limit(5))

        func check(_ step: String) {
            let state = store.state
            #expect(state.invariantViolations().isEmpty, "\(step): \(state.invariantViolations())")
            let all = Array(state[measurements])
            let view = state[measurements]
            for probe in Self.values {
                #expect(Set(view.query().where(\.value, equals: probe).ids) == Set(all.filter { $0.value == probe }.map(\.id)),
                        "\(step): equals \(probe)")
                guard !probe.isNaN else { continue }  // a range with a NaN bound traps in Swift itself
                #expect(view.query().where(\.value, in: probe...).count == all.filter { $0.value >= probe }.count, "\(step): from \(probe)")
                #expect(view.query().where(\.limit, in: ...probe).count == all.filter { ($0.limit ?? .nan) <= probe }.count,
                        "\(step): limit through \(probe)")
            }
            let expectedTop = all.enumerated().filter { $0.element.value >= 0 }
                .sorted { ($0.element.value, $0.offset) < ($1.element.value, $1.offset) }.prefix(3).map(\.element.id)
            #expect(Array(top.value).map(\.id) == expectedTop, "\(step): live top 3")
            #expect(Array(window.value).map(\.id) == Self.nanLast(all, descending: false).prefix(5).map(\.id), "\(step): live window")
        }
        check("initial")
        for step in 0..<150 {
            try store.write { tx in
                let id = Int.random(in: 0..<50, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: _ = try tx[measurements].remove(id)
                case 1: try tx[measurements].upsert(Measurement(id: id, value: value(), limit: limit()))
                default:
                    if tx[measurements].find(id) != nil {
                        _ = try tx[measurements].update(id) { $0.value = value(); $0.limit = limit() }
                    }
                }
            }
            check("step \(step)")
        }
    }

    /// `rows` sorted by value, NaN values last in insertion order in either direction,
    /// other ties in insertion order: what sorted queries and live windows return.
    static func nanLast(_ rows: [Measurement], descending: Bool) -> [Measurement] {
        rows.enumerated().sorted { a, b in
            let (x, y) = (a.element.value, b.element.value)
            if x.isNaN || y.isNaN { return x.isNaN == y.isNaN ? a.offset < b.offset : y.isNaN }
            if x != y { return descending ? x > y : x < y }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// The same rows in three tables (grouped and ordered indexes, ordered indexes only,
    /// none), under random commits with NaN values: sorted queries and live windows in both
    /// directions place NaN rows last in insertion order, whatever serves them; extremes,
    /// nil tests and equality lookups (NaN finds nothing and never traps) agree.
    @Test(arguments: Soak.seeds([4], soak: 4...34))
    func sortsAndExtremesAgreeWithAndWithoutIndexes(seed: UInt64) throws {
        let indexed = Table<Measurement>("indexed").grouped(\.value, name: "byValue").ordered(\.value).ordered(\.limit)
        let ordered = Table<Measurement>("ordered").ordered(\.value).ordered(\.limit)
        let plain = Table<Measurement>("plain")
        let tables = [indexed, ordered, plain]
        let store = try EntityStore { indexed; ordered; plain }
        var random = SplitMix64(seed: seed)
        func value() -> Double { Self.values[Int.random(in: 0..<Self.values.count, using: &random)] }
        func limit() -> Double? { Bool.random(using: &random) ? nil : value() }
        let initial = (0..<30).map { _ in (value(), limit()) }
        // Inserted at once into empty tables: the indexes are bulk loaded.
        try store.write { tx in
            for table in tables {
                try tx[table].insert(contentsOf: initial.enumerated().map { Measurement(id: $0.offset, value: $0.element.0, limit: $0.element.1) })
            }
        }
        var windows: [(name: String, descending: Bool, limit: Int?, live: LiveList<Measurement>)] = []
        for table in tables {
            for descending in [false, true] {
                for limit in [nil, 1, 4] as [Int?] {
                    var query = LiveQuery(table).sorted(by: \.value, descending: descending)
                    if let limit { query = query.limit(limit) }
                    windows.append(("\(table.name) desc \(descending) limit \(String(describing: limit))", descending, limit, store.live(query)))
                }
            }
        }
        func same(_ a: Double?, _ b: Double?) -> Bool { a == b || (a?.isNaN ?? false) && (b?.isNaN ?? false) }
        func check(_ step: String) {
            let state = store.state
            #expect(state.invariantViolations().isEmpty, "\(step): \(state.invariantViolations())")
            let all = Array(state[plain])
            let ordered = all.filter { !$0.value.isNaN }.map(\.value)
            let expectedMin = ordered.min() ?? all.first?.value, expectedMax = ordered.max() ?? all.first?.value
            for table in tables {
                let view = state[table]
                for descending in [false, true] {
                    let expected = Self.nanLast(all, descending: descending).map(\.id)
                    #expect(view.query().sorted(by: \.value, descending: descending).ids == expected, "\(step) \(table.name): sorted desc \(descending)")
                    #expect(view.sorted(by: \.value, descending: descending, limit: 3).map(\.id) == Array(expected.prefix(3)),
                            "\(step) \(table.name): top 3 desc \(descending)")
                }
                #expect(same(view.query().min(\.value), expectedMin), "\(step) \(table.name): min")
                #expect(same(view.query().max(\.value), expectedMax), "\(step) \(table.name): max")
                #expect(view.query().whereNotNil(\.limit).count == all.filter { $0.limit != nil }.count, "\(step) \(table.name): not nil")
                #expect(view.query().whereNotNil(\.limit).ids.count == all.filter { $0.limit != nil }.count, "\(step) \(table.name): not nil rows")
                #expect(view.query().whereNil(\.limit).count == all.filter { $0.limit == nil }.count, "\(step) \(table.name): nil")
                #expect(view.count(\.value, equals: .nan) == 0 && view.filter(\.value, equals: .nan).isEmpty && view.first(where: \.value, equals: .nan) == nil,
                        "\(step) \(table.name): NaN equals nothing")
                #expect(view.query().where(\.value, equals: Double.nan).count == 0, "\(step) \(table.name): NaN query")
                #expect(view.count(\.value, equals: 1) == all.filter { $0.value == 1 }.count, "\(step) \(table.name): count of 1")
            }
            for window in windows {
                let expected = Self.nanLast(all, descending: window.descending).map(\.id)
                #expect(Array(window.live.value).map(\.id) == Array(expected.prefix(window.limit ?? expected.count)), "\(step): \(window.name)")
            }
        }
        check("initial")
        for step in 0..<120 {
            let id = Int.random(in: 0..<36, using: &random)
            let operation = Int.random(in: 0..<4, using: &random)
            let row = Measurement(id: id, value: value(), limit: limit())
            try store.write { tx in
                for table in tables {
                    switch operation {
                    case 0: _ = try tx[table].remove(id)
                    case 1: try tx[table].upsert(row)
                    default:
                        if tx[table].find(id) != nil { _ = try tx[table].update(id) { $0.value = row.value; $0.limit = row.limit } }
                    }
                }
            }
            check("step \(step)")
        }
    }
}
