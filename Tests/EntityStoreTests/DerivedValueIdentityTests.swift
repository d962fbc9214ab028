import EntityStore
import StoreCore
import Testing

/// Derived queries tell a change as the store's change sets do (`ValueIdentity`): a
/// field going from `0.0` to `-0.0` is delivered, and a restore of rows holding NaN that
/// leaves them as they were delivers nothing.
@Suite struct DerivedValueIdentityTests {
    private let readings = Table<ZeroReading>("readings").grouped(\.sensor)

    private func store() throws -> EntityStore {
        let store = try EntityStore { readings }
        try store.write { tx in
            try tx[readings].insert(ZeroReading(id: 1, sensor: 0, d: 0.0, f: 0))
            try tx[readings].insert(ZeroReading(id: 2, sensor: 0, d: .nan, f: .nan))
        }
        return store
    }

    /// Counts the deliveries of `query`.
    private func counting<V>(_ query: DerivedQuery<V>) -> (Observation, Lock<Int>) {
        let count = Lock(0)
        let observation = query.observe { _, _ in count.withLock { $0 += 1 } }
        return (observation, count)
    }

    @Test("a zero's sign flip reaches every derived form, once")
    func zeroSignFlip() throws {
        let store = try store()
        let one = store.derived(readings, id: 1)
        let kept = try store.derivedKeepingLast(readings, id: 1)
        let some = store.derived(readings, ids: [1, 2])
        let group = store.derived(readings, where: \.sensor, equals: 0)
        let watched = [counting(one), counting(kept), counting(some), counting(group)]
        try store.write { tx in _ = try tx[readings].update(1) { $0.d = -0.0 } }
        #expect(one.value?.d.sign == .minus, "derived(id:) holds \(String(describing: one.value))")
        #expect(kept.value.d.sign == .minus, "derivedKeepingLast holds \(kept.value)")
        #expect(some.value.first?.d.sign == .minus, "derived(ids:) holds \(some.value)")
        #expect(group.value.first?.d.sign == .minus, "derived(where:equals:) holds \(Array(group.value))")
        #expect(watched.map { $0.1.withLock { $0 } } == [1, 1, 1, 1])
        // And back: another change, delivered again.
        try store.write { tx in _ = try tx[readings].update(1) { $0.d = 0.0 } }
        #expect(one.value?.d.sign == .plus)
        #expect(watched.map { $0.1.withLock { $0 } } == [2, 2, 2, 2])
    }

    @Test("restoring the same rows, NaN included, delivers nothing", arguments: [false, true])
    func sameNaNRestored(rawCoreCommit: Bool) throws {
        let store = try store()
        let same = store.state
        let nan = store.derived(readings, id: 2)
        let kept = try store.derivedKeepingLast(readings, id: 2)
        let some = store.derived(readings, ids: [1, 2])
        let watched = [counting(nan), counting(kept), counting(some)]
        if rawCoreCommit {
            try store.core.commit { $0 = same }
        } else {
            try store.replaceAll(with: same)
        }
        #expect(watched.map { $0.1.withLock { $0 } } == [0, 0, 0])
        // A real change still is one.
        try store.write { tx in _ = try tx[readings].update(2) { $0.d = 1 } }
        #expect(watched.map { $0.1.withLock { $0 } } == [1, 1, 1])
    }
}
