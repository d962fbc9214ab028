#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex: the one lock of this package, for every module of
/// it (hence `package` access) wherever state is shared across threads.
///
/// Why not `Synchronization.Mutex`: on Linux it hands a contended lock over inside the
/// kernel (priority-inheritance futex), which ThreadSanitizer cannot see, so every contended
/// critical section is reported as a data race. A pthread mutex is understood by the
/// sanitizer, keeping `--sanitize=thread` runs meaningful.
// `@unchecked Sendable` is safe: `value` is only touched inside `withLock`, which holds
// `mutex` for the whole access, and `Value` itself is `Sendable`.
@usableFromInline
package final class Lock<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    @usableFromInline
    package init(_ value: Value) {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not re-entrant.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
