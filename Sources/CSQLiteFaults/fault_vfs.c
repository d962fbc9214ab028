// A fault-injecting SQLite VFS: forwards every call to the VFS that was the default when
// it was installed, and consults the armed plan (see CSQLiteFaults.h) first.

#include "CSQLiteFaults.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <unistd.h>

// MARK: - The plan

#define SEEN_PATHS 64

typedef struct Plan {
    int armed;
    char *prefix;
    size_t prefixLength;
    int mode;
    long target;
    int mask;
    int error;
    long count;
    int dead;
    int struck;
    /// The kind and path of the operation the plan struck at.
    int struckKind;
    char *struckPath;
    /// The distinct paths of the mutating operations seen since the plan was armed or
    /// they were last taken (es_fault_take_seen), whatever the mask.
    char *seen[SEEN_PATHS];
    int seenCount;
} Plan;

/// The plans armed at once, each over its own directory (tests of several suites may run
/// crash checks in parallel, each in a directory of its own, and a plan stays armed from
/// a run's preparation to its end): far more than the checks that run side by side.
#define PLAN_SLOTS 256
static Plan plans[PLAN_SLOTS];
static pthread_mutex_t planLock = PTHREAD_MUTEX_INITIALIZER;
/// The armed plans: every file operation looks among these only (with none armed, at no
/// cost beyond the lock), not through every slot.
static Plan *armedPlans[PLAN_SLOTS];
static int armedCount;

static void noteArmed(Plan *plan) {
    if (armedCount < PLAN_SLOTS) armedPlans[armedCount++] = plan;
}

static void noteDisarmed(Plan *plan) {
    for (int i = 0; i < armedCount; i++) {
        if (armedPlans[i] == plan) {
            armedPlans[i] = armedPlans[--armedCount];
            return;
        }
    }
}

/// Forgets unsynced writes (see below); called with `planLock` held.
static void discardUnsynced(const char *path);
static void discardUnsyncedUnder(const char *prefix);
static void moveUnsynced(const char *source, const char *target);

/// The armed plan watching `path`, or NULL; called with `planLock` held.
static Plan *planWatching(const char *path) {
    if (path == NULL) return NULL;
    for (int i = 0; i < armedCount; i++) {
        Plan *candidate = armedPlans[i];
        if (strncmp(path, candidate->prefix, candidate->prefixLength) == 0) return candidate;
    }
    return NULL;
}

/// The plan last armed over exactly `prefix`, armed or not, or NULL; called with
/// `planLock` held.
static Plan *planOver(const char *prefix) {
    if (prefix == NULL) return NULL;
    for (int i = 0; i < PLAN_SLOTS; i++) {
        if (plans[i].prefix != NULL && strcmp(plans[i].prefix, prefix) == 0) return &plans[i];
    }
    return NULL;
}

/// The verdict on one operation.
typedef enum { PROCEED, FAIL_KILLED, FAIL_ERROR } Verdict;

/// Notes that a mutating operation reached `path`; called with `planLock` held.
static void noteSeen(Plan *plan, const char *path, int kind) {
    if (!(kind & ES_FAULT_MUTATING)) return;
    for (int i = 0; i < plan->seenCount; i++) {
        if (strcmp(plan->seen[i], path) == 0) return;
    }
    if (plan->seenCount < SEEN_PATHS) {
        char *copy = strdup(path);
        if (copy != NULL) plan->seen[plan->seenCount++] = copy;
    }
}

static void forgetSeen(Plan *plan) {
    for (int i = 0; i < plan->seenCount; i++) free(plan->seen[i]);
    plan->seenCount = 0;
}

/// The verdict on one operation of `kind` on `path`; `watched` (if not NULL) says, from
/// the same look under the lock, whether a plan watches the path.
static Verdict decideWatching(const char *path, int kind, int *error, int *watched) {
    if (watched != NULL) *watched = 0;
    if (path == NULL) return PROCEED;
    Verdict verdict = PROCEED;
    pthread_mutex_lock(&planLock);
    Plan *plan = planWatching(path);
    if (watched != NULL) *watched = plan != NULL;
    if (plan != NULL) {
        noteSeen(plan, path, kind);
        if (plan->dead) {
            verdict = FAIL_KILLED;
        } else if (kind & plan->mask) {
            long number = plan->count++;
            if (number == plan->target) {
                plan->struck = 1;
                plan->struckKind = kind;
                free(plan->struckPath);
                plan->struckPath = strdup(path);
                if (plan->mode == ES_FAULT_KILL || plan->mode == ES_FAULT_POWER_LOSS) {
                    plan->dead = 1;
                    verdict = FAIL_KILLED;
                } else {
                    verdict = FAIL_ERROR;
                    *error = plan->error;
                }
            }
        }
    }
    pthread_mutex_unlock(&planLock);
    return verdict;
}

static Verdict decide(const char *path, int kind, int *error) {
    return decideWatching(path, kind, error, NULL);
}

/// Whether the plan killed the (simulated) process, for calls that only release resources.
static int isDead(const char *path) {
    if (path == NULL) return 0;
    pthread_mutex_lock(&planLock);
    Plan *plan = planWatching(path);
    int dead = plan != NULL && plan->dead;
    pthread_mutex_unlock(&planLock);
    return dead;
}

int es_fault_arm(const char *prefix, int mode, long target, int mask, int error) {
    if (prefix == NULL) return -1;
    pthread_mutex_lock(&planLock);
    Plan *plan = planOver(prefix);
    for (int i = 0; plan == NULL && i < PLAN_SLOTS; i++) {
        if (!plans[i].armed) plan = &plans[i];
    }
    char *copy = plan == NULL ? NULL : strdup(prefix);
    if (copy == NULL) {
        // Every slot holds an armed plan: refused, rather than another plan silently
        // dropped (its runs would then never strike, and pass).
        pthread_mutex_unlock(&planLock);
        return -1;
    }
    if (!plan->armed) noteArmed(plan);
    free(plan->prefix);
    plan->prefix = copy;
    plan->prefixLength = strlen(copy);
    plan->armed = 1;
    plan->mode = mode;
    plan->target = target;
    plan->mask = mask;
    plan->error = error;
    plan->count = 0;
    plan->dead = 0;
    plan->struck = 0;
    plan->struckKind = 0;
    free(plan->struckPath);
    plan->struckPath = NULL;
    forgetSeen(plan);
    discardUnsyncedUnder(prefix);
    pthread_mutex_unlock(&planLock);
    return 0;
}

int es_fault_take_seen(const char *prefix, char *buffer, int size) {
    pthread_mutex_lock(&planLock);
    Plan *plan = planOver(prefix);
    int length = 0;
    if (plan != NULL && size > 0) {
        buffer[0] = 0;
        for (int i = 0; i < plan->seenCount; i++) {
            int needed = (int)strlen(plan->seen[i]) + 1;
            if (length + needed >= size) break;
            memcpy(buffer + length, plan->seen[i], (size_t)needed - 1);
            length += needed;
            buffer[length - 1] = '\n';
            buffer[length] = 0;
        }
        forgetSeen(plan);
    }
    pthread_mutex_unlock(&planLock);
    return length;
}

long es_fault_disarm(const char *prefix) {
    pthread_mutex_lock(&planLock);
    Plan *plan = planOver(prefix);
    long count = 0;
    if (plan != NULL) {
        count = plan->count;
        if (plan->armed) noteDisarmed(plan);
        plan->armed = 0;
        plan->dead = 0;
    }
    pthread_mutex_unlock(&planLock);
    return count;
}

int es_fault_struck_kind(const char *prefix) {
    pthread_mutex_lock(&planLock);
    Plan *plan = planOver(prefix);
    int kind = plan != NULL && plan->struck ? plan->struckKind : 0;
    pthread_mutex_unlock(&planLock);
    return kind;
}

int es_fault_struck_path(const char *prefix, char *buffer, int size) {
    pthread_mutex_lock(&planLock);
    Plan *plan = planOver(prefix);
    int length = 0;
    if (plan != NULL && plan->struck && plan->struckPath != NULL && size > 0) {
        length = (int)strlen(plan->struckPath);
        if (length >= size) length = size - 1;
        memcpy(buffer, plan->struckPath, (size_t)length);
        buffer[length] = 0;
    }
    pthread_mutex_unlock(&planLock);
    return length;
}

int es_fault_struck(const char *prefix) {
    pthread_mutex_lock(&planLock);
    Plan *plan = planOver(prefix);
    int struck = plan != NULL && plan->struck;
    pthread_mutex_unlock(&planLock);
    return struck;
}

int es_fault_point(const char *path, int kind) {
    return es_fault_point_watched(path, kind, NULL);
}

int es_fault_point_watched(const char *path, int kind, int *watched) {
    int error = 0;
    switch (decideWatching(path, kind, &error, watched)) {
    case PROCEED:
        // A file synced, renamed over, or removed keeps no unsynced writes.
        if (path != NULL && (kind & (ES_FAULT_SYNC | ES_FAULT_RENAME | ES_FAULT_DELETE))) {
            pthread_mutex_lock(&planLock);
            discardUnsynced(path);
            pthread_mutex_unlock(&planLock);
        }
        return 0;
    case FAIL_KILLED: return EIO;
    case FAIL_ERROR: return (error & 0xff) == SQLITE_FULL ? ENOSPC : EIO;
    }
    return 0;
}

int es_fault_rename_point(const char *source, const char *target) {
    int error = 0;
    switch (decide(target, ES_FAULT_RENAME, &error)) {
    case PROCEED:
        // The target's old contents are gone; the source's unsynced writes are now the
        // target's (a power loss loses them where the file now is).
        pthread_mutex_lock(&planLock);
        if (target != NULL) discardUnsynced(target);
        if (source != NULL && target != NULL) {
            Plan *plan = planWatching(source);
            if (plan != NULL) noteSeen(plan, source, ES_FAULT_RENAME);
            moveUnsynced(source, target);
        }
        pthread_mutex_unlock(&planLock);
        return 0;
    case FAIL_KILLED: return EIO;
    case FAIL_ERROR: return (error & 0xff) == SQLITE_FULL ? ENOSPC : EIO;
    }
    return 0;
}

// MARK: - Unsynced writes (power loss)

/// One write (or truncation) not yet synced, with what it replaced: applied newest first,
/// these entries turn a file back into what its last sync left on disk.
typedef struct Unsynced {
    char *path;
    sqlite3_int64 offset;
    /// The bytes the write overwrote (those below the file's size before it).
    unsigned char *old;
    int oldLength;
    /// The file's size before the write.
    sqlite3_int64 oldSize;
    struct Unsynced *next;
} Unsynced;

static Unsynced *unsynced;  // newest first; guarded by planLock

/// Whether a power-loss plan watches `path` and the simulated machine still runs.
static int tracksUnsynced(const char *path) {
    Plan *plan = planWatching(path);
    return plan != NULL && plan->mode == ES_FAULT_POWER_LOSS && !plan->dead;
}

/// Forgets the unsynced writes of `path` (every file's when NULL): they are on disk now,
/// or their file is gone. A path ending in "/" names a directory: nothing to forget.
static void discardUnsynced(const char *path) {
    if (path != NULL && path[0] != 0 && path[strlen(path) - 1] == '/') return;
    Unsynced **link = &unsynced;
    while (*link != NULL) {
        Unsynced *entry = *link;
        if (path == NULL || strcmp(entry->path, path) == 0) {
            *link = entry->next;
            free(entry->path);
            free(entry->old);
            free(entry);
        } else {
            link = &entry->next;
        }
    }
}

/// Files the unsynced writes of `source` under `target`, which it was renamed over.
static void moveUnsynced(const char *source, const char *target) {
    for (Unsynced *entry = unsynced; entry != NULL; entry = entry->next) {
        if (strcmp(entry->path, source) != 0) continue;
        char *copy = strdup(target);
        if (copy == NULL) continue;
        free(entry->path);
        entry->path = copy;
    }
}

/// Forgets the unsynced writes of every file under `prefix` (a new plan starts clean).
static void discardUnsyncedUnder(const char *prefix) {
    if (prefix == NULL) return;
    size_t length = strlen(prefix);
    Unsynced **link = &unsynced;
    while (*link != NULL) {
        Unsynced *entry = *link;
        if (strncmp(entry->path, prefix, length) == 0) {
            *link = entry->next;
            free(entry->path);
            free(entry->old);
            free(entry);
        } else {
            link = &entry->next;
        }
    }
}

/// Records that `length` bytes at `offset` of `file` (named `path`) are about to be
/// overwritten or cut off, before the write or truncation happens.
static void recordUnsynced(sqlite3_file *file, const char *path, sqlite3_int64 offset, sqlite3_int64 length) {
    sqlite3_int64 size = 0;
    if (file->pMethods->xFileSize(file, &size) != SQLITE_OK) return;
    Unsynced *entry = calloc(1, sizeof(Unsynced));
    if (entry == NULL) return;
    entry->path = strdup(path);
    entry->offset = offset;
    entry->oldSize = size;
    sqlite3_int64 kept = offset < size ? (size - offset < length ? size - offset : length) : 0;
    if (kept > 0 && kept < (1 << 30)) {
        entry->old = malloc((size_t)kept);
        if (entry->old != NULL && file->pMethods->xRead(file, entry->old, (int)kept, offset) == SQLITE_OK) {
            entry->oldLength = (int)kept;
        }
    }
    entry->next = unsynced;
    unsynced = entry;
}

int es_fault_lose_unsynced(const char *prefix) {
    if (prefix == NULL) return 0;
    size_t prefixLength = strlen(prefix);
    pthread_mutex_lock(&planLock);
    int reverted = 0;
    for (Unsynced *entry = unsynced; entry != NULL; entry = entry->next) {
        if (strncmp(entry->path, prefix, prefixLength) != 0) continue;
        int descriptor = open(entry->path, O_RDWR | O_CLOEXEC);
        if (descriptor < 0) continue;
        if (entry->oldLength > 0) {
            ssize_t written = pwrite(descriptor, entry->old, (size_t)entry->oldLength, (off_t)entry->offset);
            (void)written;
        }
        int truncated = ftruncate(descriptor, (off_t)entry->oldSize);
        (void)truncated;
        close(descriptor);
        reverted++;
    }
    discardUnsyncedUnder(prefix);
    pthread_mutex_unlock(&planLock);
    return reverted;
}

// MARK: - Files

typedef struct FaultFile {
    sqlite3_file base;
    /// The name the file was opened with (valid until it is closed), or NULL.
    const char *path;
    /// The wrapped VFS's file, allocated right after this struct.
    sqlite3_file *real;
} FaultFile;

static sqlite3_vfs *realVFS;

/// The result for a failed operation: the plan's error, or `killed` (an I/O error of the
/// operation's kind) once the process counts as killed.
static int failure(Verdict verdict, int error, int killed) {
    return verdict == FAIL_ERROR ? error : killed;
}

static int faultClose(sqlite3_file *file) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xClose(f->real);
}

static int faultRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *f = (FaultFile *)file;
    int error = 0;
    Verdict verdict = decide(f->path, ES_FAULT_READ, &error);
    if (verdict != PROCEED) return failure(verdict, error, SQLITE_IOERR_READ);
    return f->real->pMethods->xRead(f->real, buffer, amount, offset);
}

static int faultWrite(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *f = (FaultFile *)file;
    int error = 0;
    Verdict verdict = decide(f->path, ES_FAULT_WRITE, &error);
    if (verdict != PROCEED) return failure(verdict, error, SQLITE_IOERR_WRITE);
    pthread_mutex_lock(&planLock);
    if (tracksUnsynced(f->path)) recordUnsynced(f->real, f->path, offset, amount);
    pthread_mutex_unlock(&planLock);
    return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
}

static int faultTruncate(sqlite3_file *file, sqlite3_int64 size) {
    FaultFile *f = (FaultFile *)file;
    int error = 0;
    Verdict verdict = decide(f->path, ES_FAULT_TRUNCATE, &error);
    if (verdict != PROCEED) return failure(verdict, error, SQLITE_IOERR_TRUNCATE);
    pthread_mutex_lock(&planLock);
    if (tracksUnsynced(f->path)) {
        sqlite3_int64 current = 0;
        if (f->real->pMethods->xFileSize(f->real, &current) == SQLITE_OK && current > size) {
            recordUnsynced(f->real, f->path, size, current - size);
        }
    }
    pthread_mutex_unlock(&planLock);
    return f->real->pMethods->xTruncate(f->real, size);
}

static int faultSync(sqlite3_file *file, int flags) {
    FaultFile *f = (FaultFile *)file;
    int error = 0, watched = 0;
    Verdict verdict = decideWatching(f->path, ES_FAULT_SYNC, &error, &watched);
    if (verdict != PROCEED) return failure(verdict, error, SQLITE_IOERR_FSYNC);
    // Under a plan the sync is simulated (see es_fault_point_watched): the write it makes
    // durable is forgotten from the unsynced record below, as a real sync would.
    int rc = watched ? SQLITE_OK : f->real->pMethods->xSync(f->real, flags);
    if (rc == SQLITE_OK && f->path != NULL) {
        pthread_mutex_lock(&planLock);
        discardUnsynced(f->path);
        pthread_mutex_unlock(&planLock);
    }
    return rc;
}

static int faultFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    FaultFile *f = (FaultFile *)file;
    if (isDead(f->path)) return SQLITE_IOERR_FSTAT;
    return f->real->pMethods->xFileSize(f->real, size);
}

static int faultLock(sqlite3_file *file, int level) {
    FaultFile *f = (FaultFile *)file;
    if (isDead(f->path)) return SQLITE_IOERR_LOCK;
    return f->real->pMethods->xLock(f->real, level);
}

static int faultUnlock(sqlite3_file *file, int level) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xUnlock(f->real, level);
}

static int faultCheckReservedLock(sqlite3_file *file, int *result) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, result);
}

static int faultFileControl(sqlite3_file *file, int op, void *argument) {
    FaultFile *f = (FaultFile *)file;
    // A size hint may extend the file: a killed process does not.
    if (op == SQLITE_FCNTL_SIZE_HINT && isDead(f->path)) return SQLITE_IOERR_TRUNCATE;
    return f->real->pMethods->xFileControl(f->real, op, argument);
}

static int faultSectorSize(sqlite3_file *file) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int faultDeviceCharacteristics(sqlite3_file *file) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int faultShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **memory) {
    FaultFile *f = (FaultFile *)file;
    if (isDead(f->path)) return SQLITE_IOERR_SHMMAP;
    return f->real->pMethods->xShmMap(f->real, region, size, extend, memory);
}

static int faultShmLock(sqlite3_file *file, int offset, int count, int flags) {
    FaultFile *f = (FaultFile *)file;
    if ((flags & SQLITE_SHM_LOCK) && isDead(f->path)) return SQLITE_IOERR_SHMLOCK;
    return f->real->pMethods->xShmLock(f->real, offset, count, flags);
}

static void faultShmBarrier(sqlite3_file *file) {
    FaultFile *f = (FaultFile *)file;
    f->real->pMethods->xShmBarrier(f->real);
}

static int faultShmUnmap(sqlite3_file *file, int deleteFlag) {
    FaultFile *f = (FaultFile *)file;
    if (deleteFlag) {
        int error = 0;
        // Unmapping always happens; deleting the file is a change the plan may refuse.
        if (decide(f->path, ES_FAULT_DELETE, &error) != PROCEED) deleteFlag = 0;
    }
    return f->real->pMethods->xShmUnmap(f->real, deleteFlag);
}

// Version 2: shared memory for WAL, but no memory-mapped reads (xFetch), so that every
// read goes through xRead where the plan can see it.
static const sqlite3_io_methods faultMethods = {
    2,
    faultClose,
    faultRead,
    faultWrite,
    faultTruncate,
    faultSync,
    faultFileSize,
    faultLock,
    faultUnlock,
    faultCheckReservedLock,
    faultFileControl,
    faultSectorSize,
    faultDeviceCharacteristics,
    faultShmMap,
    faultShmLock,
    faultShmBarrier,
    faultShmUnmap,
    NULL,
    NULL,
};

// MARK: - The VFS

static int faultOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    FaultFile *f = (FaultFile *)file;
    f->base.pMethods = NULL;
    f->path = name;
    f->real = (sqlite3_file *)(f + 1);
    if (name != NULL) {
        int error = 0;
        Verdict verdict = (flags & SQLITE_OPEN_CREATE) ? decide(name, ES_FAULT_CREATE, &error)
                          : (isDead(name) ? FAIL_KILLED : PROCEED);
        if (verdict != PROCEED) return failure(verdict, error, SQLITE_CANTOPEN);
    }
    int rc = realVFS->xOpen(realVFS, name, f->real, flags, outFlags);
    if (rc == SQLITE_OK) f->base.pMethods = &faultMethods;
    return rc;
}

static int faultDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    int error = 0;
    Verdict verdict = decide(name, ES_FAULT_DELETE, &error);
    if (verdict != PROCEED) return failure(verdict, error, SQLITE_IOERR_DELETE);
    if (name != NULL) {
        pthread_mutex_lock(&planLock);
        discardUnsynced(name);
        pthread_mutex_unlock(&planLock);
    }
    return realVFS->xDelete(realVFS, name, syncDirectory);
}

static int faultAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    if (isDead(name)) return SQLITE_IOERR_ACCESS;
    return realVFS->xAccess(realVFS, name, flags, result);
}

static int faultFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *output) {
    (void)vfs;
    return realVFS->xFullPathname(realVFS, name, size, output);
}

static sqlite3_vfs faultVFS;
static pthread_once_t installOnce = PTHREAD_ONCE_INIT;
static int installResult = SQLITE_OK;

static void install(void) {
    realVFS = sqlite3_vfs_find(NULL);
    if (realVFS == NULL) {
        installResult = SQLITE_ERROR;
        return;
    }
    faultVFS = *realVFS;
    faultVFS.szOsFile = (int)sizeof(FaultFile) + realVFS->szOsFile;
    faultVFS.pNext = NULL;
    faultVFS.zName = "entitystore-faults";
    faultVFS.xOpen = faultOpen;
    faultVFS.xDelete = faultDelete;
    faultVFS.xAccess = faultAccess;
    faultVFS.xFullPathname = faultFullPathname;
    installResult = sqlite3_vfs_register(&faultVFS, 1);
}

int es_fault_install(void) {
    pthread_once(&installOnce, install);
    return installResult;
}
