#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The identity of the calling OS thread, used to make the writer lock re-entrant for the
/// thread that owns it (a batch's commits run on the batch's thread).
@usableFromInline
enum ThreadID {
    @usableFromInline
    static var current: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
