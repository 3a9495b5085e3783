/*
 * migrate-bench.c - how long a migration of a process-mode task between
 * two nodes takes, and how obtrusive it is (MPVM's metric: from the request
 * reaching the source node to the task's last byte leaving it), per size of
 * the task's heap.  Built with upvmcc; run on two nodes:
 *
 *   upvm run --nodes 2 ./migrate-bench [-r REPS] [-W WARMUP] [-w blocked|ready]
 *                                      [SIZE_MB ...]
 *
 * The master (node 0) spawns one worker per size on node 0 (default 0 0.25
 * 0.5 1 2 8 64; MB = 2^20 bytes): a copy of this program whose heap holds
 * S bytes (malloc, every page written; the 0 worker mallocs nothing), and
 * one probe on node 1 that says which process node 1 is (its pid).  Then,
 * WARMUP (default 1, not counted) + REPS (default 5) times, repetitions
 * outermost, it moves every worker to node 1 and back with upvm_migrate,
 * reading upvm_migrate_stats after each move: 2 x REPS moves per size.
 *
 * After every move the worker checks its memory and rewrites it (not
 * timed): its heap, a 4 KiB global array and a 4 KiB array on its stack
 * must hold the pattern of the last generation, word for word; then it
 * writes the next generation's pattern, so a move that left stale pages
 * behind, or brought garbage, fails the next check.  It answers with its
 * pid and upvm_node_of(0); the master checks that the worker runs in the
 * target node's process (pid: its own for node 0, the probe's for node 1)
 * and that upvm_node_of(worker) says so too.  Any mismatch ends the
 * benchmark with status 1 and a line naming the worker, the move and the
 * first bad byte.
 *
 * -w blocked (default): the worker waits in pvm_recv while it is moved,
 * the normal case.  -w ready: before each move the master tells the
 * worker to poll (pvm_nrecv, upvm_yield) and waits until it does, so the
 * worker is ready, not blocked, when the request comes: it moves at its
 * next PVM call or yield (the other workers stay blocked meanwhile).
 *
 * Output: a table, then per size
 *
 *   RESULT migrate size=1048576 wait=blocked moves=10 total_us=... obtrusive_us=...
 *          call_us=... bytes=... gbps=... total_p10_us=... total_p90_us=...
 *          obtrusive_p10_us=... obtrusive_p90_us=... to1_total_us=... to0_total_us=...
 *          first_total_us=... first_obtrusive_us=...
 *
 * medians over the counted moves: total and obtrusive from
 * upvm_migrate_stats; call: the master's own clock around upvm_migrate;
 * bytes: what the stats say moved; gbps = bytes / total (10^9 bytes/s);
 * to1/to0: the moves to node 1 / back to node 0 alone; first: the very
 * first move of that worker (a warm-up move: a node that has never held
 * the task's slot).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pvm3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#define MIB ((size_t)1 << 20)
#define MAX_SIZES 16
#define MAX_MOVES 2000 /* per worker; the master's tables are in its heap, not in the
                        * program's bss: every worker's move would copy them */
#define DATA_WORDS (4096 / 8)  /* a page of globals, a page of stack: enough to see
                                 * that they move, little next to a 0-byte heap */
#define STACK_WORDS (4096 / 8)

enum { TAG_READY = 40, TAG_CHECK, TAG_ANSWER, TAG_QUIT, TAG_PROBE, TAG_POLL, TAG_POLLING };

/* --------------------------------------------------------------- patterns */

/* Generation gen of region r of worker seed: one xorshift64 word per 8
 * bytes.  check_and_next verifies generation gen and writes gen + 1 in the
 * same pass; returns the first bad byte offset, or -1. */
static uint64_t start_word(uint64_t seed, int region, uint64_t gen)
{
    uint64_t x = (seed ^ (gen * 0xbf58476d1ce4e5b9u) ^ ((uint64_t)region << 56)) | 1;
    return x;
}

static void pattern_write(uint64_t *p, size_t words, uint64_t seed, int region, uint64_t gen)
{
    uint64_t x = start_word(seed, region, gen);
    for (size_t i = 0; i < words; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = x;
    }
}

static long check_and_next(uint64_t *p, size_t words, uint64_t seed, int region, uint64_t gen)
{
    uint64_t x = start_word(seed, region, gen), y = start_word(seed, region, gen + 1);
    long bad = -1;
    for (size_t i = 0; i < words; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        y ^= y << 13, y ^= y >> 7, y ^= y << 17;
        if (p[i] != x && bad < 0)
            bad = (long)(i * 8);
        p[i] = y;
    }
    return bad;
}

/* ----------------------------------------------------------------- worker */

static uint64_t data_area[DATA_WORDS]; /* in the task's writable data (bss) */

/* -worker BYTES SEED: fills its memory, says READY, then answers CHECK
 * (and POLL) until QUIT. */
static int worker(size_t bytes, uint64_t seed)
{
    int master = pvm_parent();
    uint64_t stack_area[STACK_WORDS]; /* in this ULP's stack, for the whole run */
    uint64_t *heap = NULL, gen = 0;
    size_t words = bytes / 8;

    if (bytes) {
        heap = malloc(bytes);
        if (!heap) {
            fprintf(stderr, "migrate-bench: worker t%x: malloc(%zu) failed\n", pvm_mytid(), bytes);
            return 1;
        }
        pattern_write(heap, words, seed, 0, gen); /* every page written */
    }
    pattern_write(data_area, DATA_WORDS, seed, 1, gen);
    pattern_write(stack_area, STACK_WORDS, seed, 2, gen);
    int v[2] = {(int)getpid(), upvm_node_of(0)};
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, 2, 1);
    pvm_send(master, TAG_READY);

    int polling = 0;
    for (;;) {
        int buf, len, tag, src;
        if (polling) { /* ready, not blocked, when the move comes */
            while ((buf = pvm_nrecv(master, -1)) == 0)
                upvm_yield();
            polling = 0;
        } else {
            buf = pvm_recv(master, -1);
        }
        if (buf < 0 || pvm_bufinfo(buf, &len, &tag, &src) < 0) {
            pvm_perror("migrate-bench: worker: pvm_recv");
            return 1;
        }
        if (tag == TAG_QUIT)
            break;
        if (tag == TAG_POLL) {
            polling = 1;
            pvm_initsend(PvmDataDefault);
            pvm_send(master, TAG_POLLING);
            continue;
        }
        long bad[3] = {-1, -1, -1};
        if (heap)
            bad[0] = check_and_next(heap, words, seed, 0, gen);
        bad[1] = check_and_next(data_area, DATA_WORDS, seed, 1, gen);
        bad[2] = check_and_next(stack_area, STACK_WORDS, seed, 2, gen);
        gen++;
        v[0] = (int)getpid();
        v[1] = upvm_node_of(0);
        pvm_initsend(PvmDataDefault);
        pvm_pkint(v, 2, 1);
        pvm_pklong(bad, 3, 1);
        pvm_send(master, TAG_ANSWER);
    }
    free(heap);
    return 0;
}

/* ----------------------------------------------------------------- master */

struct move {
    double total, obtrusive, call; /* µs */
    double bytes;
    int to;
};

struct wk {
    size_t bytes;
    int tid;
    int nmoves, moved;
    struct move first, moves[MAX_MOVES];
};

static int pid_of_node[2];

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0.5: the median) of the moves' field f (sorted copy),
 * of those to node `to` (-1: all); -1 when none. */
static double quantile(const struct wk *w, size_t off, int to, double q)
{
    double v[MAX_MOVES];
    int n = 0;
    for (int i = 0; i < w->nmoves; i++)
        if (to < 0 || w->moves[i].to == to)
            v[n++] = *(const double *)((const char *)&w->moves[i] + off);
    if (n == 0)
        return -1;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    if (q == 0.5)
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return v[(int)(q * n)];
}
#define Q(w, field, to, q) quantile((w), offsetof(struct move, field), (to), (q))

static void fail_all(struct wk *w, int n)
{
    for (int i = 0; i < n; i++)
        if (w[i].tid > 0)
            pvm_kill(w[i].tid);
}

/* One move of worker w to node `to`, timed and checked.  0, or 1 after
 * saying what went wrong. */
static int move_one(struct wk *w, int to, int counted, int ready_mode)
{
    struct upvm_migrate_stats st;
    if (ready_mode) {
        pvm_initsend(PvmDataDefault);
        if (pvm_send(w->tid, TAG_POLL) < 0 || pvm_recv(w->tid, TAG_POLLING) < 0) {
            pvm_perror("migrate-bench: the worker's poll");
            return 1;
        }
    }
    double t0 = now_us();
    int rc = upvm_migrate(w->tid, to);
    double t1 = now_us();
    if (rc < 0) {
        fprintf(stderr, "migrate-bench: upvm_migrate(t%x [%zu-byte heap], node %d): error %d: %s\n",
                w->tid, w->bytes, to, rc, upvm_migrate_error());
        return 1;
    }
    if ((rc = upvm_migrate_stats(&st)) < 0) {
        fprintf(stderr, "migrate-bench: upvm_migrate_stats after moving t%x: error %d\n", w->tid, rc);
        return 1;
    }
    int where = upvm_node_of(w->tid);
    if (where != to) {
        fprintf(stderr, "migrate-bench: t%x moved to node %d, but upvm_node_of says %d\n", w->tid,
                to, where);
        return 1;
    }

    /* the worker checks its memory where it now runs */
    int v[2];
    long bad[3];
    pvm_initsend(PvmDataDefault);
    pvm_send(w->tid, TAG_CHECK);
    if (pvm_recv(w->tid, TAG_ANSWER) < 0 || pvm_upkint(v, 2, 1) < 0 || pvm_upklong(bad, 3, 1) < 0) {
        pvm_perror("migrate-bench: the worker's answer");
        return 1;
    }
    static const char *const what[3] = {"heap", "global array", "stack array"};
    for (int i = 0; i < 3; i++) {
        if (bad[i] >= 0) {
            fprintf(stderr, "migrate-bench: t%x [%zu-byte heap] after its move to node %d: its %s "
                            "differs from what it held, first at byte %ld\n",
                    w->tid, w->bytes, to, what[i], bad[i]);
            return 1;
        }
    }
    if (v[0] != pid_of_node[to] || v[1] != to) {
        fprintf(stderr, "migrate-bench: t%x [%zu-byte heap] moved to node %d (pid %d) runs in pid %d, "
                        "and its upvm_node_of(0) says node %d\n",
                w->tid, w->bytes, to, pid_of_node[to], v[0], v[1]);
        return 1;
    }

    struct move m = {(double)st.total_ns / 1e3, (double)st.obtrusive_ns / 1e3, t1 - t0,
                     (double)st.bytes, to};
    if (w->moved++ == 0)
        w->first = m;
    if (counted && w->nmoves < MAX_MOVES)
        w->moves[w->nmoves++] = m;
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: upvm run --nodes 2 migrate-bench [-r REPS] [-W WARMUP] "
                    "[-w blocked|ready] [SIZE_MB ...]\n");
    exit(2);
}

static int master(int argc, char **argv)
{
    static const double defsizes[] = {0, 0.25, 0.5, 1, 2, 8, 64};
    struct wk *w = calloc(MAX_SIZES, sizeof *w);
    int nw = 0, reps = 5, warmup = 1, ready_mode = 0, c;

    if (!w) {
        fprintf(stderr, "migrate-bench: out of memory\n");
        return 1;
    }
    while ((c = getopt(argc, argv, "r:W:w:")) != -1) {
        switch (c) {
        case 'r': reps = atoi(optarg); break;
        case 'W': warmup = atoi(optarg); break;
        case 'w':
            if (strcmp(optarg, "blocked") == 0)
                ready_mode = 0;
            else if (strcmp(optarg, "ready") == 0)
                ready_mode = 1;
            else
                usage();
            break;
        default: usage();
        }
    }
    if (reps < 1 || warmup < 0 || 2 * reps > MAX_MOVES)
        usage();
    for (; optind < argc && nw < MAX_SIZES; optind++) {
        char *end;
        double mb = strtod(argv[optind], &end);
        if (*end || mb < 0 || mb > 512)
            usage();
        w[nw++].bytes = (size_t)(mb * (double)MIB) & ~(size_t)7;
    }
    if (nw == 0)
        for (size_t i = 0; i < sizeof defsizes / sizeof *defsizes; i++)
            w[nw++].bytes = (size_t)(defsizes[i] * (double)MIB);

    if (pvm_mytid() < 0) {
        pvm_perror("migrate-bench: pvm_mytid");
        return 1;
    }
    if (upvm_nodes() < 2) {
        fprintf(stderr, "migrate-bench: this job has %d node(s); run it on two: "
                        "upvm run --nodes 2 %s\n", upvm_nodes(), argv[0]);
        pvm_exit();
        return 2;
    }
    if (upvm_node_of(0) != 0) {
        fprintf(stderr, "migrate-bench: the master runs on node %d, not 0\n", upvm_node_of(0));
        pvm_exit();
        return 1;
    }
    pid_of_node[0] = (int)getpid();

    /* node 1's process: a probe task there says its pid */
    char *pargv[] = {"-probe", NULL};
    int probe;
    if (pvm_spawn(argv[0], pargv, PvmTaskHost, "node1", 1, &probe) != 1 ||
        pvm_recv(probe, TAG_PROBE) < 0 || pvm_upkint(&pid_of_node[1], 1, 1) < 0) {
        pvm_perror("migrate-bench: the probe on node1");
        pvm_exit();
        return 1;
    }
    if (pid_of_node[1] == pid_of_node[0]) {
        fprintf(stderr, "migrate-bench: node1 runs in the same process as node 0 (pid %d)\n",
                pid_of_node[0]);
        pvm_exit();
        return 1;
    }

    /* the workers, on node 0 */
    for (int i = 0; i < nw; i++) {
        char sz[32], seed[32];
        snprintf(sz, sizeof sz, "%zu", w[i].bytes);
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)(0x9e3779b97f4a7c15u * (i + 1u)));
        char *wargv[] = {"-worker", sz, seed, NULL};
        int v[2];
        if (pvm_spawn(argv[0], wargv, PvmTaskHost, "node0", 1, &w[i].tid) != 1 ||
            pvm_recv(w[i].tid, TAG_READY) < 0 || pvm_upkint(v, 2, 1) < 0) {
            pvm_perror("migrate-bench: spawning a worker on node0");
            fail_all(w, i + 1);
            pvm_exit();
            return 1;
        }
        if (v[0] != pid_of_node[0] || v[1] != 0) {
            fprintf(stderr, "migrate-bench: worker t%x started in pid %d (node %d), not on node 0\n",
                    w[i].tid, v[0], v[1]);
            fail_all(w, i + 1);
            pvm_exit();
            return 1;
        }
    }

    for (int rep = -warmup; rep < reps; rep++) {
        for (int i = 0; i < nw; i++) {
            if (move_one(&w[i], 1, rep >= 0, ready_mode) ||
                move_one(&w[i], 0, rep >= 0, ready_mode)) {
                fail_all(w, nw);
                pvm_exit();
                return 1;
            }
        }
    }
    for (int i = 0; i < nw; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_send(w[i].tid, TAG_QUIT);
    }

    printf("# migrate-bench: %d worker(s) %s while moved, node 0 <-> node 1 (pids %d, %d); "
           "median of %d moves (%d each way) after %d warm-up round trip(s); MB = 2^20 bytes, "
           "GB/s = 10^9 bytes/s\n",
           nw, ready_mode ? "ready (polling)" : "blocked in pvm_recv", pid_of_node[0],
           pid_of_node[1], 2 * reps, reps, warmup);
    printf("# %8s %12s %12s %12s %12s %12s %12s %9s %12s\n", "heap MB", "total us", "p10", "p90",
           "obtrus. us", "call us", "bytes", "GB/s", "first us");
    for (int i = 0; i < nw; i++) {
        double tot = Q(&w[i], total, -1, 0.5), bytes = Q(&w[i], bytes, -1, 0.5);
        double gbps = tot > 0 ? bytes / (tot * 1e3) : 0;
        printf("  %8.2f %12.1f %12.1f %12.1f %12.1f %12.1f %12.0f %9.2f %12.1f\n",
               (double)w[i].bytes / (double)MIB, tot, Q(&w[i], total, -1, 0.1),
               Q(&w[i], total, -1, 0.9), Q(&w[i], obtrusive, -1, 0.5), Q(&w[i], call, -1, 0.5),
               bytes, gbps, w[i].first.total);
        printf("RESULT migrate size=%zu wait=%s moves=%d total_us=%.3f obtrusive_us=%.3f call_us=%.3f "
               "bytes=%.0f gbps=%.3f total_p10_us=%.3f total_p90_us=%.3f obtrusive_p10_us=%.3f "
               "obtrusive_p90_us=%.3f to1_total_us=%.3f to0_total_us=%.3f first_total_us=%.3f "
               "first_obtrusive_us=%.3f\n",
               w[i].bytes, ready_mode ? "ready" : "blocked", w[i].nmoves, tot,
               Q(&w[i], obtrusive, -1, 0.5), Q(&w[i], call, -1, 0.5), bytes, gbps,
               Q(&w[i], total, -1, 0.1), Q(&w[i], total, -1, 0.9), Q(&w[i], obtrusive, -1, 0.1),
               Q(&w[i], obtrusive, -1, 0.9), Q(&w[i], total, 1, 0.5), Q(&w[i], total, 0, 0.5),
               w[i].first.total, w[i].first.obtrusive);
    }
    fflush(stdout);
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "-probe") == 0) {
        int pid = (int)getpid();
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&pid, 1, 1);
        pvm_send(pvm_parent(), TAG_PROBE);
        pvm_exit();
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "-worker") == 0) {
        int rc = worker(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
        pvm_exit();
        return rc;
    }
    return master(argc, argv);
}
