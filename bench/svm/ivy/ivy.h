/*
 * ivy.h - what the IVY benchmark programs (the .c files of bench/svm/ivy, Kai Li's
 * "IVY: A Shared Virtual Memory System for Parallel Computing", ICPP 1988,
 * section "Experiments") share: a control block in shared memory, the
 * workers' start and end, the timed phases, the barrier, the summed
 * counters and the one result line.
 *
 * A program's main runs on node 0: it allocates its data and an ivy_ctl
 * (upvm_svm_alloc), spawns W workers (worker i on node i % nodes, "node0"
 * .. "nodeN-1"; so W workers on fewer nodes work too), and sends each its
 * index and the control block's address (the only message a worker gets:
 * everything else is in shared memory).  A timed phase is
 *
 *   workers: upvm_ec_advance(ready); upvm_ec_await(go, r); ...compute...;
 *            upvm_ec_advance(done)
 *   main:    upvm_ec_await(ready, W r); t0; upvm_ec_advance(go);
 *            upvm_ec_await(done, W r); t1
 *
 * so a phase's time counts neither spawning nor the workers' setup.  At the
 * end main advances fin; each worker then reports its node's counters
 * (upvm_svm_stats taken when it was let go the first time, so the setup is
 * not counted, and after fin) to main, which sums
 * per node the difference between the earliest start and the latest end
 * (several workers of one node are counted once), then checks the result
 * against a sequential computation of its own (after every report: its
 * reads move pages too) and prints
 *
 *   ivy prog=P size=S workers=W nodes=N manager=M yield_us=Y time_s=T seq_s=Q
 *       read_faults=.. write_faults=.. pages_in=.. pages_out=..
 *       invalidations=.. frames=.. forwards=.. check=ok
 *
 * (one line; seq_s: the sequential check's time, on node 0, in private
 * memory; yield_us: -Y, 0 without; check=WRONG and exit status 1 when the
 * result is wrong).  Every program takes -Y US (ivy_poll).
 */
#ifndef UPVM_BENCH_IVY_H
#define UPVM_BENCH_IVY_H

#include <errno.h>
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>
#include <upvm_svm.h>

#define IVY_TAG_START 7100 /* main -> worker: index, control block */
#define IVY_TAG_STATS 7101 /* worker -> main: node, counters at start and end */
#define IVY_MAXW 256
#define IVY_NSTAT 7

/* The control block: the parameters on the first page (written by main
 * before it spawns, then only read), main's eventcounts on the second,
 * the workers' barrier on the third (each advanced by every worker). */
struct ivy_ctl {
    int workers, nodes;
    long yield_ns; /* -Y: a upvm_yield() at least this often while computing (0: never) */
    long arg[8];
    void *ptr[8];
    upvm_ec_t ready __attribute__((aligned(UPVM_SVM_PAGE)));
    upvm_ec_t go, done, fin;
    upvm_ec_t bar __attribute__((aligned(UPVM_SVM_PAGE)));
};

/* What one worker keeps for itself (thread-mode ULPs of one node share
 * globals: nothing of a worker's is global). */
struct ivy_worker {
    struct ivy_ctl *c;
    int me, node;
    uint64_t round; /* barriers passed */
    uint64_t last_yield;
    int counting;
    struct upvm_svm_stats s0; /* at the first go */
};

__attribute__((noreturn)) static inline void ivy_die(const char *what, long rc)
{
    fprintf(stderr, "ivy: %s failed (%ld)\n", what, rc);
    fflush(NULL);
    exit(2);
}

/* A shared block of n bytes, or the program ends saying why. */
static inline void *ivy_alloc(size_t n)
{
    void *p = upvm_svm_alloc(n);
    if (!p)
        ivy_die("upvm_svm_alloc", -errno);
    return p;
}

/* The job's nodes (main enrolls first: before its first PVM call a
 * thread-mode job has not started its other nodes, and upvm_nodes() says 1). */
static inline int ivy_nodes(void)
{
    (void)pvm_mytid();
    return upvm_nodes();
}

/* The page manager, or "memfd" (UPVM_SVM=memfd: one host's memory shared,
 * no protocol). */
static inline const char *ivy_manager(void)
{
    const char *svm = getenv("UPVM_SVM"), *m = getenv("UPVM_SVM_MANAGER");
    if (svm && strcmp(svm, "memfd") == 0 && !getenv("UPVM_SVM_PROTOCOL"))
        return "memfd";
    return m && *m ? m : "central";
}

/* A deterministic generator (splitmix64): the same data on every node and
 * in the sequential check. */
static inline uint64_t ivy_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* in [0, 1) */
static inline double ivy_unit(uint64_t *s)
{
    return (double)(ivy_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

static inline double ivy_secs(uint64_t ns)
{
    return (double)ns / 1e9;
}

/* The part [lo, hi) of n items that worker me of w gets (contiguous,
 * sizes differing by one at most). */
static inline void ivy_part(long n, int w, int me, long *lo, long *hi)
{
    *lo = n * me / w;
    *hi = n * (me + 1) / w;
}

/* ---------------------------------------------------------------- main */

static inline struct ivy_ctl *ivy_ctl_new(int workers)
{
    struct ivy_ctl *c = ivy_alloc(sizeof *c);
    c->workers = workers;
    c->nodes = ivy_nodes();
    int rc;
    if ((rc = upvm_ec_init(&c->ready)) || (rc = upvm_ec_init(&c->go)) ||
        (rc = upvm_ec_init(&c->done)) || (rc = upvm_ec_init(&c->fin)) ||
        (rc = upvm_ec_init(&c->bar)))
        ivy_die("upvm_ec_init", rc);
    return c;
}

/* Spawn c->workers tasks `name`, worker i on node i % nodes. */
static inline void ivy_spawn(struct ivy_ctl *c, const char *name)
{
    for (int i = 0; i < c->workers; i++) {
        char where[32];
        int tid, rc;
        /* (a job of one node does not know "node0": ".") */
        snprintf(where, sizeof where, c->nodes > 1 ? "node%d" : ".", i % c->nodes);
        if ((rc = pvm_spawn((char *)name, NULL, PvmTaskHost, where, 1, &tid)) != 1)
            ivy_die("pvm_spawn", rc < 0 ? rc : tid);
        unsigned long p = (unsigned long)c;
        if (pvm_initsend(PvmDataRaw) < 0 || pvm_pkint(&i, 1, 1) || pvm_pkulong(&p, 1, 1) ||
            (rc = pvm_send(tid, IVY_TAG_START)) < 0)
            ivy_die("sending a worker its start", rc);
    }
}

/* Phase r (1, 2, ...): wait until every worker is ready, let them go, wait
 * until every one is done; the time between, in ns. */
static inline uint64_t ivy_phase(struct ivy_ctl *c, uint64_t r)
{
    uint64_t w = (uint64_t)c->workers;
    int rc;
    if ((rc = upvm_ec_await(&c->ready, w * r)))
        ivy_die("upvm_ec_await(ready)", rc);
    uint64_t t0 = upvm_now_ns();
    upvm_ec_advance(&c->go);
    if ((rc = upvm_ec_await(&c->done, w * r)))
        ivy_die("upvm_ec_await(done)", rc);
    return upvm_now_ns() - t0;
}

static inline void ivy_stats_vec(uint64_t *v, const struct upvm_svm_stats *s)
{
    v[0] = s->read_faults, v[1] = s->write_faults, v[2] = s->pages_in, v[3] = s->pages_out;
    v[4] = s->invalidations, v[5] = s->frames, v[6] = s->forwards;
}

/* Let the workers end; collect their counters, summed per node. */
static inline void ivy_finish(struct ivy_ctl *c, uint64_t sum[IVY_NSTAT])
{
    static uint64_t lo[IVY_MAXW][IVY_NSTAT], hi[IVY_MAXW][IVY_NSTAT];
    static int seen[IVY_MAXW];
    memset(seen, 0, sizeof seen);
    upvm_ec_advance(&c->fin);
    for (int i = 0; i < c->workers; i++) {
        int node = 0, rc;
        unsigned long v[2 * IVY_NSTAT];
        if ((rc = pvm_recv(-1, IVY_TAG_STATS)) < 0 || pvm_upkint(&node, 1, 1) ||
            pvm_upkulong(v, 2 * IVY_NSTAT, 1))
            ivy_die("receiving a worker's counters", rc);
        if (node < 0 || node >= IVY_MAXW)
            ivy_die("a worker's node", node);
        for (int k = 0; k < IVY_NSTAT; k++) {
            if (!seen[node] || v[k] < lo[node][k])
                lo[node][k] = v[k];
            if (!seen[node] || v[IVY_NSTAT + k] > hi[node][k])
                hi[node][k] = v[IVY_NSTAT + k];
        }
        seen[node] = 1;
    }
    memset(sum, 0, IVY_NSTAT * sizeof *sum);
    for (int n = 0; n < IVY_MAXW; n++)
        for (int k = 0; seen[n] && k < IVY_NSTAT; k++)
            sum[k] += hi[n][k] - lo[n][k];
}

/* The result line; returns main's exit status. */
static inline int ivy_report_line(const char *prog, const char *size, int workers, int nodes,
                                  const char *manager, long yield_us, double time_s, double seq_s,
                                  const uint64_t sum[IVY_NSTAT], int ok)
{
    printf("ivy prog=%s size=%s workers=%d nodes=%d manager=%s yield_us=%ld time_s=%.4f seq_s=%.4f"
           " read_faults=%llu write_faults=%llu pages_in=%llu pages_out=%llu"
           " invalidations=%llu frames=%llu forwards=%llu check=%s\n",
           prog, size, workers, nodes, manager, yield_us, time_s, seq_s,
           (unsigned long long)sum[0], (unsigned long long)sum[1], (unsigned long long)sum[2],
           (unsigned long long)sum[3], (unsigned long long)sum[4], (unsigned long long)sum[5],
           (unsigned long long)sum[6], ok ? "ok" : "WRONG");
    fflush(stdout);
    return ok ? 0 : 1;
}

static inline int ivy_report(const char *prog, const char *size, struct ivy_ctl *c, double time_s,
                             double seq_s, const uint64_t sum[IVY_NSTAT], int ok)
{
    return ivy_report_line(prog, size, c->workers, c->nodes, ivy_manager(), c->yield_ns / 1000,
                           time_s, seq_s, sum, ok);
}

/* -w W: W workers (default: one per node); the others are the program's. */
static inline int ivy_workers_arg(const char *s)
{
    int w = atoi(s);
    if (w < 1 || w > IVY_MAXW) {
        fprintf(stderr, "ivy: -w %s: 1 to %d workers\n", s, IVY_MAXW);
        exit(2);
    }
    return w;
}

/* -------------------------------------------------------------- worker */

/* The start: the control block and this worker's index. */
static inline void ivy_worker_start(struct ivy_worker *w)
{
    unsigned long p = 0;
    int rc;
    memset(w, 0, sizeof *w);
    if ((rc = pvm_recv(-1, IVY_TAG_START)) < 0 || pvm_upkint(&w->me, 1, 1) || pvm_upkulong(&p, 1, 1))
        ivy_die("receiving the start", rc);
    w->c = (struct ivy_ctl *)p;
    w->node = upvm_node_of(0);
}

/* Ready for phase r; returns when main lets it go (the first time with
 * the node's counters taken: they count from there). */
static inline void ivy_worker_go(struct ivy_worker *w, uint64_t r)
{
    int rc;
    upvm_ec_advance(&w->c->ready);
    if ((rc = upvm_ec_await(&w->c->go, r)))
        ivy_die("upvm_ec_await(go)", rc);
    if (!w->counting && (rc = upvm_svm_stats(&w->s0)))
        ivy_die("upvm_svm_stats", rc);
    w->counting = 1;
}

static inline void ivy_worker_done(struct ivy_worker *w)
{
    upvm_ec_advance(&w->c->done);
}

/*
 * A point in a worker's computation where it may yield (-Y US; w NULL: the
 * sequential check, never).  A node handles the protocol's frames only when
 * its scheduler runs, that is when its running ULP blocks, faults on a page
 * from elsewhere or yields: a worker that computes on pages its node holds
 * keeps its node from serving the other nodes' requests (and wake-ups) for
 * as long.  IVY served them at interrupt level; -Y is the program-side
 * workaround, measured beside the faithful default.
 */
static inline void ivy_poll(struct ivy_worker *w)
{
    if (!w || !w->c->yield_ns)
        return;
    uint64_t now = upvm_now_ns();
    if (now - w->last_yield >= (uint64_t)w->c->yield_ns) {
        upvm_yield();
        w->last_yield = upvm_now_ns();
    }
}

/* -Y US: microseconds between yields. */
static inline long ivy_yield_arg(const char *s)
{
    long us = atol(s);
    if (us < 1) {
        fprintf(stderr, "ivy: -Y %s: microseconds between yields, >= 1\n", s);
        exit(2);
    }
    return us * 1000;
}

/* Every worker at the barrier (IVY's eventcount: each advances it, and
 * awaits workers x rounds). */
static inline void ivy_barrier(struct ivy_worker *w)
{
    int rc;
    w->round++;
    upvm_ec_advance(&w->c->bar);
    if ((rc = upvm_ec_await(&w->c->bar, w->round * (uint64_t)w->c->workers)))
        ivy_die("upvm_ec_await(barrier)", rc);
}

/* The end: once main says so, this node's counters to main. */
static inline void ivy_worker_end(struct ivy_worker *w)
{
    struct upvm_svm_stats s1;
    uint64_t a[IVY_NSTAT], b[IVY_NSTAT];
    unsigned long v[2 * IVY_NSTAT];
    int rc;
    if ((rc = upvm_ec_await(&w->c->fin, 1)))
        ivy_die("upvm_ec_await(fin)", rc);
    if ((rc = upvm_svm_stats(&s1)))
        ivy_die("upvm_svm_stats", rc);
    ivy_stats_vec(a, &w->s0);
    ivy_stats_vec(b, &s1);
    for (int k = 0; k < IVY_NSTAT; k++)
        v[k] = (unsigned long)a[k], v[IVY_NSTAT + k] = (unsigned long)b[k];
    if (pvm_initsend(PvmDataRaw) < 0 || pvm_pkint(&w->node, 1, 1) ||
        pvm_pkulong(v, 2 * IVY_NSTAT, 1) || (rc = pvm_send(pvm_parent(), IVY_TAG_STATS)) < 0)
        ivy_die("sending the counters", rc);
}

#endif
