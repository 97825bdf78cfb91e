#ifndef HEARTH_CLINUXIO_SHIM_H
#define HEARTH_CLINUXIO_SHIM_H
/* The Linux calls Glibc's Swift module leaves out (epoll, eventfd, accept4; malloc.h's figures). */
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <malloc.h>

/* accept4 is a GNU extension; declared here so the module needs no _GNU_SOURCE of its own. */
extern int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);

static inline uint32_t hearth_epollin(void) { return EPOLLIN; }
static inline uint32_t hearth_epollout(void) { return EPOLLOUT; }
static inline uint32_t hearth_epollrdhup(void) { return EPOLLRDHUP; }
static inline uint32_t hearth_epollet(void) { return EPOLLET; }
static inline uint32_t hearth_epollerr(void) { return EPOLLERR | EPOLLHUP; }

/* epoll_event is packed on x86-64, which Swift cannot import field by field: pass fds through these. */
static inline int hearth_epoll_ctl(int epfd, int op, int fd, uint32_t events)
{
    struct epoll_event event = { .events = events, .data = { .fd = fd } };
    return epoll_ctl(epfd, op, fd, &event);
}
struct hearth_event { int fd; uint32_t events; };
static inline int hearth_epoll_wait(int epfd, struct hearth_event *out, int max, int timeout_ms)
{
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, events, max, timeout_ms);
    for (int i = 0; i < n; i++) { out[i].fd = events[i].data.fd; out[i].events = events[i].events; }
    return n;
}

/* The allocator's bytes handed out (in use) and obtained from the system (held), all arenas. */
static inline void hearth_malloc_totals(size_t *in_use, size_t *held)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 m = mallinfo2();
    *in_use = m.uordblks + m.hblkhd;
    *held = m.arena + m.hblkhd;
#else
    *in_use = 0;
    *held = 0;
#endif
}
#endif
