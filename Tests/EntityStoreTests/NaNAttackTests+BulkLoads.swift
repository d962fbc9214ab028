import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing
@testable import EntityStore

/// Bulk loads and targeted window edges.
extension NaNAttackTests {
    // MARK: 5. Bulk loads and targeted window edges

    /// Bulk loads into empty tables (one shot and large), NaN keys first, last and only.
    @Test(arguments: [1, 7, 3000])
    func bulkLoadsWithNaNKeysKeepInvariants(count: Int) throws {
        let t = Table<NaNProbeRow>("bulk").ordered(\.x).ordered(\.opt).grouped(\.x, name: "gx")
        let store = try EntityStore { t }
        var random = SplitMix64(seed: UInt64(count))
        let rows = (0..<count).map { i in
            NaNProbeRow(id: i, x: Self.values[Int.random(in: 0..<Self.values.count, using: &random)],
                  opt: i % 3 == 0 ? nil : Self.values[Int.random(in: 0..<Self.values.count, using: &random)], g: 0, f: 0)
        }
        try store.write { tx in try tx[t].insert(contentsOf: rows) }
        #expect(store.state.invariantViolations().isEmpty, "\(store.state.invariantViolations())")
        for descending in [false, true] {
            #expect(store.state[t].query().sorted(by: \.x, descending: descending).ids == Self.nanLast(rows, \.x, descending: descending).map(\.id))
        }
        // A table holding only NaN keys (no ordered entries), then a second bulk insert.
        let only = Table<NaNProbeRow>("onlyNaN").ordered(\.x)
        let store2 = try EntityStore { only }
        try store2.write { tx in try tx[only].insert(contentsOf: (0..<5).map { NaNProbeRow(id: $0, x: .nan, opt: nil, g: 0, f: 0) }) }
        try store2.write { tx in try tx[only].insert(contentsOf: (5..<9).map { NaNProbeRow(id: $0, x: $0 % 2 == 0 ? .nan : Double($0), opt: nil, g: 0, f: 0) }) }
        #expect(store2.state.invariantViolations().isEmpty, "\(store2.state.invariantViolations())")
        #expect(store2.state[only].query().sorted(by: \.x, descending: true).ids == [7, 5, 0, 1, 2, 3, 4, 6, 8])
        // Emptied then reloaded: sequences continue.
        try store2.write { tx in for id in 0..<9 { _ = try tx[only].remove(id) } }
        try store2.write { tx in try tx[only].insert(contentsOf: [NaNProbeRow(id: 1, x: .nan, opt: nil, g: 0, f: 0), NaNProbeRow(id: 0, x: 1, opt: nil, g: 0, f: 0)]) }
        #expect(store2.state.invariantViolations().isEmpty)
        #expect(store2.state[only].query().sorted(by: \.x).ids == [0, 1])
    }

    /// A window full of NaN rows whose members leave one by one (refills from the
    /// unordered map after a NaN boundary), and a row moving from NaN to a number and back.
    @Test(arguments: [false, true], [false, true])
    func windowFullOfNaNRefills(descending: Bool, indexed: Bool) throws {
        let t = indexed ? Table<NaNProbeRow>("nanWindow").ordered(\.x) : Table<NaNProbeRow>("nanWindow")
        let store = try EntityStore { t }
        try store.write { tx in
            for id in 0..<6 { try tx[t].insert(NaNProbeRow(id: id, x: id % 2 == 0 ? .nan : -.nan, opt: nil, g: 0, f: 0)) }
        }
        let live = store.live(LiveQuery(t).sorted(by: \.x, descending: descending).limit(2))
        var model = Model()
        for r in store.state[t] { model.insert(r) }
        func check(_ step: String) {
            let expected = Array(Self.nanLast(model.rows, \.x, descending: descending).prefix(2)).map(\.id)
            #expect(live.value.map(\.id) == expected, "\(step): live \(live.value.map(\.id)) expected \(expected)")
            #expect(store.state[t].query().sorted(by: \.x, descending: descending).limit(2).ids == expected, "\(step): query")
        }
        check("initial")
        try store.write { tx in _ = try tx[t].remove(0) }; model.remove(0); check("remove first NaN")
        try store.write { tx in _ = try tx[t].update(2) { $0.x = 5 } }; model.update(2) { $0.x = 5 }; check("NaN -> 5")
        try store.write { tx in _ = try tx[t].update(2) { $0.x = .nan } }; model.update(2) { $0.x = .nan }; check("5 -> NaN keeps place")
        try store.write { tx in _ = try tx[t].update(1) { $0.x = .nan } }; model.update(1) { $0.x = .nan }; check("-NaN -> NaN")
        try store.write { tx in _ = try tx[t].remove(1); try tx[t].insert(NaNProbeRow(id: 1, x: .nan, opt: nil, g: 0, f: 0)) }
        model.remove(1); model.insert(NaNProbeRow(id: 1, x: .nan, opt: nil, g: 0, f: 0)); check("reinsert NaN moves last")
        try store.write { tx in _ = try tx[t].remove(2); _ = try tx[t].remove(3) }; model.remove(2); model.remove(3); check("remove both members")
        try store.write { tx in try tx[t].insert(NaNProbeRow(id: 9, x: -.infinity, opt: nil, g: 0, f: 0)) }
        model.insert(NaNProbeRow(id: 9, x: -.infinity, opt: nil, g: 0, f: 0)); check("-inf enters")
        try store.write { tx in try tx[t].insert(NaNProbeRow(id: 10, x: .infinity, opt: nil, g: 0, f: 0)) }
        model.insert(NaNProbeRow(id: 10, x: .infinity, opt: nil, g: 0, f: 0)); check("+inf enters")
        try store.write { tx in for id in [4, 5, 9, 10, 1] { _ = try tx[t].remove(id) } }
        for id in [4, 5, 9, 10, 1] { model.remove(id) }; check("all gone")
    }
}
