/*
 * first-touch.c - what a migration's destination pays to write a task's
 * bytes into memory it has never had: copying S bytes from a warm buffer
 * into fresh anonymous memory, per way of getting that memory, against a
 * copy into memory already present (the peer: what Open MPI's benchmark
 * does, receiving into the same buffer every time).  Plain C:
 *
 *   first-touch [-r REPS] [SIZE_MB]        (default 5 runs of 64 MB)
 *
 * Ways: 4 KiB pages (a fault per page), MADV_POPULATE_WRITE then the copy
 * (one call faults them all), 2 MiB pages (MADV_HUGEPAGE: a fault per 2
 * MiB), and warm (the same destination again).  Prints the median GB/s
 * of each (10^9 B/s), with p10 and p90, and its ratio to warm.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../bench_stats.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum way { PAGES_4K, POPULATE, HUGE_2M, WARM, NWAYS };
static const char *const names[NWAYS] = {"4 KiB pages, a fault each",
                                         "MADV_POPULATE_WRITE, then copy",
                                         "2 MiB pages (MADV_HUGEPAGE)", "warm (present)"};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *fresh(size_t n)
{
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("first-touch: mmap");
        exit(1);
    }
    return p;
}

/* Seconds to copy n bytes of src into memory got `way`. */
static double one(enum way way, const char *src, char *warm, size_t n)
{
    char *dst = way == WARM ? warm : fresh(n);
    if (way == HUGE_2M)
        (void)madvise(dst, n, MADV_HUGEPAGE);
    else if (way != WARM)
        (void)madvise(dst, n, MADV_NOHUGEPAGE);
    double t = now_s();
    if (way == POPULATE && madvise(dst, n, MADV_POPULATE_WRITE) != 0) {
        perror("first-touch: MADV_POPULATE_WRITE");
        exit(1);
    }
    memcpy(dst, src, n);
    t = now_s() - t;
    if (way != WARM)
        munmap(dst, n);
    return t;
}

int main(int argc, char **argv)
{
    int reps = 5, c;
    while ((c = getopt(argc, argv, "r:")) != -1) {
        if (c != 'r' || (reps = atoi(optarg)) < 1) {
            fprintf(stderr, "usage: first-touch [-r REPS] [SIZE_MB]\n");
            return 2;
        }
    }
    size_t n = (size_t)(optind < argc ? atof(argv[optind]) : 64.0) * ((size_t)1 << 20);
    if (n == 0) {
        fprintf(stderr, "first-touch: the size must be at least 1 MB\n");
        return 2;
    }
    char *src = fresh(n), *warm = fresh(n);
    memset(src, 0x5a, n);
    memset(warm, 0, n);
    double *gbps[NWAYS];
    for (int w = 0; w < NWAYS; w++)
        gbps[w] = calloc((size_t)reps, sizeof(double));
    for (int r = 0; r < reps; r++) /* ways interleaved: drift hits them alike */
        for (int w = 0; w < NWAYS; w++)
            gbps[w][r] = (double)n / one((enum way)w, src, warm, n) / 1e9;
    struct stats st[NWAYS];
    for (int w = 0; w < NWAYS; w++)
        st[w] = summarize(gbps[w], reps);
    printf("# first-touch: %zu MB copied into fresh memory, median of %d [p10..p90]\n",
           n >> 20, reps);
    for (int w = 0; w < NWAYS; w++)
        printf("%-34s %6.2f GB/s [%5.2f..%5.2f]  %.2fx warm\n", names[w], st[w].median,
               st[w].p10, st[w].p90, st[w].median / st[WARM].median);
    return 0;
}
