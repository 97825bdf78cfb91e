/*
 * The HTTP/2 floor (docs/benchmarks.md, "The HTTP/2 floor"): the least any Firestore gRPC server built
 * on nghttp2 and SQLite must do for the three gRPC rows issue 20 still misses against the official
 * emulator — GetDocument, Commit and the Write stream — with nothing else around it, so that its rate
 * on this machine, under the same clients, bounds what any design within the non-negotiables reaches.
 *
 * One loop thread (and Hearth's checkpoint thread, below), non-blocking sockets, level-triggered epoll,
 * one nghttp2 server session per connection with Hearth's SETTINGS (1,000 streams, 1 MiB stream window, 16 KiB header list, 16 MiB connection
 * window). Every request is read whole through nghttp2 (HPACK and all), every answer framed through it:
 * HEADERS (:status 200, content-type application/grpc), one DATA message, trailers grpc-status 0, the
 * frames a read produced leaving in one send(2).
 * - GetDocument: answers the bytes of GET_ANSWER_FILE (the framed message Hearth answers for the
 *   bench's document), decodes nothing: no token check, no rules, no lookup.
 * - Commit: finds each write's document name (CommitRequest.writes[].update.name) and writes the rows a
 *   create of users/{uid}/files/{id} writes in Hearth (fs_rows.h: Hearth's schema, 4 KiB pages, WAL,
 *   synchronous=NORMAL), checkpoints them as Hearth's Firestore file does (Database.Layout.small,
 *   CheckpointThread: at 4,096 WAL frames the writer's WAL hook wakes a thread that runs a PASSIVE
 *   checkpoint on its own connection, at 6,144 the writer runs one itself: floor_checkpoints.h) and, as
 *   Hearth's VFS does, gathers a transaction's WAL frame writes into few pwrites (WALBufferingVFS:
 *   wal_gather.h, which fs_rows.h registers); answers a
 *   CommitResponse (a WriteResult with the update time and the serverTimestamp transform's value, the
 *   commit time).
 * - Write (bidirectional): the handshake (a WriteRequest without writes) is answered with a stream id
 *   and a token; each request with writes is stored as a Commit's and answered with a new token, its
 *   WriteResults and the commit time; the client's half-close is answered with grpc-status 0.
 * Group commit: every write whose request completed in one pass of the loop (one epoll_wait's events)
 * shares one BEGIN IMMEDIATE ... COMMIT, and is answered only after that COMMIT returned (an
 * acknowledged write is in the WAL, as Hearth acknowledges it). Anything else is answered
 * grpc-status 12 (UNIMPLEMENTED).
 *
 * Usage: h2_floor PORT DB_PATH GET_ANSWER_FILE [POLL_US [READ_AHEAD [WORK_US]]]   (DB_PATH must not exist)
 * POLL_US 0 (default): the loop blocks in epoll_wait when out of work; N > 0: it first polls (epoll_wait
 * with timeout 0, sched_yield between) for up to N µs, as Hearth's HTTP/2 loops do (grpcspin), with a
 * fixed window (Hearth's adapts between 0 and 200 µs), reading ahead the connection that last sent
 * alone as Hearth's polling loop does (READ_AHEAD 1, the default; 0: epoll only, for an A/B; read_probed
 * below). Prints "ready" once listening; runs until
 * SIGTERM or SIGINT, then prints one JSON line of counts (calls, commits, transactions, checkpoint
 * passes by the thread and by the writer).
 * WORK_US (a 6th argument, default 0; not a floor any more when set): each GetDocument spends that many
 * µs of CPU (a clock_gettime loop) before its answer is queued — a server doing that much more work
 * before the answer, for measuring what such work costs the round trip in a given layout
 * (`h2_floor.py --work-us`; docs/benchmarks.md, grpcs137).
 */
#define _GNU_SOURCE /* accept4, memrchr */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <nghttp2/nghttp2.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "floor_checkpoints.h"
#include "fs_rows.h"

#define MAX_CONNS 64
#define MAX_PENDING 1024
#define MAX_ID 120
#define MAX_WRITES 64 /* per request (the bench sends one): bounds an answer's size */

enum kind { K_OTHER, K_GET, K_COMMIT, K_WRITE };

struct conn;

struct stream {
    int32_t id;
    enum kind kind;
    struct conn *conn;
    unsigned char *in;            /* request bytes not yet taken as whole messages */
    size_t in_len, in_cap;
    const unsigned char *out;     /* answer bytes nghttp2 has not taken yet */
    unsigned char *out_buf;       /* owned answer buffer (Commit, Write), or NULL (the get's answer) */
    size_t out_len, out_off, out_cap;
    int responded;                /* response HEADERS submitted */
    int finish;                   /* after `out`, end with trailers */
    int ended_remote;             /* the client half-closed */
    int pending;                  /* writes waiting for the loop pass's group commit */
    int handshaken;               /* Write: the handshake was answered */
    uint64_t token;               /* Write: the last stream token */
};

struct conn {
    int fd;
    nghttp2_session *session;
    unsigned char *out;           /* bytes nghttp2 produced that the socket has not taken */
    size_t out_len, out_cap;
    int dirty, closed, want_out;
};

struct pending {
    struct stream *s;             /* NULL once the stream closed before the commit */
    char id[MAX_ID + 1];
    int last;                     /* the request's last write: answer after it */
    int writes;                   /* the request's writes (set on its last) */
};

static const unsigned char *get_answer;
static long work_ns; /* WORK_US: CPU spent on each GetDocument before its answer (0: none, the floor) */
static size_t get_answer_len;
static struct fs_rows rows;
static struct pending pending[MAX_PENDING];
static int npending;
static struct conn *conns[MAX_CONNS];
static int ep;
static volatile sig_atomic_t stopping;
static long calls, commits, transactions;

static nghttp2_nv hdr(const char *name, const char *value)
{
    nghttp2_nv nv = {(uint8_t *) name, (uint8_t *) value, strlen(name), strlen(value),
                     NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
    return nv;
}

/* ---- protobuf: just enough to find a field and to write the answers ---- */

static int pb_varint(const unsigned char *p, size_t n, size_t *at, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*at >= n) return -1;
        unsigned char b = p[(*at)++];
        *v |= (uint64_t) (b & 0x7F) << shift;
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

/* Walks one message: calls `f` for every length-delimited field; -1 on a malformed message. */
typedef void (*pb_visit)(void *ctx, int field, const unsigned char *b, size_t len);
static int pb_walk(const unsigned char *p, size_t n, pb_visit f, void *ctx)
{
    size_t at = 0;
    while (at < n) {
        uint64_t key, v;
        if (pb_varint(p, n, &at, &key)) return -1;
        switch (key & 7) {
        case 0: if (pb_varint(p, n, &at, &v)) return -1; break;
        case 1: if (n - at < 8) return -1; at += 8; break;
        case 5: if (n - at < 4) return -1; at += 4; break;
        case 2:
            if (pb_varint(p, n, &at, &v) || v > n - at) return -1;
            f(ctx, (int) (key >> 3), p + at, (size_t) v);
            at += (size_t) v;
            break;
        default: return -1;
        }
    }
    return 0;
}

static size_t put_varint(unsigned char *o, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) { o[n++] = (unsigned char) (v | 0x80); v >>= 7; }
    o[n++] = (unsigned char) v;
    return n;
}

static size_t put_bytes(unsigned char *o, int field, const unsigned char *b, size_t len)
{
    size_t n = put_varint(o, (uint64_t) field << 3 | 2);
    n += put_varint(o + n, len);
    memcpy(o + n, b, len);
    return n + len;
}

/* google.protobuf.Timestamp of `t` microseconds. */
static size_t put_timestamp(unsigned char *o, sqlite3_int64 t)
{
    size_t n = 0;
    o[n++] = 0x08;
    n += put_varint(o + n, (uint64_t) (t / 1000000));
    o[n++] = 0x10;
    n += put_varint(o + n, (uint64_t) (t % 1000000) * 1000);
    return n;
}

/* WriteResult{update_time, transform_results: [timestamp_value]} (the create's serverTimestamp). */
static size_t put_write_result(unsigned char *o, sqlite3_int64 t)
{
    unsigned char ts[24], value[32];
    size_t tl = put_timestamp(ts, t);
    size_t vl = put_bytes(value, 10, ts, tl);
    size_t n = put_bytes(o, 1, ts, tl);
    return n + put_bytes(o + n, 2, value, vl);
}

/* ---- streams' answers ---- */

static ssize_t read_answer(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length,
                           uint32_t *flags, nghttp2_data_source *source, void *user)
{
    (void) user;
    struct stream *s = source->ptr;
    size_t left = s->out_len - s->out_off;
    if (left == 0) {
        if (!s->finish) return NGHTTP2_ERR_DEFERRED;
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        nghttp2_nv trailer[] = {hdr("grpc-status", "0")};
        if (nghttp2_submit_trailer(session, id, trailer, 1) != 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
        return 0;
    }
    size_t n = left < length ? left : length;
    memcpy(buf, s->out + s->out_off, n);
    s->out_off += n;
    if (s->out_off == s->out_len && s->out_buf) s->out_len = s->out_off = 0; /* the owned buffer is reused */
    return (ssize_t) n;
}

/* Makes the stream's answer go out: its HEADERS with a data source the first time, else a resume. */
static void kick(struct stream *s)
{
    s->conn->dirty = 1;
    if (!s->responded) {
        s->responded = 1;
        nghttp2_nv headers[] = {hdr(":status", "200"), hdr("content-type", "application/grpc")};
        nghttp2_data_provider prd = {.source = {.ptr = s}, .read_callback = read_answer};
        nghttp2_submit_response(s->conn->session, s->id, headers, 2, &prd);
    } else {
        nghttp2_session_resume_data(s->conn->session, s->id);
    }
}

/* Appends one gRPC message (5-byte prefix + `m`) to the stream's owned answer buffer. */
static void queue_message(struct stream *s, const unsigned char *m, size_t len)
{
    if (s->out_len + 5 + len > s->out_cap) {
        s->out_cap = (s->out_len + 5 + len) * 2;
        s->out_buf = realloc(s->out_buf, s->out_cap);
        if (!s->out_buf) { perror("realloc"); exit(1); }
    }
    s->out = s->out_buf;
    unsigned char *o = s->out_buf + s->out_len;
    o[0] = 0;
    o[1] = (unsigned char) (len >> 24); o[2] = (unsigned char) (len >> 16);
    o[3] = (unsigned char) (len >> 8); o[4] = (unsigned char) len;
    memcpy(o + 5, m, len);
    s->out_len += 5 + len;
}

static void trailers_only(struct stream *s, const char *status)
{
    nghttp2_nv headers[] = {hdr(":status", "200"), hdr("content-type", "application/grpc"), hdr("grpc-status", status)};
    s->responded = 1;
    s->conn->dirty = 1;
    nghttp2_submit_response(s->conn->session, s->id, headers, 3, NULL);
}

/* ---- requests ---- */

struct found { const unsigned char *b; size_t len; int count; };

static void find_field(void *ctx, int field, const unsigned char *b, size_t len, int want)
{
    struct found *f = ctx;
    if (field == want) {
        if (f->count++ == 0) { f->b = b; f->len = len; }
    }
}
static void find1(void *ctx, int field, const unsigned char *b, size_t len) { find_field(ctx, field, b, len, 1); }

struct writes_ctx { struct stream *s; int field; int n; int bad; };

/* One Write of a CommitRequest (field 2) or WriteRequest (field 3): its update's name, queued. */
static void take_write(void *ctx, int field, const unsigned char *b, size_t len)
{
    struct writes_ctx *w = ctx;
    if (field != w->field) return;
    struct found update = {0}, name = {0};
    if (pb_walk(b, len, find1, &update) || !update.count ||
        pb_walk(update.b, update.len, find1, &name) || !name.count || npending == MAX_PENDING) {
        w->bad = 1;
        return;
    }
    const unsigned char *slash = memrchr(name.b, '/', name.len);
    size_t off = slash ? (size_t) (slash - name.b) + 1 : 0, idlen = name.len - off;
    if (idlen == 0 || idlen > MAX_ID) { w->bad = 1; return; }
    struct pending *p = &pending[npending++];
    p->s = w->s;
    memcpy(p->id, name.b + off, idlen);
    p->id[idlen] = 0;
    p->last = 0;
    w->n++;
}

/* Takes a request's writes into the pass's group commit; 0 writes: none found. */
static int take_writes(struct stream *s, const unsigned char *m, size_t len, int field)
{
    int first = npending;
    struct writes_ctx w = {s, field, 0, 0};
    if (pb_walk(m, len, take_write, &w) || w.bad || w.n > MAX_WRITES) {
        npending = first;
        return -1;
    }
    if (w.n) {
        pending[npending - 1].last = 1;
        pending[npending - 1].writes = w.n;
        s->pending++;
    }
    return w.n;
}

/* Whole messages in s->in: removes and returns the next one, or NULL. */
static const unsigned char *next_message(struct stream *s, size_t *at, size_t *len)
{
    if (s->in_len - *at < 5) return NULL;
    const unsigned char *p = s->in + *at;
    size_t n = (size_t) p[1] << 24 | (size_t) p[2] << 16 | (size_t) p[3] << 8 | p[4];
    if (s->in_len - *at - 5 < n) return NULL;
    *at += 5 + n;
    *len = n;
    return p + 5;
}

static void write_messages(struct stream *s)
{
    size_t at = 0, len;
    const unsigned char *m;
    while ((m = next_message(s, &at, &len)) != NULL) {
        if (!s->handshaken) {
            /* The handshake: stream id and a token, no results. */
            s->handshaken = 1;
            unsigned char out[64], tok[8];
            s->token++;
            memcpy(tok, &s->token, 8);
            size_t n = put_bytes(out, 1, (const unsigned char *) "floor", 5);
            n += put_bytes(out + n, 2, tok, 8);
            queue_message(s, out, n);
            kick(s);
            continue;
        }
        if (take_writes(s, m, len, 3) <= 0) {
            nghttp2_submit_rst_stream(s->conn->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
            s->conn->dirty = 1;
            break;
        }
    }
    memmove(s->in, s->in + at, s->in_len - at);
    s->in_len -= at;
}

/* ---- nghttp2 callbacks ---- */

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    struct stream *s = calloc(1, sizeof *s);
    s->id = frame->hd.stream_id;
    s->conn = user;
    nghttp2_session_set_stream_user_data(session, s->id, s);
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user)
{
    (void) flags; (void) user;
    if (frame->hd.type != NGHTTP2_HEADERS || namelen != 5 || memcmp(name, ":path", 5) != 0) return 0;
    struct stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s) return 0;
    static const char base[] = "/google.firestore.v1.Firestore/";
    size_t bl = sizeof base - 1;
    if (valuelen > bl && memcmp(value, base, bl) == 0) {
        const uint8_t *m = value + bl;
        size_t ml = valuelen - bl;
        if (ml == 11 && memcmp(m, "GetDocument", 11) == 0) s->kind = K_GET;
        else if (ml == 6 && memcmp(m, "Commit", 6) == 0) s->kind = K_COMMIT;
        else if (ml == 5 && memcmp(m, "Write", 5) == 0) s->kind = K_WRITE;
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data, size_t len, void *user)
{
    (void) flags; (void) user;
    struct stream *s = nghttp2_session_get_stream_user_data(session, id);
    if (!s || s->kind == K_GET || s->kind == K_OTHER) return 0; /* the get decodes nothing */
    if (s->in_len + len > s->in_cap) {
        s->in_cap = (s->in_len + len) * 2 + 256;
        s->in = realloc(s->in, s->in_cap);
        if (!s->in) { perror("realloc"); exit(1); }
    }
    memcpy(s->in + s->in_len, data, len);
    s->in_len += len;
    return 0;
}

/* Spends `ns` nanoseconds of CPU (WORK_US). */
static void spin(long ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static int on_frame(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    (void) user;
    if (frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) return 0;
    struct stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s) return 0;
    int end = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    switch (s->kind) {
    case K_GET:
        if (end) {
            if (work_ns) spin(work_ns);
            s->out = get_answer;
            s->out_len = get_answer_len;
            s->finish = 1;
            calls++;
            kick(s);
        }
        break;
    case K_COMMIT:
        if (end) {
            size_t at = 0, len;
            const unsigned char *m = next_message(s, &at, &len);
            if (!m || at != s->in_len || take_writes(s, m, len, 2) <= 0) trailers_only(s, "3");
        }
        break;
    case K_WRITE:
        if (frame->hd.type == NGHTTP2_DATA) write_messages(s);
        if (end) {
            s->ended_remote = 1;
            if (!s->pending) {
                s->finish = 1;
                kick(s);
            }
        }
        break;
    default:
        if (end) trailers_only(s, "12");
    }
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t id, uint32_t code, void *user)
{
    (void) code; (void) user;
    struct stream *s = nghttp2_session_get_stream_user_data(session, id);
    if (!s) return 0;
    for (int i = 0; i < npending; i++)
        if (pending[i].s == s) pending[i].s = NULL;
    free(s->in);
    free(s->out_buf);
    free(s);
    return 0;
}

/* ---- the loop ---- */

static struct conn *probed;

static void close_conn(struct conn *c)
{
    if (probed == c) probed = NULL;
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    nghttp2_session_del(c->session); /* closes its streams: on_stream_close frees them */
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i] == c) conns[i] = NULL;
    free(c->out);
    free(c);
}

/* Everything nghttp2 has to send, in one send(2) when the socket takes it. */
static void flush(struct conn *c)
{
    c->dirty = 0;
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->session, &data);
        if (n < 0) { c->closed = 1; return; }
        if (n == 0) break;
        if (c->out_len + (size_t) n > c->out_cap) {
            c->out_cap = (c->out_len + (size_t) n) * 2;
            c->out = realloc(c->out, c->out_cap);
            if (!c->out) { perror("realloc"); exit(1); }
        }
        memcpy(c->out + c->out_len, data, (size_t) n);
        c->out_len += (size_t) n;
    }
    if (c->out_len) {
        ssize_t w = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { c->closed = 1; return; }
        if (w > 0) {
            memmove(c->out, c->out + w, c->out_len - (size_t) w);
            c->out_len -= (size_t) w;
        }
    }
    int want_out = c->out_len > 0;
    if (want_out != c->want_out) {
        struct epoll_event ev = {.events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_out = want_out;
    }
    if (!c->out_len && !nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session)) c->closed = 1;
}

static void accept_all(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int slot = -1;
        for (int i = 0; i < MAX_CONNS && slot < 0; i++)
            if (!conns[i]) slot = i;
        if (slot < 0) { close(fd); continue; }
        struct conn *c = calloc(1, sizeof *c);
        c->fd = fd;
        nghttp2_session_callbacks *cb;
        nghttp2_session_callbacks_new(&cb);
        nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
        nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
        nghttp2_session_server_new(&c->session, cb, c);
        nghttp2_session_callbacks_del(cb);
        /* Hearth's SETTINGS and connection window (HTTP2Engine's limits). */
        nghttp2_settings_entry settings[] = {
            {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1000},
            {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
            {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 16 << 10},
        };
        nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 3);
        nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, 16 << 20);
        conns[slot] = c;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
        flush(c);
    }
}

static unsigned char rbuf[64 << 10];

/* What one recv(2) of the connection gave (bytes in rbuf, 0: the client's close, -1: errno). */
static void consume(struct conn *c, ssize_t n, int err)
{
    if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR)) return;
    if (n <= 0 || nghttp2_session_mem_recv(c->session, rbuf, (size_t) n) < 0) {
        c->closed = 1;
        return;
    }
    c->dirty = 1;
}

static void receive(struct conn *c)
{
    ssize_t n = recv(c->fd, rbuf, sizeof rbuf, 0);
    consume(c, n, n < 0 ? errno : 0);
}

/* Read-ahead, as Hearth's polling loop does it (EventLoop, grpcs1y): the connection whose readiness
 * alone (one EPOLLIN event) ended the last pause is `probed`; while polling, every round but a pause's
 * first reads it with recv(MSG_DONTWAIT) before asking epoll, and epoll is asked every EPOLL_ROUNDS-th
 * round only. A request found so costs one system call where epoll_wait and the handler's recv took two. */
#define EPOLL_ROUNDS 4
static int read_ahead = 1;

static void choose_probed(const struct epoll_event *evs, int n)
{
    if (n == 1 && evs[0].data.ptr && evs[0].events == EPOLLIN) probed = evs[0].data.ptr;
}

/* One read of `probed` while polling: 1 when it found something (bytes, the close, an error). */
static int read_probed(ssize_t *got, int *err)
{
    *got = recv(probed->fd, rbuf, sizeof rbuf, MSG_DONTWAIT);
    *err = *got < 0 ? errno : 0;
    return !(*got < 0 && (*err == EAGAIN || *err == EWOULDBLOCK || *err == EINTR));
}

static sqlite3_int64 now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (sqlite3_int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The pass's group commit: every write taken in it, one transaction, then every answer. */
static void group_commit(void)
{
    if (!npending) return;
    sqlite3_int64 t = now_us();
    fs_rows_begin(&rows);
    for (int i = 0; i < npending; i++)
        fs_rows_write(&rows, pending[i].id, t); /* a stream closed meanwhile: written all the same */
    fs_rows_commit(&rows);
    transactions++;
    commits += npending;
    unsigned char out[4096];
    for (int i = 0; i < npending; i++) {
        struct pending *p = &pending[i];
        if (!p->last || !p->s) continue;
        struct stream *s = p->s;
        unsigned char ts[24];
        size_t tl = put_timestamp(ts, t), n = 0;
        if (s->kind == K_COMMIT) {
            /* CommitResponse{write_results, commit_time} */
            unsigned char wr[64];
            size_t wl = put_write_result(wr, t);
            for (int k = 0; k < p->writes; k++) n += put_bytes(out + n, 1, wr, wl);
            n += put_bytes(out + n, 2, ts, tl);
            s->finish = 1;
            calls++;
        } else {
            /* WriteResponse{stream_token, write_results, commit_time} */
            unsigned char tok[8], wr[64];
            s->token++;
            memcpy(tok, &s->token, 8);
            size_t wl = put_write_result(wr, t);
            n += put_bytes(out + n, 2, tok, 8);
            for (int k = 0; k < p->writes; k++) n += put_bytes(out + n, 3, wr, wl);
            n += put_bytes(out + n, 4, ts, tl);
            if (--s->pending == 0 && s->ended_remote) s->finish = 1;
            calls++;
        }
        queue_message(s, out, n);
        kick(s);
    }
    npending = 0;
}

static struct floor_checkpointer checkpoints;

static void on_signal(int sig)
{
    (void) sig;
    stopping = 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s PORT DB_PATH GET_ANSWER_FILE [POLL_US [READ_AHEAD [WORK_US]]]\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    double poll_us = argc > 4 ? atof(argv[4]) : 0;
    if (argc > 5) read_ahead = atoi(argv[5]) != 0;
    if (argc > 6) work_ns = (long) (atof(argv[6]) * 1000);
    FILE *f = fopen(argv[3], "rb");
    if (!f) { perror(argv[3]); return 1; }
    static unsigned char answer[1 << 16];
    get_answer_len = fread(answer, 1, sizeof answer, f);
    fclose(f);
    get_answer = answer;
    if (get_answer_len < 5) { fprintf(stderr, "%s: not a gRPC message\n", argv[3]); return 1; }
    struct fs_rows_omit none = {0};
    (void) fs_rows_close; /* never called: the process ends with _exit, its rows in the WAL */
    fs_rows_open(&rows, argv[2], 200, 0, none); /* 200: the bench's fields blob (firestore_rows.c) */
    floor_checkpoints_start(&checkpoints, rows.db, argv[2]); /* after fs_rows_open's wal_autocheckpoint=0 */

    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)}; /* loopback only */
    if (bind(lfd, (struct sockaddr *) &addr, sizeof addr) || listen(lfd, 128)) { perror("bind"); return 1; }
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev);
    printf("ready\n");
    fflush(stdout);

    struct epoll_event evs[64];
    while (!stopping) {
        struct conn *ahead = NULL; /* read ahead by the polling: its bytes are in rbuf */
        ssize_t got = 0;
        int err = 0;
        int n = epoll_wait(ep, evs, 64, 0); /* a pause's first round asks epoll about every socket */
        if (n == 0 && poll_us > 0) {
            double until = now() + poll_us / 1e6;
            for (int round = 1; now() < until && !stopping; round++) {
                sched_yield();
                if (read_ahead && probed && read_probed(&got, &err)) { ahead = probed; break; }
                if ((!read_ahead || !probed || round % EPOLL_ROUNDS == 0) && (n = epoll_wait(ep, evs, 64, 0)) != 0) break;
            }
        }
        if (n == 0 && !ahead) n = epoll_wait(ep, evs, 64, -1);
        if (n < 0) continue; /* EINTR: a signal */
        choose_probed(evs, n);
        if (ahead) consume(ahead, got, err);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (!c) { accept_all(lfd); continue; }
            if (evs[i].events & EPOLLOUT) c->dirty = 1;
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) receive(c);
        }
        group_commit();
        for (int i = 0; i < MAX_CONNS; i++) {
            struct conn *c = conns[i];
            if (c && c->dirty && !c->closed) flush(c);
            if (c && c->closed) close_conn(c);
        }
    }
    pthread_mutex_lock(&checkpoints.pass);
    printf("{\"calls\": %ld, \"commits\": %ld, \"transactions\": %ld, \"checkpoints_thread\": %ld, \"checkpoints_writer\": %ld}\n",
           calls, commits, transactions, checkpoints.thread_passes, checkpoints.writer_passes);
    fflush(stdout);
    _exit(0); /* the checkpoint thread may be in a pass: the WAL holds every commit, as after kill -9 */
}
