import StoreCore
import Testing

@Suite("Delivery")
struct DeliveryTests {
    @Test func observersRunBeforeCommitReturnsInRegistrationOrder() throws {
        let store = Store(AppState())
        let log = Recorder<String>()
        let first = store.observe { log.append("first v\($0.version)") }
        let second = store.observe { log.append("second v\($0.version)") }
        try store.commit { $0.count = 1 }
        #expect(log.values == ["first v1", "second v1"])
        _ = (first, second)
    }

    @Test func reentrantCommitsFromObserversAreDeliveredInOrder() throws {
        let store = Store(AppState())
        let versions = Recorder<UInt64>()
        let chain = Recorder<(Int, Int)>()
        // Each delivery commits the next step, nested three levels deep.
        let committer = store.observe { changes in
            if changes.current.count < 4 {
                _ = try? store.commit("step") { $0.count += 1 }
            }
        }
        let recorder = store.observe { changes in
            versions.append(changes.version)
            chain.append((changes.previous.count, changes.current.count))
        }
        try store.commit("start") { $0.count = 1 }
        #expect(versions.values == [1, 2, 3, 4])
        #expect(chain.values.map(\.0) == [0, 1, 2, 3])
        #expect(chain.values.map(\.1) == [1, 2, 3, 4])
        #expect(store.state.count == 4)
        _ = (committer, recorder)
    }

    @Test func everyObserverSeesEachVersionBeforeTheNext() throws {
        let store = Store(AppState())
        let log = Recorder<String>()
        let first = store.observe { changes in
            log.append("a\(changes.version)")
            if changes.version == 1 { _ = try? store.commit { $0.name = "two" } }
        }
        let second = store.observe { log.append("b\($0.version)") }
        try store.commit { $0.count = 1 }
        // b sees version 1 before anyone sees version 2 (no out-of-order nested delivery).
        #expect(log.values == ["a1", "b1", "a2", "b2"])
        _ = (first, second)
    }

    @Test func anObserverRegisteredDuringDeliveryGetsOnlyLaterChanges() throws {
        let store = Store(AppState())
        let late = Recorder<UInt64>()
        let tokens = Recorder<Observation>()
        let registrar = store.observe { changes in
            if changes.version == 1 {
                tokens.append(store.observe { late.append($0.version) })
            }
        }
        try store.commit { $0.count = 1 }
        try store.commit { $0.count = 2 }
        #expect(late.values == [2])
        _ = registrar
    }
}
