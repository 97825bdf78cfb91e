/*
 * What Hearth's SQLite layer adds around the writer, in C, for the floor servers (mhd_floor.c): a
 * floor must not be beaten by a design trick Hearth already has, so it has them too.
 *
 * - The WAL buffering VFS (Sources/HearthSQLite/WALWriteBuffer.swift and WALBufferingVFS.swift, the
 *   same rules): SQLite's unix VFS, with a WAL file's frame writes gathered and written in one
 *   pwrite per commit (two: the commit frame's page goes on its own) instead of two per frame. The
 *   bytes reach the file at the commit frame's header, before any other call on the file and before
 *   any write that does not continue them, so an acknowledged commit is in the file as before.
 * - Checkpoints on a thread of their own (HearthSQLite.CheckpointThread): the writer's autocheckpoint
 *   off, its WAL hook wakes the thread at 4,096 WAL pages, which runs a PASSIVE checkpoint on its
 *   own connection; at 6,144 pages the writer waits for the thread's pass and runs one itself
 *   (Hearth's backstop), so the WAL restarts.
 */
#ifndef HEARTH_FLOOR_WAL_H
#define HEARTH_FLOOR_WAL_H
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOOR_WAL_CAPACITY (120 * 1024) /* under the unix VFS's 128 KiB write mask, as Hearth's */

/* A WAL file: our header, then the unix VFS's file object. */
struct floor_wal_file {
    sqlite3_file base;
    unsigned char *bytes;
    int count;
    int commit_pending; /* the last write was a commit frame's header: its page is written at once */
    sqlite3_int64 start;
};

static sqlite3_vfs *floor_unix_vfs;

static sqlite3_file *floor_inner(sqlite3_file *f)
{
    return (sqlite3_file *) ((char *) f + sizeof(struct floor_wal_file));
}

static int floor_flush(struct floor_wal_file *w)
{
    if (w->count == 0) return SQLITE_OK;
    int n = w->count;
    w->count = 0; /* dropped whatever the outcome: SQLite rolls back after a failed write */
    sqlite3_file *real = floor_inner(&w->base);
    return real->pMethods->xWrite(real, w->bytes, n, w->start);
}

static int floor_settle(sqlite3_file *f)
{
    struct floor_wal_file *w = (struct floor_wal_file *) f;
    w->commit_pending = 0;
    return floor_flush(w);
}

/* A WAL frame header (24 bytes) whose "database size after commit" field is not zero. */
static int floor_is_commit_header(const void *data, int amount)
{
    const unsigned char *b = data;
    return amount == 24 && (b[4] | b[5] | b[6] | b[7]) != 0;
}

static int floor_write(sqlite3_file *f, const void *data, int amount, sqlite3_int64 offset)
{
    struct floor_wal_file *w = (struct floor_wal_file *) f;
    int rc;
    if (w->count > 0 && offset != w->start + w->count && (rc = floor_flush(w)) != SQLITE_OK) return rc;
    if (w->count + amount > FLOOR_WAL_CAPACITY) {
        if ((rc = floor_flush(w)) != SQLITE_OK) return rc;
        if (amount > FLOOR_WAL_CAPACITY) {
            w->commit_pending = 0;
            sqlite3_file *real = floor_inner(f);
            return real->pMethods->xWrite(real, data, amount, offset);
        }
    }
    if (!w->bytes && !(w->bytes = malloc(FLOOR_WAL_CAPACITY))) return SQLITE_NOMEM;
    if (w->count == 0) w->start = offset;
    memcpy(w->bytes + w->count, data, (size_t) amount);
    w->count += amount;
    if (w->commit_pending) {
        w->commit_pending = 0;
        return floor_flush(w);
    }
    if (floor_is_commit_header(data, amount)) {
        w->commit_pending = 1;
        return floor_flush(w);
    }
    return SQLITE_OK;
}

/* Every other call: what is gathered goes out first (SETTLED), or the call is forwarded as it is. */
#define FLOOR_REAL sqlite3_file *real = floor_inner(f)
#define SETTLED(call) do { int rc_ = floor_settle(f); if (rc_ != SQLITE_OK) return rc_; FLOOR_REAL; return call; } while (0)
static int floor_close(sqlite3_file *f)
{
    int rc = floor_settle(f);
    FLOOR_REAL;
    int closed = real->pMethods->xClose(real);
    free(((struct floor_wal_file *) f)->bytes);
    return rc != SQLITE_OK ? rc : closed;
}
static int floor_read(sqlite3_file *f, void *d, int n, sqlite3_int64 o) { SETTLED(real->pMethods->xRead(real, d, n, o)); }
static int floor_truncate(sqlite3_file *f, sqlite3_int64 s) { SETTLED(real->pMethods->xTruncate(real, s)); }
static int floor_sync(sqlite3_file *f, int flags) { SETTLED(real->pMethods->xSync(real, flags)); }
static int floor_size(sqlite3_file *f, sqlite3_int64 *s) { SETTLED(real->pMethods->xFileSize(real, s)); }
static int floor_lock(sqlite3_file *f, int l) { SETTLED(real->pMethods->xLock(real, l)); }
static int floor_unlock(sqlite3_file *f, int l) { SETTLED(real->pMethods->xUnlock(real, l)); }
static int floor_reserved(sqlite3_file *f, int *out) { FLOOR_REAL; return real->pMethods->xCheckReservedLock(real, out); }
static int floor_control(sqlite3_file *f, int op, void *arg) { SETTLED(real->pMethods->xFileControl(real, op, arg)); }
static int floor_sector(sqlite3_file *f) { FLOOR_REAL; return real->pMethods->xSectorSize(real); }
static int floor_device(sqlite3_file *f) { FLOOR_REAL; return real->pMethods->xDeviceCharacteristics(real); }
/* A WAL file has no shared memory of its own and is not memory-mapped: these are never called on it. */
static int floor_shm_map(sqlite3_file *f, int p, int s, int e, void volatile **out) { FLOOR_REAL; return real->pMethods->xShmMap(real, p, s, e, out); }
static int floor_shm_lock(sqlite3_file *f, int o, int n, int fl) { FLOOR_REAL; return real->pMethods->xShmLock(real, o, n, fl); }
static void floor_shm_barrier(sqlite3_file *f) { floor_settle(f); FLOOR_REAL; real->pMethods->xShmBarrier(real); }
static int floor_shm_unmap(sqlite3_file *f, int d) { FLOOR_REAL; return real->pMethods->xShmUnmap(real, d); }
static int floor_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **out) { SETTLED(real->pMethods->xFetch(real, o, n, out)); }
static int floor_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { FLOOR_REAL; return real->pMethods->xUnfetch(real, o, p); }
#undef SETTLED
#undef FLOOR_REAL

static const sqlite3_io_methods floor_wal_methods = {
    3, floor_close, floor_read, floor_write, floor_truncate, floor_sync, floor_size, floor_lock, floor_unlock,
    floor_reserved, floor_control, floor_sector, floor_device, floor_shm_map, floor_shm_lock, floor_shm_barrier,
    floor_shm_unmap, floor_fetch, floor_unfetch,
};

static int floor_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *out_flags)
{
    (void) vfs;
    if (!(flags & SQLITE_OPEN_WAL)) return floor_unix_vfs->xOpen(floor_unix_vfs, name, f, flags, out_flags);
    sqlite3_file *real = floor_inner(f);
    int rc = floor_unix_vfs->xOpen(floor_unix_vfs, name, real, flags, out_flags);
    if (rc != SQLITE_OK) {
        if (real->pMethods) real->pMethods->xClose(real);
        f->pMethods = NULL;
        return rc;
    }
    struct floor_wal_file *w = (struct floor_wal_file *) f;
    w->bytes = NULL;
    w->count = 0;
    w->commit_pending = 0;
    w->start = 0;
    f->pMethods = &floor_wal_methods;
    return SQLITE_OK;
}

/* Registers the buffering VFS as the default one: every connection opened after uses it. */
static void floor_wal_register(void)
{
    static sqlite3_vfs vfs;
    floor_unix_vfs = sqlite3_vfs_find(NULL);
    vfs = *floor_unix_vfs;
    vfs.szOsFile = (int) sizeof(struct floor_wal_file) + floor_unix_vfs->szOsFile;
    vfs.zName = "floor-wal-buffering";
    vfs.pNext = NULL;
    vfs.xOpen = floor_open;
    if (sqlite3_vfs_register(&vfs, 1) != SQLITE_OK) {
        fprintf(stderr, "cannot register the WAL buffering VFS\n");
        exit(1);
    }
}

/* The checkpoint thread. */
#define FLOOR_CHECKPOINT_PAGES 4096
#define FLOOR_BACKSTOP_PAGES 6144

struct floor_checkpointer {
    sqlite3 *db; /* its own connection */
    pthread_mutex_t lock, pass; /* `pass`: one checkpoint at a time, the thread's or the writer's */
    pthread_cond_t wake;
    int wanted;
};

static void *floor_checkpoint_loop(void *arg)
{
    struct floor_checkpointer *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        while (!c->wanted) pthread_cond_wait(&c->wake, &c->lock);
        c->wanted = 0;
        pthread_mutex_unlock(&c->lock);
        pthread_mutex_lock(&c->pass);
        sqlite3_wal_checkpoint_v2(c->db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_unlock(&c->pass);
    }
    return NULL;
}

/* The writer's WAL hook (after every commit, on the writer's thread). */
static int floor_wal_hook(void *arg, sqlite3 *writer, const char *db_name, int pages)
{
    struct floor_checkpointer *c = arg;
    if (pages >= FLOOR_BACKSTOP_PAGES) {
        /* Waits for the thread's pass in progress, then copies what is left: the WAL restarts. */
        pthread_mutex_lock(&c->pass);
        sqlite3_wal_checkpoint_v2(writer, db_name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_unlock(&c->pass);
    } else if (pages >= FLOOR_CHECKPOINT_PAGES) {
        pthread_mutex_lock(&c->lock);
        c->wanted = 1;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->lock);
    }
    return SQLITE_OK;
}

/* Starts the checkpoint thread for the file at `path` (already created by `writer`, its autocheckpoint off). */
static void floor_checkpoints_start(struct floor_checkpointer *c, sqlite3 *writer, const char *path)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->pass, NULL);
    pthread_cond_init(&c->wake, NULL);
    if (sqlite3_open(path, &c->db) != SQLITE_OK) {
        fprintf(stderr, "checkpoint connection: %s\n", sqlite3_errmsg(c->db));
        exit(1);
    }
    sqlite3_busy_timeout(c->db, 5000);
    sqlite3_exec(c->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL); /* as every Hearth connection */
    sqlite3_wal_hook(writer, floor_wal_hook, c);
    pthread_t t;
    pthread_create(&t, NULL, floor_checkpoint_loop, c);
    pthread_detach(t);
}
#endif
