import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The connection a ``SnapshotFile`` keeps open between saves, in write-ahead-log mode.
///
/// Why: an incremental save rewrites rows spread over the whole file. With a rollback
/// journal every save copies each touched page to the journal, syncs it, writes the page
/// in place, syncs again and deletes the journal. In WAL mode a save appends the pages to
/// the log and syncs once (still `synchronous = FULL`, so a returned save is durable);
/// checkpoints fold the log back into the file once it outgrows the file itself, and
/// `close` folds it in and returns the file to rollback mode, a single self-contained file.
// `@unchecked Sendable` is safe: the connection is not thread-safe, but a `LiveConnection`
// lives only inside `SnapshotFile`'s saver lock, and every use of it (saves, close)
// happens with that lock held, so no two threads ever touch it at once.
struct LiveConnection: @unchecked Sendable {
    let connection: SQLiteConnection
    /// The file the connection opened, to notice a file replaced under the same path.
    let identity: FileIdentity

    /// Opens `path` for incremental saves.
    init(path: String) throws(SnapshotError) {
        // A file in rollback mode owns no log: one beside it was left by a file this one
        // replaced, and SQLite replays any log it finds when it opens a file, which would
        // corrupt this one. So it goes before SQLite sees the file.
        if !FileSystem.isInWALMode(path) { FileSystem.removeSidecars(of: path) }
        do {
            connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.setPragma("journal_mode", "WAL")
            try connection.setPragma("synchronous", "FULL")
            try connection.setPragma("cache_size", "-65536")
            // Pages a save reads (to find the rows it rewrites) come straight from the
            // OS page cache through a memory map instead of one read call each.
            try connection.setPragma("mmap_size", String(1 << 30))
            // Checkpoint once the log holds as many pages as the file: each page is then
            // written back at most once per file's worth of saves.
            let pages: Int64
            if case let .integer(count)? = try connection.pragma("page_count") { pages = count } else { pages = 0 }
            try connection.setPragma("wal_autocheckpoint", String(max(1_000, pages)))
            // Rewriting the header with its own format version starts the log now (its
            // creation and first syncs), once, rather than in the first save.
            try connection.setUserVersion(try connection.userVersion)
        } catch {
            throw SnapshotError(error, path: path)
        }
        guard let identity = FileIdentity(path: path) else {
            throw .io(path: path, message: "the snapshot file disappeared while it was being opened")
        }
        self.identity = identity
    }

    /// Whether `path` still names the file this connection writes.
    func isCurrent(path: String) -> Bool { FileIdentity(path: path) == identity }

    /// Folds the log into the file, returns it to rollback mode and closes. Best effort
    /// for the mode switch: a reader holding the file open keeps it in WAL mode, which
    /// every SQLite reader handles.
    ///
    /// If `path` names another file by now (a full snapshot replaced it), the connection
    /// closes without touching anything by name: SQLite would otherwise delete `path-wal`
    /// and `path-shm`, which are the new file's, with saves in them.
    func close(path: String) throws(SnapshotError) {
        do {
            if isCurrent(path: path) {
                _ = try connection.checkpointCompletely()
                try? connection.setPragma("journal_mode", "DELETE")
            } else {
                try connection.keepLogOnClose()
            }
            try connection.close()
        } catch {
            throw SnapshotError(error, path: connection.path)
        }
    }
}

/// A file's device and inode: equal exactly when two paths (or one path at two moments)
/// name the same file.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    init?(path: String) {
        guard let info = try? FileInfo.following(path) else { return nil }
        device = info.device
        inode = info.inode
    }
}
