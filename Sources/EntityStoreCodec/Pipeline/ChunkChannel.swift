import Foundation

/// A hand-off of chunks of rows from one producer thread to one consumer: how both back
/// ends decode rows on one core while a table is built, or rows are encoded, on another.
///
/// With a `capacity`, the producer blocks while that many chunks wait (SQLite's reader and
/// writer keep memory bounded this way); without one it never blocks (PostgreSQL's reading
/// side must keep draining the server's connection). The consumer blocks while no chunk
/// waits. Either side can end the exchange: the producer with ``finish(throwing:)``, the
/// consumer with ``cancel()``, after which ``send(_:)`` returns false.
///
/// Spent chunks travel back: the consumer hands in its emptied array with each
/// ``receive(into:)`` and the producer gets it from ``send(_:)`` to fill again, so a buffer
/// is allocated per chunk in flight rather than per chunk (allocating one for every chunk
/// made the allocator consolidate its free lists each time).
package final class ChunkChannel<Element: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: every stored variable is read and written only while
    // `condition` is locked.
    private let condition = NSCondition()
    private let capacity: Int
    /// Chunks sent and not yet received: `queue[head...]` (taken chunks are compacted away
    /// in batches, so a receive is O(1) amortized however many chunks wait).
    private var queue: [[Element]] = []
    private var head = 0
    /// Emptied chunks, to be filled again.
    private var spent: [[Element]] = []
    private var finished = false
    private var cancelled = false
    private var producerDone = false
    private var error: (any Error)?

    /// The most emptied chunks kept for the producer: about the chunks a bounded channel
    /// has in flight, so the producer rarely allocates.
    private static var spentLimit: Int { 16 }

    /// A channel that holds at most `capacity` chunks (at least 1), or any number.
    package init(capacity: Int = .max) {
        self.capacity = max(1, capacity)
    }

    /// Hands over `chunk`, waiting while the channel is full, and replaces it with an
    /// emptied chunk to fill (with its capacity) when one came back, or an empty array.
    /// Returns false, dropping the chunk, once the consumer cancelled. O(1) amortized.
    package func send(_ chunk: inout [Element]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count - head >= capacity && !cancelled { condition.wait() }
        if cancelled { return false }
        queue.append(chunk)
        chunk = spent.popLast() ?? []
        condition.broadcast()
        return true
    }

    /// Ends production, with the error that stopped it if any.
    package func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        self.error = error
        condition.broadcast()
    }

    /// Marks the producer as gone: it touches nothing shared after this.
    package func producerExited() {
        condition.lock()
        defer { condition.unlock() }
        producerDone = true
        condition.broadcast()
    }

    /// Replaces `chunk`, which the consumer emptied, with the next chunk, waiting while
    /// none is ready; returns false once production ended (or the consumer cancelled) and
    /// every chunk was taken. O(1) amortized.
    package func receive(into chunk: inout [Element]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while head == queue.count && !finished && !cancelled { condition.wait() }
        if cancelled || head == queue.count { return false }
        // Kept for the producer only while it still sends (and a few at most): once
        // production ended, a kept buffer would only hold memory until the channel goes.
        if chunk.isEmpty && chunk.capacity > 0 && !finished && spent.count < Self.spentLimit { spent.append(chunk) }
        chunk = queue[head]
        queue[head] = []
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 && head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return true
    }

    /// Stops the producer at its next `send`, and drops the chunks still waiting.
    package func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        queue.removeAll()
        head = 0
        spent.removeAll()
        condition.broadcast()
    }

    /// Waits until the producer exited, then returns the error it finished with.
    package func waitForProducer() -> (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        while !producerDone { condition.wait() }
        return error
    }
}
