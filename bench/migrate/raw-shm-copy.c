/*
 * raw-shm-copy.c - the raw bound for moving a ULP's memory from one node
 * process to another on this host (the peer of migrate-bench.c, as the
 * MPVM/UPVM papers measured migration against raw TCP): S bytes go from
 * one process's private memory into another's, and nothing else happens.
 * Plain C and POSIX, no UPVM.
 *
 *   raw-shm-copy [-r REPS] [-c CHUNK] [-R RING] [-p PAGES] [SIZE_MB ...]
 *
 * Two processes (fork) share a memfd.  Per size S (default 0.25 0.5 1 2 8
 * 64, in MiB: "MB" below is 2^20 bytes) and per repetition it measures:
 *
 *   shm2    two copies through shared memory, as a transport does it: the
 *           parent (the source node) copies S bytes from its private
 *           memory into a ring of CHUNK-byte slots in the memfd (RING bytes
 *           in all, default 1 MiB: UPVM_NET_RING's default; CHUNK default
 *           RING/4: the transport's largest record is RING/4 - 16 bytes),
 *           the child (the destination) copies each chunk out into its
 *           private memory as soon as it is there: a pipeline.  Time: from
 *           the parent's first copy to the child's last (one clock, read in
 *           both: CLOCK_MONOTONIC); src_done: to the parent's last copy
 *           into the ring (when the data has left the source: the raw
 *           analogue of obtrusiveness).
 *   memcpy  the single-copy bound: one memcpy of S bytes within one process.
 *   cma     the single copy between processes: the child reads S bytes of
 *           the parent's memory with process_vm_readv (Linux CMA), when the
 *           kernel permits it (else one line says why, and no rows).
 *
 * each with the destination pages as PAGES says (a comma-separated list,
 * default fresh,warm):
 *
 *   fresh     mapped anew for every run, so every page faults in during the
 *             copy, as a migration gets new pages on the destination node
 *   warm      one buffer, faulted in before the first run and reused
 *   populate  mapped anew, then faulted in all at once by
 *             madvise(MADV_POPULATE_WRITE) as the first timed step (Linux
 *             5.14; rows are left out where the kernel refuses it)
 *   huge      mapped anew with madvise(MADV_HUGEPAGE): transparent huge
 *             pages where this host's THP policy grants them
 *
 * The source is faulted in once (a ULP's heap is resident).
 *
 * Every run is checked: the destination must hold the source's pattern
 * (not timed).  One untimed warm-up pass over every case comes first; then
 * REPS passes (default 5), repetitions outermost.  Output: a table of
 * medians (p10, p90), and per case
 *
 *   RESULT raw_shm_copy mode=shm2 pages=fresh size=1048576 total_us=410.2
 *          src_done_us=180.1 gbps=2.56 p10_us=... p90_us=... reps=5
 *
 * gbps: S / median time, in 10^9 bytes per second.  The two processes wait
 * for each other by spinning (a pause, then sched_yield after a while):
 * run it on two cores (taskset -c 0,1), as the nodes of a job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench_stats.h"

#define MIB ((size_t)1 << 20)
#define MAX_SIZES 32
#define MAX_REPS 1000

enum mode { M_SHM2, M_MEMCPY, M_CMA, M_COUNT };
enum pages { P_FRESH, P_WARM, P_POPULATE, P_HUGE, P_COUNT };
static const char *const pages_name[P_COUNT] = {"fresh", "warm", "populate", "huge"};
static const char *const mode_name[M_COUNT] = {"shm2", "memcpy", "cma"};
static const char *const mode_what[M_COUNT] = {
    "2 copies through shm (pipelined ring)", "1 memcpy, one process",
    "1 copy, process_vm_readv"};

/* What the parent tells the child, and the child's answers.  The ring's
 * two counters sit on cache lines of their own (one writer each). */
struct ctl {
    _Alignas(128) _Atomic uint64_t go; /* parent: a new run (its number) */
    _Atomic uint64_t ready;            /* child: destination mapped for run `go` */
    _Atomic uint64_t done;             /* child: run `go` copied and checked */
    int mode, pages, quit;
    size_t size;
    uint64_t seed;
    uintptr_t src;  /* the parent's source buffer (for process_vm_readv) */
    pid_t parent;
    uint64_t t_begin, t_end; /* child: CLOCK_MONOTONIC before its first copy (cma)
                              * and after its last, ns */
    int bad;        /* child: the destination did not hold the pattern */
    int err;        /* child: errno of process_vm_readv or of populating, 0 */
    _Alignas(128) _Atomic uint64_t tail; /* chunks the parent has put in the ring */
    _Alignas(128) _Atomic uint64_t head; /* chunks the child has taken out */
};

static size_t chunk = 0, ring_bytes = MIB, nslots;
static struct ctl *C;
static unsigned char *ring;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin on a condition inside a timed copy: pause, then yield the cpu
 * after a while (a peer that shares our cpu must get to run). */
static inline void relax(unsigned *spins)
{
    if (++*spins < 4096)
        __builtin_ia32_pause();
    else
        sched_yield();
}

/* Wait outside the timed part: pause, then sleep, so that a process with
 * nothing to do leaves the cpus to the one that measures. */
static void idle(unsigned *spins)
{
    if (++*spins < 4096) {
        __builtin_ia32_pause();
    } else {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* The source pattern: one xorshift64 word per 8 bytes (sizes here are
 * multiples of 8). */
static void fill(uint64_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n / 8; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = x;
    }
}

static int check(const uint64_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n / 8; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (p[i] != x)
            return -1;
    }
    return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static void *map_anon(size_t n, int huge)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        die("raw-shm-copy: mmap");
    if (huge)
        madvise(p, n, MADV_HUGEPAGE); /* a hint: THP "never" ignores it */
    return p;
}

/* A destination of n bytes: a new mapping, or *warm (mapped and touched
 * once, then reused). */
static void *dest(size_t n, int pages, void **warm, size_t *warm_len)
{
    if (pages != P_WARM)
        return map_anon(n, pages == P_HUGE);
    if (*warm_len < n) {
        if (*warm)
            munmap(*warm, *warm_len);
        *warm = map_anon(n, 0);
        memset(*warm, 0x5a, n);
        *warm_len = n;
    }
    return *warm;
}

/* The first timed step: fault a "populate" destination in at once.  0, or
 * errno when the kernel cannot. */
static int prepare(void *dst, size_t n, int pages)
{
    if (pages == P_POPULATE && madvise(dst, n, MADV_POPULATE_WRITE) != 0)
        return errno;
    return 0;
}

static void undest(void *dst, size_t n, int pages)
{
    if (pages != P_WARM)
        munmap(dst, n);
}

/* ------------------------------------------------------------- the child */

static void child_shm2(unsigned char *dst, size_t size)
{
    uint64_t head = 0;
    for (size_t off = 0; off < size; off += chunk, head++) {
        unsigned spins = 0;
        while (atomic_load_explicit(&C->tail, memory_order_acquire) == head)
            relax(&spins);
        size_t n = size - off < chunk ? size - off : chunk;
        memcpy(dst + off, ring + (head % nslots) * chunk, n);
        atomic_store_explicit(&C->head, head + 1, memory_order_release);
    }
}

static int child_cma(unsigned char *dst, size_t size)
{
    size_t got = 0;
    while (got < size) {
        struct iovec l = {dst + got, size - got};
        struct iovec r = {(void *)(C->src + got), size - got};
        ssize_t k = process_vm_readv(C->parent, &l, 1, &r, 1, 0);
        if (k <= 0)
            return k < 0 ? errno : EIO;
        got += (size_t)k;
    }
    return 0;
}

static void child(void)
{
    void *warm = NULL;
    size_t warm_len = 0;
    uint64_t seen = 0;
    for (;;) {
        unsigned spins = 0;
        uint64_t g;
        while ((g = atomic_load_explicit(&C->go, memory_order_acquire)) == seen)
            idle(&spins);
        seen = g;
        if (C->quit)
            _exit(0);
        size_t size = C->size;
        unsigned char *dst = dest(size, C->pages, &warm, &warm_len);
        atomic_store_explicit(&C->ready, g, memory_order_release);
        C->t_begin = now_ns();
        C->err = prepare(dst, size, C->pages);
        if (C->err == 0 && C->mode == M_SHM2)
            child_shm2(dst, size); /* timed from the parent's first copy */
        else if (C->err == 0)
            C->err = child_cma(dst, size);
        C->t_end = now_ns();
        C->bad = C->err == 0 && check((uint64_t *)dst, size, C->seed) != 0;
        undest(dst, size, C->pages);
        atomic_store_explicit(&C->done, g, memory_order_release);
    }
}

/* ------------------------------------------------------------ the parent */

static uint64_t run_no;

/* Starts run mode/pages/size in the child, waits until its destination is
 * mapped; returns when it may begin. */
static void child_start(int mode, int pages, size_t size, const void *src, uint64_t seed)
{
    C->mode = mode, C->pages = pages, C->size = size, C->seed = seed;
    C->src = (uintptr_t)src;
    C->bad = 0, C->err = 0;
    atomic_store_explicit(&C->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&C->head, 0, memory_order_relaxed);
    atomic_store_explicit(&C->go, ++run_no, memory_order_release);
    unsigned spins = 0;
    while (atomic_load_explicit(&C->ready, memory_order_acquire) != run_no)
        idle(&spins);
}

static void child_wait(void)
{
    unsigned spins = 0;
    while (atomic_load_explicit(&C->done, memory_order_acquire) != run_no)
        idle(&spins);
}

/* One run; returns 0 with *total and *src_done (ns), an errno (cma not
 * permitted, populate not known), or -1 when the copy came out wrong. */
static int run_one(int mode, int pages, const unsigned char *src, size_t size, uint64_t seed,
                   void **warm, size_t *warm_len, uint64_t *total, uint64_t *src_done)
{
    if (mode == M_MEMCPY) {
        unsigned char *dst = dest(size, pages, warm, warm_len);
        uint64_t t0 = now_ns();
        int err = prepare(dst, size, pages);
        if (err == 0)
            memcpy(dst, src, size);
        *total = *src_done = now_ns() - t0;
        int bad = err ? err : check((uint64_t *)dst, size, seed);
        undest(dst, size, pages);
        return bad;
    }
    child_start(mode, pages, size, src, seed);
    uint64_t t0 = now_ns(), tail = 0;
    if (mode == M_SHM2) {
        for (size_t off = 0; off < size; off += chunk, tail++) {
            unsigned spins = 0;
            while (tail - atomic_load_explicit(&C->head, memory_order_acquire) >= nslots)
                relax(&spins);
            size_t n = size - off < chunk ? size - off : chunk;
            memcpy(ring + (tail % nslots) * chunk, src + off, n);
            atomic_store_explicit(&C->tail, tail + 1, memory_order_release);
        }
    }
    uint64_t t1 = now_ns();
    child_wait();
    if (C->err)
        return C->err;
    if (mode == M_SHM2) {
        *total = C->t_end - t0;
        *src_done = t1 - t0;
    } else { /* the child copied alone, from when it was ready */
        *total = *src_done = C->t_end - C->t_begin;
    }
    return C->bad ? -1 : 0;
}

/* A positive number of `unit` bytes (fractions allowed), as bytes. */
static size_t parse_size(const char *s, double unit, const char *what)
{
    char *end;
    double v = strtod(s, &end) * unit;
    if (*end || !(v >= 1) || v > (double)((size_t)1 << 40)) {
        fprintf(stderr, "raw-shm-copy: %s: %s: not a positive size\n", what, s);
        exit(2);
    }
    return (size_t)v;
}

static void usage(void)
{
    fprintf(stderr, "usage: raw-shm-copy [-r REPS] [-c CHUNK_BYTES] [-R RING_BYTES] "
                    "[-p fresh,warm,populate,huge] [SIZE_MB ...]\n");
    exit(2);
}

/* "fresh,warm" -> a bit per page kind */
static unsigned parse_pages(const char *list)
{
    unsigned set = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < P_COUNT && strcmp(w, pages_name[k]) != 0)
            k++;
        if (k == P_COUNT) {
            fprintf(stderr, "raw-shm-copy: -p: %s: not one of fresh, warm, populate, huge\n", w);
            exit(2);
        }
        set |= 1u << k;
    }
    return set;
}

int main(int argc, char **argv)
{
    static double samples[MAX_REPS], srcs[MAX_REPS];
    static const double defsizes[] = {0.25, 0.5, 1, 2, 8, 64};
    static const int page_order[P_COUNT] = {P_FRESH, P_POPULATE, P_HUGE, P_WARM};
    size_t sizes[MAX_SIZES];
    unsigned pageset = (1u << P_FRESH) | (1u << P_WARM);
    int nsizes = 0, reps = 5, c;

    while ((c = getopt(argc, argv, "r:c:R:p:")) != -1) {
        switch (c) {
        case 'r':
            reps = atoi(optarg);
            if (reps < 1 || reps > MAX_REPS)
                usage();
            break;
        case 'c': chunk = parse_size(optarg, 1, "chunk"); break;
        case 'R': ring_bytes = parse_size(optarg, 1, "ring"); break;
        case 'p': pageset = parse_pages(optarg); break;
        default: usage();
        }
    }
    for (; optind < argc && nsizes < MAX_SIZES; optind++)
        sizes[nsizes++] = parse_size(argv[optind], (double)MIB, "SIZE_MB") & ~(size_t)7;
    if (nsizes == 0)
        for (size_t i = 0; i < sizeof defsizes / sizeof *defsizes; i++)
            sizes[nsizes++] = (size_t)(defsizes[i] * (double)MIB);
    if (chunk == 0)
        chunk = ring_bytes / 4;
    chunk &= ~(size_t)63;
    if (chunk == 0 || chunk > ring_bytes) {
        fprintf(stderr, "raw-shm-copy: the chunk (%zu) must be 64 bytes to the ring's size (%zu)\n",
                chunk, ring_bytes);
        return 2;
    }
    nslots = ring_bytes / chunk;

    /* the shared part: control block + ring, in a memfd (as the transport) */
    size_t ctl_len = (sizeof(struct ctl) + 4095) & ~(size_t)4095;
    int fd = memfd_create("raw-shm-copy", 0);
    if (fd < 0)
        die("raw-shm-copy: memfd_create");
    if (ftruncate(fd, (off_t)(ctl_len + nslots * chunk)) != 0)
        die("raw-shm-copy: ftruncate");
    void *seg = mmap(NULL, ctl_len + nslots * chunk, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (seg == MAP_FAILED)
        die("raw-shm-copy: mmap of the memfd");
    memset(seg, 0, ctl_len + nslots * chunk); /* the ring is resident, as a used transport's */
    C = seg;
    ring = (unsigned char *)seg + ctl_len;
    C->parent = getpid();
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* for process_vm_readv under Yama */

    pid_t kid = fork();
    if (kid < 0)
        die("raw-shm-copy: fork");
    if (kid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        child();
    }

    size_t max = 0;
    for (int i = 0; i < nsizes; i++)
        max = sizes[i] > max ? sizes[i] : max;
    unsigned char *src = map_anon(max, 0);
    void *warm = NULL;
    size_t warm_len = 0;

    /* the samples of case (size, mode, pages): rep r at [case * reps + r] */
    size_t ncase = (size_t)nsizes * M_COUNT * P_COUNT;
    double *tot = calloc(ncase * (size_t)reps, sizeof *tot);
    double *sd = calloc(ncase * (size_t)reps, sizeof *sd);
    int skip[M_COUNT][P_COUNT] = {{0}}; /* errno: the kernel refused that case */
    int failed = 0;
    if (!tot || !sd)
        die("raw-shm-copy: calloc");
#define CASE(si, m, pk) ((((size_t)(si) * M_COUNT + (size_t)(m)) * P_COUNT + (size_t)(pk)) * (size_t)reps)

    for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up, not counted */
        for (int si = 0; si < nsizes; si++) {
            uint64_t seed = 0x9e3779b97f4a7c15u * (uint64_t)(si + 1);
            fill((uint64_t *)src, sizes[si], seed);
            for (int m = 0; m < M_COUNT; m++) {
                for (int pi = 0; pi < P_COUNT; pi++) {
                    int pk = page_order[pi];
                    if (!(pageset & (1u << pk)) || skip[m][pk])
                        continue;
                    uint64_t t = 0, sdone = 0;
                    int rc = run_one(m, pk, src, sizes[si], seed, &warm, &warm_len, &t, &sdone);
                    if (rc > 0) {
                        skip[m][pk] = rc;
                        continue;
                    }
                    if (rc != 0) {
                        fprintf(stderr, "raw-shm-copy: %s, %s pages, %zu bytes: the copy differs "
                                        "from the source\n",
                                mode_name[m], pages_name[pk], sizes[si]);
                        failed = 1;
                    }
                    if (rep >= 0) {
                        tot[CASE(si, m, pk) + (size_t)rep] = (double)t / 1e3;
                        sd[CASE(si, m, pk) + (size_t)rep] = (double)sdone / 1e3;
                    }
                }
            }
        }
    }
    C->quit = 1;
    atomic_store_explicit(&C->go, ++run_no, memory_order_release);
    waitpid(kid, NULL, 0);

    printf("# raw-shm-copy: ring %zu bytes of %zu-byte chunks (%zu slots); median of %d runs "
           "(p10, p90); MB = 2^20 bytes, GB/s = 10^9 bytes/s\n",
           nslots * chunk, chunk, nslots, reps);
    for (int m = 0; m < M_COUNT; m++)
        for (int pk = 0; pk < P_COUNT; pk++)
            if (skip[m][pk])
                printf("# %s, %s pages: refused by the kernel (%s): no rows\n", mode_name[m],
                       pages_name[pk], strerror(skip[m][pk]));
    printf("# %-40s %-8s %8s %12s %12s %12s %9s\n", "case", "pages", "MB", "median us", "p10 us",
           "p90 us", "GB/s");
    for (int si = 0; si < nsizes; si++) {
        for (int m = 0; m < M_COUNT; m++) {
            for (int pi = 0; pi < P_COUNT; pi++) {
                int pk = page_order[pi];
                if (!(pageset & (1u << pk)) || skip[m][pk])
                    continue;
                for (int r = 0; r < reps; r++)
                    samples[r] = tot[CASE(si, m, pk) + (size_t)r],
                    srcs[r] = sd[CASE(si, m, pk) + (size_t)r];
                struct stats st = summarize(samples, reps), ss = summarize(srcs, reps);
                double gbps = (double)sizes[si] / (st.median * 1e3);
                printf("  %-40s %-8s %8.2f %12.1f %12.1f %12.1f %9.2f\n", mode_what[m],
                       pages_name[pk], (double)sizes[si] / (double)MIB, st.median, st.p10, st.p90,
                       gbps);
                printf("RESULT raw_shm_copy mode=%s pages=%s size=%zu total_us=%.3f src_done_us=%.3f "
                       "gbps=%.3f p10_us=%.3f p90_us=%.3f chunk=%zu ring=%zu reps=%d\n",
                       mode_name[m], pages_name[pk], sizes[si], st.median, ss.median, gbps, st.p10,
                       st.p90, chunk, nslots * chunk, reps);
            }
        }
    }
    return failed;
}
