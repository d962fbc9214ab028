import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The durable-file operations a snapshot needs: fsync of files and directories, atomic
/// rename, temporary names beside the target.
enum FileSystem {
    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    /// What the existing path is when it is not a regular file ("a directory", "a FIFO",
    /// ...), or nil for a regular file or a missing path. SQLite would block forever
    /// opening a FIFO, so readers refuse anything but a regular file up front.
    static func nonRegularKind(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "not a regular file"
        }
    }

    /// Whether the file at `path` starts with the 16-byte header of every SQLite database
    /// ("SQLite format 3" and a NUL): telling a damaged database from some other file.
    static func hasSQLiteHeader(_ path: String) -> Bool {
        // Non-blocking: the path may name a FIFO, whose open and read would wait forever.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 16) }
        return count == 16 && header == Array("SQLite format 3\u{0}".utf8)
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    /// The size in bytes of the file at `path`, 0 if it cannot be read. One `stat`
    /// (`FileManager`'s attributes also look up the owner's user and group names, which
    /// cost more than a small restore's table).
    static func size(of path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return Int(info.st_size)
    }

    /// A fresh name for a temporary file next to `path` (same directory, so the final
    /// rename is atomic and never crosses file systems).
    static func temporaryPath(beside path: String) -> String {
        (directory(of: path) as NSString).appendingPathComponent(TemporaryName.fresh(for: (path as NSString).lastPathComponent))
    }

    /// Flushes the file or directory at `path` to stable storage.
    static func sync(_ path: String) throws(SnapshotError) {
        let watchedPath = isDirectory(path) ? path + "/" : path
        if let failure = FaultInjection.check(watchedPath, .sync) {
            throw .io(path: path, message: "fsync failed: \(errorText(failure))")
        }
        if FaultInjection.simulatesSyncs(of: watchedPath) { return }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw .io(path: path, message: "cannot open for fsync: \(errorText())") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw .io(path: path, message: "fsync failed: \(errorText())") }
    }

    /// Atomically replaces `target` with `source`.
    static func rename(_ source: String, over target: String) throws(SnapshotError) {
        if let failure = FaultInjection.checkRename(source, over: target) {
            throw .io(path: target, message: "cannot move the new snapshot into place: \(errorText(failure))")
        }
        guard Foundation.rename(source, target) == 0 else {
            throw .io(path: target, message: "cannot move the new snapshot into place: \(errorText())")
        }
    }

    /// Whether the SQLite file at `path` is in write-ahead-log mode, by its header's read and
    /// write versions (bytes 18 and 19: 1 for a rollback journal, 2 for WAL). False when
    /// the file cannot be read or is no SQLite file.
    static func isInWALMode(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20,
              header.prefix(16) == Data("SQLite format 3\u{0}".utf8)
        else { return false }
        return header[18] == 2 || header[19] == 2
    }

    /// Removes the write-ahead log and shared-memory files SQLite keeps beside `path`.
    static func removeSidecars(of path: String) {
        for suffix in ["-wal", "-shm"] { remove(file: path + suffix) }
    }

    /// Removes a temporary file and the rollback journal SQLite may have left beside it.
    static func remove(_ path: String) {
        remove(file: path)
        remove(file: path + "-journal")
    }

    /// Unlinks one file, if present; failures are ignored (callers remove what they may).
    static func remove(file path: String) {
        guard FaultInjection.check(path, .delete) == nil else { return }
        unlink(path)
    }

    private static func errorText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
