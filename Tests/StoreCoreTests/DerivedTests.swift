import StoreCore
import Testing

@Suite("Derived")
struct DerivedTests {
    @Test func aKeyPathDerivedFollowsItsValueOnly() throws {
        let store = Store(AppState())
        let count = store.derived(\.count)
        #expect(count.value == 0)
        #expect(count.recomputations == 0)
        try store.commit { $0.name = "x" }
        #expect(count.recomputations == 0)
        try store.commit { $0.count = 3 }
        #expect(count.value == 3)
        #expect(count.recomputations == 1)
    }

    @Test func aTransformRecomputesOnlyOnInputChangeAndNotifiesOnlyOnOutputChange() throws {
        let store = Store(AppState())
        let parity = store.derived(from: \.count) { $0 % 2 == 0 ? "even" : "odd" }
        let seen = Recorder<String>()
        let observation = parity.observe { old, new in seen.append("\(old)->\(new)") }
        try store.commit { $0.name = "unrelated" }
        #expect(parity.recomputations == 0)
        try store.commit { $0.count = 2 }
        #expect(parity.recomputations == 1)
        #expect(seen.values.isEmpty)
        try store.commit { $0.count = 3 }
        #expect(parity.recomputations == 2)
        #expect(parity.value == "odd")
        #expect(seen.values == ["even->odd"])
        observation.cancel()
    }

    @Test func multipleKeyPathsRecomputeOncePerCommit() throws {
        let store = Store(AppState())
        let label = store.derived(from: \.name, \.count) { name, count in "\(name)\(count)" }
        let triple = store.derived(from: \.name, \.count, \.nested.flag) { name, count, flag in
            "\(name)\(count)\(flag)"
        }
        try store.commit { state in
            state.name = "n"
            state.count = 1
        }
        #expect(label.value == "n1")
        #expect(label.recomputations == 1)
        try store.commit { $0.nested.value = 9 }
        #expect(label.recomputations == 1)
        #expect(triple.recomputations == 1)
        try store.commit { $0.nested.flag = true }
        #expect(label.recomputations == 1)
        #expect(triple.value == "n1true")
        #expect(triple.recomputations == 2)
    }

    @Test func mapAndCombineChainDerivedValues() throws {
        let store = Store(AppState())
        let count = store.derived(\.count)
        let doubled = count.map { $0 * 2 }
        let name = store.derived(\.name)
        let summary = Derived.combine(doubled, name) { value, name in "\(name)=\(value)" }
        let three = Derived.combine(count, doubled, name) { a, b, c in "\(c):\(a),\(b)" }
        #expect(summary.value == "=0")
        try store.commit { $0.count = 2 }
        #expect(doubled.value == 4)
        #expect(doubled.recomputations == 1)
        #expect(summary.value == "=4")
        #expect(summary.recomputations == 1)
        try store.commit { $0.name = "x" }
        #expect(summary.value == "x=4")
        #expect(summary.recomputations == 2)
        #expect(doubled.recomputations == 1)
        try store.commit { $0.nested.flag = true }
        #expect(summary.recomputations == 2)
        #expect(three.value == "x:2,4")
        // count and doubled both changed in one commit: one recomputation per source.
        #expect(three.recomputations == 3)
    }

    @Test func derivedValuesStreamYieldsCurrentThenChanges() async throws {
        let store = Store(AppState())
        let count = store.derived(\.count)
        let stream = count.values()
        try store.commit { $0.count = 1 }
        try store.commit { $0.name = "skip" }
        try store.commit { $0.count = 2 }
        #expect(await collect(stream, count: 3) == [0, 1, 2])
    }

    @Test func aDeallocatedDerivedStopsObservingAndEndsItsStreams() async throws {
        let store = Store(AppState())
        var count: Derived<Int>? = store.derived(\.count)
        let stream = try #require(count).values()
        #expect(store.observerCount == 1)
        count = nil
        #expect(store.observerCount == 0)
        try store.commit { $0.count = 1 }
        #expect(await collect(stream, count: 5) == [0])
    }

    @Test func aDerivedObservationCanBeCancelled() throws {
        let store = Store(AppState())
        let count = store.derived(\.count)
        let seen = Recorder<Int>()
        let observation = count.observe { _, new in seen.append(new) }
        try store.commit { $0.count = 1 }
        observation.cancel()
        try store.commit { $0.count = 2 }
        #expect(seen.values == [1])
    }
}
