#if PostgreSQL
/// A mutual-exclusion lock for async code: holders run one at a time, in arrival order,
/// across suspension points (which an actor alone does not guarantee).
actor AsyncLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits until the lock is free and takes it. O(1) amortized.
    func lock() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Hands the lock to the next waiter, or frees it.
    func unlock() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }

    /// Runs `body` holding the lock.
    func withLock<R: Sendable>(_ body: @Sendable () async throws -> R) async throws -> R {
        await lock()
        do {
            let result = try await body()
            unlock()
            return result
        } catch {
            unlock()
            throw error
        }
    }
}
#endif
