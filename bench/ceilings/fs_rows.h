/*
 * The SQLite side of a Firestore create as Hearth's writer runs it, for the C programs that bound it:
 * firestore_rows.c (storage alone) and the floor servers (the storage behind a whole request).
 *
 * Hearth's Firestore schema as a file has it after its migrations (fs_meta; fs_documents without the
 * `parent` column, which `firestore.10` dropped, and without secondary indexes: `firestore.9` dropped
 * the parent index and the collection-group scan index is built only when a collection-group query
 * first needs it, `firestore.8`; fs_index) in a file with Hearth's Firestore settings (4 KiB pages,
 * WAL, synchronous=NORMAL, wal_autocheckpoint 4096 pages, cache_size -8192), and per document the
 * statements a create of users/{uid}/files/{id} runs: the read of the existing document (finds none)
 * and the document INSERT, with the byte layouts Hearth stores (OrderedEncoding keys and values).
 * The commit clock's `last_commit` is a ceiling (`CommitTimes`, store31): it is written only by a
 * transaction whose commit time passed the stored one, which then stores its time plus 100 ms.
 * Index rows exist only for the fields a query has needed (`IndexedFields`): the bench's creates
 * write none. What Hearth writes only in other cases can be added to price it (firestore_rows.c's
 * parts): `index`, the six collection-scope rows of a collection whose fields a query registered
 * (ownerUid, storage, s3Key, contentType, status, createdAt; an index row's doc_key is the key past
 * its scope), and `group`, the collection-group scan index once built.
 * The WAL's frame writes are gathered as Hearth gathers them (wal_gather.h), so the rows cost no more
 * system time here than in Hearth; FS_WAL_GATHER=0 in the environment writes them as SQLite does.
 * FS_PAGE_SIZE and FS_AUTOCHECKPOINT in the environment replace the page size and the
 * autocheckpoint (walpages' experiments).
 */
#ifndef HEARTH_FS_ROWS_H
#define HEARTH_FS_ROWS_H
#include <string.h>

#include "ceiling.h"
#include "wal_gather.h"

/* What a caller leaves out of a create or adds to it, to price each part (firestore_rows.c's PARTS):
 * `select` and `update` (the commit clock's ceiling) are Hearth's and can be left out; `index` and
 * `group` are not written by Hearth's bench create (above) and can be added. */
struct fs_rows_omit {
    int select, update;
    int index, group; /* added when set */
};

/* Microseconds of commit time a stored commit-clock ceiling covers (CommitTimes.leaseMicros). */
#define FS_COMMIT_LEASE_MICROS 100000

struct fs_rows {
    sqlite3 *db;
    sqlite3_stmt *begin, *select, *update, *insert_doc, *insert_index, *commit;
    struct fs_rows_omit omit;
    unsigned char parent[128]; /* the collection's key: the documents' keys start with it */
    size_t parent_len;
    sqlite3_int64 ceiling; /* the commit clock's stored ceiling (fs_meta's last_commit) */
    const char *names[5];
    unsigned char values[6][160];
    size_t value_lens[6];
    unsigned char *fields;
    int fields_bytes;
};

/* Appends one escaped, terminated segment or string body (OrderedEncoding: 0x00 -> 0x00 0xFF,
 * then 0x00 0x01); the inputs here hold no 0x00. */
static size_t fs_segment(unsigned char *out, size_t n, const char *s)
{
    size_t len = strlen(s);
    memcpy(out + n, s, len);
    out[n + len] = 0x00;
    out[n + len + 1] = 0x01;
    return n + len + 2;
}

static size_t fs_string_value(unsigned char *out, const char *s)
{
    out[0] = 0x50; /* tagString */
    return fs_segment(out, 1, s);
}

/* Creates the file at `path` (which must not exist) with Hearth's schema and settings and prepares
 * the statements; `checkpoints` 0 turns SQLite's autocheckpoint off (Hearth checkpoints on its own
 * thread). The bench's user: a 28-character uid, as Hearth's Auth makes them. */
static void fs_rows_open(struct fs_rows *r, const char *path, int fields_bytes, int checkpoints, struct fs_rows_omit omit)
{
    memset(r, 0, sizeof *r);
    r->omit = omit;
    const char *gather = getenv("FS_WAL_GATHER");
    if (!gather || strcmp(gather, "0") != 0) wal_gather_register();
    check(sqlite3_open(path, &r->db), r->db, "open");
    sqlite3 *db = r->db;
    char layout[160];
    snprintf(layout, sizeof layout, "PRAGMA page_size=%d; PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=%d;",
             getenv("FS_PAGE_SIZE") ? atoi(getenv("FS_PAGE_SIZE")) : 4096,
             getenv("FS_AUTOCHECKPOINT") ? atoi(getenv("FS_AUTOCHECKPOINT")) : 4096);
    check(sqlite3_exec(db, layout, NULL, NULL, NULL), db, "layout");
    const char *setup =
        "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-8192;"
        "CREATE TABLE fs_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE fs_documents (space INTEGER NOT NULL, key BLOB NOT NULL,"
        "  collection_id TEXT NOT NULL, fields BLOB NOT NULL, create_time INTEGER NOT NULL,"
        "  update_time INTEGER NOT NULL, PRIMARY KEY (space, key)) WITHOUT ROWID;"
        "CREATE TABLE fs_index (space INTEGER NOT NULL, scope BLOB NOT NULL, field TEXT NOT NULL,"
        "  kind INTEGER NOT NULL, value BLOB NOT NULL, doc_key BLOB NOT NULL,"
        "  PRIMARY KEY (space, scope, field, kind, value, doc_key)) WITHOUT ROWID;"
        "INSERT INTO fs_meta (key, value) VALUES ('next_space', 2), ('last_commit', 0);";
    check(sqlite3_exec(db, setup, NULL, NULL, NULL), db, "setup");
    if (omit.group)
        check(sqlite3_exec(db, "CREATE INDEX fs_documents_group ON fs_documents (space, collection_id, key)", NULL, NULL, NULL), db, "group index");
    if (!checkpoints) check(sqlite3_exec(db, "PRAGMA wal_autocheckpoint=0", NULL, NULL, NULL), db, "checkpoints off");
    check(sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &r->begin, NULL), db, "prepare begin");
    check(sqlite3_prepare_v2(db, "SELECT key, fields, create_time, update_time FROM fs_documents WHERE space = ? AND key = ?",
                             -1, &r->select, NULL), db, "prepare select");
    check(sqlite3_prepare_v2(db, "UPDATE fs_meta SET value = ? WHERE key = 'last_commit'", -1, &r->update, NULL), db, "prepare update");
    check(sqlite3_prepare_v2(db,
                             "INSERT INTO fs_documents (space, key, collection_id, fields, create_time, update_time)"
                             " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (space, key) DO UPDATE SET fields = excluded.fields,"
                             " create_time = excluded.create_time, update_time = excluded.update_time",
                             -1, &r->insert_doc, NULL), db, "prepare insert");
    check(sqlite3_prepare_v2(db,
                             "INSERT OR IGNORE INTO fs_index (space, scope, field, kind, value, doc_key) VALUES"
                             " (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?),"
                             " (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)",
                             -1, &r->insert_index, NULL), db, "prepare index insert");
    check(sqlite3_prepare_v2(db, "COMMIT", -1, &r->commit, NULL), db, "prepare commit");

    const char *uid = "Xq3vB9kLm2PzR7tY1wNc5hJd8sFa";
    r->parent_len = fs_segment(r->parent, 0, "users");
    r->parent_len = fs_segment(r->parent, r->parent_len, uid);
    r->parent_len = fs_segment(r->parent, r->parent_len, "files");
    char s3key[128];
    snprintf(s3key, sizeof s3key, "users/%s/uploads/2f1c7a4e-8b3d-4e59-9a61-0c5d7e8f9a1b.jpg", uid);
    const char *names[5] = {"ownerUid", "storage", "s3Key", "contentType", "status"};
    const char *strings[5] = {uid, "s3", s3key, "image/jpeg", "ready"};
    for (int f = 0; f < 5; f++) {
        r->names[f] = names[f];
        r->value_lens[f] = fs_string_value(r->values[f], strings[f]);
    }
    r->fields_bytes = fields_bytes;
    r->fields = malloc((size_t) fields_bytes);
    memset(r->fields, 'x', (size_t) fields_bytes);
}

static void fs_rows_begin(struct fs_rows *r)
{
    check(sqlite3_step(r->begin), r->db, "begin");
    sqlite3_reset(r->begin);
}

static void fs_rows_commit(struct fs_rows *r)
{
    check(sqlite3_step(r->commit), r->db, "commit");
    sqlite3_reset(r->commit);
}

/* The commit clock at commit time `t`: the ceiling stored again only once `t` has passed it. */
static void fs_rows_clock(struct fs_rows *r, sqlite3_int64 t)
{
    if (r->omit.update || t <= r->ceiling) return;
    r->ceiling = t + FS_COMMIT_LEASE_MICROS;
    sqlite3_bind_int64(r->update, 1, r->ceiling);
    check(sqlite3_step(r->update), r->db, "update");
    sqlite3_reset(r->update);
}

/* The document's row (an upsert, as Hearth's INSERT … ON CONFLICT DO UPDATE), key `key`, time `t`. */
static void fs_rows_put(struct fs_rows *r, const unsigned char *key, size_t key_len, sqlite3_int64 t)
{
    sqlite3_bind_int64(r->insert_doc, 1, 1);
    sqlite3_bind_blob(r->insert_doc, 2, key, (int) key_len, SQLITE_STATIC);
    sqlite3_bind_text(r->insert_doc, 3, "files", -1, SQLITE_STATIC);
    sqlite3_bind_blob(r->insert_doc, 4, r->fields, r->fields_bytes, SQLITE_STATIC);
    sqlite3_bind_int64(r->insert_doc, 5, t);
    sqlite3_bind_int64(r->insert_doc, 6, t);
    check(sqlite3_step(r->insert_doc), r->db, "insert document");
    sqlite3_reset(r->insert_doc);
}

/* One created document `id` with commit time `t` (microseconds), inside a transaction. */
static void fs_rows_write(struct fs_rows *r, const char *id, sqlite3_int64 t)
{
    sqlite3 *db = r->db;
    unsigned char key[192];
    memcpy(key, r->parent, r->parent_len);
    size_t key_len = fs_segment(key, r->parent_len, id);

    if (!r->omit.select) {
        sqlite3_bind_int64(r->select, 1, 1);
        sqlite3_bind_blob(r->select, 2, key, (int) key_len, SQLITE_STATIC);
        check(sqlite3_step(r->select), db, "select");
        sqlite3_reset(r->select);
    }
    fs_rows_clock(r, t);
    fs_rows_put(r, key, key_len, t);
    if (!r->omit.index) return;

    /* createdAt: tagTimestamp, seconds and nanoseconds big-endian. */
    r->values[5][0] = 0x40;
    unsigned long long secs = (unsigned long long) (t / 1000000), nanos = (unsigned long long) (t % 1000000) * 1000;
    for (int i = 0; i < 8; i++) r->values[5][1 + i] = (unsigned char) (secs >> (56 - 8 * i));
    for (int i = 0; i < 4; i++) r->values[5][9 + i] = (unsigned char) (nanos >> (24 - 8 * i));
    r->value_lens[5] = 13;
    for (int f = 0; f < 6; f++) {
        int p = f * 6;
        sqlite3_bind_int64(r->insert_index, p + 1, 1);
        sqlite3_bind_blob(r->insert_index, p + 2, r->parent, (int) r->parent_len, SQLITE_STATIC);
        sqlite3_bind_text(r->insert_index, p + 3, f < 5 ? r->names[f] : "createdAt", -1, SQLITE_STATIC);
        sqlite3_bind_int64(r->insert_index, p + 4, 0);
        sqlite3_bind_blob(r->insert_index, p + 5, r->values[f], (int) r->value_lens[f], SQLITE_STATIC);
        /* doc_key: the key past the scope (the id's segment), as Hearth stores it. */
        sqlite3_bind_blob(r->insert_index, p + 6, key + r->parent_len, (int) (key_len - r->parent_len), SQLITE_STATIC);
    }
    check(sqlite3_step(r->insert_index), db, "insert index rows");
    sqlite3_reset(r->insert_index);
}

static void fs_rows_close(struct fs_rows *r)
{
    sqlite3_finalize(r->begin);
    sqlite3_finalize(r->select);
    sqlite3_finalize(r->update);
    sqlite3_finalize(r->insert_doc);
    sqlite3_finalize(r->insert_index);
    sqlite3_finalize(r->commit);
    sqlite3_close(r->db);
    free(r->fields);
}
#endif
