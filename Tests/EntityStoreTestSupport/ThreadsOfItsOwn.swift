import Foundation
import Testing

/// A trait that runs each test (each case of a parameterized one) on threads of its own
/// instead of Swift's concurrency pool.
///
/// The pool has one thread per core (two on a two-core machine). A test that blocks while
/// it waits (for a child process, a semaphore, another thread, a timer) holds one of them
/// for the whole wait, and every test queued behind it waits too. Under this trait such a
/// test blocks a thread that belongs to it alone. Tests that only compute stay on the pool.
public struct ThreadsOfItsOwnTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite's own scope, or a parameterized test's outer one: its cases get their own.
        guard testCase != nil else {
            try await function()
            return
        }
        let executor = OwnThreadsExecutor(name: "test: \(test.name)")
        defer { executor.shutdown() }
        try await withTaskExecutorPreference(executor, operation: function)
    }
}

extension Trait where Self == ThreadsOfItsOwnTrait {
    /// Runs the test, or each test of the suite, on threads of its own (see ``ThreadsOfItsOwnTrait``).
    public static var threadsOfItsOwn: Self { Self() }
}

/// A task executor whose jobs run on threads it starts for them: a new thread whenever a
/// job arrives while every thread it has is busy, so a job that blocks never delays another.
public final class OwnThreadsExecutor: TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable` is safe: `jobs`, `idle`, `claimed` and `stopped` are only touched
    // with `condition` locked; each job is taken out under the lock and run by one thread.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    /// Threads waiting for a job, and how many of them were already handed one.
    private var idle = 0
    private var claimed = 0
    private var stopped = false
    private let name: String

    public init(name: String) {
        self.name = name
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let start = idle <= claimed
        if !start {
            claimed += 1
            condition.signal()
        }
        condition.unlock()
        if start { startThread() }
    }

    private func startThread() {
        let thread = Thread { [self] in
            condition.lock()
            while true {
                if !jobs.isEmpty {
                    let job = jobs.removeFirst()
                    condition.unlock()
                    job.runSynchronously(on: asUnownedTaskExecutor())
                    condition.lock()
                    continue
                }
                if stopped { break }
                idle += 1
                while claimed == 0 && !stopped { condition.wait() }
                idle -= 1
                if claimed > 0 { claimed -= 1 }
            }
            condition.unlock()
        }
        thread.name = name
        // As deep a stack as the main thread's: tests recurse through decoders and builders.
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Lets the threads end once no job is left (jobs enqueued later still run).
    public func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
