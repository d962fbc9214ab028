import EntityStoreTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tests that each keep both cores busy for many seconds (the large import, the
/// crash test), run one at a time so they do not slow each other down.
@Suite("Long-running tests, one at a time", .serialized, .threadsOfItsOwn)
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
