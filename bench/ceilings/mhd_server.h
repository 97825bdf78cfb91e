/*
 * libmicrohttpd started exactly as Hearth's HTTPServer starts it, for the C servers that bound an
 * HTTP/1.1 path (mhd_bare.c: fixed bytes; mhd_floor.c: the least a Firestore REST server must do):
 * internal polling thread + epoll, a thread pool, 1000 connections, 64 KiB of memory per connection,
 * a URI log callback that allocates the per-request state (as Hearth's does) and a completion
 * callback that frees it, loopback only.
 */
#ifndef HEARTH_MHD_SERVER_H
#define HEARTH_MHD_SERVER_H
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

/* The per-request state's life: `open` makes it when the request's URI arrives, `close` frees it. */
typedef void *(*mhd_state_open)(void);
typedef void (*mhd_state_close)(void *state);

struct mhd_server_hooks {
    mhd_state_open open;
    mhd_state_close close;
};

static void *mhd_server_uri_logger(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void) uri; (void) c;
    return ((struct mhd_server_hooks *) cls)->open();
}

static void mhd_server_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode code)
{
    (void) c; (void) code;
    ((struct mhd_server_hooks *) cls)->close(*con_cls);
    *con_cls = NULL;
}

/* Serves `handler` on 127.0.0.1:port (0: any free port) with `threads` pool threads, prints the bound
 * port on stdout, and returns when SIGTERM or SIGINT arrives (after stopping the daemon); 1 when the
 * daemon does not start. */
static int mhd_serve(int port, unsigned threads, MHD_AccessHandlerCallback handler, void *handler_cls,
                     struct mhd_server_hooks *hooks)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t) port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* MHD's threads inherit the mask; the caller waits below */

    struct MHD_OptionItem options[] = {
        { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t) mhd_server_uri_logger, hooks },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) mhd_server_completed, hooks },
        { threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t) port, NULL, NULL, handler, handler_cls,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned) 1000,
        /* Hearth's per-connection memory (HTTPServer.Configuration.connectionMemoryLimit): libmicrohttpd
           zeroes the whole pool after every request on a kept-alive connection, so its size is part of
           the engine's cost per request (the default is 32 KiB). MHD_BARE_POOL_KIB=N in the environment
           sets another size, to measure what the zeroing costs (docs/benchmarks.md, s3c131). */
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) (getenv("MHD_BARE_POOL_KIB") ? (size_t) atoi(getenv("MHD_BARE_POOL_KIB")) << 10 : (size_t) (64 << 10)),
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
        MHD_OPTION_ARRAY, options,
        MHD_OPTION_END);
    if (!d) { fprintf(stderr, "MHD_start_daemon failed\n"); return 1; }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("%u\n", info ? info->port : 0);
    fflush(stdout);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
#endif
