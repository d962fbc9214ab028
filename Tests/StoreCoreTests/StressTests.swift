import Dispatch
import StoreCore
import Testing

@Suite("Concurrency stress")
struct StressTests {
    @Test func concurrentCommitsObserversAndDerivedValuesStayConsistent() throws {
        let store = Store(AppState())
        let derived = store.derived(from: \.count) { $0 * 2 }
        let problems = Recorder<String>()
        let last = Lock<(version: UInt64, count: Int)>((0, 0))
        let observation = store.observe { changes in
            last.withLock { last in
                if changes.version != last.version + 1 {
                    problems.append("version \(changes.version) after \(last.version)")
                }
                if changes.previous.count != last.count {
                    problems.append("previous \(changes.previous.count) != prior current \(last.count)")
                }
                last = (changes.version, changes.current.count)
            }
        }
        // Re-entrant commits from an observer, racing with the writers below.
        let reentrant = store.observe(\.count) { _, new in
            if new % 50 == 0 { _ = try? store.commit("mark") { $0.nested.value += 1 } }
        }
        let threads = 4
        let perThread = 200
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for step in 0..<perThread {
                if step % 10 == 0 {
                    _ = try? store.batch("batch") {
                        try store.commit { $0.count += 1 }
                        _ = store.state.count
                    }
                } else {
                    _ = try? store.commit("increment") { $0.count += 1 }
                }
                _ = derived.value
                if thread == 0, step % 25 == 0 {
                    let extra = store.observe { _ in }
                    extra.cancel()
                }
            }
        }
        let total = threads * perThread
        #expect(store.state.count == total)
        #expect(store.state.nested.value == total / 50)
        #expect(derived.value == total * 2)
        #expect(problems.values.isEmpty)
        #expect(last.withLock { $0.version } == store.version)
        #expect(last.withLock { $0.count } == total)
        _ = (observation, reentrant)
    }
}
