import EntityStoreSQLite
import Foundation

/// The temporaries the tool writes beside an output `NAME`, named as the SQLite layer's
/// snapshot writer names its own (`TemporaryName`): for a JSON export being written (a
/// file), an ndjson export being built, and a replaced ndjson export being removed
/// (directories).
///
/// A run that is killed leaves its temporaries behind; the next run for the same output
/// removes those that are stale (``removeStale(for:)``).
enum Temporaries {
    /// How long a temporary must have gone unmodified before it may be stale. It covers
    /// the moments when a live run holds no lock on its temporary: between creating it
    /// and locking it, and while the SQLite writer syncs and renames the file it closed.
    static let staleAge: Double = 30

    /// A fresh temporary path for `output`.
    static func path(for output: OutputPath) -> String {
        (output.directory as NSString).appendingPathComponent(TemporaryName.fresh(for: output.name))
    }

    /// Whether `entry` is exactly the name of one of `name`'s temporaries.
    static func isTemporary(_ entry: String, of name: String) -> Bool {
        TemporaryName.isTemporary(entry, of: name)
    }

    /// Removes the stale temporaries of `output` from its directory; failures are ignored
    /// (a temporary that stays is only clutter). Stale means all of:
    /// - the name is exactly a temporary's of this output (nothing else is looked at);
    /// - it is a regular file, or a directory that holds only what an ndjson export
    ///   writes (an exported directory's own rules decide, see ``ExportDirectory``);
    /// - nobody holds a lock on it: every run of the tool holds an exclusive `flock` on
    ///   each temporary it made until it is renamed or removed, and SQLite holds POSIX
    ///   record locks on the database it writes; the kernel drops both when the holder
    ///   dies, even by `SIGKILL`, so an unlocked temporary belongs to no live run, with
    ///   pids never compared (they are reused, and differ across containers);
    /// - it was last modified more than ``staleAge`` seconds ago (see there).
    /// The lock is taken before the checks and held through the removal, so a run
    /// cleaning concurrently cannot remove it at the same time.
    static func removeStale(for output: OutputPath, now: Double = Date().timeIntervalSince1970) {
        guard let entries = try? FileCalls.entries(of: output.directory) else { return }
        for case let entry? in entries where isTemporary(entry, of: output.name) {
            let path = (output.directory as NSString).appendingPathComponent(entry)
            guard let info = try? FileInfo.at(path), info.kind == .regular || info.kind == .directory,
                  let file = try? FileDescriptor.reading(path, followingLinks: false),
                  let opened = try? file.info(), opened.isSameFile(as: info),
                  (try? file.tryLock()) == true, !file.hasRecordLocks(),
                  now - opened.modified > staleAge
            else { continue }
            if opened.kind == .directory {
                ExportDirectory.removeExport(at: path, opened: file)
            } else {
                try? FileCalls.removeFile(path)
            }
        }
    }
}
