/*
 * SQLite's unix VFS with each WAL file's frame writes gathered into one write per run of frames — the
 * design of Hearth's HearthSQLite.WALBufferingVFS / WALWriteBuffer (their comments say why it is safe),
 * here so that the ceilings' and the floor servers' SQLite side costs no more system time than
 * Hearth's own: SQLite writes a WAL frame as two calls (its 24-byte header, then its page), ~40 calls
 * for a Firestore create, and a floor that paid them would not be a lower bound.
 *
 * Everything gathered is written out at a commit frame's header (and its page right after), before
 * any other call on the file, and before a write that does not continue the gathered bytes.
 * wal_gather_register() registers it as the default VFS (process-wide; call before opening).
 */
#ifndef HEARTH_WAL_GATHER_H
#define HEARTH_WAL_GATHER_H
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* Under 128 KiB: the unix VFS masks a write's length with 0x1ffff. */
#define WAL_GATHER_CAPACITY (120 * 1024)

struct wal_gather_file {
    sqlite3_file base;               /* our methods */
    unsigned char *bytes;
    int count, commit_pending;
    sqlite3_int64 start;
    /* the unix VFS's file follows (szOsFile bytes) */
};

static sqlite3_vfs *wal_gather_unix;

static sqlite3_file *wal_gather_inner(sqlite3_file *f)
{
    return (sqlite3_file *) ((char *) f + sizeof(struct wal_gather_file));
}

static int wal_gather_flush(sqlite3_file *f)
{
    struct wal_gather_file *g = (struct wal_gather_file *) f;
    if (g->count == 0) return SQLITE_OK;
    int n = g->count;
    g->count = 0;
    sqlite3_file *real = wal_gather_inner(f);
    return real->pMethods->xWrite(real, g->bytes, n, g->start);
}

static int wal_gather_settle(sqlite3_file *f)
{
    ((struct wal_gather_file *) f)->commit_pending = 0;
    return wal_gather_flush(f);
}

static int wal_gather_is_commit_header(const void *data, int amount)
{
    const unsigned char *b = data;
    return amount == 24 && (b[4] | b[5] | b[6] | b[7]) != 0;
}

static int wal_gather_write(sqlite3_file *f, const void *data, int amount, sqlite3_int64 offset)
{
    struct wal_gather_file *g = (struct wal_gather_file *) f;
    int rc;
    if (g->count > 0 && offset != g->start + g->count && (rc = wal_gather_flush(f)) != SQLITE_OK) return rc;
    if (g->count + amount > WAL_GATHER_CAPACITY) {
        if ((rc = wal_gather_flush(f)) != SQLITE_OK) return rc;
        if (amount > WAL_GATHER_CAPACITY) {
            g->commit_pending = 0;
            sqlite3_file *real = wal_gather_inner(f);
            return real->pMethods->xWrite(real, data, amount, offset);
        }
    }
    if (!g->bytes && !(g->bytes = malloc(WAL_GATHER_CAPACITY))) return SQLITE_NOMEM;
    if (g->count == 0) g->start = offset;
    memcpy(g->bytes + g->count, data, (size_t) amount);
    g->count += amount;
    if (g->commit_pending) {
        g->commit_pending = 0;
        return wal_gather_flush(f);
    }
    if (wal_gather_is_commit_header(data, amount)) {
        g->commit_pending = 1;
        return wal_gather_flush(f);
    }
    return SQLITE_OK;
}

#define WAL_GATHER_SETTLED(call) \
    int rc = wal_gather_settle(f); \
    if (rc != SQLITE_OK) return rc; \
    sqlite3_file *real = wal_gather_inner(f); \
    return real->pMethods->call;
#define WAL_GATHER_FORWARD(call) \
    sqlite3_file *real = wal_gather_inner(f); \
    return real->pMethods->call;

static int wal_gather_close(sqlite3_file *f)
{
    int rc = wal_gather_settle(f);
    sqlite3_file *real = wal_gather_inner(f);
    int closed = real->pMethods->xClose(real);
    free(((struct wal_gather_file *) f)->bytes);
    return rc != SQLITE_OK ? rc : closed;
}
static int wal_gather_read(sqlite3_file *f, void *d, int n, sqlite3_int64 o) { WAL_GATHER_SETTLED(xRead(real, d, n, o)) }
static int wal_gather_truncate(sqlite3_file *f, sqlite3_int64 s) { WAL_GATHER_SETTLED(xTruncate(real, s)) }
static int wal_gather_sync(sqlite3_file *f, int flags) { WAL_GATHER_SETTLED(xSync(real, flags)) }
static int wal_gather_size(sqlite3_file *f, sqlite3_int64 *s) { WAL_GATHER_SETTLED(xFileSize(real, s)) }
static int wal_gather_lock(sqlite3_file *f, int l) { WAL_GATHER_SETTLED(xLock(real, l)) }
static int wal_gather_unlock(sqlite3_file *f, int l) { WAL_GATHER_SETTLED(xUnlock(real, l)) }
static int wal_gather_reserved(sqlite3_file *f, int *out) { WAL_GATHER_FORWARD(xCheckReservedLock(real, out)) }
static int wal_gather_control(sqlite3_file *f, int op, void *arg) { WAL_GATHER_SETTLED(xFileControl(real, op, arg)) }
static int wal_gather_sector(sqlite3_file *f) { WAL_GATHER_FORWARD(xSectorSize(real)) }
static int wal_gather_characteristics(sqlite3_file *f) { WAL_GATHER_FORWARD(xDeviceCharacteristics(real)) }

/* Version 1 methods: a WAL file has no shared memory of its own and is not memory-mapped. */
static const sqlite3_io_methods wal_gather_methods = {
    1, wal_gather_close, wal_gather_read, wal_gather_write, wal_gather_truncate, wal_gather_sync,
    wal_gather_size, wal_gather_lock, wal_gather_unlock, wal_gather_reserved, wal_gather_control,
    wal_gather_sector, wal_gather_characteristics,
};

static int wal_gather_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *out_flags)
{
    (void) vfs;
    if (!(flags & SQLITE_OPEN_WAL)) return wal_gather_unix->xOpen(wal_gather_unix, name, f, flags, out_flags);
    struct wal_gather_file *g = (struct wal_gather_file *) f;
    memset(g, 0, sizeof *g);
    sqlite3_file *real = wal_gather_inner(f);
    int rc = wal_gather_unix->xOpen(wal_gather_unix, name, real, flags, out_flags);
    if (rc != SQLITE_OK) {
        if (real->pMethods) real->pMethods->xClose(real);
        f->pMethods = NULL;
        return rc;
    }
    f->pMethods = &wal_gather_methods;
    return SQLITE_OK;
}

static void wal_gather_register(void)
{
    static sqlite3_vfs vfs;
    if (wal_gather_unix) return;
    wal_gather_unix = sqlite3_vfs_find(NULL);
    vfs = *wal_gather_unix;
    vfs.szOsFile = (int) sizeof(struct wal_gather_file) + wal_gather_unix->szOsFile;
    vfs.zName = "wal-gather";
    vfs.pNext = NULL;
    vfs.xOpen = wal_gather_open;
    sqlite3_vfs_register(&vfs, 1);
}
#endif
