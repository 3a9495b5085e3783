/*
 * vacate-bench.c - emptying a node, for bench/gs-compare.sh: N ULPs
 * (default 32) of S MB of heap each (default 1, every page written) sit
 * on node 1, blocked in pvm_recv; the master (node 0) moves them all to
 * node 0 with upvm_migrate, one after the other, and times it.  This is
 * the lower bound of what `upvm vacate 1` (gs_vacate: the policies empty
 * the node over balancer periods) can do: the same moves, without the
 * balancer's period and decision.  Built with upvmcc; run on two nodes:
 *
 *   vacate-bench [-n ULPS] [-s MB] [-V]
 *
 * -V: the real thing, asked from outside.  A task placed by upvm_migrate
 * is pinned where it was put (src/migrate/migrate.c, t->placed) and a
 * vacate leaves it there, so here 2 x ULPS workers are spawned with the
 * default placement (round robin: ULPS on each node) and none is moved by
 * hand; once they hold their heaps the master prints "READY" (stdout,
 * flushed) and polls upvm_node_of for those on node 1 each millisecond
 * until all run on node 0 (30 s at most): whoever runs it says
 * `upvm vacate node1` after READY.  It prints
 *   RESULT vacate_cli ulps=N mb=S first_rt=T empty_rt=T
 * (N: the workers that were on node 1; CLOCK_REALTIME, s: the first of
 * them seen on node 0, the last), then checks every heap as above.
 *
 * Output:
 *   RESULT vacate ulps=N mb=S empty_ms=T per_ulp_us=T/N obtrusive_us=M
 *          obtrusive_max_us=X move_us=M bytes=B
 * empty: from the first request to the last task running on node 0;
 * obtrusive (MPVM's metric, from upvm_migrate_stats): median and max over
 * the ULPs; move: the median total of one move.  Each worker then checks
 * its heap (every word) and says so; a bad byte fails the run.
 */
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

enum { TAG_GO = 1, TAG_CHECK, TAG_OK };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double rt_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void worker(int parent)
{
    double mb;
    pvm_recv(parent, TAG_GO);
    pvm_upkdouble(&mb, 1, 1);
    size_t words = (size_t)(mb * 1048576) / sizeof(uint64_t);
    uint64_t *heap = malloc(words * sizeof *heap + 1);
    if (!heap)
        exit(1);
    int me = pvm_mytid();
    for (size_t i = 0; i < words; i++)
        heap[i] = (uint64_t)me * 0x9e3779b97f4a7c15u + i;
    pvm_initsend(PvmDataDefault);
    pvm_send(parent, TAG_OK);
    pvm_recv(parent, TAG_CHECK);
    int ok = 1;
    for (size_t i = 0; i < words; i++)
        if (heap[i] != (uint64_t)me * 0x9e3779b97f4a7c15u + i) {
            ok = 0;
            break;
        }
    int node = upvm_node_of(0);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&ok, 1, 1);
    pvm_pkint(&node, 1, 1);
    pvm_send(parent, TAG_OK);
    free(heap);
}

int main(int argc, char **argv)
{
    pvm_mytid();
    if (argc > 1 && !strcmp(argv[1], "-worker")) {
        worker(pvm_parent());
        pvm_exit();
        return 0;
    }
    int n = 32, opt, cli = 0;
    double mb = 1;
    while ((opt = getopt(argc, argv, "n:s:V")) != -1) {
        switch (opt) {
        case 'n': n = atoi(optarg); break;
        case 's': mb = atof(optarg); break;
        case 'V': cli = 1; break;
        default: fprintf(stderr, "usage: vacate-bench [-n ULPS] [-s MB]\n"); return 2;
        }
    }
    if (n < 1 || n > 512 || upvm_nodes() < 2)
        return 2;
    if (cli)
        n *= 2;
    int *tids = calloc((size_t)n, sizeof *tids);
    double *obtr = calloc((size_t)n, sizeof *obtr), *mv = calloc((size_t)n, sizeof *mv);
    if (pvm_spawn(argv[0], (char *[]){"-worker", NULL}, PvmTaskDefault, "", n, tids) != n) {
        fprintf(stderr, "vacate-bench: cannot spawn %d tasks\n", n);
        return 1;
    }
    int *on1 = calloc((size_t)n, sizeof *on1), non1 = 0;
    for (int i = 0; i < n; i++) { /* all on node 1 first (not timed) */
        if (cli && upvm_node_of(tids[i]) == 1)
            on1[non1++] = tids[i];
        if (!cli && upvm_migrate(tids[i], 1) != 0) {
            fprintf(stderr, "vacate-bench: to node 1: %s\n", upvm_migrate_error());
            return 1;
        }
        pvm_initsend(PvmDataDefault);
        pvm_pkdouble(&mb, 1, 1);
        pvm_send(tids[i], TAG_GO);
    }
    for (int i = 0; i < n; i++)
        pvm_recv(-1, TAG_OK);
    uint64_t bytes = 0;
    double t0 = now_s();
    if (cli) {
        printf("READY\n");
        fflush(stdout);
        double first = 0, last = 0, end = now_s() + 30;
        for (;;) {
            int on0 = 0;
            for (int i = 0; i < non1; i++)
                on0 += upvm_node_of(on1[i]) == 0;
            if (on0 > 0 && first == 0)
                first = rt_s();
            if (on0 == non1) {
                last = rt_s();
                break;
            }
            if (now_s() > end) {
                fprintf(stderr, "vacate-bench: %d of %d workers still on node 1 after 30 s\n",
                        non1 - on0, non1);
                return 1;
            }
            usleep(1000);
        }
        printf("RESULT vacate_cli ulps=%d mb=%g first_rt=%.6f empty_rt=%.6f\n", non1, mb, first,
               last);
    }
    for (int i = 0; i < n && !cli; i++) {
        struct upvm_migrate_stats st;
        if (upvm_migrate(tids[i], 0) != 0 || upvm_migrate_stats(&st) != 0) {
            fprintf(stderr, "vacate-bench: to node 0: %s\n", upvm_migrate_error());
            return 1;
        }
        obtr[i] = (double)st.obtrusive_ns / 1e3;
        mv[i] = (double)st.total_ns / 1e3;
        bytes += st.bytes;
    }
    double t = now_s() - t0;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_send(tids[i], TAG_CHECK);
        int ok, node;
        pvm_recv(tids[i], TAG_OK);
        pvm_upkint(&ok, 1, 1);
        pvm_upkint(&node, 1, 1);
        if (!ok || node != 0) {
            fprintf(stderr, "vacate-bench: t%x: heap %s, on node %d\n", tids[i],
                    ok ? "intact" : "CORRUPT", node);
            bad++;
        }
    }
    if (bad)
        return 1;
    if (cli) {
        pvm_exit();
        return 0;
    }
    qsort(obtr, (size_t)n, sizeof *obtr, cmp_d);
    qsort(mv, (size_t)n, sizeof *mv, cmp_d);
    printf("RESULT vacate ulps=%d mb=%g empty_ms=%.3f per_ulp_us=%.1f obtrusive_us=%.1f "
           "obtrusive_max_us=%.1f move_us=%.1f bytes=%llu\n",
           n, mb, t * 1e3, t * 1e6 / n, obtr[n / 2], obtr[n - 1], mv[n / 2],
           (unsigned long long)(bytes / (uint64_t)n));
    pvm_exit();
    return 0;
}
