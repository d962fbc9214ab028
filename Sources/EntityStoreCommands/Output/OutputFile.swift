import EntityStoreSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes command output files atomically: into a temporary file beside the target,
/// renamed over it only when complete. An existing path, even a dangling symbolic link,
/// is never replaced without `force`; a replaced file's permission bits are kept; a failed
/// run leaves no partial file, and a killed run's temporaries are removed by the next
/// run for the same output (see ``Temporaries``).
enum OutputFile {
    /// Checks that `path` may be written as a file, then removes stale temporaries of it.
    /// With `force`, a regular file or a symbolic link (the link itself) may be replaced;
    /// a directory or a special file never is.
    /// - Returns: what is at the path now, if anything.
    /// - Throws: ``CommandFailure`` naming the path and why it is refused.
    @discardableResult
    static func checkWritable(_ path: String, force: Bool) throws -> FileInfo? {
        let output = try OutputPath(path, isDirectory: false)
        let existing = try output.existing(force: force)
        if let existing, existing.kind != .regular, existing.kind != .symbolicLink {
            throw CommandFailure("'\(path)' is \(existing.kind.rawValue); --force replaces only a file")
        }
        Temporaries.removeStale(for: output)
        return existing
    }

    /// Writes `data` to `path` atomically, keeping the permission bits of a file it
    /// replaces (set before the first byte is written, so the data is never more widely
    /// readable than the file it replaces).
    static func write(_ data: Data, to path: String, force: Bool) throws {
        let existing = try checkWritable(path, force: force)
        let output = try OutputPath(path, isDirectory: false)
        let temporary = Temporaries.path(for: output)
        do throws(SystemError) {
            let file = try FileDescriptor.creating(temporary, permissions: existing?.kind == .regular ? existing?.permissions : nil)
            do throws(SystemError) {
                // Held until the rename: a concurrent run sees the temporary in use.
                try file.lock()
                try file.write(data)
                try file.sync()
                if existing == nil {
                    try FileCalls.renameNoReplace(temporary, to: path, isDirectory: false)
                } else {
                    try FileCalls.rename(temporary, to: path)
                }
            } catch {
                try? FileCalls.removeFile(temporary)
                throw error
            }
            try? FileCalls.syncDirectory(output.directory)
        } catch {
            if error.code == EEXIST {
                throw CommandFailure("'\(path)' appeared while writing; pass --force to replace it")
            }
            throw CommandFailure("'\(path)': cannot write: \(error)")
        }
    }

    /// Runs `body`, which writes the snapshot at `path` through the SQLite layer's atomic
    /// writer, so that a regular file it replaces keeps its permission bits.
    ///
    /// That writer creates its file as any new file (0o644 less the umask) and renames it
    /// over `path`. While `body` runs, the umask is narrowed to the old file's bits, so the
    /// new file is never more widely readable than the old; after, the bits are set
    /// exactly (adding those, like group write, that SQLite's 0o644 lacks). The umask is
    /// process-wide: the commands run this on their only thread that creates files.
    static func writingSnapshot<R>(to path: String, _ body: () throws -> R) throws -> R {
        guard let existing = try? FileInfo.at(path), existing.kind == .regular else { return try body() }
        let previous = umask(~existing.permissions & 0o777)
        let result: R
        do {
            defer { umask(previous) }
            result = try body()
        }
        guard chmod(path, existing.permissions) == 0 else {
            throw CommandFailure("'\(path)': written, but its permissions could not be set back to \(String(existing.permissions, radix: 8)): \(SystemError())")
        }
        return result
    }
}
