import EntityStoreTesting
import StoreCore
import Testing

struct Counter: Equatable, Sendable {
    var count = 0
    var log: [String] = []
    var settings = Settings()

    struct Settings: Equatable, Sendable {
        var step = 1
        var label = "counter"
    }
}

enum CounterAction: Sendable {
    case increment
    case rename(String)
}

enum CounterEvent: Equatable, Sendable {
    case incremented(to: Int)
    case renamed(String)
}

func counterReducer(_ store: Store<Counter>) -> Reducer<Counter, CounterAction> {
    Reducer { state, action in
        switch action {
        case .increment:
            state.count += state.settings.step
            state.log.append("+")
            store.send(CounterEvent.incremented(to: state.count))
        case .rename(let label):
            state.settings.label = label
            store.send(CounterEvent.renamed(label))
        }
    }
}

@Suite("Change assertions on a StoreCore store")
struct StateStoreAssertionTests {
    @Test("a commit and an action described exactly pass")
    func passes() throws {
        let store = Store(Counter())
        let failures = try withRecordedFailures {
            try store.assertCommit { $0.count = 5 } expected: { $0.count = 5 }
            try store.assertDispatch(.increment, through: counterReducer(store)) { state in
                state.count = 6
                state.log = ["+"]
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("an undescribed field fails with its path, expected, actual and previous values, at the caller's line")
    func undescribedField() throws {
        let store = Store(Counter())
        var line = 0
        let failures = try withRecordedFailures {
            line = lineAfter()
            try store.assertDispatch(.increment, through: counterReducer(store)) { state in
                state.count = 2
            }
        }
        let failure = try #require(failures.single())
        #expect(failure.location.line == line)
        #expect(failure.message == """
            the state changed differently than described:
              count: expected 2, store has 1 (was 0)
              log: expected [], store has ["+"]
            """, "\(failure.message)")
    }

    @Test("nested fields are named by their path; non-exhaustive checks only what is set")
    func nestedAndNonExhaustive() throws {
        let store = Store(Counter())
        var line = 0
        var failures = try withRecordedFailures {
            line = lineAfter()
            try store.assertCommit { $0.settings.label = "c"; $0.count = 9 } expected: { $0.settings.label = "d" }
        }
        let message = try #require(failures.single(at: line)).message
        #expect(message.contains("count: expected 0, store has 9"), "\(message)")
        #expect(message.contains("settings.label: expected \"d\", store has \"c\" (was \"counter\")"), "\(message)")
        failures = try withRecordedFailures {
            try store.assertCommit(.nonExhaustive) { $0.count = 10; $0.log = ["x"] } expected: { $0.count = 10 }
            line = lineAfter()
            try store.assertCommit(.nonExhaustive) { $0.count = 11 } expected: { $0.count = 12 }
        }
        #expect(try #require(failures.single(at: line)).message == "the state does not hold what the description sets:\n  count: expected 12, store has 11 (was 10)")
    }

    @Test("assertChanges around any operation fails at the caller's line, naming the field")
    func assertChangesAtTheCallersLine() throws {
        let store = Store(Counter())
        let reducer = counterReducer(store)
        var line = 0
        var failures = try withRecordedFailures {
            line = lineAfter()
            try store.assertChanges {
                try store.dispatch(.increment, through: reducer)
                try store.dispatch(.rename("twice"), through: reducer)
            } expected: { state in
                state.count = 1
                state.log = ["+"]
                state.settings.label = "once"
            }
        }
        let message = try #require(failures.single(at: line)).message
        #expect(message == """
            the state changed differently than described:
              settings.label: expected "once", store has "twice" (was "counter")
            """, "\(message)")
        failures = try withRecordedFailures {
            line = lineAfter()
            try store.assertChanges(.nonExhaustive, of: { try store.dispatch(.increment, through: reducer) }) { $0.count = 3 }
        }
        #expect(try #require(failures.single(at: line)).message == "the state does not hold what the description sets:\n  count: expected 3, store has 2 (was 1)")
    }
}

@Suite("Event assertions")
struct EventAssertionTests {
    @Test("the events an action sent, exactly and in order")
    func sentExactly() throws {
        let store = Store(Counter())
        let reducer = counterReducer(store)
        var line = 0
        var failures = try withRecordedFailures {
            let events = EventExpectations(store, of: CounterEvent.self)
            try events.assertSent([.incremented(to: 1)]) { try store.dispatch(.increment, through: reducer) }
            line = lineAfter()
            try events.assertSent([.incremented(to: 3)]) {
                try store.dispatch(.increment, through: reducer)
                try store.dispatch(.increment, through: reducer)
            }
            try store.dispatch(.rename("x"), through: reducer)
            events.assertReceived(.renamed("x"))
        }
        #expect(try #require(failures.single(at: line)).message == "the events sent differ from the expected ones: expected [incremented(to: 3)], sent [incremented(to: 2), incremented(to: 3)]", "\(failures)")
        failures = try withRecordedFailures {
            let events = EventExpectations(store, of: CounterEvent.self)
            try store.dispatch(.increment, through: reducer)
            line = lineAfter()
            events.assertReceived(.incremented(to: 99))
        }
        #expect(try #require(failures.single(at: line)).message == "expected to receive [incremented(to: 99)], but the unasserted events are [incremented(to: 4)]", "\(failures)")
    }

    @Test("exhaustive: events nobody asserted fail when the recorder is released, at the line that created it")
    func unassertedAtEnd() throws {
        let store = Store(Counter())
        let reducer = counterReducer(store)
        var line = 0
        let failures = try withRecordedFailures {
            line = lineAfter()
            let events = EventExpectations(store, of: CounterEvent.self)
            try store.dispatch(.increment, through: reducer)
            try store.dispatch(.rename("y"), through: reducer)
            events.assertReceived(.incremented(to: 1))
        }
        let failure = try #require(failures.single())
        #expect(failure.location.line == line)
        #expect(failure.message == "1 event sent but never asserted: [renamed(\"y\")]")
    }

    @Test("non-exhaustive: the listed events in order among others; nothing fails at the end")
    func nonExhaustive() throws {
        let store = Store(Counter())
        let reducer = counterReducer(store)
        var failures = try withRecordedFailures {
            let events = EventExpectations(store, of: CounterEvent.self, exhaustivity: .nonExhaustive)
            try events.assertSent([.incremented(to: 2)]) {
                try store.dispatch(.increment, through: reducer)
                try store.dispatch(.increment, through: reducer)
            }
            try store.dispatch(.rename("z"), through: reducer)
            try store.dispatch(.increment, through: reducer)
        }
        #expect(failures.isEmpty, "\(failures)")
        var line = 0
        failures = try withRecordedFailures {
            let events = EventExpectations(store, of: CounterEvent.self, exhaustivity: .nonExhaustive)
            try store.dispatch(.increment, through: reducer)
            line = lineAfter()
            events.assertReceived(.renamed("never"))
            events.finish()
        }
        #expect(try #require(failures.single(at: line)).message.hasPrefix("expected to receive [renamed(\"never\")] in order"))
    }

    @Test("in Swift Testing, unasserted events are an issue at the end of the test's scope", .tags(.reporting))
    func swiftTestingEnd() throws {
        let store = Store(Counter())
        withKnownIssue {
            let events = EventExpectations(store, of: CounterEvent.self)
            store.send(CounterEvent.renamed("late"))
            _ = events
        } matching: { issue in
            String(describing: issue).contains("1 event sent but never asserted")
        }
    }
}
