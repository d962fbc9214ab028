#if PostgreSQL
import Foundation

/// Hands decoded chunks from the task reading rows to the thread building a table.
///
/// Unbounded: the reading side runs on Swift's cooperative threads, which must never
/// block, so it only appends; the building thread waits on the condition.
final class ChunkChannel<Element: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: every stored property is read and written only while
    // `condition` is locked, so the two threads never touch them at once.
    private let condition = NSCondition()
    private var chunks: [[Element]] = []
    private var head = 0
    private var finished = false
    private var cancelled = false

    /// Queues a chunk (already reversed: the table takes entities from its end); false
    /// once the builder gave up. O(1) amortized.
    func send(_ chunk: [Element]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if cancelled { return false }
        chunks.append(chunk)
        condition.signal()
        return true
    }

    /// No more chunks.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The builder stops taking chunks; senders learn it from `send`.
    func cancel() {
        condition.lock()
        cancelled = true
        chunks = []
        head = 0
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the next chunk and puts it in `chunk`; false when there is none left.
    func receive(into chunk: inout [Element]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while head == chunks.count && !finished && !cancelled { condition.wait() }
        guard head < chunks.count, !cancelled else { return false }
        chunk = chunks[head]
        chunks[head] = []
        head += 1
        if head > 64 && head * 2 > chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
        return true
    }
}

/// Runs a blocking body on a thread of its own and returns its result to an async caller.
enum BlockingThread {
    static func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            let thread = Thread {
                continuation.resume(with: Result { try body() })
            }
            // As deep a stack as the main thread's: building and decoding recurse.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}
#endif
