import Foundation

/// Runs `body` on a thread of its own and suspends the calling task until it returns.
///
/// Tests that wait (on a child process, a semaphore, a condition, another thread) do it
/// here: a blocked thread of Swift's concurrency pool (two on a two-core machine) would
/// stall every other test queued behind it.
public func onOwnThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        // As deep a stack as the main thread's: the bodies may recurse (decoders, builders).
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// As ``onOwnThread(_:)`` for a body that cannot throw.
public func onOwnThread<R: Sendable>(_ body: @escaping @Sendable () -> R) async -> R {
    await withCheckedContinuation { (continuation: CheckedContinuation<R, Never>) in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
