/*
 * bench_heap.c - the per-ULP heap (src/mem/heap.c) against glibc's malloc,
 * in the same run, on the same pre-generated operation sequences.
 *
 *   small:   a working set of 4,000 live blocks of 8..512 bytes; each step
 *            frees a random one and allocates a new one in its place.
 *   mixed:   the same with 10% of the blocks 4..64 KiB.
 *   realloc: 64 buffers grown by realloc in steps of 16..256 bytes up to
 *            16..64 KiB, then freed, with small allocations in between.
 *
 * Every block's first byte is written, as a program would.  Each row is
 * the median over REPS repetitions (p10 and p90 shown) of ns per operation
 * (one malloc+free pair, or one realloc); the ratio is heap / glibc (below
 * 1: the heap is faster).  Pin it: taskset -c 0 bench_heap.
 *
 * Usage: bench_heap [-r reps] [-q] [row]   (row: small, mixed or realloc)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mem/mem.h"
#include "bench_stats.h"

#define LIVE 4000
#define NSEQ (1 << 20)
#define NBUF 64

static int reps = 9;
static long steps = 4000000;
static mem_heap_t *heap;
static const char *only; /* run just this row */

static uint32_t seq_slot[NSEQ];
static uint32_t seq_small[NSEQ];
static uint32_t seq_mixed[NSEQ];
static void *live[LIVE];
static volatile unsigned char sink;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static void make_sequences(void)
{
    uint64_t s = 12345;
    for (int i = 0; i < NSEQ; i++) {
        seq_slot[i] = (uint32_t)(rnd(&s) % LIVE);
        seq_small[i] = (uint32_t)(8 + rnd(&s) % 505);
        seq_mixed[i] = rnd(&s) % 10 ? seq_small[i]
                                    : (uint32_t)(4096 + rnd(&s) % (60 << 10));
    }
}

/* ------------------------------------------------------------ workloads */

/* Each workload is written once over ALLOC/FREE/REALLOC and instantiated
 * for both allocators, so both get direct, inlinable calls. */
#define H_MALLOC(n) mem_heap_malloc(heap, (n))
#define H_FREE(p) mem_heap_free(heap, (p))
#define H_REALLOC(p, n) mem_heap_realloc(heap, (p), (n))
#define G_MALLOC(n) malloc(n)
#define G_FREE(p) free(p)
#define G_REALLOC(p, n) realloc((p), (n))

#define DEFINE_CHURN(name, MALLOC, FREE)                                      \
    static double name(const uint32_t *sizes)                                \
    {                                                                         \
        for (int i = 0; i < LIVE; i++) {                                      \
            live[i] = MALLOC(sizes[i]);                                       \
            *(unsigned char *)live[i] = 1;                                    \
        }                                                                     \
        double t0 = now_ns();                                                 \
        for (long i = 0; i < steps; i++) {                                    \
            uint32_t k = seq_slot[i & (NSEQ - 1)];                            \
            FREE(live[k]);                                                    \
            unsigned char *p = MALLOC(sizes[i & (NSEQ - 1)]);                 \
            *p = (unsigned char)i;                                            \
            live[k] = p;                                                      \
        }                                                                     \
        double t = now_ns() - t0;                                             \
        for (int i = 0; i < LIVE; i++)                                        \
            FREE(live[i]);                                                    \
        return t / (double)steps;                                             \
    }

/* Grow NBUF buffers side by side (so that most cannot simply extend into
 * free space), with a short-lived small block between steps. */
#define DEFINE_REALLOC(name, MALLOC, FREE, REALLOC)                           \
    static double name(const uint32_t *sizes)                                 \
    {                                                                         \
        void *buf[NBUF] = {0};                                                \
        size_t len[NBUF] = {0};                                               \
        long ops = 0, rounds = steps / 2000;                                  \
        double t0 = now_ns();                                                 \
        for (long r = 0; r < rounds; r++) {                                   \
            for (int b = 0; b < NBUF; b++) {                                  \
                uint32_t x = sizes[(r * NBUF + b) & (NSEQ - 1)];              \
                len[b] += 16 + x % 241;                                       \
                unsigned char *p = REALLOC(buf[b], len[b]);                   \
                p[len[b] - 1] = (unsigned char)r;                             \
                buf[b] = p;                                                   \
                void *tmp = MALLOC(x);                                        \
                *(unsigned char *)tmp = 1;                                    \
                FREE(tmp);                                                    \
                ops++;                                                        \
                if (len[b] > (16u << 10) + (x & 0xbfff)) {                    \
                    FREE(buf[b]);                                             \
                    buf[b] = NULL;                                            \
                    len[b] = 0;                                               \
                }                                                             \
            }                                                                 \
        }                                                                     \
        double t = now_ns() - t0;                                             \
        for (int b = 0; b < NBUF; b++)                                        \
            FREE(buf[b]);                                                     \
        return t / (double)ops;                                               \
    }

DEFINE_CHURN(heap_churn, H_MALLOC, H_FREE)
DEFINE_CHURN(glibc_churn, G_MALLOC, G_FREE)
DEFINE_REALLOC(heap_realloc, H_MALLOC, H_FREE, H_REALLOC)
DEFINE_REALLOC(glibc_realloc, G_MALLOC, G_FREE, G_REALLOC)

/* ------------------------------------------------------------ statistics */

/* struct stats, summarize(): bench_stats.h */

/* Alternate the two sides, one warm-up each, so that drift hits both. */
static void compare(const char *name, double (*ours)(const uint32_t *),
                    double (*theirs)(const uint32_t *), const uint32_t *sizes)
{
    double a[64], b[64];
    int n = reps < 64 ? reps : 64;
    if (only && strcmp(only, name))
        return;
    ours(sizes);
    theirs(sizes);
    for (int i = 0; i < n; i++) {
        a[i] = ours(sizes);
        b[i] = theirs(sizes);
    }
    if (mem_heap_check(heap) != 0)
        exit(1);
    struct stats sa = summarize(a, n), sb = summarize(b, n);
    printf("%-8s  heap %6.1f ns (p10 %5.1f, p90 %5.1f)   glibc %6.1f ns "
           "(p10 %5.1f, p90 %5.1f)   heap/glibc %.2f\n",
           name, sa.median, sa.p10, sa.p90, sb.median, sb.p10, sb.p90,
           sa.median / sb.median);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "r:q")) != -1) {
        if (opt == 'r')
            reps = atoi(argv[optind - 1]);
        else if (opt == 'q')
            steps /= 10;
        else {
            fprintf(stderr, "usage: bench_heap [-r reps] [-q] [small|mixed|realloc]\n");
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    if (optind < argc)
        only = argv[optind];
    if (mem_window_init() != 0)
        return 1;
    int s = mem_slot_alloc();
    if (s < 0 || !(heap = mem_heap_create(mem_slot_base(mem_window(), s),
                                          mem_window()->slot_size)))
        return 1;
    make_sequences();
    printf("bench_heap: %ld steps per run, median of %d runs, ns per operation\n",
           steps, reps);
    compare("small", heap_churn, glibc_churn, seq_small);
    compare("mixed", heap_churn, glibc_churn, seq_mixed);
    compare("realloc", heap_realloc, glibc_realloc, seq_mixed);
    struct mem_heap_stats st;
    mem_heap_stats(heap, &st);
    printf("heap: %zu KiB committed at the end\n", st.committed >> 10);
    return sink;
}
