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

    @Test(arguments: [1, 2, 3] as [UInt64])
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
            #expect(Array(window.value).count == min(5, all.count), "\(step): live window size")
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
}
