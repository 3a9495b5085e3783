/*
 * lazy-bench.c - lazy against eager migration (issue 22; docs/benchmarks.md,
 * "Lazy migration"): a process-mode task with HEAP MiB of heap moves
 * itself between node 1 and node 0, R times each way, and reports medians:
 *
 *   resume_ms   upvm_migrate / upvm_migrate_lazy as the task sees it: from
 *               the call to running on the other node
 *   moved_mib   what the move carried before the task ran there
 *               (upvm_migrate_stats: a lazy move, the used stack only)
 *   sweep_ms    the task's first sweep over its heap there (a read of every
 *               page, then a write of every page): where a lazy move pays
 *   warm_ms     the same sweep, once more, with every page there
 *   ready_ms    resume + first sweep: when the task has all its memory
 *
 * Usage (built with upvmcc; bench/lazy-compare.sh runs it):
 *   upvm run --nodes 2 ./lazy-bench HEAP_MIB eager|lazy [R]
 */
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>

#define PAGE 4096

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static double sweep(unsigned char *h, size_t n)
{
    uint64_t t0 = upvm_now_ns();
    unsigned sum = 0;
    for (size_t i = 0; i < n; i += PAGE)
        sum += h[i];
    for (size_t i = 0; i < n; i += PAGE)
        h[i] = (unsigned char)(sum + i);
    return (double)(upvm_now_ns() - t0) / 1e6;
}

static int worker(size_t mib, int lazy, int reps)
{
    size_t n = mib << 20;
    unsigned char *h = malloc(n);
    if (!h)
        return 1;
    memset(h, 1, n);
    double *resume = calloc((size_t)reps, sizeof *resume), *swept = calloc((size_t)reps, sizeof *swept),
           *warm = calloc((size_t)reps, sizeof *warm), *moved = calloc((size_t)reps, sizeof *moved),
           *ready = calloc((size_t)reps, sizeof *ready);
    for (int r = 0; r < reps; r++) {
        int to = upvm_node_of(0) == 1 ? 0 : 1;
        uint64_t t0 = upvm_now_ns();
        int rc = lazy ? upvm_migrate_lazy(0, to) : upvm_migrate(0, to);
        for (int tries = 0; rc == PvmNotImpl && strstr(upvm_migrate_error(), "still arriving") &&
                            tries < 10000; tries++) { /* the last move's pages are on their way */
            (void)upvm_sleep_ns(100000);
            t0 = upvm_now_ns();
            rc = upvm_migrate_lazy(0, to);
        }
        uint64_t t1 = upvm_now_ns();
        if (rc != 0) {
            fprintf(stderr, "lazy-bench: the move to node %d failed: %s\n", to,
                    upvm_migrate_error());
            return 1;
        }
        struct upvm_migrate_stats st;
        upvm_migrate_stats(&st);
        resume[r] = (double)(t1 - t0) / 1e6;
        moved[r] = (double)st.bytes / (1 << 20);
        swept[r] = sweep(h, n);
        ready[r] = resume[r] + swept[r];
        warm[r] = sweep(h, n);
    }
    printf("lazy-bench mode=%s heap_mib=%zu reps=%d resume_ms=%.3f moved_mib=%.3f sweep_ms=%.3f "
           "warm_ms=%.3f ready_ms=%.3f\n",
           lazy ? "lazy" : "eager", mib, reps, median(resume, reps), median(moved, reps),
           median(swept, reps), median(warm, reps), median(ready, reps));
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    pvm_mytid();
    if (argc < 3) {
        fprintf(stderr, "usage: lazy-bench HEAP_MIB eager|lazy [R]\n");
        return 2;
    }
    size_t mib = (size_t)atol(argv[1]);
    int lazy = strcmp(argv[2], "lazy") == 0, reps = argc > 3 ? atoi(argv[3]) : 5;
    if (pvm_parent() != PvmNoParent) {
        int rc = worker(mib, lazy, reps);
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&rc, 1, 1);
        pvm_send(pvm_parent(), 1);
        pvm_exit();
        return rc;
    }
    int tid, rc = 1;
    if (pvm_spawn(argv[0], argv + 1, PvmTaskHost, "node1", 1, &tid) != 1) {
        fprintf(stderr, "lazy-bench: cannot spawn on node1 (run with --nodes 2)\n");
        return 1;
    }
    pvm_recv(tid, 1);
    pvm_upkint(&rc, 1, 1);
    pvm_exit();
    return rc;
}
