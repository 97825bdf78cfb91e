/*
 * What the SQLite rows of the bench's Firestore commit cost with nothing else around them: the
 * storage bound of issue 20's "commit >= 0.5x raw SQLite" goal (docs/benchmarks.md, "Commit CPU,
 * round five").
 *
 * Hearth's Firestore schema (fs_meta, fs_documents with its two secondary indexes, fs_index) in a
 * file with Hearth's Firestore settings (4 KiB pages, WAL, synchronous=NORMAL, wal_autocheckpoint
 * 4096 pages, cache_size -8192), and per commit the statements a REST create of
 * users/{uid}/files/{id} runs in Hearth's writer: the read of the existing document (finds none),
 * the last_commit UPDATE, the document INSERT and one INSERT of its six collection-scope index
 * rows (ownerUid, storage, s3Key, contentType, status, createdAt), with the byte layouts Hearth
 * stores (OrderedEncoding keys and values, an index row's doc_key the key past its scope; a fields
 * blob of FIELDS_BYTES). BATCH commits share one
 * BEGIN IMMEDIATE ... COMMIT, as group commit batches concurrent commits (BATCH 1: one each, as at
 * one connection). Checkpoints run inline (SQLite's own autocheckpoint, as in sqlite_commits.c,
 * the bench's ceiling), or with CHECKPOINTS "off" not at all: Hearth checkpoints on its own thread,
 * so "off" is the writer's side alone (keep COUNT small: the WAL keeps every frame).
 *
 * Usage: firestore_rows DB_PATH COUNT [BATCH] [FIELDS_BYTES] [inline|off] [OMIT]   (DB_PATH must not exist)
 * OMIT (what each part costs, by leaving it out): a comma-separated list of `select` (the document
 * read), `update` (the last_commit UPDATE), `parent` and `group` (fs_documents' two secondary
 * indexes, not created), `index` (the six fs_index rows); `-` or absent: nothing left out.
 * Prints one JSON line: commits, transactions, seconds, per_second.
 * Experiments (docs/benchmarks.md, walpages): FS_PAGE_SIZE (bytes, default 4096) and FS_AUTOCHECKPOINT
 * (WAL pages, default 4096) in the environment replace Hearth's settings.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ceiling.h"

/* Appends one escaped, terminated segment or string body (OrderedEncoding: 0x00 -> 0x00 0xFF,
 * then 0x00 0x01); the inputs here hold no 0x00. */
static size_t segment(unsigned char *out, size_t n, const char *s)
{
    size_t len = strlen(s);
    memcpy(out + n, s, len);
    out[n + len] = 0x00;
    out[n + len + 1] = 0x01;
    return n + len + 2;
}

static size_t string_value(unsigned char *out, const char *s)
{
    out[0] = 0x50; /* tagString */
    return segment(out, 1, s);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s DB_PATH COUNT [BATCH] [FIELDS_BYTES] [inline|off]\n", argv[0]);
        return 2;
    }
    long count = atol(argv[2]);
    long batch = argc > 3 ? atol(argv[3]) : 1;
    int fields_bytes = argc > 4 ? atoi(argv[4]) : 200;
    int checkpoints = !(argc > 5 && strcmp(argv[5], "off") == 0);
    const char *omit = argc > 6 ? argv[6] : "-";
    int no_select = strstr(omit, "select") != NULL, no_update = strstr(omit, "update") != NULL;
    int no_parent = strstr(omit, "parent") != NULL, no_group = strstr(omit, "group") != NULL;
    int no_index = strstr(omit, "index") != NULL;
    if (batch < 1) batch = 1;
    sqlite3 *db;
    check(sqlite3_open(argv[1], &db), db, "open");
    char layout[160];
    snprintf(layout, sizeof layout, "PRAGMA page_size=%d; PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=%d;",
             getenv("FS_PAGE_SIZE") ? atoi(getenv("FS_PAGE_SIZE")) : 4096,
             getenv("FS_AUTOCHECKPOINT") ? atoi(getenv("FS_AUTOCHECKPOINT")) : 4096);
    check(sqlite3_exec(db, layout, NULL, NULL, NULL), db, "layout");
    const char *setup =
        "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-8192;"
        "CREATE TABLE fs_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE fs_documents (space INTEGER NOT NULL, key BLOB NOT NULL, parent BLOB NOT NULL,"
        "  collection_id TEXT NOT NULL, fields BLOB NOT NULL, create_time INTEGER NOT NULL,"
        "  update_time INTEGER NOT NULL, PRIMARY KEY (space, key)) WITHOUT ROWID;"
        "CREATE TABLE fs_index (space INTEGER NOT NULL, scope BLOB NOT NULL, field TEXT NOT NULL,"
        "  kind INTEGER NOT NULL, value BLOB NOT NULL, doc_key BLOB NOT NULL,"
        "  PRIMARY KEY (space, scope, field, kind, value, doc_key)) WITHOUT ROWID;"
        "INSERT INTO fs_meta (key, value) VALUES ('next_space', 2), ('last_commit', 0);";
    check(sqlite3_exec(db, setup, NULL, NULL, NULL), db, "setup");
    if (!no_parent)
        check(sqlite3_exec(db, "CREATE INDEX fs_documents_parent ON fs_documents (space, parent, key)", NULL, NULL, NULL), db, "parent index");
    if (!no_group)
        check(sqlite3_exec(db, "CREATE INDEX fs_documents_group ON fs_documents (space, collection_id, key)", NULL, NULL, NULL), db, "group index");
    if (!checkpoints) check(sqlite3_exec(db, "PRAGMA wal_autocheckpoint=0", NULL, NULL, NULL), db, "checkpoints off");
    sqlite3_stmt *begin, *select, *update, *insert_doc, *insert_index, *commit;
    check(sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL), db, "prepare begin");
    check(sqlite3_prepare_v2(db, "SELECT key, fields, create_time, update_time FROM fs_documents WHERE space = ? AND key = ?",
                             -1, &select, NULL), db, "prepare select");
    check(sqlite3_prepare_v2(db, "UPDATE fs_meta SET value = ? WHERE key = 'last_commit'", -1, &update, NULL), db, "prepare update");
    check(sqlite3_prepare_v2(db,
                             "INSERT INTO fs_documents (space, key, parent, collection_id, fields, create_time, update_time)"
                             " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (space, key) DO UPDATE SET fields = excluded.fields,"
                             " create_time = excluded.create_time, update_time = excluded.update_time",
                             -1, &insert_doc, NULL), db, "prepare insert");
    check(sqlite3_prepare_v2(db,
                             "INSERT OR IGNORE INTO fs_index (space, scope, field, kind, value, doc_key) VALUES"
                             " (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?),"
                             " (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)",
                             -1, &insert_index, NULL), db, "prepare index insert");
    check(sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL), db, "prepare commit");

    /* The bench's user: a 28-character uid, as Hearth's Auth makes them. */
    const char *uid = "Xq3vB9kLm2PzR7tY1wNc5hJd8sFa";
    unsigned char parent[128];
    size_t parent_len = segment(parent, 0, "users");
    parent_len = segment(parent, parent_len, uid);
    parent_len = segment(parent, parent_len, "files");
    char s3key[128];
    snprintf(s3key, sizeof s3key, "users/%s/uploads/2f1c7a4e-8b3d-4e59-9a61-0c5d7e8f9a1b.jpg", uid);
    const char *names[5] = {"ownerUid", "storage", "s3Key", "contentType", "status"};
    const char *strings[5] = {uid, "s3", s3key, "image/jpeg", "ready"};
    unsigned char values[6][160];
    size_t value_lens[6];
    for (int f = 0; f < 5; f++) value_lens[f] = string_value(values[f], strings[f]);
    unsigned char *fields = malloc((size_t) fields_bytes);
    memset(fields, 'x', (size_t) fields_bytes);

    long committed = 0, transactions = 0;
    double t0 = now();
    while (committed < count) {
        check(sqlite3_step(begin), db, "begin");
        sqlite3_reset(begin);
        for (long b = 0; b < batch && committed < count; b++, committed++) {
            sqlite3_int64 t = 1764700000000000LL + committed; /* the commit time, in microseconds */
            unsigned char key[192];
            char id[32];
            snprintf(id, sizeof id, "m-%ld-%ld", committed % 16, committed / 16); /* the bench's ids: tag-client-i */
            memcpy(key, parent, parent_len);
            size_t key_len = segment(key, parent_len, id);

            if (!no_select) {
                sqlite3_bind_int64(select, 1, 1);
                sqlite3_bind_blob(select, 2, key, (int) key_len, SQLITE_STATIC);
                check(sqlite3_step(select), db, "select");
                sqlite3_reset(select);
            }

            if (!no_update) {
                sqlite3_bind_int64(update, 1, t);
                check(sqlite3_step(update), db, "update");
                sqlite3_reset(update);
            }

            sqlite3_bind_int64(insert_doc, 1, 1);
            sqlite3_bind_blob(insert_doc, 2, key, (int) key_len, SQLITE_STATIC);
            sqlite3_bind_blob(insert_doc, 3, parent, (int) parent_len, SQLITE_STATIC);
            sqlite3_bind_text(insert_doc, 4, "files", -1, SQLITE_STATIC);
            sqlite3_bind_blob(insert_doc, 5, fields, fields_bytes, SQLITE_STATIC);
            sqlite3_bind_int64(insert_doc, 6, t);
            sqlite3_bind_int64(insert_doc, 7, t);
            check(sqlite3_step(insert_doc), db, "insert document");
            sqlite3_reset(insert_doc);

            /* createdAt: tagTimestamp, seconds and nanoseconds big-endian. */
            values[5][0] = 0x40;
            unsigned long long secs = (unsigned long long) (t / 1000000), nanos = (unsigned long long) (t % 1000000) * 1000;
            for (int i = 0; i < 8; i++) values[5][1 + i] = (unsigned char) (secs >> (56 - 8 * i));
            for (int i = 0; i < 4; i++) values[5][9 + i] = (unsigned char) (nanos >> (24 - 8 * i));
            value_lens[5] = 13;
            for (int f = 0; f < 6; f++) {
                int p = f * 6;
                sqlite3_bind_int64(insert_index, p + 1, 1);
                sqlite3_bind_blob(insert_index, p + 2, parent, (int) parent_len, SQLITE_STATIC);
                sqlite3_bind_text(insert_index, p + 3, f < 5 ? names[f] : "createdAt", -1, SQLITE_STATIC);
                sqlite3_bind_int64(insert_index, p + 4, 0);
                sqlite3_bind_blob(insert_index, p + 5, values[f], (int) value_lens[f], SQLITE_STATIC);
                /* doc_key: the key past the scope (the id's segment), as Hearth stores it. */
                sqlite3_bind_blob(insert_index, p + 6, key + parent_len, (int) (key_len - parent_len), SQLITE_STATIC);
            }
            if (!no_index) check(sqlite3_step(insert_index), db, "insert index rows");
            sqlite3_reset(insert_index);
        }
        check(sqlite3_step(commit), db, "commit");
        sqlite3_reset(commit);
        transactions++;
    }
    double secs = now() - t0;
    printf("{\"commits\": %ld, \"transactions\": %ld, \"batch\": %ld, \"seconds\": %.6f, \"per_second\": %.1f}\n",
           committed, transactions, batch, secs, (double) committed / secs);
    sqlite3_finalize(begin);
    sqlite3_finalize(select);
    sqlite3_finalize(update);
    sqlite3_finalize(insert_doc);
    sqlite3_finalize(insert_index);
    sqlite3_finalize(commit);
    sqlite3_close(db);
    free(fields);
    return 0;
}
