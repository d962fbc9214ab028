import StoreCore
import Testing

@Suite("Keyed tasks")
struct TaskTests {
    @Test func aTaskCommitsThroughItsContextAndUnregistersWhenDone() async {
        let store = Store(AppState())
        let task = store.task(key: "load") { context in
            try? context.commit("loaded") { $0.count = 1 }
        }
        #expect(store.isRunning(key: "load"))
        await task.value
        #expect(store.state.count == 1)
        #expect(!store.isRunning(key: "load"))
        #expect(store.runningTaskCount == 0)
    }

    @Test func dropCurrentCancelsTheRunningTask() async {
        let store = Store(AppState())
        let log = Recorder<String>()
        let started = Gate()
        let first = store.task(key: 1) { _ in
            started.open()
            await waitForCancellation()
            log.append("first cancelled \(Task.isCancelled)")
        }
        await started.wait()
        let second = store.task(key: 1, mode: .dropCurrent) { context in
            try? context.commit { $0.count = 2 }
            log.append("second ran")
        }
        await first.value
        await second.value
        #expect(log.values.contains("first cancelled true"))
        #expect(log.values.contains("second ran"))
        #expect(store.state.count == 2)
        #expect(store.runningTaskCount == 0)
    }

    @Test func waitInCurrentRunsAfterTheRunningTask() async {
        let store = Store(AppState())
        let log = Recorder<String>()
        let release = Gate()
        let first = store.task(key: "k") { _ in
            await release.wait()
            log.append("first")
        }
        let second = store.task(key: "k", mode: .waitInCurrent) { _ in
            log.append("second")
        }
        #expect(store.isRunning(key: "k"))
        release.open()
        await second.value
        await first.value
        #expect(log.values == ["first", "second"])
        #expect(!store.isRunning(key: "k"))
    }

    @Test func ignoreNewKeepsTheRunningTask() async {
        let store = Store(AppState())
        let log = Recorder<String>()
        let release = Gate()
        let first = store.task(key: "k") { _ in
            await release.wait()
            log.append("first")
        }
        let second = store.task(key: "k", mode: .ignoreNew) { _ in log.append("second") }
        release.open()
        await second.value
        await first.value
        #expect(log.values == ["first"])
    }

    @Test func cancelRightAfterStartCannotMissTheTask() async {
        let store = Store(AppState())
        let log = Recorder<Bool>()
        // The body looks only after the cancel: whether or not it had started running by
        // then, the cancel must have reached its task.
        let cancelled = Gate()
        let task = store.task(key: "k") { _ in
            await cancelled.wait()
            log.append(Task.isCancelled)
        }
        store.cancel(key: "k")
        cancelled.open()
        #expect(!store.isRunning(key: "k"))
        await task.value
        #expect(log.values == [true])
    }

    @Test func cancelAllAndStoreDeinitCancelEveryTask() async throws {
        let log = Recorder<String>()
        let store = Store(AppState())
        let started = Gate()
        let a = store.task(key: "a") { _ in
            started.open()
            await waitForCancellation()
            log.append("a")
        }
        await started.wait()
        store.cancelAll()
        await a.value
        #expect(log.values == ["a"])

        var owned: Store<AppState>? = Store(AppState())
        let startedB = Gate()
        let b = try #require(owned).task(key: "b") { _ in
            startedB.open()
            await waitForCancellation()
            log.append("b")
        }
        await startedB.wait()
        owned = nil
        await b.value
        #expect(log.values == ["a", "b"])
    }

    /// How a test ends the tasks of a key.
    enum Ending: String, CaseIterable, Sendable {
        case cancelAll, storeDeinit, cancelKey, dropCurrent
    }

    @Test(arguments: Ending.allCases)
    func aRunningTaskIsCancelledEvenWithATaskQueuedBehindIt(ending: Ending) async throws {
        var store: Store<AppState>? = Store(AppState())
        let log = Recorder<String>()
        let started = Gate()
        let running = try #require(store).task(key: "k") { _ in
            started.open()
            let cancelled = await waitForCancellation(timeout: .seconds(2))
            log.append("running cancelled: \(cancelled)")
        }
        await started.wait()
        let queued = try #require(store).task(key: "k", mode: .waitInCurrent) { _ in
            log.append("queued cancelled: \(Task.isCancelled)")
        }
        #expect(store?.runningTaskCount == 2)
        var replacement: Task<Void, Never>?
        switch ending {
        case .cancelAll: store?.cancelAll()
        case .storeDeinit: store = nil
        case .cancelKey: store?.cancel(key: "k")
        case .dropCurrent: replacement = store?.task(key: "k", mode: .dropCurrent) { _ in log.append("replacement") }
        }
        await running.value
        await queued.value
        await replacement?.value
        #expect(log.values.contains("running cancelled: true"))
        #expect(log.values.contains("queued cancelled: true"))
        #expect(log.values.contains("replacement") == (ending == .dropCurrent))
        #expect(store == nil || store?.runningTaskCount == 0)
    }

    @Test func followDrivesTheStateAndTheNewestSequenceWins() async {
        let store = Store(AppState())
        let (old, oldInput) = AsyncStream.makeStream(of: AppState.self)
        let applied = Gate()
        let observation = store.observe(\.count) { _, new in if new == 1 { applied.open() } }
        let first = store.follow(old)
        oldInput.yield(AppState(count: 1))
        await applied.wait()
        let (new, newInput) = AsyncStream.makeStream(of: AppState.self)
        let second = store.follow(new, name: "newer")
        await first.value
        oldInput.yield(AppState(count: 100))
        newInput.yield(AppState(count: 2, name: "b"))
        newInput.finish()
        await second.value
        #expect(store.state == AppState(count: 2, name: "b"))
        #expect(store.runningTaskCount == 0)
        observation.cancel()
    }

    @Test func followSkipsStatesRejectedByMiddlewareAndCanBeStopped() async {
        let rejectOdd = Middleware<AppState>(name: "even only", willCommit: { _, next, _ in
            if next.count % 2 == 1 { throw Boom() }
        })
        let store = Store(AppState(), middleware: [rejectOdd])
        let (states, input) = AsyncStream.makeStream(of: AppState.self)
        let task = store.follow(states)
        input.yield(AppState(count: 2))
        input.yield(AppState(count: 3))
        input.yield(AppState(count: 4))
        input.finish()
        await task.value
        #expect(store.state.count == 4)
        #expect(store.version == 2)

        let (endless, _) = AsyncStream.makeStream(of: AppState.self)
        let stopped = store.follow(endless)
        store.stopFollowing()
        await stopped.value
        #expect(store.runningTaskCount == 0)
    }
}

/// Suspends until the current task is cancelled.
private func waitForCancellation() async {
    let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
    await withTaskCancellationHandler {
        for await _ in stream {}
    } onCancel: {
        continuation.finish()
    }
}
