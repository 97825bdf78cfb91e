/*
 * Hearth's checkpoint arrangement, in C, for the floor servers (mhd_floor.c, h2_floor.c): a floor must
 * not be beaten by a design trick Hearth already has, so it has it too (the other, the WAL's gathered
 * frame writes, is wal_gather.h, which fs_rows.h registers).
 *
 * - Checkpoints on a thread of their own (HearthSQLite.CheckpointThread): the writer's autocheckpoint
 *   off, its WAL hook wakes the thread at 4,096 WAL pages, which runs a PASSIVE checkpoint on its
 *   own connection; at 6,144 pages the writer waits for the thread's pass and runs one itself
 *   (Hearth's backstop), so the WAL restarts.
 */
#ifndef HEARTH_FLOOR_CHECKPOINTS_H
#define HEARTH_FLOOR_CHECKPOINTS_H
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The checkpoint thread. */
#define FLOOR_CHECKPOINT_PAGES 4096
#define FLOOR_BACKSTOP_PAGES 6144

struct floor_checkpointer {
    sqlite3 *db; /* its own connection */
    pthread_mutex_t lock, pass; /* `pass`: one checkpoint at a time, the thread's or the writer's */
    pthread_cond_t wake;
    int wanted;
    long thread_passes, writer_passes; /* under `pass` */
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
        c->thread_passes++;
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
        c->writer_passes++;
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
