import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing
@testable import EntityStore

/// Query paths under random commits, ranges that never hold NaN, and NaN order when another index serves the query.
extension NaNAttackTests {
    // MARK: 2. Query paths under random commits (model test)

    @Test(arguments: Soak.seeds(11...11, soak: 11...50))
    func queryPathsFollowRandomCommits(seed: UInt64) throws {
        let indexed = Table<NaNProbeRow>("indexed").grouped(\.x, name: "byX").ordered(\.x).ordered(\.opt)
        let ordered = Table<NaNProbeRow>("ordered").ordered(\.x).ordered(\.opt)
        let grouped = Table<NaNProbeRow>("grouped").grouped(\.x).grouped(\.opt)
        let plain = Table<NaNProbeRow>("plain")
        let tables = [indexed, ordered, grouped, plain]
        let store = try EntityStore { indexed; ordered; grouped; plain }
        var random = SplitMix64(seed: seed)
        func value() -> Double { Self.values[Int.random(in: 0..<Self.values.count, using: &random)] }
        var model = Model()
        let initial = (0..<20).map { NaNProbeRow(id: $0, x: value(), opt: Bool.random(using: &random) ? nil : value(), g: $0 % 3, f: 0) }
        for r in initial { model.insert(r) }
        try store.write { tx in for t in tables { try tx[t].insert(contentsOf: initial) } }

        func check(_ step: String) {
            let state = store.state
            #expect(state.invariantViolations().isEmpty, "\(step): \(state.invariantViolations())")
            let rows = model.rows
            let ordinary = rows.map(\.x).filter { !$0.isNaN }
            let expectedMin = ordinary.min() ?? rows.first?.x, expectedMax = ordinary.max() ?? rows.first?.x
            for t in tables {
                let view = state[t]
                let name = "\(step) \(t.name)"
                #expect(view.query().count == rows.count, "\(name): count")
                for descending in [false, true] {
                    let sorted = Self.nanLast(rows, \.x, descending: descending)
                    for offset in [0, 1, 3] {
                        for limit in [nil, 0, 1, 2, 4] as [Int?] {
                            var q = view.query().sorted(by: \.x, descending: descending).offset(offset)
                            if let limit { q = q.limit(limit) }
                            #expect(q.ids == Self.page(sorted, offset: offset, limit: limit).map(\.id), "\(name): sorted desc \(descending) offset \(offset) limit \(String(describing: limit))")
                        }
                    }
                    #expect(view.query().sorted(by: \.x, descending: descending).first?.id == sorted.first?.id, "\(name): first desc \(descending)")
                    // Sorted with a filter (source: the index walk, filtered).
                    #expect(view.query().filter { $0.g == 1 }.sorted(by: \.x, descending: descending).ids
                            == sorted.filter { $0.g == 1 }.map(\.id), "\(name): filtered sorted desc \(descending)")
                    // Sorted with an equality source on g (no index on g): scan, then sort.
                    #expect(view.query().where(\.g, equals: 2).sorted(by: \.x, descending: descending).limit(3).ids
                            == Array(sorted.filter { $0.g == 2 }.prefix(3)).map(\.id), "\(name): g == 2 sorted desc \(descending)")
                }
                let qmin = view.query().min(\.x), qmax = view.query().max(\.x)
                #expect((qmin == expectedMin) || (qmin?.isNaN == true && expectedMin?.isNaN == true), "\(name): min \(String(describing: qmin)) vs \(String(describing: expectedMin))")
                #expect((qmax == expectedMax) || (qmax?.isNaN == true && expectedMax?.isNaN == true), "\(name): max \(String(describing: qmax)) vs \(String(describing: expectedMax))")
                for probe in Self.values {
                    let matching = rows.filter { $0.x == probe }.map(\.id)
                    #expect(view.query().where(\.x, equals: probe).ids.sorted() == matching.sorted(), "\(name): equals \(probe) ids")
                    #expect(view.query().where(\.x, equals: probe).count == matching.count, "\(name): equals \(probe) count")
                    #expect(view.query().where(\.x, equals: probe).exists == !matching.isEmpty, "\(name): equals \(probe) exists")
                    #expect(view.query().where(\.x, equals: probe).first?.id == matching.first, "\(name): equals \(probe) first")
                    #expect(view.filter(\.x, equals: probe).map(\.id) == matching, "\(name): filter \(probe)")
                    #expect(view.count(\.x, equals: probe) == matching.count, "\(name): count \(probe)")
                    #expect(view.first(where: \.x, equals: probe)?.id == matching.first, "\(name): first \(probe)")
                    let optMatching = rows.filter { $0.opt == probe }.map(\.id)
                    #expect(view.query().where(\.opt, equals: probe).ids.sorted() == optMatching.sorted(), "\(name): opt equals \(probe)")
                    #expect(view.query().where(\.opt, equals: probe).count == optMatching.count, "\(name): opt equals \(probe) count")
                }
                #expect(Set(view.query().whereNotNil(\.opt).ids) == Set(rows.filter { $0.opt != nil }.map(\.id)), "\(name): not nil")
                #expect(view.query().whereNotNil(\.opt).count == rows.filter { $0.opt != nil }.count, "\(name): not nil count")
                #expect(view.query().whereNil(\.opt).count == rows.filter { $0.opt == nil }.count, "\(name): nil count")
                #expect(Set(view.query().whereNil(\.opt).ids) == Set(rows.filter { $0.opt == nil }.map(\.id)), "\(name): nil ids")
                #expect(view.query().whereNotNil(\.opt).exists == rows.contains { $0.opt != nil }, "\(name): not nil exists")
            }
        }
        check("initial")
        for step in 0..<100 {
            let id = Int.random(in: 0..<26, using: &random)
            let op = Int.random(in: 0..<4, using: &random)
            let r = NaNProbeRow(id: id, x: value(), opt: Bool.random(using: &random) ? nil : value(), g: Int.random(in: 0..<3, using: &random), f: 0)
            try store.write { tx in
                for t in tables {
                    switch op {
                    case 0: _ = try tx[t].remove(id)
                    case 1: try tx[t].upsert(r)
                    case 2:
                        _ = try tx[t].remove(id)
                        try tx[t].insert(r)
                    default:
                        if tx[t].find(id) != nil { _ = try tx[t].update(id) { $0.x = r.x; $0.opt = r.opt; $0.g = r.g } }
                    }
                }
            }
            switch op {
            case 0: model.remove(id)
            case 1: model.upsert(r)
            case 2: model.remove(id); model.insert(r)
            default: model.update(id) { $0.x = r.x; $0.opt = r.opt; $0.g = r.g }
            }
            check("step \(step)")
        }
    }

    // MARK: 3. Ranges never hold NaN (whatever serves them)

    /// A NaN lies in no range, whether an ordered index serves the range or a filter tests
    /// it (`SortedMapRange.contains` tests each bound as the comparison that admits a key,
    /// which is false for a NaN).
    @Test(arguments: ["ordered", "plain"])
    func unindexedRangeQueryExcludesNaN(table name: String) throws {
        let t = name == "ordered" ? Table<NaNProbeRow>(name).ordered(\.x).ordered(\.opt) : Table<NaNProbeRow>(name)
        let store = try EntityStore { t }
        try store.write { tx in
            try tx[t].insert(NaNProbeRow(id: 1, x: .nan, opt: .nan, g: 0, f: 0))
            try tx[t].insert(NaNProbeRow(id: 2, x: 0.5, opt: 0.5, g: 0, f: 0))
        }
        let view = store.state[t]
        #expect(view.query().where(\.x, in: 0.0...1.0).ids == [2], "\(name): closed range")
        #expect(view.query().where(\.x, in: 0.0...).ids == [2], "\(name): partial from")
        #expect(view.query().where(\.x, in: ..<1.0).ids == [2], "\(name): partial up to")
        #expect(view.query().where(\.x, in: 0.0...1.0).count == 1, "\(name): count")
        #expect(view.query().where(\.opt, in: 0.0...1.0).ids == [2], "\(name): optional field range")
        #expect(view.query().where(.field(\.x, in: 0.0...1.0)).ids == [2], "\(name): QueryPredicate range")
    }

    /// Live equality sources on +0.0, -0.0 and NaN (with a grouped, an ordered and no
    /// index), and a unique index on a Double that holds several NaN rows.
    @Test func liveEqualityOnZerosAndNaNAndUniqueNaN() throws {
        let grouped = Table<NaNProbeRow>("eqGrouped").grouped(\.x)
        let ordered = Table<NaNProbeRow>("eqOrdered").ordered(\.x)
        let plain = Table<NaNProbeRow>("eqPlain")
        let unique = Table<NaNProbeRow>("eqUnique").unique(\.x)
        let store = try EntityStore { grouped; ordered; plain; unique }
        var lives: [(String, Double, Table<NaNProbeRow>, LiveList<NaNProbeRow>)] = []
        for t in [grouped, ordered, plain] {
            for key in [0.0, -0.0, .nan] {
                lives.append(("\(t.name) \(key)", key, t, store.live(LiveQuery(t).where(\.x, equals: key))))
                lives.append(("\(t.name) \(key) top1", key, t, store.live(LiveQuery(t).where(\.x, equals: key).sorted(by: \.id).limit(1))))
            }
        }
        var model = Model()
        func check(_ step: String) {
            for (name, key, t, live) in lives {
                let expected = model.rows.filter { $0.x == key }.map(\.id)
                let got = live.value.map(\.id)
                #expect(got == (name.hasSuffix("top1") ? Array(expected.sorted().prefix(1)) : expected), "\(step) \(name): \(got) vs \(expected)")
                #expect(store.state[t].query().where(\.x, equals: key).ids.sorted() == expected.sorted(), "\(step) \(name): query")
            }
        }
        let script: [(Int, Double?)] = [(1, -0.0), (2, 0.0), (3, .nan), (1, .nan), (3, -0.0), (4, -.nan), (2, nil), (5, 0.0), (4, 0.0), (3, nil)]
        for (step, (id, x)) in script.enumerated() {
            try store.write { tx in
                for t in [grouped, ordered, plain] {
                    if let x { try tx[t].upsert(NaNProbeRow(id: id, x: x, opt: nil, g: 0, f: 0)) } else { _ = try tx[t].remove(id) }
                }
            }
            if let x { model.upsert(NaNProbeRow(id: id, x: x, opt: nil, g: 0, f: 0)) } else { model.remove(id) }
            check("step \(step)")
        }
        try store.write { tx in
            for id in 0..<4 { try tx[unique].insert(NaNProbeRow(id: id, x: .nan, opt: nil, g: 0, f: 0)) }
            try tx[unique].insert(NaNProbeRow(id: 9, x: 0, opt: nil, g: 0, f: 0))
        }
        #expect(throws: EntityStoreError.self) { try store.write { tx in try tx[unique].insert(NaNProbeRow(id: 10, x: -0.0, opt: nil, g: 0, f: 0)) } }
        try store.write { tx in _ = try tx[unique].update(1) { $0.x = 7 } }
        #expect(store.state.invariantViolations().isEmpty, "\(store.state.invariantViolations())")
        #expect(store.state[unique].first(where: \.x, equals: -0.0)?.id == 9)
        #expect(store.state[unique].query().sorted(by: \.x, descending: true).ids == [1, 9, 0, 2, 3])
    }

    /// A range that is not the query's source (another condition is) is a filter, in the
    /// query and in its live form: it leaves NaN rows out too.
    @Test func rangeFilterBehindAnotherSourceExcludesNaN() throws {
        let t = Table<NaNProbeRow>("rangeFilter").grouped(\.g).ordered(\.x)
        let store = try EntityStore { t }
        try store.write { tx in
            try tx[t].insert(NaNProbeRow(id: 1, x: .nan, opt: nil, g: 0, f: 0))
            try tx[t].insert(NaNProbeRow(id: 2, x: 0.5, opt: nil, g: 0, f: 0))
        }
        let query = store.state[t].query().where(\.g, equals: 0).where(\.x, in: 0.0...1.0)
        #expect(query.ids == [2], "query: \(query.ids)")
        let live = try #require(store.live(query))
        #expect(live.value.map(\.id) == [2], "live form: \(live.value.map(\.id))")
    }

    // MARK: 4. NaN order when another index serves the query

    /// `sorted(by:)` keeps NaN rows last and other ties in insertion order even when the
    /// candidates come from an ordered index on another field (here `opt`), which hands
    /// them out in that field's order; the live form agrees.
    @Test func sortBehindAnotherOrderedIndexKeepsInsertionOrderForNaN() throws {
        let t = Table<NaNProbeRow>("foreign").ordered(\.opt)
        let store = try EntityStore { t }
        try store.write { tx in
            // Insertion order 1, 2, 3; opt order 3, 2, 1.
            try tx[t].insert(NaNProbeRow(id: 1, x: .nan, opt: 3, g: 0, f: 0))
            try tx[t].insert(NaNProbeRow(id: 2, x: .nan, opt: 2, g: 0, f: 0))
            try tx[t].insert(NaNProbeRow(id: 3, x: 7, opt: 1, g: 0, f: 0))
        }
        let view = store.state[t]
        let q = view.query().where(\.opt, in: 0.0...10.0).sorted(by: \.x)
        #expect(q.ids == [3, 1, 2], "range source on opt: \(q.ids)")
        let notNil = view.query().whereNotNil(\.opt).sorted(by: \.x, descending: true)
        #expect(notNil.ids == [3, 1, 2], "not-nil source on opt: \(notNil.ids)")
        // The live form of the same query sorts NaN rows by insertion position.
        let live = try #require(store.live(q))
        #expect(live.value.map(\.id) == q.ids, "live \(live.value.map(\.id)) vs query \(q.ids)")
    }
}
