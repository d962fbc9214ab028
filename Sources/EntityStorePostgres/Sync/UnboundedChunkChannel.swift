#if PostgreSQL
import Foundation

/// Hands decoded chunks from the task reading rows to the thread building a table.
///
/// Unbounded: the reading side is the connection's thread, which must keep draining the
/// server, so it only appends; the building thread waits on the condition.
final class UnboundedChunkChannel<Element: Sendable>: @unchecked Sendable {
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

/// A body running on a thread of its own, whose result another thread waits for.
final class JoinableThread<R: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `result` is written once by the thread and read by
    // `join` only after `condition` says it was, both under the condition's lock.
    private let condition = NSCondition()
    private var result: Result<R, any Error>?

    init(name: String, _ body: @escaping @Sendable () throws -> R) {
        let thread = Thread { [self] in
            let outcome = Result { try body() }
            condition.lock()
            result = outcome
            condition.broadcast()
            condition.unlock()
        }
        thread.name = name
        // As deep a stack as the main thread's: building and decoding recurse.
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Waits for the body to end and returns what it returned or threw.
    func join() -> Result<R, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return result }
            condition.wait()
        }
    }
}
#endif
