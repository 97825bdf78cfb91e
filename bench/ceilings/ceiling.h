/* Helpers shared by the SQLite ceiling programs (sqlite_commits.c, firestore_rows.c, fs_rows.h). */
#ifndef HEARTH_CEILING_H
#define HEARTH_CEILING_H
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void check(int rc, sqlite3 *db, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}
#endif
