import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing
@testable import EntityStore

/// Group-by with ±0 and NaN, Double and Float, and Query.min/max against group aggregates over zeros.
extension NaNAttackTests {
    // MARK: 7. Group-by with ±0 and NaN, Double and Float

    struct Agg<V: BinaryFloatingPoint> {
        var count: Int
        var min: V
        var max: V
    }

    static func expectedAggregates<V: BinaryFloatingPoint>(_ values: [(Int, V)]) -> [Int: Agg<V>] {
        var out: [Int: Agg<V>] = [:]
        for key in Set(values.map(\.0)) {
            let vs = values.filter { $0.0 == key }.map(\.1)
            let ordered = vs.filter { !$0.isNaN }
            let lo = ordered.min { a, b in a < b || (a == b && a.sign == .minus && b.sign == .plus) }
            let hi = ordered.max { a, b in a < b || (a == b && a.sign == .minus && b.sign == .plus) }
            out[key] = Agg(count: vs.count, min: lo ?? .nan, max: hi ?? .nan)
        }
        return out
    }

    static func same<V: BinaryFloatingPoint>(_ a: V, _ b: V) -> Bool { (a.isNaN && b.isNaN) || (a == b && a.sign == b.sign) }

    @Test(arguments: Soak.seeds(21...21, soak: 21...60))
    func groupByZerosAndNaNFollowRandomCommits(seed: UInt64) throws {
        let readings = Table<ZeroReading>("rnReadings")
        let store = try EntityStore { readings }
        var random = SplitMix64(seed: seed)
        let pool: [Double] = [0, -0.0, 0, -0.0, .nan, 1, -1, .infinity, -.infinity]
        func v() -> Double { pool[Int.random(in: 0..<pool.count, using: &random)] }
        let liveD = store.live(LiveQuery(readings), groupedBy: \.sensor, aggregating: \.d)
        let liveF = store.live(LiveQuery(readings), groupedBy: \.sensor, aggregating: \.f)
        let liveEven = store.live(LiveQuery(readings).filter { $0.id % 2 == 0 }, groupedBy: \.sensor, aggregating: \.d)
        let logD = UpdateLog<GroupValues<Int, Double>, GroupDiff<Int, Double>>()
        let tokenD = liveD.observe { logD.append($0) }
        var replayD = liveD.value.dictionary
        func check(_ step: String) {
            let state = store.state
            let rows = Array(state[readings])
            let rerunD = state[readings].query().aggregates(groupedBy: \.sensor, of: \.d)
            let rerunF = state[readings].query().aggregates(groupedBy: \.sensor, of: \.f)
            let rerunEven = state[readings].query().filter { $0.id % 2 == 0 }.aggregates(groupedBy: \.sensor, of: \.d)
            #expect(liveD.value.dictionary == rerunD, "\(step): Double live vs rerun")
            #expect(liveF.value.dictionary == rerunF, "\(step): Float live vs rerun")
            #expect(liveEven.value.dictionary == rerunEven, "\(step): filtered live vs rerun")
            for update in logD.take() { replayD = update.diff.apply(to: replayD) }
            #expect(replayD == liveD.value.dictionary, "\(step): Double diffs replay")
            let expD = Self.expectedAggregates(rows.map { ($0.sensor, $0.d) })
            let expF = Self.expectedAggregates(rows.map { ($0.sensor, $0.f) })
            #expect(Set(liveD.value.dictionary.keys) == Set(expD.keys), "\(step): keys")
            for (key, e) in expD {
                guard let a = liveD.value[key] else { Issue.record("\(step): missing group \(key)"); continue }
                #expect(a.count == e.count && Self.same(a.min, e.min) && Self.same(a.max, e.max),
                        "\(step) group \(key): Double live (\(a.count), \(a.min), \(a.max)) expected (\(e.count), \(e.min), \(e.max))")
            }
            for (key, e) in expF {
                guard let a = liveF.value[key] else { Issue.record("\(step): missing Float group \(key)"); continue }
                #expect(a.count == e.count && Self.same(a.min, e.min) && Self.same(a.max, e.max),
                        "\(step) group \(key): Float live (\(a.count), \(a.min), \(a.max)) expected (\(e.count), \(e.min), \(e.max))")
            }
        }
        check("initial")
        for step in 0..<250 {
            let id = Int.random(in: 0..<10, using: &random)
            let sensor = Int.random(in: 0..<2, using: &random)
            let d = v(), f = Float(v())
            let op = Int.random(in: 0..<5, using: &random)
            let body: () throws -> Void = {
                try store.write { tx in
                    switch op {
                    case 0: _ = try tx[readings].remove(id)
                    case 1: try tx[readings].upsert(ZeroReading(id: id, sensor: sensor, d: d, f: f))
                    case 2:
                        if tx[readings].find(id) != nil { _ = try tx[readings].update(id) { $0.d = d; $0.f = f } }
                    case 3:
                        // A zero flipping sign in place.
                        if let r = tx[readings].find(id) { _ = try tx[readings].update(id) { $0.d = -r.d; $0.f = -r.f } }
                    default:
                        if tx[readings].find(id) != nil { _ = try tx[readings].update(id) { $0.sensor = sensor } }
                    }
                }
            }
            if step % 7 == 0 {
                try store.batch {
                    try body()
                    try store.write { tx in try tx[readings].upsert(ZeroReading(id: (id + 1) % 10, sensor: 1 - sensor, d: -0.0, f: 0)) }
                }
            } else {
                try body()
            }
            check("step \(step)")
        }
        _ = tokenD
    }

    /// -0.0 == +0.0, yet an update of a zero to the other zero is a change: stored, and
    /// delivered to a live group-by.
    @Test func zeroSignFlipByUpdateReachesLiveGroupBy() throws {
        let readings = Table<ZeroReading>("flip")
        let store = try EntityStore { readings }
        try store.write { tx in try tx[readings].insert(ZeroReading(id: 1, sensor: 0, d: 0, f: 0)) }
        let live = store.live(LiveQuery(readings), groupedBy: \.sensor, aggregating: \.f)
        let log = UpdateLog<GroupValues<Int, Float>, GroupDiff<Int, Float>>()
        let token = live.observe { log.append($0) }
        try store.write { tx in _ = try tx[readings].update(1) { $0.f = -0.0 } }
        #expect(log.take().count == 1, "no group update delivered")
        let a = try #require(live.value[0])
        #expect(a.min.sign == .minus && a.max.sign == .minus, "live min \(a.min) max \(a.max) after setting -0.0")
        _ = token
    }

    /// `update` to -0.0 of a +0.0 field, and `upsert` of the same row with -0.0, store -0.0.
    @Test func updatingZeroToNegativeZeroIsStored() throws {
        let t = Table<NaNProbeRow>("negZero")
        let store = try EntityStore { t }
        try store.write { tx in try tx[t].insert(NaNProbeRow(id: 1, x: 0.0, opt: 0.0, g: 0, f: 0)) }
        try store.write { tx in _ = try tx[t].update(1) { $0.x = -0.0 } }
        #expect(try #require(store.state[t].find(1)).x.sign == .minus, "update(-0.0) dropped")
        try store.write { tx in try tx[t].upsert(NaNProbeRow(id: 1, x: -0.0, opt: -0.0, g: 0, f: 0)) }
        #expect(try #require(store.state[t].find(1)).opt?.sign == .minus, "upsert(-0.0) dropped")
    }

    /// A zero's sign change hidden in a write that changes the row twice (0.0 -> 5 -> -0.0),
    /// or in a batch, is in the change set: live group-bys and windows hold -0.0, as a
    /// re-run does.
    @Test(arguments: [false, true])
    func hiddenZeroSignChangeReachesLiveQueries(batched: Bool) throws {
        let t = Table<ZeroReading>("hiddenZero")
        let store = try EntityStore { t }
        try store.write { tx in
            try tx[t].insert(ZeroReading(id: 1, sensor: 0, d: 0.0, f: 0))
            try tx[t].insert(ZeroReading(id: 2, sensor: 0, d: 1.0, f: 0))
        }
        let groups = store.live(LiveQuery(t), groupedBy: \.sensor, aggregating: \.d)
        let window = store.live(LiveQuery(t).sorted(by: \.d).limit(1))
        if batched {
            try store.batch {
                try store.write { tx in _ = try tx[t].update(1) { $0.d = 5 } }
                try store.write { tx in _ = try tx[t].update(1) { $0.d = -0.0 } }
            }
        } else {
            try store.write { tx in
                _ = try tx[t].update(1) { $0.d = 5 }
                _ = try tx[t].update(1) { $0.d = -0.0 }
                _ = try tx[t].update(2) { $0.d = 2.0 }
            }
        }
        #expect(try #require(store.state[t].find(1)).d.sign == .minus, "state")
        let rerun = try #require(store.state[t].query().aggregates(groupedBy: \.sensor, of: \.d)[0])
        let live = try #require(groups.value[0])
        #expect(live == rerun, "live group (min \(live.min)) vs re-run (min \(rerun.min))")
        let liveRow = try #require(window.value.first)
        #expect(liveRow.d.sign == .minus, "live window row 1 holds \(liveRow.d), the state -0.0")
    }

    // MARK: 8. Consistency of Query.min/max with group aggregates over zeros

    /// `Query.min`/`max` over {+0.0, -0.0} (in that insertion order), with and without an
    /// ordered index, give -0.0 and +0.0, as group-by aggregates do.
    @Test(arguments: [false, true])
    func queryExtremesOfZerosMatchAggregates(indexed: Bool) throws {
        let t = indexed ? Table<NaNProbeRow>("zeros").ordered(\.x) : Table<NaNProbeRow>("zeros")
        let store = try EntityStore { t }
        try store.write { tx in
            try tx[t].insert(NaNProbeRow(id: 1, x: 0.0, opt: nil, g: 0, f: 0))
            try tx[t].insert(NaNProbeRow(id: 2, x: -0.0, opt: nil, g: 0, f: 0))
        }
        let view = store.state[t]
        let aggregate = try #require(view.query().aggregates(groupedBy: \.g, of: \.x)[0])
        let qmin = try #require(view.query().min(\.x)), qmax = try #require(view.query().max(\.x))
        #expect(qmin.sign == aggregate.min.sign, "Query.min \(qmin) vs aggregates min \(aggregate.min)")
        #expect(qmax.sign == aggregate.max.sign, "Query.max \(qmax) vs aggregates max \(aggregate.max)")
    }
}
