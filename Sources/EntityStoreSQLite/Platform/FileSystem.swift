import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The durable-file operations a snapshot needs: fsync of files and directories, atomic
/// rename, temporary names beside the target, each failure a ``SnapshotError``.
///
/// The system calls themselves are the package's one file layer (``FileCalls``,
/// ``FileDescriptor``, ``FileInfo``); what this adds is the snapshot's view: the armed
/// fault-injection plan is asked before every sync, rename and removal (as SQLite's own
/// file operations ask it through the fault VFS), and errors name the snapshot's path.
enum FileSystem {
    /// Whether something is at `path`, through symbolic links (a dangling link is nothing).
    static func exists(_ path: String) -> Bool {
        (try? FileInfo.following(path)) != nil
    }

    /// What the existing path is when it is not a regular file ("a directory", "a FIFO",
    /// ...), or nil for a regular file or a missing path. SQLite would block forever
    /// opening a FIFO, so readers refuse anything but a regular file up front.
    static func nonRegularKind(_ path: String) -> String? {
        guard let info = try? FileInfo.following(path) else { return nil }
        // Through links, so never `symbolicLink`.
        return info.kind == .regular ? nil : info.kind.rawValue
    }

    /// Whether the file at `path` starts with the 16-byte header of every SQLite database
    /// ("SQLite format 3" and a NUL): telling a damaged database from some other file.
    static func hasSQLiteHeader(_ path: String) -> Bool {
        // Non-blocking: the path may name a FIFO, whose open and read would wait forever.
        guard let descriptor = try? FileDescriptor.reading(path) else { return false }
        return (try? descriptor.readAll(maximum: 16)) == Data("SQLite format 3\u{0}".utf8)
    }

    /// Whether `path` leads to a directory, through symbolic links.
    static func isDirectory(_ path: String) -> Bool {
        guard let info = try? FileInfo.following(path) else { return false }
        return info.kind == .directory
    }

    static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    /// The size in bytes of the file at `path`, 0 if it cannot be read. One `stat`
    /// (`FileManager`'s attributes also look up the owner's user and group names, which
    /// cost more than a small restore's table).
    static func size(of path: String) -> Int {
        guard let info = try? FileInfo.following(path) else { return 0 }
        return Int(info.size)
    }

    /// A fresh name for a temporary file next to `path` (same directory, so the final
    /// rename is atomic and never crosses file systems).
    static func temporaryPath(beside path: String) -> String {
        (directory(of: path) as NSString).appendingPathComponent(TemporaryName.fresh(for: (path as NSString).lastPathComponent))
    }

    /// Flushes the file or directory at `path` to stable storage.
    static func sync(_ path: String) throws(SnapshotError) {
        let verdict = FaultInjection.checkSync(isDirectory(path) ? path + "/" : path)
        if let failure = verdict.failure {
            throw .io(path: path, message: "fsync failed: \(errorText(failure))")
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.reading(path)
        } catch {
            throw .io(path: path, message: "cannot open for fsync: \(errorText(error.code))")
        }
        // Under a fault plan the sync is simulated (the plan's record of unsynced writes is
        // what a power loss undoes); the path is still opened, so a wrong one fails alike.
        if verdict.simulated { return }
        do {
            try descriptor.sync()
        } catch {
            throw .io(path: path, message: "fsync failed: \(errorText(error.code))")
        }
    }

    /// Atomically replaces `target` with `source`.
    static func rename(_ source: String, over target: String) throws(SnapshotError) {
        if let failure = FaultInjection.checkRename(source, over: target) {
            throw .io(path: target, message: "cannot move the new snapshot into place: \(errorText(failure))")
        }
        do {
            try FileCalls.rename(source, to: target)
        } catch {
            throw .io(path: target, message: "cannot move the new snapshot into place: \(errorText(error.code))")
        }
    }

    /// Whether the SQLite file at `path` is in write-ahead-log mode, by its header's read and
    /// write versions (bytes 18 and 19: 1 for a rollback journal, 2 for WAL). False when
    /// the file cannot be read or is no SQLite file.
    static func isInWALMode(_ path: String) -> Bool {
        guard let descriptor = try? FileDescriptor.reading(path), let header = try? descriptor.readAll(maximum: 20),
              header.count == 20,
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
        try? FileCalls.removeFile(path)
    }

    /// `strerror`'s sentence as it is ("No such file or directory"), as snapshot errors
    /// have always said it.
    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
