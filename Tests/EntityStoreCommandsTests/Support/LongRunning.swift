import EntityStoreTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tests that each keep a child process busy for seconds (the large import, the kill
/// tests, the streaming query), on threads of their own so they start at once and run
/// beside the rest instead of finishing last.
@Suite("Long-running tests", .threadsOfItsOwn)
enum LongRunning {
    /// Whether this process (and so the tool it runs, built alike) carries ThreadSanitizer
    /// or AddressSanitizer, which make it several times slower: long tests then use less data.
    static let isSanitized: Bool = {
        #if canImport(Glibc)
        return dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
            || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
        #else
        return false
        #endif
    }()
}
