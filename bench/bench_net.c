/*
 * bench_net.c - the node-to-node transport against a pipe, in one run:
 * cross-process ping-pong, half the round trip, for frames of 0, 64 B,
 * 1 KiB, 64 KiB and 1 MiB.
 *
 *   2 cores: the two processes pinned to cpu 0 and cpu 1, shm transport
 *            with the spin idle policy (and adaptive), pipe ping-pong.
 *   1 core:  both on cpu 0, shm with the block policy (every hand-off is a
 *            futex sleep/wake, as a pipe's is), pipe ping-pong.
 *
 * The launcher process is node 0 (the pinger); a forked child is node 1,
 * which echoes every frame.  A pipe frame of 0 bytes carries 1 byte (a
 * pipe cannot signal with less).  Each cell is the median of REPS timed
 * runs (p10..p90 shown); the ratio is shm / pipe.
 *
 * Usage: bench_net [-r reps] [-q]    (-q: fewer iterations)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "net/net.h"

static int reps = 7;
static int quick;
static const size_t sizes[] = {0, 64, 1024, 64 << 10, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define END_LEN 3 /* not a measured size: tells the echo node to stop */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int iters_for(size_t len)
{
    int n = len <= 1024 ? 20000 : len <= (64 << 10) ? 2000 : 200;
    return quick ? n / 10 : n;
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

/* ------------------------------------------------------------------ shm */

static void send_all(int dst, const void *p, size_t len)
{
    while (net_send(dst, p, len) == -EAGAIN) /* woken when space frees */
        net_wait(-1);
}

struct echo {
    uint8_t *copy;
    size_t len;
    int got;
};

static void on_frame(void *ctx, int src, const void *data, size_t len)
{
    struct echo *e = ctx;
    memcpy(e->copy, data, len);
    e->len = len;
    e->got++;
}

/* Waits for the next frame into e. */
static void recv_one(struct echo *e)
{
    int before = e->got;
    while (e->got == before)
        if (net_poll(on_frame, e, 1) == 0)
            net_wait(-1);
}

static int echo_node(void)
{
    struct echo e = {.copy = malloc(1 << 20)};
    for (;;) {
        recv_one(&e);
        if (e.len == END_LEN)
            break;
        send_all(0, e.copy, e.len);
    }
    while (net_flush() != 0)
        net_wait(-1);
    free(e.copy);
    return 0;
}

static double shm_run(size_t len, int iters, struct echo *e, const uint8_t *buf)
{
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        send_all(1, buf, len);
        recv_one(e);
    }
    return (now_ns() - t0) / iters / 2;
}

static void shm_measure(net_idle_t idle, int cpu0, int cpu1, struct stats *out)
{
    net_config_t cfg;
    net_config_from_env(&cfg);
    cfg.idle = idle;
    net_shm_seg_t *seg;
    if (net_shm_create(2, &cfg, &seg) < 0 || pin(cpu0) < 0)
        exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        if (pin(cpu1) < 0 || net_init_shm(seg, 1, &cfg) < 0)
            _exit(2);
        _exit(echo_node());
    }
    if (net_init_shm(seg, 0, &cfg) < 0)
        exit(2);
    struct echo e = {.copy = malloc(1 << 20)};
    uint8_t *buf = calloc(1, 1 << 20);
    for (size_t s = 0; s < NSIZES; s++) {
        double v[64];
        shm_run(sizes[s], iters_for(sizes[s]) / 10 + 1, &e, buf); /* warm */
        for (int r = 0; r < reps; r++)
            v[r] = shm_run(sizes[s], iters_for(sizes[s]), &e, buf);
        out[s] = summarize(v, reps);
    }
    send_all(1, "end", END_LEN);
    while (net_flush() != 0)
        net_wait(-1);
    waitpid(pid, NULL, 0);
    net_fini();
    net_shm_destroy(seg);
    free(e.copy);
    free(buf);
}

/* ----------------------------------------------------------------- pipe */

static void full_write(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            exit(3);
        p += w;
        n -= (size_t)w;
    }
}

static void full_read(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            exit(3);
        p += r;
        n -= (size_t)r;
    }
}

static void pipe_echo(int in, int out, uint8_t *buf)
{
    for (size_t s = 0; s < NSIZES; s++) {
        size_t len = sizes[s] ? sizes[s] : 1;
        int n = (iters_for(sizes[s]) / 10 + 1) + reps * iters_for(sizes[s]);
        for (int i = 0; i < n; i++) {
            full_read(in, buf, len);
            full_write(out, buf, len);
        }
    }
}

static double pipe_run(int in, int out, size_t len, int iters, uint8_t *buf)
{
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        full_write(out, buf, len);
        full_read(in, buf, len);
    }
    return (now_ns() - t0) / iters / 2;
}

static void pipe_measure(int cpu0, int cpu1, struct stats *out)
{
    int ab[2], ba[2];
    uint8_t *buf = calloc(1, 1 << 20);
    if (pipe(ab) < 0 || pipe(ba) < 0 || pin(cpu0) < 0)
        exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        if (pin(cpu1) < 0)
            _exit(2);
        pipe_echo(ab[0], ba[1], buf);
        _exit(0);
    }
    for (size_t s = 0; s < NSIZES; s++) {
        size_t len = sizes[s] ? sizes[s] : 1;
        double v[64];
        pipe_run(ba[0], ab[1], len, iters_for(sizes[s]) / 10 + 1, buf);
        for (int r = 0; r < reps; r++)
            v[r] = pipe_run(ba[0], ab[1], len, iters_for(sizes[s]), buf);
        out[s] = summarize(v, reps);
    }
    waitpid(pid, NULL, 0);
    for (int i = 0; i < 2; i++) {
        close(ab[i]);
        close(ba[i]);
    }
    free(buf);
}

/* --------------------------------------------------------------- report */

static void print_table(const char *title, const struct stats *shm, const struct stats *pp)
{
    printf("\n%s\n%9s %26s %26s %7s\n", title, "frame", "shm half RTT µs (p10..p90)",
           "pipe half RTT µs (p10..p90)", "shm/pipe");
    for (size_t s = 0; s < NSIZES; s++)
        printf("%9zu %9.3f (%6.3f..%6.3f) %9.3f (%6.3f..%6.3f) %7.3f\n", sizes[s],
               shm[s].median / 1e3, shm[s].p10 / 1e3, shm[s].p90 / 1e3, pp[s].median / 1e3,
               pp[s].p10 / 1e3, pp[s].p90 / 1e3, shm[s].median / pp[s].median);
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "r:q")) != -1) {
        if (c == 'r')
            reps = atoi(optarg) < 1 ? 1 : atoi(optarg);
        else if (c == 'q')
            quick = 1;
        else
            return 2;
    }
    if (reps > 64)
        reps = 64;
    struct stats shm[NSIZES], ad[NSIZES], pp[NSIZES];
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
        shm_measure(NET_IDLE_SPIN, 0, 1, shm);
        shm_measure(NET_IDLE_ADAPTIVE, 0, 1, ad);
        pipe_measure(0, 1, pp);
        print_table("== 2 cores (cpu 0 / cpu 1), shm idle policy spin", shm, pp);
        print_table("== 2 cores (cpu 0 / cpu 1), shm idle policy adaptive", ad, pp);
    }
    shm_measure(NET_IDLE_BLOCK, 0, 0, shm);
    pipe_measure(0, 0, pp);
    print_table("== 1 core (both on cpu 0), shm idle policy block", shm, pp);
    return 0;
}
