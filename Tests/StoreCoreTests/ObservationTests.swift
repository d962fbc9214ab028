import StoreCore
import Testing

@Suite("Observation")
struct ObservationTests {
    @Test func cancelStopsDeliveryAndUnregisters() throws {
        let store = Store(AppState())
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        #expect(store.observerCount == 1)
        try store.commit { $0.count = 1 }
        observation.cancel()
        observation.cancel()
        try store.commit { $0.count = 2 }
        #expect(seen.values == [1])
        #expect(observation.isCancelled)
        #expect(store.observerCount == 0)
    }

    @Test func releasingTheTokenCancels() throws {
        let store = Store(AppState())
        let seen = Recorder<UInt64>()
        do {
            let observation = store.observe { seen.append($0.version) }
            try store.commit { $0.count = 1 }
            _ = observation
        }
        try store.commit { $0.count = 2 }
        #expect(seen.values == [1])
        #expect(store.observerCount == 0)
    }

    @Test func suspendedObserversMissChangesAndResumeLater() throws {
        let store = Store(AppState())
        let seen = Recorder<Int>()
        let observation = store.observe { seen.append($0.current.count) }
        try store.commit { $0.count = 1 }
        observation.suspend()
        #expect(observation.isSuspended)
        try store.commit { $0.count = 2 }
        observation.resume()
        #expect(!observation.isSuspended)
        try store.commit { $0.count = 3 }
        #expect(seen.values == [1, 3])
        observation.cancel()
        observation.resume()
        #expect(observation.isCancelled)
    }

    @Test func keyPathObserversFireOnlyWhenTheirValueChanged() throws {
        let store = Store(AppState())
        let seen = Recorder<String>()
        let observation = store.observe(\.count) { old, new in seen.append("\(old)->\(new)") }
        try store.commit { $0.name = "x" }
        try store.commit { $0.count = 2 }
        try store.commit { $0.nested.flag = true }
        try store.commit { $0.count = 5 }
        #expect(seen.values == ["0->2", "2->5"])
        observation.cancel()
    }

    @Test func changesStreamIsRegisteredBeforeItReturns() async throws {
        let store = Store(AppState())
        let stream = store.changes()
        try store.commit { $0.count = 1 }
        try store.commit { $0.count = 2 }
        try store.commit { $0.count = 3 }
        let received = await collect(stream, count: 3)
        #expect(received.map(\.version) == [1, 2, 3])
        #expect(received.map(\.current.count) == [1, 2, 3])
    }

    @Test func valuesStreamYieldsTheCurrentValueThenDistinctChanges() async throws {
        let store = Store(AppState(count: 7))
        let stream = store.values(of: \.count)
        try store.commit { $0.name = "no count change" }
        try store.commit { $0.count = 8 }
        try store.commit { $0.count = 9 }
        #expect(await collect(stream, count: 3) == [7, 8, 9])
    }

    @Test func bufferingPolicyIsHonoured() async throws {
        let store = Store(AppState())
        let stream = store.changes(bufferingPolicy: .bufferingNewest(1))
        for value in 1...3 { try store.commit { $0.count = value } }
        let received = await collect(stream, count: 1)
        #expect(received.map(\.version) == [3])
    }

    @Test func streamsEndWhenTheStoreIsDeallocated() async throws {
        var store: Store<AppState>? = Store(AppState())
        let changes = try #require(store).changes()
        let values = try #require(store).values(of: \.count)
        try store?.commit { $0.count = 1 }
        store = nil
        #expect(await collect(changes, count: 10).map(\.version) == [1])
        #expect(await collect(values, count: 10) == [0, 1])
    }

    @Test func cancellingTheConsumerUnregistersTheStream() async throws {
        let store = Store(AppState())
        let stream = store.changes()
        #expect(store.observerCount == 1)
        let consumer = Task {
            for await _ in stream {}
        }
        consumer.cancel()
        await consumer.value
        #expect(store.observerCount == 0)
    }
}
