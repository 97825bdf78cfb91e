/*
 * What the SQLite rows of the bench's Firestore commit cost with nothing else around them: the
 * storage bound of issue 20's "commit >= 0.5x raw SQLite" goal (docs/benchmarks.md, "Commit CPU,
 * round five").
 *
 * Per commit the statements a REST create of users/{uid}/files/{id} runs in Hearth's writer, on
 * Hearth's schema and settings (fs_rows.h has both; a fields blob of FIELDS_BYTES). BATCH commits share one
 * BEGIN IMMEDIATE ... COMMIT, as group commit batches concurrent commits (BATCH 1: one each, as at
 * one connection). Checkpoints run inline (SQLite's own autocheckpoint, as in sqlite_commits.c,
 * the bench's ceiling), or with CHECKPOINTS "off" not at all: Hearth checkpoints on its own thread,
 * so "off" is the writer's side alone (keep COUNT small: the WAL keeps every frame).
 *
 * Usage: firestore_rows DB_PATH COUNT [BATCH] [FIELDS_BYTES] [inline|off] [PARTS]   (DB_PATH must not exist)
 * PARTS (what each part costs, by leaving it out or adding it): a comma-separated list of `select`
 * (leave out the document read), `update` (leave out the commit clock's ceiling, written when a
 * commit time passes it), `+index` (add the six fs_index rows a collection has once a query
 * registered its fields) and `+group` (add the collection-group scan index, built once a
 * collection-group query needed it); `-` or absent: the rows Hearth writes for the bench's create.
 * Prints one JSON line: commits, transactions, seconds, per_second.
 * Experiments (docs/benchmarks.md, walpages): FS_PAGE_SIZE (bytes, default 4096) and FS_AUTOCHECKPOINT
 * (WAL pages, default 4096) in the environment replace Hearth's settings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_rows.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s DB_PATH COUNT [BATCH] [FIELDS_BYTES] [inline|off] [PARTS]\n", argv[0]);
        return 2;
    }
    long count = atol(argv[2]);
    long batch = argc > 3 ? atol(argv[3]) : 1;
    int fields_bytes = argc > 4 ? atoi(argv[4]) : 200;
    int checkpoints = !(argc > 5 && strcmp(argv[5], "off") == 0);
    const char *parts = argc > 6 ? argv[6] : "-";
    struct fs_rows_omit leave_out = {
        .select = strstr(parts, "select") != NULL, .update = strstr(parts, "update") != NULL,
        .index = strstr(parts, "+index") != NULL, .group = strstr(parts, "+group") != NULL,
    };
    if (batch < 1) batch = 1;
    struct fs_rows rows;
    fs_rows_open(&rows, argv[1], fields_bytes, checkpoints, leave_out);

    long committed = 0, transactions = 0;
    double t0 = now();
    while (committed < count) {
        fs_rows_begin(&rows);
        for (long b = 0; b < batch && committed < count; b++, committed++) {
            sqlite3_int64 t = 1764700000000000LL + committed; /* the commit time, in microseconds */
            char id[32];
            snprintf(id, sizeof id, "m-%ld-%ld", committed % 16, committed / 16); /* the bench's ids: tag-client-i */
            fs_rows_write(&rows, id, t);
        }
        fs_rows_commit(&rows);
        transactions++;
    }
    double secs = now() - t0;
    printf("{\"commits\": %ld, \"transactions\": %ld, \"batch\": %ld, \"seconds\": %.6f, \"per_second\": %.1f}\n",
           committed, transactions, batch, secs, (double) committed / secs);
    fs_rows_close(&rows);
    return 0;
}
