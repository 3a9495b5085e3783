/*
 * pvmbench.h - helpers shared by the PVM messaging benchmarks that run both
 * against genuine PVM 3.4.6 (bench/pvm/mcast.c, built with -lpvm3) and
 * against UPVM (bench/bench_pvm.c, built with libupvm).
 *
 * Only <pvm3.h> calls and clock_gettime(CLOCK_MONOTONIC) are used, so the
 * same text compiles against either pvm3.h.  What is here: the clock,
 * option parsing, block timing with an iteration count calibrated to a
 * minimum block duration, and medians.
 *
 * Every benchmark times `blocks` blocks of `iters` iterations each, where
 * iters is chosen (by pb_calibrate, which doubles as a warm-up) so that one
 * block takes at least block_ms milliseconds; the printed value is the
 * median over blocks of the time per iteration, with the minimum beside it.
 */
#ifndef PVMBENCH_H
#define PVMBENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pvm3.h>

#define PB_MAXSIZES 32
#define PB_MAXBLOCKS 1000

/* Options common to the benchmarks (each uses the ones it needs). */
struct pb_opts {
    const char *route;   /* daemon | direct | dontroute (genuine PVM) */
    const char *encname; /* raw | inplace | default */
    int enc;             /* PvmDataRaw | PvmDataInPlace | PvmDataDefault */
    const char *deliver; /* share | copy (UPVM's delivery strategy) */
    int blocks;          /* timed blocks; the median over them is printed */
    double block_ms;     /* minimum duration of one timed block */
    int ntask;           /* tasks taking part (meaning depends on the test) */
    int nsizes;          /* message sizes in bytes */
    int sizes[PB_MAXSIZES];
};

static inline double pb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int pb_parse_enc(const char *s)
{
    if (!strcmp(s, "raw"))
        return PvmDataRaw;
    if (!strcmp(s, "inplace"))
        return PvmDataInPlace;
    if (!strcmp(s, "default") || !strcmp(s, "xdr"))
        return PvmDataDefault;
    fprintf(stderr, "unknown encoding '%s' (raw|inplace|default)\n", s);
    exit(2);
}

/* daemon: PVM's default (messages go task -> pvmd -> task);
 * direct: ask for task-to-task TCP links; dontroute: forbid them;
 * upvm: UPVM has no routes to choose, nothing to set. */
static inline void pb_apply_route(const char *r)
{
    if (!strcmp(r, "upvm"))
        return;
    if (!strcmp(r, "direct"))
        pvm_setopt(PvmRoute, PvmRouteDirect);
    else if (!strcmp(r, "dontroute"))
        pvm_setopt(PvmRoute, PvmDontRoute);
    else if (strcmp(r, "daemon")) {
        fprintf(stderr, "unknown route '%s' (daemon|direct|dontroute)\n", r);
        exit(2);
    }
}

static inline void pb_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-r daemon|direct|dontroute] [-e raw|inplace|default]\n"
            "          [-d share|copy] [-b blocks] [-T block_ms] [-n tasks]"
            " [size ...]\n",
            prog);
    exit(2);
}

static inline void pb_add_size(struct pb_opts *o, const char *prog,
                               const char *arg)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*end || v < 0 || v > 16L * 1024 * 1024 || o->nsizes >= PB_MAXSIZES)
        pb_usage(prog);
    o->sizes[o->nsizes++] = (int)v;
}

/* Parse argv[first..argc-1] into *o (which holds the defaults). */
static inline void pb_parse(int argc, char **argv, int first, struct pb_opts *o)
{
    for (int i = first; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            pb_add_size(o, argv[0], a);
            continue;
        }
        if (!v || a[2])
            pb_usage(argv[0]);
        i++;
        switch (a[1]) {
        case 'r': o->route = v; break;
        case 'e': o->encname = v; break;
        case 'd': o->deliver = v; break;
        case 'b': o->blocks = atoi(v); break;
        case 'T': o->block_ms = atof(v); break;
        case 'n': o->ntask = atoi(v); break;
        default: pb_usage(argv[0]);
        }
    }
    o->enc = pb_parse_enc(o->encname);
    if (o->blocks < 1)
        o->blocks = 1;
    if (o->blocks > PB_MAXBLOCKS)
        o->blocks = PB_MAXBLOCKS;
    if (o->block_ms <= 0)
        o->block_ms = 20;
}

/* The benchmark body: iters iterations of the measured exchange. */
typedef void (*pb_loop_fn)(void *ctx, long iters);

/* Smallest iteration count (>= start) whose run takes >= target_ns.  The
 * runs made to find it warm up caches, routes and allocator pools. */
static inline long pb_calibrate(pb_loop_fn loop, void *ctx, long start,
                                double target_ns)
{
    long iters = start < 1 ? 1 : start;
    for (;;) {
        double t0 = pb_now_ns();
        loop(ctx, iters);
        double dt = pb_now_ns() - t0;
        if (dt >= target_ns || iters >= 1000000000L)
            return iters;
        double grow = dt > 0 ? 1.2 * target_ns / dt : 8.0;
        if (grow > 8.0)
            grow = 8.0; /* re-measure before trusting a tiny sample */
        iters = (long)((double)iters * grow) + 1;
    }
}

/* Run `blocks` timed blocks; t[b] = ns per iteration in block b. */
static inline void pb_time_blocks(pb_loop_fn loop, void *ctx, long iters,
                                  int blocks, double *t)
{
    for (int b = 0; b < blocks; b++) {
        double t0 = pb_now_ns();
        loop(ctx, iters);
        t[b] = (pb_now_ns() - t0) / (double)iters;
    }
}

static inline int pb_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v; returns the median and stores the minimum in *min. */
static inline double pb_median(double *v, int n, double *min)
{
    qsort(v, (size_t)n, sizeof *v, pb_cmp_double);
    *min = v[0];
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Name to pvm_spawn: $PVMBENCH_SPAWN_DIR/prog when set (genuine PVM then
 * needs no PVM_PATH entry; UPVM resolves the last path component against
 * its registered task names), else prog itself. */
static inline char *pb_spawn_name(const char *prog, char *buf, size_t len)
{
    const char *dir = getenv("PVMBENCH_SPAWN_DIR");
    snprintf(buf, len, "%s%s%s", dir && *dir ? dir : "",
             dir && *dir ? "/" : "", prog);
    return buf;
}

/* A deterministic byte pattern, and a checksum to verify its delivery. */
static inline void pb_fill(char *buf, int size, int seed)
{
    for (int i = 0; i < size; i++)
        buf[i] = (char)((i * 7 + seed * 13) & 0xff);
}

static inline int pb_checksum(const char *buf, int size)
{
    unsigned h = 2166136261u;
    for (int i = 0; i < size; i++)
        h = (h ^ (unsigned char)buf[i]) * 16777619u;
    return (int)(h & 0x7fffffff);
}

#endif /* PVMBENCH_H */
