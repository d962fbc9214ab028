#ifndef ENTITYSTORE_CSQLITE_FAULTS_H
#define ENTITYSTORE_CSQLITE_FAULTS_H

// Fault injection for crash and I/O-error tests, in the manner of SQLite's own test VFS:
// a VFS that wraps the default one and, while a plan is armed, counts the operations on
// files under a path prefix and fails the chosen one (several plans, each over its own
// directory, may be armed at once). The snapshot layer's own file
// operations (rename, fsync of a directory, unlink) ask `es_fault_point` too, so one
// plan covers every step of a write. Nothing happens unless a plan is armed.

/// Kinds of operations, as bits of a mask.
enum {
    ES_FAULT_READ = 1,
    ES_FAULT_WRITE = 2,
    ES_FAULT_SYNC = 4,
    ES_FAULT_TRUNCATE = 8,
    ES_FAULT_DELETE = 16,
    ES_FAULT_CREATE = 32,
    ES_FAULT_RENAME = 64,
    /// Every operation that changes what is on disk.
    ES_FAULT_MUTATING = 2 | 4 | 8 | 16 | 32 | 64,
};

/// What happens at the chosen operation.
enum {
    /// The operation and every later one on a watched file fail without touching the
    /// disk, as if the process had been killed just before it (reads fail too; closing
    /// and unlocking still release their resources).
    ES_FAULT_KILL = 1,
    /// The operation fails once with the plan's error; later ones proceed.
    ES_FAULT_ERROR = 2,
    /// As ES_FAULT_KILL, and the machine loses power: every write to a watched file since
    /// that file's last sync is undone by `es_fault_lose_unsynced` (lost file contents;
    /// directory entries, such as a rename not followed by a directory sync, are kept).
    ES_FAULT_POWER_LOSS = 3,
};

/// Registers the fault-injecting VFS as SQLite's default, wrapping the previous
/// default. Safe to call more than once and from several threads. Returns an SQLite
/// result code.
int es_fault_install(void);

/// Arms a plan: operations of the kinds in `mask` on files whose path starts with
/// `prefix` are counted from 0, and the one numbered `target` fails as `mode` says
/// (`error` is the SQLite extended code for ES_FAULT_ERROR, e.g. SQLITE_FULL or
/// SQLITE_IOERR_WRITE). Plans over different directories are independent (up to 256
/// armed at once); arming over the same `prefix` again replaces that plan. Returns 0, or
/// -1 when every slot holds an armed plan (nothing is armed then: no plan is dropped).
int es_fault_arm(const char *prefix, int mode, long target, int mask, int error);

/// Disarms the plan over `prefix`; returns how many operations it counted.
long es_fault_disarm(const char *prefix);

/// Whether the plan over `prefix` struck (the chosen operation was reached).
int es_fault_struck(const char *prefix);

/// The kind (one ES_FAULT_* bit) of the operation the plan over `prefix` struck at, or 0.
int es_fault_struck_kind(const char *prefix);

/// Copies the path of the file the plan over `prefix` struck at into `buffer`
/// (NUL-terminated, cut to `size`); returns its length, 0 if the plan has not struck.
int es_fault_struck_path(const char *prefix, char *buffer, int size);

/// Undoes, newest first, every write to a file under `prefix` since that file's last
/// sync, as a power loss would after a power-loss plan struck; returns how many writes it
/// undid. Call it once the objects of the interrupted run are released and the plan
/// disarmed.
int es_fault_lose_unsynced(const char *prefix);

/// Asks the armed plan about one operation of `kind` on `path`: 0 to go ahead, or an
/// errno value (EIO, or ENOSPC for a full disk) to fail with, without doing it.
int es_fault_point(const char *path, int kind);

/// As `es_fault_point`; `watched` (if not NULL) is set, in the same step, to whether a
/// plan watches `path`. Its syncs then reach the plan only, not the device: the plan's
/// record of unsynced writes is what a simulated power loss undoes, and the device's
/// flush would only make each run wait on the disk.
int es_fault_point_watched(const char *path, int kind, int *watched);

/// As `es_fault_point` for a rename of `source` over `target`; when it goes ahead, the
/// unsynced writes of `source` become the target's.
int es_fault_rename_point(const char *source, const char *target);

/// Copies the paths (one per line) of the files under `prefix` that mutating operations
/// reached since the plan was armed or this was last called, then forgets them; returns
/// the length written. Whatever the plan's mask, up to 64 paths.
int es_fault_take_seen(const char *prefix, char *buffer, int size);

#endif
