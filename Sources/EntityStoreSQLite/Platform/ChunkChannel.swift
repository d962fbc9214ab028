import Foundation

/// A bounded hand-off of chunks from one producer thread to one consumer: how a restore
/// decodes rows on one core while the table is built on another.
///
/// The producer blocks while `capacity` chunks wait; the consumer blocks while none does.
/// Either side can end the exchange: the producer with ``finish(throwing:)``, the
/// consumer with ``cancel()``, after which ``send(_:)`` returns false.
///
/// Spent chunks travel back: the consumer hands in its emptied array with each
/// ``receive(into:)`` and the producer gets it from ``send(_:)`` to fill again, so a
/// buffer is allocated per chunk in flight rather than per chunk (allocating one for
/// every chunk made the allocator consolidate its free lists each time).
final class ChunkChannel<Element: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: every stored variable is read and written only while
    // `condition` is locked.
    private let condition = NSCondition()
    private let capacity: Int
    private var queue: [[Element]] = []
    /// Emptied chunks, to be filled again.
    private var spent: [[Element]] = []
    private var finished = false
    private var cancelled = false
    private var producerDone = false
    private var error: (any Error)?

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Hands over `chunk`, waiting while the channel is full, and replaces it with an
    /// emptied chunk to fill (with its capacity) when one came back, or an empty array.
    /// Returns false, dropping the chunk, once the consumer cancelled.
    func send(_ chunk: inout [Element]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= capacity && !cancelled { condition.wait() }
        if cancelled { return false }
        queue.append(chunk)
        chunk = spent.popLast() ?? []
        condition.broadcast()
        return true
    }

    /// Ends production, with the error that stopped it if any.
    func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        self.error = error
        condition.broadcast()
    }

    /// Marks the producer as gone: it touches nothing shared after this.
    func producerExited() {
        condition.lock()
        defer { condition.unlock() }
        producerDone = true
        condition.broadcast()
    }

    /// Replaces `chunk`, which the consumer emptied, with the next chunk, waiting while
    /// none is ready; returns false once production ended (or the consumer cancelled) and
    /// every chunk was taken.
    func receive(into chunk: inout [Element]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !finished && !cancelled { condition.wait() }
        if cancelled || queue.isEmpty { return false }
        if chunk.isEmpty && chunk.capacity > 0 { spent.append(chunk) }
        chunk = queue.removeFirst()
        condition.broadcast()
        return true
    }

    /// Stops the producer at its next `send`.
    func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        queue.removeAll()
        spent.removeAll()
        condition.broadcast()
    }

    /// Waits until the producer exited, then returns the error it finished with.
    func waitForProducer() -> (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        while !producerDone { condition.wait() }
        return error
    }
}
