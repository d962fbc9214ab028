import Dispatch
import EntityStoreTestSupport
import StoreCore
import Testing

@Suite("Batch")
struct BatchTests {
    @Test func commitsInABatchArePublishedAsOneChanges() throws {
        let store = Store(AppState())
        let seen = Recorder<Changes<AppState>>()
        let observation = store.observe { seen.append($0) }
        let result = try store.batch("setup") { () -> Int in
            try store.commit { $0.count = 1 }
            try store.commit { $0.name = "a" }
            #expect(seen.values.isEmpty)
            return store.state.count
        }
        #expect(result == 1)
        #expect(seen.count == 1)
        let changes = try #require(seen.values.first)
        #expect(changes.previous == AppState())
        #expect(changes.current == AppState(count: 1, name: "a"))
        #expect(changes.name == "setup")
        #expect(changes.version == 1)
        #expect(store.version == 1)
        observation.cancel()
    }

    @Test func nestedBatchesFoldIntoTheOutermost() throws {
        let store = Store(AppState())
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        try store.batch("outer") {
            try store.commit { $0.count = 1 }
            try store.batch("inner") {
                try store.commit { $0.count = 2 }
            }
            #expect(seen.values.isEmpty)
            try store.commit { $0.name = "done" }
        }
        #expect(seen.values == [1])
        #expect(store.state == AppState(count: 2, name: "done"))
        observation.cancel()
    }

    @Test func aThrowingBatchRollsEveryCommitBack() {
        let store = Store(AppState())
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        #expect(throws: Boom.self) {
            try store.batch {
                try store.commit { $0.count = 1 }
                try store.commit { $0.name = "gone" }
                throw Boom()
            }
        }
        #expect(store.state == AppState())
        #expect(store.version == 0)
        #expect(seen.values.isEmpty)
        observation.cancel()
    }

    @Test func aThrowingInnerBatchRollsBackOnlyItsOwnCommits() throws {
        let store = Store(AppState())
        try store.batch {
            try store.commit { $0.count = 1 }
            #expect(throws: Boom.self) {
                try store.batch {
                    try store.commit { $0.name = "inner" }
                    throw Boom()
                }
            }
            #expect(store.state == AppState(count: 1))
            // A failing commit inside the batch leaves the batch's other commits intact.
            #expect(throws: Boom.self) {
                try store.commit { state in
                    state.count = 50
                    throw Boom()
                }
            }
        }
        #expect(store.state == AppState(count: 1))
        #expect(store.version == 1)
    }

    @Test func isContinuationReportsEarlierChangesOfTheSameBatch() throws {
        let store = Store(AppState())
        let flags = Recorder<Bool>()
        try store.batch {
            try store.commit(withContext: { state, context in flags.append(context.isContinuation) })
            try store.commit(withContext: { state, context in
                flags.append(context.isContinuation)
                state.count = 1
            })
            try store.commit(withContext: { state, context in
                flags.append(context.isContinuation)
                state.count = 2
            })
        }
        try store.commit(withContext: { state, context in
            flags.append(context.isContinuation)
            state.count = 3
        })
        #expect(flags.values == [false, false, true, false])
    }

    @Test func aBatchThatEndsWhereItStartedPublishesNothing() throws {
        let store = Store(AppState())
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        try store.batch {
            try store.commit { $0.count = 5 }
            try store.commit { $0.count = 0 }
        }
        #expect(seen.values.isEmpty)
        #expect(store.version == 0)
        observation.cancel()
    }

    // It waits for another thread: on threads of its own, not the concurrency pool's.
    @Test(.threadsOfItsOwn) func otherThreadsSeeTheStateBeforeTheBatchAndTheirCommitsWait() throws {
        let store = Store(AppState())
        let seen = Recorder<String>()
        let observation = store.observe { seen.append("\($0.name) \($0.current.count)") }
        let outsideRead = Recorder<Int>()
        let done = DispatchSemaphore(value: 0)
        try store.batch("batch") {
            try store.commit { $0.count = 10 }
            #expect(store.state.count == 10)
            let read = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                outsideRead.append(store.state.count)
                read.signal()
                // Blocks until the batch ends, then applies on top of it.
                _ = try? store.commit("other") { $0.count += 1 }
                done.signal()
            }
            read.wait()
        }
        done.wait()
        #expect(outsideRead.values == [0])
        #expect(store.state.count == 11)
        #expect(seen.values == ["batch 10", "other 11"])
        observation.cancel()
    }
}
