import Foundation

/// A body running on a thread of its own, whose result another thread waits for: the
/// other half of a ``ChunkChannel`` (a restore's table builder, a snapshot's encoder).
package final class JoinableThread<R: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `result` is written once by the thread and read by
    // `join` only after `condition` says it was, both under the condition's lock.
    private let condition = NSCondition()
    private var result: Result<R, any Error>?

    /// Starts `body` on a new thread named `name`.
    package init(name: String, _ body: @escaping @Sendable () throws -> R) {
        let thread = Thread { [self] in
            let outcome = Result { try body() }
            condition.lock()
            result = outcome
            condition.broadcast()
            condition.unlock()
        }
        thread.name = name
        thread.stackSize = Self.stackSize
        thread.start()
    }

    /// As deep a stack as the main thread's: building and decoding recurse.
    private static var stackSize: Int { 8 << 20 }

    /// Waits for the body to end and returns what it returned or threw.
    package func join() -> Result<R, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return result }
            condition.wait()
        }
    }
}
