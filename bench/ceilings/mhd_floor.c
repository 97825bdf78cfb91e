/*
 * The HTTP/1.1 floor of a Firestore REST server on this machine's libraries: libmicrohttpd started as
 * Hearth's HTTPServer starts it (mhd_server.h, as mhd_bare.c), SQLite with Hearth's schema, settings
 * and a create's statements (fs_rows.h, as firestore_rows.c), Hearth's WAL write gathering and
 * checkpoint thread (wal_gather.h, registered by fs_rows.h, and floor_checkpoints.h), and between them the least any correct server must do per request:
 *
 * - POST …:commit: read the whole body, find each write's document name, write its rows (a create:
 *   fs_rows_write; inside a transaction, an update of `status`: the document read, the commit clock's
 *   ceiling when passed, the document upsert, the old `status` index row deleted and the new one
 *   inserted), make
 *   them durable as Hearth does (WAL, synchronous=NORMAL: in the WAL file before the answer), and
 *   answer a CommitResponse (writeResults with updateTime, the transform's result when the body asks
 *   for one, commitTime) with Hearth's headers;
 * - POST …:beginTransaction: a fixed transaction id; POST …:batchGet: each named document found, with
 *   fixed fields (the name echoed: grpcload -mode txn checks it); POST …:rollback: {}; any GET: {}.
 * No token check, no rules, no JSON parsing beyond finding the names: whatever a real server does on
 * top of this, it does in addition.
 *
 * Commits run one transaction per request on the request thread under a mutex (MODE mutex), or in
 * group commit (MODE group, Hearth's design): a request queues its writes; whoever finds no leader
 * becomes it, commits every queued request's writes in one transaction, and wakes their threads.
 *
 * Usage: mhd_floor PORT THREADS DB_PATH mutex|group [FIELDS_BYTES]   (DB_PATH must not exist; PORT 0:
 * any free port, the bound port is printed). Runs until SIGTERM or SIGINT.
 */
#define _GNU_SOURCE /* memrchr */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "floor_checkpoints.h"
#include "fs_rows.h"
#include "mhd_server.h"

#define MAX_WRITES 512 /* the bench's admin commits carry at most 500 */
#define ID_BYTES 64

/* One request: its body as it arrives, then what it asks to write. */
struct request {
    int seen;
    size_t len, cap;
    char *body;
    char inline_body[2048];
};

static void *request_open(void)
{
    struct request *r = calloc(1, sizeof *r);
    if (r) {
        r->body = r->inline_body;
        r->cap = sizeof r->inline_body;
    }
    return r;
}

static void request_close(void *state)
{
    struct request *r = state;
    if (r && r->body != r->inline_body) free(r->body);
    free(r);
}

static int append_body(struct request *r, const char *data, size_t n)
{
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap * 2 > r->len + n + 1 ? r->cap * 2 : r->len + n + 1;
        char *b = malloc(cap);
        if (!b) return 0;
        memcpy(b, r->body, r->len);
        if (r->body != r->inline_body) free(r->body);
        r->body = b;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = 0;
    return 1;
}

/* A commit's writes, queued for the writer; `t` is its commit time once written. */
struct ticket {
    char ids[MAX_WRITES][ID_BYTES];
    int count;
    int update;          /* in a transaction: an update of `status` to `ready` (else `pending`) */
    int ready;
    sqlite3_int64 t;     /* microseconds */
    int done;
    struct ticket *next;
};

static struct fs_rows rows;
static sqlite3_stmt *delete_status, *insert_status;
static unsigned char status_values[2][32]; /* "pending", "ready", encoded */
static size_t status_lens[2];
static int group_mode;
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t written = PTHREAD_COND_INITIALIZER;
static struct ticket *queue_head, *queue_tail;
static int leader_active;
static sqlite3_int64 last_time;

static sqlite3_int64 now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (sqlite3_int64) tv.tv_sec * 1000000 + tv.tv_usec;
}

/* An update of the document's `status` inside a transaction: the rows an update's commit changes. */
static void write_update(const char *id, int ready, sqlite3_int64 t)
{
    sqlite3 *db = rows.db;
    unsigned char key[192];
    memcpy(key, rows.parent, rows.parent_len);
    size_t key_len = fs_segment(key, rows.parent_len, id);
    sqlite3_bind_int64(rows.select, 1, 1);
    sqlite3_bind_blob(rows.select, 2, key, (int) key_len, SQLITE_STATIC);
    check(sqlite3_step(rows.select), db, "select");
    sqlite3_reset(rows.select);
    fs_rows_clock(&rows, t);
    fs_rows_put(&rows, key, key_len, t);
    const unsigned char *doc_key = key + rows.parent_len;
    int doc_key_len = (int) (key_len - rows.parent_len);
    sqlite3_stmt *steps[2] = { delete_status, insert_status };
    int values[2] = { !ready, ready }; /* the old value's row goes, the new one's comes */
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *s = steps[i];
        sqlite3_bind_blob(s, 1, rows.parent, (int) rows.parent_len, SQLITE_STATIC);
        sqlite3_bind_blob(s, 2, status_values[values[i]], (int) status_lens[values[i]], SQLITE_STATIC);
        sqlite3_bind_blob(s, 3, doc_key, doc_key_len, SQLITE_STATIC);
        check(sqlite3_step(s), db, i ? "insert status row" : "delete status row");
        sqlite3_reset(s);
    }
}

/* Writes a batch of tickets in one transaction (the writer lock is not held: one leader at a time). */
static void write_batch(struct ticket *batch)
{
    fs_rows_begin(&rows);
    for (struct ticket *k = batch; k; k = k->next) {
        sqlite3_int64 t = now_us();
        if (t <= last_time) t = last_time + 1; /* commit times strictly increase, as Hearth's */
        last_time = t;
        k->t = t;
        for (int i = 0; i < k->count; i++) {
            if (k->update) write_update(k->ids[i], k->ready, t);
            else fs_rows_write(&rows, k->ids[i], t);
        }
    }
    fs_rows_commit(&rows);
}

static void commit_ticket(struct ticket *k)
{
    k->next = NULL;
    pthread_mutex_lock(&writer_lock);
    if (!group_mode) {
        write_batch(k); /* one transaction per request, on its own thread */
        pthread_mutex_unlock(&writer_lock);
        return;
    }
    if (queue_tail) queue_tail->next = k; else queue_head = k;
    queue_tail = k;
    while (!k->done) {
        if (leader_active) {
            pthread_cond_wait(&written, &writer_lock);
            continue;
        }
        /* Leader: take everything queued, write it outside the lock, wake its owners. */
        leader_active = 1;
        struct ticket *batch = queue_head;
        queue_head = queue_tail = NULL;
        pthread_mutex_unlock(&writer_lock);
        write_batch(batch);
        pthread_mutex_lock(&writer_lock);
        for (struct ticket *b = batch; b; b = b->next) b->done = 1;
        leader_active = 0;
        pthread_cond_broadcast(&written);
    }
    pthread_mutex_unlock(&writer_lock);
}

/* The string value after `"key"` and its colon (JSON with or without spaces); NULL when absent. */
static const char *string_after(const char *from, const char *key, size_t *len)
{
    const char *p = strstr(from, key);
    if (!p) return NULL;
    p = strchr(p + strlen(key), ':');
    if (!p) return NULL;
    p = strchr(p, '"');
    if (!p) return NULL;
    const char *end = strchr(p + 1, '"');
    if (!end) return NULL;
    *len = (size_t) (end - p - 1);
    return p + 1;
}

static void format_time(char *out, size_t n, sqlite3_int64 t, int millis)
{
    time_t secs = (time_t) (t / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t k = strftime(out, n, "%Y-%m-%dT%H:%M:%S", &tm);
    if (millis) snprintf(out + k, n - k, ".%03dZ", (int) (t % 1000000 / 1000));
    else snprintf(out + k, n - k, ".%06dZ", (int) (t % 1000000));
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *) body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json; charset=UTF-8");
    MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result commit(struct MHD_Connection *c, struct request *req)
{
    struct ticket k;
    k.count = 0;
    k.done = 0;
    k.update = strstr(req->body, "\"transaction\"") != NULL;
    k.ready = 0;
    /* Every write names its document ("update": {"name": …}); the id is the name's last segment. */
    const char *at = req->body;
    size_t len;
    const char *name;
    while (k.count < MAX_WRITES && (name = string_after(at, "\"name\"", &len))) {
        const char *slash = memrchr(name, '/', len);
        const char *id = slash ? slash + 1 : name;
        size_t id_len = (size_t) (name + len - id);
        if (id_len >= ID_BYTES) return answer(c, MHD_HTTP_BAD_REQUEST, "{}", 2);
        memcpy(k.ids[k.count], id, id_len);
        k.ids[k.count][id_len] = 0;
        k.count++;
        at = name + len + 1;
    }
    if (k.count == 0) return answer(c, MHD_HTTP_BAD_REQUEST, "{}", 2);
    if (k.update) {
        const char *v = string_after(req->body, "\"stringValue\"", &len);
        k.ready = v && len == 5 && memcmp(v, "ready", 5) == 0;
    }
    int transform = strstr(req->body, "\"updateTransforms\"") != NULL;
    commit_ticket(&k);

    char when[40], when_ms[40];
    format_time(when, sizeof when, k.t, 0);
    format_time(when_ms, sizeof when_ms, k.t, 1);
    char one[160];
    int one_len = transform
        ? snprintf(one, sizeof one, "{\"updateTime\":\"%s\",\"transformResults\":[{\"timestampValue\":\"%s\"}]}", when, when_ms)
        : snprintf(one, sizeof one, "{\"updateTime\":\"%s\"}", when);
    size_t cap = 64 + (size_t) k.count * ((size_t) one_len + 1);
    char *out = malloc(cap);
    if (!out) return MHD_NO;
    size_t n = (size_t) snprintf(out, cap, "{\"writeResults\":[");
    for (int i = 0; i < k.count; i++) {
        if (i) out[n++] = ',';
        memcpy(out + n, one, (size_t) one_len);
        n += (size_t) one_len;
    }
    n += (size_t) snprintf(out + n, cap - n, "],\"commitTime\":\"%s\"}", when);
    enum MHD_Result ok = answer(c, MHD_HTTP_OK, out, n);
    free(out);
    return ok;
}

/* batchGet: each named document found, with the fields the bench's documents have. */
static enum MHD_Result batch_get(struct MHD_Connection *c, struct request *req)
{
    const char *p = strstr(req->body, "\"documents\"");
    p = p ? strchr(p, '[') : NULL;
    const char *end = p ? strchr(p, ']') : NULL;
    if (!p || !end) return answer(c, MHD_HTTP_BAD_REQUEST, "{}", 2);
    char read_time[40];
    format_time(read_time, sizeof read_time, now_us(), 0);
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    if (!out) return MHD_NO;
    out[n++] = '[';
    for (;;) {
        const char *q = memchr(p, '"', (size_t) (end - p));
        if (!q) break;
        const char *qe = memchr(q + 1, '"', (size_t) (end - q - 1));
        if (!qe) break;
        int len = (int) (qe - q - 1);
        if (cap - n < (size_t) len + 1024) {
            cap = cap * 2 + (size_t) len;
            char *b = realloc(out, cap);
            if (!b) { free(out); return MHD_NO; }
            out = b;
        }
        n += (size_t) snprintf(out + n, cap - n,
            "%s{\"found\":{\"name\":\"%.*s\",\"fields\":{\"contentType\":{\"stringValue\":\"image/jpeg\"},"
            "\"createdAt\":{\"timestampValue\":\"2026-12-04T18:09:36.440Z\"},"
            "\"ownerUid\":{\"stringValue\":\"Nugl5rJJRwJcJmFdZKOXtHM60zSc\"},"
            "\"s3Key\":{\"stringValue\":\"users/Nugl5rJJRwJcJmFdZKOXtHM60zSc/uploads/0b5c7d1e-6a6b-4c1e-9d55-0123456789ab.jpg\"},"
            "\"status\":{\"stringValue\":\"ready\"},\"storage\":{\"stringValue\":\"s3\"}},"
            "\"createTime\":\"2026-12-04T18:09:36.440716Z\",\"updateTime\":\"2026-12-04T18:09:36.440716Z\"},"
            "\"readTime\":\"%s\"}", n > 1 ? "," : "", len, q + 1, read_time);
        p = qe + 1;
    }
    out[n++] = ']';
    enum MHD_Result ok = answer(c, MHD_HTTP_OK, out, n);
    free(out);
    return ok;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_data_size,
                               void **con_cls)
{
    (void) cls; (void) version;
    struct request *req = *con_cls;
    if (!req) return MHD_NO;
    if (!req->seen) {
        /* As mhd_bare.c: a response queued in the first call would close the connection. */
        req->seen = 1;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        if (!append_body(req, upload_data, *upload_data_size)) return MHD_NO;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "POST") != 0) return answer(c, MHD_HTTP_OK, "{}", 2);
    if (req->len == 0) req->body[0] = 0;
    if (ends_with(url, ":commit")) return commit(c, req);
    if (ends_with(url, ":beginTransaction")) {
        static const char txn[] = "{\"transaction\":\"xXoPCSjHQT+sIeH1rCeoQee+Ul2H36m0\"}";
        return answer(c, MHD_HTTP_OK, txn, sizeof txn - 1);
    }
    if (ends_with(url, ":batchGet")) return batch_get(c, req);
    if (ends_with(url, ":rollback")) return answer(c, MHD_HTTP_OK, "{}", 2);
    return answer(c, MHD_HTTP_NOT_FOUND, "{}", 2);
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[4], "mutex") != 0 && strcmp(argv[4], "group") != 0)) {
        fprintf(stderr, "usage: %s PORT THREADS DB_PATH mutex|group [FIELDS_BYTES]\n", argv[0]);
        return 2;
    }
    group_mode = strcmp(argv[4], "group") == 0;
    struct fs_rows_omit nothing = { 0 };
    fs_rows_open(&rows, argv[3], argc > 5 ? atoi(argv[5]) : 200, 0, nothing);
    check(sqlite3_prepare_v2(rows.db,
                             "DELETE FROM fs_index WHERE space = 1 AND scope = ? AND field = 'status' AND kind = 0"
                             " AND value = ? AND doc_key = ?", -1, &delete_status, NULL), rows.db, "prepare delete");
    check(sqlite3_prepare_v2(rows.db,
                             "INSERT OR IGNORE INTO fs_index (space, scope, field, kind, value, doc_key)"
                             " VALUES (1, ?, 'status', 0, ?, ?)", -1, &insert_status, NULL), rows.db, "prepare insert");
    status_lens[0] = fs_string_value(status_values[0], "pending");
    status_lens[1] = fs_string_value(status_values[1], "ready");
    struct floor_checkpointer checkpoints;
    floor_checkpoints_start(&checkpoints, rows.db, argv[3]);

    struct mhd_server_hooks hooks = { request_open, request_close };
    int rc = mhd_serve(atoi(argv[1]), (unsigned) atoi(argv[2]), handler, NULL, &hooks);
    (void) now; /* ceiling.h's clock: the rates are the load generator's */
    sqlite3_finalize(delete_status);
    sqlite3_finalize(insert_status);
    fs_rows_close(&rows); /* the checkpoint thread's connection ends with the process */
    return rc;
}
