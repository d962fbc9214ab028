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
//
// The value lives behind a pointer rather than in a stored `var`: every access to a
// class's stored `var` through `inout` is checked for exclusivity at run time (a
// thread-local access set), which the mutex already guarantees.
// `@unchecked Sendable` is safe: `storage` is only touched inside `withLock`, which holds
// `mutex` for the whole access, and `Value` itself is `Sendable`.
@usableFromInline
package final class Lock<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let storage: UnsafeMutablePointer<Value>

    @usableFromInline
    package init(_ value: Value) {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        storage = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        storage.initialize(to: value)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not re-entrant.
    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }
}
