import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file or directory, closed when the value goes away. Closing releases the
/// `flock` taken through it.
package struct FileDescriptor: ~Copyable {
    package let raw: Int32

    private init(raw: Int32) { self.raw = raw }

    deinit { _ = close(raw) }

    /// Opens `path` to read it. `O_NONBLOCK` keeps a FIFO from blocking the open (it
    /// has no effect on regular files); `O_NOFOLLOW` (unless `followingLinks`) refuses
    /// a final symbolic link with `ELOOP`.
    package static func reading(_ path: String, followingLinks: Bool = true) throws(SystemError) -> FileDescriptor {
        let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW)
        let raw = open(path, flags)
        guard raw >= 0 else { throw SystemError() }
        return FileDescriptor(raw: raw)
    }

    /// Opens the entry `name` of the open directory `directory` to read it, a final
    /// symbolic link refused, a FIFO not waited for.
    package static func reading(_ name: String, in directory: borrowing FileDescriptor) throws(SystemError) -> FileDescriptor {
        let raw = openat(directory.raw, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard raw >= 0 else { throw SystemError() }
        return FileDescriptor(raw: raw)
    }

    /// Creates `path`, which must not exist yet, for writing: with `permissions` if
    /// given (set before any byte is written), else 0o666 less the umask, like any new
    /// file.
    package static func creating(_ path: String, permissions: mode_t?) throws(SystemError) -> FileDescriptor {
        let raw = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o666))
        guard raw >= 0 else { throw SystemError() }
        let file = FileDescriptor(raw: raw)
        if let permissions { try file.setPermissions(permissions) }
        return file
    }

    package func info() throws(SystemError) -> FileInfo {
        try FileInfo.of(descriptor: raw)
    }

    package func setPermissions(_ permissions: mode_t) throws(SystemError) {
        guard fchmod(raw, permissions) == 0 else { throw SystemError() }
    }

    /// Takes an exclusive `flock` without waiting; false when another open file holds one.
    /// The kernel drops it when the holder closes the file or dies, even by `SIGKILL`.
    package func tryLock() throws(SystemError) -> Bool {
        if flock(raw, LOCK_EX | LOCK_NB) == 0 { return true }
        let error = SystemError()
        if error.code == EWOULDBLOCK { return false }
        throw error
    }

    /// Takes an exclusive `flock`, waiting for a holder to let go.
    package func lock() throws(SystemError) {
        while flock(raw, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SystemError() }
        }
    }

    /// Whether another process holds a POSIX record lock on the file (SQLite locks the
    /// database it writes this way).
    package func hasRecordLocks() -> Bool {
        #if canImport(Glibc)
        var lock = Glibc.flock()
        #elseif canImport(Musl)
        var lock = Musl.flock()
        #else
        var lock = Darwin.flock()
        #endif
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 0
        // If the question cannot be asked, assume the file is in use.
        guard fcntl(raw, F_GETLK, &lock) == 0 else { return true }
        return lock.l_type != Int16(F_UNLCK)
    }

    /// Writes all of `bytes`, retrying short writes and interruptions.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        try Self.write(bytes, to: raw)
    }

    /// Writes all of `bytes` to the open descriptor `raw` (one this value does not own,
    /// such as standard output), retrying short writes and interruptions.
    package static func write(_ bytes: UnsafeRawBufferPointer, to raw: Int32) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(raw, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemError()
            }
            offset += written
        }
    }

    package func write(_ bytes: [UInt8]) throws(SystemError) {
        // `withUnsafeBytes` rethrows untyped: the typed error is carried out by hand.
        let failure = bytes.withUnsafeBytes { buffer -> SystemError? in
            do throws(SystemError) { try write(buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    package func write(_ data: Data) throws(SystemError) {
        let failure = data.withUnsafeBytes { buffer -> SystemError? in
            do throws(SystemError) { try write(buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Reads from the start to the end of the file, or its first `maximum` bytes.
    package func readAll(maximum: Int = .max) throws(SystemError) -> Data {
        var data = Data()
        let size = lseek(raw, 0, SEEK_END)
        guard lseek(raw, 0, SEEK_SET) == 0 else { throw SystemError() }
        if size > 0 { data.reserveCapacity(min(Int(size), maximum)) }
        var buffer = [UInt8](repeating: 0, count: min(1 << 20, maximum))
        while data.count < maximum {
            let wanted = min(buffer.count, maximum - data.count)
            let count = buffer.withUnsafeMutableBytes { read(raw, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError()
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Flushes the file (or a directory's entries) to stable storage.
    package func sync() throws(SystemError) {
        guard fsync(raw) == 0 else { throw SystemError() }
    }
}
