/*
 * The HTTP engine's own ceiling: libmicrohttpd configured as Hearth's HTTPServer configures it
 * (internal polling thread + epoll, a thread pool, 1000 connections, 64 KiB of memory per connection,
 * a URI log callback), with a handler that does nothing but answer fixed bytes. GET/HEAD get the bytes of BODY_FILE (or "hello");
 * any other method has its body drained and gets 200 with no body, which makes it the ceiling for
 * PUT too. Whatever Hearth adds on top of this — routing, SigV4, storage — is Hearth's own cost.
 *
 * Usage: mhd_bare PORT THREADS [BODY_FILE]   (PORT 0: any free port; the bound port is printed)
 * Runs until SIGTERM or SIGINT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mhd_server.h"

static struct MHD_Response *get_response;
static struct MHD_Response *put_response;

/* Hearth allocates its per-request state when the URI arrives; so does this ceiling. */
static void *state_open(void) { return calloc(1, sizeof(int)); }
static void state_close(void *state) { free(state); }

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_data_size,
                               void **con_cls)
{
    (void) cls; (void) url; (void) version; (void) upload_data;
    int *seen = *con_cls;
    if (seen && !*seen) {
        /* libmicrohttpd 0.9.75 answers "Connection: close" to a response queued in the first call
           (it cannot know yet whether a body follows), so even a body-less GET is answered on the
           second call: that is what keeps the connection alive. */
        *seen = 1;
        return MHD_YES;
    }
    int is_get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (*upload_data_size != 0) {
        *upload_data_size = 0; /* drain */
        return MHD_YES;
    }
    return MHD_queue_response(c, MHD_HTTP_OK, is_get ? get_response : put_response);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s PORT THREADS [BODY_FILE]\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    unsigned threads = (unsigned) atoi(argv[2]);
    char *body = "hello";
    size_t body_len = 5;
    if (argc > 3) {
        FILE *f = fopen(argv[3], "rb");
        if (!f) { perror(argv[3]); return 1; }
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        body = malloc((size_t) n + 1);
        if (!body || fread(body, 1, (size_t) n, f) != (size_t) n) { fprintf(stderr, "cannot read %s\n", argv[3]); return 1; }
        fclose(f);
        body_len = (size_t) n;
    }
    get_response = MHD_create_response_from_buffer(body_len, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(get_response, "Content-Type", "application/octet-stream");
    put_response = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);

    struct mhd_server_hooks hooks = { state_open, state_close };
    return mhd_serve(port, threads, handler, NULL, &hooks);
}
