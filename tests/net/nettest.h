/*
 * nettest.h - helpers for the transport's tests: a launcher that creates a
 * segment, forks one process per node, and checks that every node exits 0;
 * and the deterministic frame contents every test checks against.
 */
#ifndef UPVM_TESTS_NETTEST_H
#define UPVM_TESTS_NETTEST_H

#include <dirent.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "net/net.h"

/* A node's body: returns its exit status. */
typedef int (*node_fn)(int node, void *arg);

static inline uint64_t nt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t nt_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline net_config_t nt_config(size_t ring, net_idle_t idle)
{
    net_config_t c = {.ring_bytes = ring, .idle = idle, .spin_ns = 5000};
    return c;
}

/* Forks node `node` of seg; the child runs fn under a 20 s alarm. */
static inline pid_t nt_spawn(net_shm_seg_t *seg, int node, const net_config_t *cfg,
                             node_fn fn, void *arg)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(20); /* a hang fails the test instead of stalling ctest */
        CHECK_EQ(net_init_shm(seg, node, cfg), 0);
        CHECK_EQ(net_node(), node);
        int rc = fn(node, arg);
        net_fini();
        _exit(rc);
    }
    return pid;
}

static inline void nt_expect_exit0(pid_t pid)
{
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "node pid %d: %s %d\n", (int)pid,
                WIFEXITED(st) ? "exit" : "signal",
                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        exit(1);
    }
}

/* A job of n nodes all running fn; every one must exit 0. */
static inline void nt_run_job(int n, const net_config_t *cfg, node_fn fn, void *arg)
{
    net_shm_seg_t *seg;
    CHECK_EQ(net_shm_create(n, cfg, &seg), 0);
    pid_t pids[16];
    for (int i = 0; i < n; i++)
        pids[i] = nt_spawn(seg, i, cfg, fn, arg);
    net_shm_destroy(seg);
    for (int i = 0; i < n; i++)
        nt_expect_exit0(pids[i]);
}

/* The bytes of frame (src, dst, seq): a function of the three only. */
static inline void nt_fill(uint8_t *buf, size_t len, int src, int dst, uint32_t seq)
{
    uint64_t x = ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ seq ^ 0x9e3779b97f4a7c15ull;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        memcpy(buf + i, &x, 8);
    }
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    memcpy(buf + i, &x, len - i);
}

/* Names in /dev/shm that contain "upvm" (there must be none). */
static inline int nt_upvm_shm_files(void)
{
    int n = 0;
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, "upvm"))
            n++;
    closedir(d);
    return n;
}

#endif
