/*
 * commpairs.c - communication-bound pairs beside compute tasks, for
 * bench/gs-compare.sh: does the global scheduler put each ping-pong pair
 * on one node, and is their latency then that of an explicit placement?
 * Built with upvmcc; run on two nodes:
 *
 *   commpairs [-p PAIRS] [-c COMPUTE] [-t SECONDS] [-g CHUNK] [-e]
 *
 * The master (node 0) spawns 2 x PAIRS pair tasks and COMPUTE compute
 * tasks in one pvm_spawn (default placement: round robin, so pair k =
 * tasks 2k and 2k+1 starts split over the nodes).  -e: before anything
 * runs the master places them explicitly with upvm_migrate: pair k both on
 * node k % nodes, compute task i on node i % nodes (the placement a
 * programmer would write).  Then every pair plays ping-pong (empty
 * messages) for SECONDS (default 4), the compute tasks compute in chunks
 * of CHUNK steps (default 20000, ~40 µs) with a upvm_yield after each,
 * until the master stops them.
 *
 * After SECONDS of play (the balancer's time to act) each pair's pinger
 * measures: 10 windows of 50 ms more, and reports the median half round
 * trip over those windows, and whether it and its partner were on one
 * node when it ended.  Output:
 *
 *   RESULT commpairs place=split|explicit lat_us=M lat_max_us=X together=N
 *          pairs=P compute_mchunks_s=R
 *
 * lat_us: the median over the pairs; lat_max_us: the worst pair;
 * together: pairs on one node at the end; compute rate: million chunks/s
 * over all compute tasks.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

enum { TAG_GO = 1, TAG_PING, TAG_DONE, TAG_STOP, TAG_COUNT };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static volatile double sink;

static void worker(int parent)
{
    int role, peer;
    double secs;
    long chunk;
    pvm_recv(parent, TAG_GO);
    pvm_upkint(&role, 1, 1);
    pvm_upkint(&peer, 1, 1);
    pvm_upkdouble(&secs, 1, 1);
    pvm_upklong(&chunk, 1, 1);
    if (role == 0) { /* compute */
        double x = 1, count = 0;
        while (pvm_nrecv(parent, TAG_STOP) <= 0) {
            for (long k = 0; k < chunk; k++)
                x = x * 0.999999 + 1e-7 * (double)(k & 7);
            count++;
            upvm_yield();
        }
        sink = x;
        pvm_initsend(PvmDataDefault);
        pvm_pkdouble(&count, 1, 1);
        pvm_send(parent, TAG_COUNT);
        return;
    }
    if (role == 2) { /* pong */
        for (;;) {
            int id = pvm_recv(peer, -1), bytes, tag, src;
            pvm_bufinfo(id, &bytes, &tag, &src);
            if (tag == TAG_STOP)
                return;
            pvm_initsend(PvmDataDefault);
            pvm_send(peer, TAG_PING);
        }
    }
    /* ping */
    enum { NW = 10 };
    double win[NW];
    int nw = 0;
    double end = now_s() + secs;
    while (nw < NW) {
        double w0 = now_s();
        long n = 0;
        do {
            pvm_initsend(PvmDataDefault);
            pvm_send(peer, TAG_PING);
            pvm_recv(peer, TAG_PING);
            n++;
        } while (now_s() - w0 < 0.05);
        if (w0 >= end) /* the measuring windows, after the play */
            win[nw++] = (now_s() - w0) / (double)n / 2 * 1e6;
    }
    int together = upvm_node_of(0) == upvm_node_of(peer);
    pvm_initsend(PvmDataDefault);
    pvm_send(peer, TAG_STOP);
    double lat = median(win, nw);
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&lat, 1, 1);
    pvm_pkint(&together, 1, 1);
    pvm_send(parent, TAG_DONE);
}

int main(int argc, char **argv)
{
    pvm_mytid();
    if (argc > 1 && !strcmp(argv[1], "-worker")) {
        worker(pvm_parent());
        pvm_exit();
        return 0;
    }
    int pairs = 4, ncomp = 4, explicit = 0, opt;
    double secs = 4;
    long chunk = 20000;
    while ((opt = getopt(argc, argv, "p:c:t:g:e")) != -1) {
        switch (opt) {
        case 'p': pairs = atoi(optarg); break;
        case 'c': ncomp = atoi(optarg); break;
        case 't': secs = atof(optarg); break;
        case 'g': chunk = atol(optarg); break;
        case 'e': explicit = 1; break;
        default:
            fprintf(stderr, "usage: commpairs [-p PAIRS] [-c COMPUTE] [-t S] [-g CHUNK] [-e]\n");
            return 2;
        }
    }
    int n = 2 * pairs + ncomp, nodes = upvm_nodes();
    if (pairs < 1 || ncomp < 0 || n > 512 || nodes < 1)
        return 2;
    int tids[512];
    if (pvm_spawn(argv[0], (char *[]){"-worker", NULL}, PvmTaskDefault, "", n, tids) != n) {
        fprintf(stderr, "commpairs: cannot spawn %d tasks\n", n);
        return 1;
    }
    if (explicit)
        for (int i = 0; i < n; i++) {
            int node = i < 2 * pairs ? (i / 2) % nodes : (i - 2 * pairs) % nodes;
            if (upvm_migrate(tids[i], node) != 0) {
                fprintf(stderr, "commpairs: upvm_migrate(t%x, %d): %s\n", tids[i], node,
                        upvm_migrate_error());
                return 1;
            }
        }
    for (int i = 0; i < n; i++) {
        int role = i >= 2 * pairs ? 0 : i % 2 ? 2 : 1;
        int peer = role == 1 ? tids[i + 1] : role == 2 ? tids[i - 1] : 0;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&role, 1, 1);
        pvm_pkint(&peer, 1, 1);
        pvm_pkdouble(&secs, 1, 1);
        pvm_pklong(&chunk, 1, 1);
        pvm_send(tids[i], TAG_GO);
    }
    double t0 = now_s();
    double lat[256], worst = 0;
    int together = 0;
    for (int k = 0; k < pairs; k++) {
        int tg;
        pvm_recv(-1, TAG_DONE);
        pvm_upkdouble(&lat[k], 1, 1);
        pvm_upkint(&tg, 1, 1);
        together += tg;
        if (lat[k] > worst)
            worst = lat[k];
    }
    double total = 0;
    for (int i = 2 * pairs; i < n; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_send(tids[i], TAG_STOP);
        double c;
        pvm_recv(tids[i], TAG_COUNT);
        pvm_upkdouble(&c, 1, 1);
        total += c;
    }
    double t = now_s() - t0;
    printf("RESULT commpairs place=%s lat_us=%.3f lat_max_us=%.3f together=%d pairs=%d "
           "compute_mchunks_s=%.4f\n",
           explicit ? "explicit" : "split", median(lat, pairs), worst, together, pairs,
           total / t / 1e6);
    pvm_exit();
    return 0;
}
