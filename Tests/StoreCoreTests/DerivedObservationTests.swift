import Observation
import StoreCore
import Testing

@Suite("Derived observation")
struct DerivedObservationTests {
    /// `withObservationTracking` sees a change of the output, not a commit that leaves it.
    @Test func trackingFiresOnlyWhenTheOutputChanges() throws {
        let store = Store(AppState())
        let parity = store.derived(from: \.count) { $0 % 2 == 0 ? "even" : "odd" }
        let fired = Lock(0)
        func track() {
            withObservationTracking { _ = parity.value } onChange: { fired.withLock { $0 += 1 } }
        }
        track()
        try store.commit { $0.name = "unrelated" }
        try store.commit { $0.count = 2 }  // still even
        #expect(fired.withLock { $0 } == 0)
        try store.commit { $0.count = 3 }
        #expect(fired.withLock { $0 } == 1)
        // Tracking is one-shot: it fires again only once re-registered.
        try store.commit { $0.count = 4 }
        #expect(fired.withLock { $0 } == 1)
        track()
        try store.commit { $0.count = 5 }
        #expect(fired.withLock { $0 } == 2)
    }
}
