/*
 * How long one cache line takes to travel between the machine's two vCPUs: two threads pinned to
 * CPU 0 and CPU 1 hand a counter back and forth N times (each waits for the other's increment).
 * Prints one JSON line with nanoseconds per one-way hand-over. On a VM this moves with where the
 * host runs the two vCPUs just then (the same core's two hardware threads, two cores sharing a cache,
 * or two cache domains), which no single-threaded calibration sees.
 *
 * Usage: pingpong [N]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) atomic_long turn;
static long rounds;

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *other(void *arg)
{
    (void) arg;
    pin(1);
    for (long i = 1; i < 2 * rounds; i += 2) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != i) { }
        atomic_store_explicit(&turn, i + 1, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 200000;
    pthread_t t;
    pin(0);
    pthread_create(&t, NULL, other, NULL);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < 2 * rounds; i += 2) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != i) { }
        atomic_store_explicit(&turn, i + 1, memory_order_release);
    }
    while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * rounds) { }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    double ns = ((double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec)) / (2.0 * (double) rounds);
    printf("{\"handovers\": %ld, \"ns_per_handover\": %.1f}\n", 2 * rounds, ns);
    return 0;
}
