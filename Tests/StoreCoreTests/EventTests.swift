import StoreCore
import Testing

private protocol Notice: Sendable {
    var text: String { get }
}

private struct Saved: Notice {
    let text: String
}

@Suite("Events")
struct EventTests {
    @Test func eventObserversReceiveOnlyTheirType() {
        let store = Store(AppState())
        let strings = Recorder<String>()
        let numbers = Recorder<Int>()
        let notices = Recorder<String>()
        let a = store.onEvent(of: String.self) { strings.append($0) }
        let b = store.onEvent(of: Int.self) { numbers.append($0) }
        let c = store.onEvent(of: (any Notice).self) { notices.append($0.text) }
        store.send("hi")
        store.send(3)
        store.send(Saved(text: "saved"))
        #expect(strings.values == ["hi"])
        #expect(numbers.values == [3])
        #expect(notices.values == ["saved"])
        #expect(store.state == AppState())
        #expect(store.version == 0)
        a.cancel()
        store.send("after cancel")
        #expect(strings.values == ["hi"])
        _ = (b, c)
    }

    @Test func anEventSentInsideACommitIsDeliveredAfterItsChanges() throws {
        let store = Store(AppState())
        let log = Recorder<String>()
        let changes = store.observe { log.append("changes v\($0.version)") }
        let events = store.onEvent(of: String.self) { log.append("event \($0)") }
        try store.commit { state in
            store.send("inside")
            state.count = 1
        }
        #expect(log.values == ["changes v1", "event inside"])
        _ = (changes, events)
    }

    @Test func eventsOfFailedCommitsAndBatchesAreDropped() throws {
        let store = Store(AppState())
        let log = Recorder<String>()
        let events = store.onEvent(of: String.self) { log.append($0) }
        #expect(throws: Boom.self) {
            try store.commit { _ in
                store.send("failed commit")
                throw Boom()
            }
        }
        #expect(throws: Boom.self) {
            try store.batch {
                store.send("failed batch")
                throw Boom()
            }
        }
        try store.batch {
            store.send("batch")
            try store.commit { $0.count = 1 }
            #expect(log.values.isEmpty)
        }
        #expect(log.values == ["batch"])
        events.cancel()
    }

    @Test func anEventSentFromAnObserverFollowsTheCurrentDelivery() throws {
        let store = Store(AppState())
        let log = Recorder<String>()
        let sender = store.observe { changes in
            store.send("after v\(changes.version)")
            log.append("first observer v\(changes.version)")
        }
        let second = store.observe { log.append("second observer v\($0.version)") }
        let events = store.onEvent(of: String.self) { log.append($0) }
        try store.commit { $0.count = 1 }
        #expect(log.values == ["first observer v1", "second observer v1", "after v1"])
        _ = (sender, second, events)
    }

    @Test func eventStreamsAreRegisteredSynchronouslyAndEndWithTheStore() async throws {
        var store: Store<AppState>? = Store(AppState())
        let stream = try #require(store).events(of: String.self)
        store?.send("one")
        store?.send(2)
        store?.send("two")
        store = nil
        #expect(await collect(stream, count: 10) == ["one", "two"])
    }
}
