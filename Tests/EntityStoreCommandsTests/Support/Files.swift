import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The permission bits of `path` itself (a symbolic link not followed), nil if absent.
func permissions(_ path: String) -> mode_t? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return status.st_mode & 0o7777
}

/// Whether `path` is a symbolic link (dangling or not).
func isSymbolicLink(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
}

/// Sets the permission bits of `path`.
func setPermissions(_ path: String, _ mode: mode_t, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(chmod(path, mode) == 0, "chmod \(path)", sourceLocation: sourceLocation)
}

/// Dates the last modification of `path` (a file or a directory) `seconds` back.
func backdate(_ path: String, by seconds: Double = 600) throws {
    try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -seconds)], ofItemAtPath: path)
}

/// An open file holding an exclusive `flock`, as a live run holds on its temporaries.
final class HeldLock {
    private let descriptor: Int32

    init?(_ path: String) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX) == 0 else {
            close(descriptor)
            return nil
        }
    }

    deinit { close(descriptor) }
}
