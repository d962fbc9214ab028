import Observation
import StoreCore
import Testing
@testable import EntityStore

@Suite struct LiveObservationTests {
    /// Derived queries and live queries are `Observable`: a commit that changes the value
    /// fires `withObservationTracking`'s `onChange`; one that does not, does not.
    @Test func trackingFiresOnlyForCommitsThatChangeTheValue() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        try store.write { tx in try tx[items].insert(Item(id: 1, group: 0, score: 1, tag: 0)) }
        let derived = store.derived(items, id: 1)
        let members = store.derived(items, where: \.group, equals: 0)
        let live = store.live(LiveQuery(items).where(\.group, equals: 0))
        let groups = store.live(LiveQuery(items), groupedBy: \.group, aggregating: \.score)
        let fired = Lock<[String]>([])
        func track() {
            withObservationTracking { _ = derived.value } onChange: { fired.withLock { $0.append("derived") } }
            withObservationTracking { _ = members.value } onChange: { fired.withLock { $0.append("members") } }
            withObservationTracking { _ = live.value } onChange: { fired.withLock { $0.append("live") } }
            withObservationTracking { _ = groups.value } onChange: { fired.withLock { $0.append("groups") } }
        }
        track()
        try store.write { tx in try tx[items].insert(Item(id: 2, group: 1, score: 0, tag: 0)) }
        #expect(fired.withLock { $0 } == ["groups"])
        fired.withLock { $0 = [] }
        // Only the one that fired needs tracking again (the others still are).
        withObservationTracking { _ = groups.value } onChange: { fired.withLock { $0.append("groups") } }
        try store.write { tx in _ = try tx[items].update(1) { $0.tag = 5 } }
        #expect(fired.withLock { $0.sorted() } == ["derived", "live", "members"])
        // The value read inside onChange is already the new one, and the lock is free.
        let seen = Lock<Int?>(nil)
        withObservationTracking { _ = live.value } onChange: { seen.withLock { $0 = live.value.first?.score } }
        try store.write { tx in _ = try tx[items].update(1) { $0.score = 9 } }
        #expect(seen.withLock { $0 } == 9)
    }

    /// Deliveries before anyone read the value skip the registrar; tracking that starts
    /// later still fires for the next change.
    @Test func trackingThatStartsAfterDeliveriesStillFires() throws {
        let fixture = try LiveFixture()
        let store = fixture.store
        let items = fixture.items
        let live = store.live(LiveQuery(items))
        let derived = store.derived(items, id: 1)
        for id in 1...3 { try store.write { tx in try tx[items].upsert(Item(id: 1, group: 0, score: id, tag: 0)) } }
        let fired = Lock<[String]>([])
        withObservationTracking { _ = live.value } onChange: { fired.withLock { $0.append("live") } }
        withObservationTracking { _ = derived.value } onChange: { fired.withLock { $0.append("derived") } }
        try store.write { tx in _ = try tx[items].update(1) { $0.score = 10 } }
        #expect(fired.withLock { $0.sorted() } == ["derived", "live"])
    }
}
