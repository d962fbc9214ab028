// A fault-injecting SQLite VFS: forwards every call to the VFS that was the default when
// it was installed, and consults the armed plan (see CSQLiteFaults.h) first.

#include "CSQLiteFaults.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

// MARK: - The plan

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
} Plan;

static Plan plan;
static pthread_mutex_t planLock = PTHREAD_MUTEX_INITIALIZER;

/// The verdict on one operation.
typedef enum { PROCEED, FAIL_KILLED, FAIL_ERROR } Verdict;

static Verdict decide(const char *path, int kind, int *error) {
    if (path == NULL) return PROCEED;
    Verdict verdict = PROCEED;
    pthread_mutex_lock(&planLock);
    if (plan.armed && strncmp(path, plan.prefix, plan.prefixLength) == 0) {
        if (plan.dead) {
            verdict = FAIL_KILLED;
        } else if (kind & plan.mask) {
            long number = plan.count++;
            if (number == plan.target) {
                plan.struck = 1;
                if (plan.mode == ES_FAULT_KILL) {
                    plan.dead = 1;
                    verdict = FAIL_KILLED;
                } else {
                    verdict = FAIL_ERROR;
                    *error = plan.error;
                }
            }
        }
    }
    pthread_mutex_unlock(&planLock);
    return verdict;
}

/// Whether the plan killed the (simulated) process, for calls that only release resources.
static int isDead(const char *path) {
    if (path == NULL) return 0;
    pthread_mutex_lock(&planLock);
    int dead = plan.armed && plan.dead && strncmp(path, plan.prefix, plan.prefixLength) == 0;
    pthread_mutex_unlock(&planLock);
    return dead;
}

void es_fault_arm(const char *prefix, int mode, long target, int mask, int error) {
    pthread_mutex_lock(&planLock);
    free(plan.prefix);
    plan.prefix = strdup(prefix);
    plan.prefixLength = plan.prefix ? strlen(plan.prefix) : 0;
    plan.armed = plan.prefix != NULL;
    plan.mode = mode;
    plan.target = target;
    plan.mask = mask;
    plan.error = error;
    plan.count = 0;
    plan.dead = 0;
    plan.struck = 0;
    pthread_mutex_unlock(&planLock);
}

long es_fault_disarm(void) {
    pthread_mutex_lock(&planLock);
    long count = plan.count;
    plan.armed = 0;
    plan.dead = 0;
    pthread_mutex_unlock(&planLock);
    return count;
}

int es_fault_struck(void) {
    pthread_mutex_lock(&planLock);
    int struck = plan.struck;
    pthread_mutex_unlock(&planLock);
    return struck;
}

int es_fault_point(const char *path, int kind) {
    int error = 0;
    switch (decide(path, kind, &error)) {
    case PROCEED: return 0;
    case FAIL_KILLED: return EIO;
    case FAIL_ERROR: return (error & 0xff) == SQLITE_FULL ? ENOSPC : EIO;
    }
    return 0;
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
    return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
}

static int faultTruncate(sqlite3_file *file, sqlite3_int64 size) {
    FaultFile *f = (FaultFile *)file;
    int error = 0;
    Verdict verdict = decide(f->path, ES_FAULT_TRUNCATE, &error);
    if (verdict != PROCEED) return failure(verdict, error, SQLITE_IOERR_TRUNCATE);
    return f->real->pMethods->xTruncate(f->real, size);
}

static int faultSync(sqlite3_file *file, int flags) {
    FaultFile *f = (FaultFile *)file;
    int error = 0;
    Verdict verdict = decide(f->path, ES_FAULT_SYNC, &error);
    if (verdict != PROCEED) return failure(verdict, error, SQLITE_IOERR_FSYNC);
    return f->real->pMethods->xSync(f->real, flags);
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
