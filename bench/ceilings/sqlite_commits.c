/*
 * The storage ceiling for a Firestore commit: N single-row commits straight into SQLite with the
 * durability settings Hearth's Database uses (journal_mode=WAL, synchronous=NORMAL, foreign_keys=ON,
 * temp_store=MEMORY, cache_size=-16000; BEGIN IMMEDIATE ... COMMIT per write). Each row is a
 * document-sized blob under a distinct path key. Prints one JSON line with commits per second.
 *
 * Usage: sqlite_commits DB_PATH COUNT [ROW_BYTES]
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ceiling.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s DB_PATH COUNT [ROW_BYTES]\n", argv[0]);
        return 2;
    }
    long count = atol(argv[2]);
    int row_bytes = argc > 3 ? atoi(argv[3]) : 256;
    sqlite3 *db;
    check(sqlite3_open(argv[1], &db), db, "open");
    sqlite3_busy_timeout(db, 5000);
    const char *setup =
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
        "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16000;"
        "CREATE TABLE IF NOT EXISTS docs (path TEXT PRIMARY KEY, body BLOB NOT NULL, updated INTEGER NOT NULL);";
    check(sqlite3_exec(db, setup, NULL, NULL, NULL), db, "setup");
    sqlite3_stmt *begin, *insert, *commit;
    check(sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL), db, "prepare begin");
    check(sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO docs (path, body, updated) VALUES (?, ?, ?)", -1, &insert, NULL), db, "prepare insert");
    check(sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL), db, "prepare commit");
    char *body = malloc((size_t) row_bytes);
    memset(body, 'x', (size_t) row_bytes);
    char path[128];
    double t0 = now();
    for (long i = 0; i < count; i++) {
        check(sqlite3_step(begin), db, "begin");
        sqlite3_reset(begin);
        snprintf(path, sizeof path, "projects/demo-hearth/databases/(default)/documents/bench/d%ld", i);
        sqlite3_bind_text(insert, 1, path, -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(insert, 2, body, row_bytes, SQLITE_STATIC);
        sqlite3_bind_int64(insert, 3, (sqlite3_int64) i);
        check(sqlite3_step(insert), db, "insert");
        sqlite3_reset(insert);
        check(sqlite3_step(commit), db, "commit");
        sqlite3_reset(commit);
    }
    double secs = now() - t0;
    printf("{\"commits\": %ld, \"seconds\": %.6f, \"per_second\": %.1f}\n", count, secs, (double) count / secs);
    sqlite3_finalize(begin);
    sqlite3_finalize(insert);
    sqlite3_finalize(commit);
    sqlite3_close(db);
    return 0;
}
