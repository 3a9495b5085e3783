/*
 * hosts-loop.c - a job over several hosts, for tests/hosts (built with
 * upvmcc; run as mpirun ... -np K hosts-loop): the master (node 0) spawns
 * one task on every other node (PvmTaskHost with pvm_config's names), each
 * task answers with its host name (gethostname), and the master exchanges
 * messages of SIZE bytes with every task, round after round.  After the
 * first round it prints, on one line,
 *
 *     hosts-loop: 2 nodes exchanging: node0=upvmhost1 node1=upvmhost2
 *
 * and at the end "hosts-loop: done: R rounds, B bytes each way".
 *
 *   hosts-loop [-n ROUNDS] [-s SIZE] [-t SECS]
 *
 * -n 0: no round limit (until killed, or until -t).  -t SECS: stop after
 * SECS seconds, exit status 3 (a run meant to be killed that was not).
 * Exit 0 when the rounds are done, 1 on a PVM error, 2 for a usage error.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_HOST 1
#define TAG_DATA 2
#define TAG_END  3
#define MAXT     64

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int child(int parent)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(name);
    pvm_send(parent, TAG_HOST);
    char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        int bufid = pvm_recv(parent, -1), len, tag, src;
        if (bufid < 0 || pvm_bufinfo(bufid, &len, &tag, &src) < 0)
            return 1;
        if (tag == TAG_END)
            break;
        if ((size_t)len > cap && !(buf = realloc(buf, cap = (size_t)len)))
            return 1;
        pvm_upkbyte(buf, len, 1);
        pvm_initsend(PvmDataRaw);
        pvm_pkbyte(buf, len, 1);
        pvm_send(parent, TAG_DATA);
    }
    free(buf);
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    long rounds = 10, size = 1000;
    double secs = 0;
    int c;
    while ((c = getopt(argc, argv, "n:s:t:")) != -1) {
        switch (c) {
        case 'n': rounds = atol(optarg); break;
        case 's': size = atol(optarg); break;
        case 't': secs = atof(optarg); break;
        default:
            fprintf(stderr, "usage: hosts-loop [-n ROUNDS] [-s SIZE] [-t SECS]\n");
            return 2;
        }
    }
    if (pvm_mytid() < 0)
        return 1;
    int parent = pvm_parent();
    if (parent > 0)
        return child(parent);

    int nhost, narch;
    struct pvmhostinfo *hosts;
    if (pvm_config(&nhost, &narch, &hosts) < 0 || nhost < 2 || nhost > MAXT) {
        fprintf(stderr, "hosts-loop: needs 2 to %d nodes\n", MAXT);
        return 1;
    }
    int n = nhost - 1, tids[MAXT];
    char names[MAXT][256];
    gethostname(names[0], sizeof names[0] - 1);
    for (int i = 0; i < n; i++) {
        if (pvm_spawn(argv[0], NULL, PvmTaskHost, hosts[i + 1].hi_name, 1, &tids[i]) != 1) {
            fprintf(stderr, "hosts-loop: cannot spawn on %s\n", hosts[i + 1].hi_name);
            return 1;
        }
    }
    for (int i = 0; i < n; i++) {
        if (pvm_recv(tids[i], TAG_HOST) < 0)
            return 1;
        pvm_upkstr(names[i + 1]);
    }
    char *buf = calloc(1, size > 0 ? (size_t)size : 1);
    if (!buf)
        return 1;
    double end = secs > 0 ? now() + secs : 0;
    long r;
    int timed_out = 0;
    for (r = 0; rounds == 0 || r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            pvm_initsend(PvmDataRaw);
            pvm_pkbyte(buf, (int)size, 1);
            pvm_send(tids[i], TAG_DATA);
        }
        for (int i = 0; i < n; i++) {
            if (pvm_recv(tids[i], TAG_DATA) < 0)
                return 1;
            pvm_upkbyte(buf, (int)size, 1);
        }
        if (r == 0) {
            printf("hosts-loop: %d nodes exchanging:", nhost);
            for (int i = 0; i <= n; i++)
                printf(" node%d=%s", i, names[i]);
            printf("\n");
            fflush(stdout);
        }
        if (end && now() > end) {
            timed_out = 1;
            r++;
            break;
        }
    }
    pvm_initsend(PvmDataDefault);
    pvm_mcast(tids, n, TAG_END);
    printf("hosts-loop: done: %ld rounds, %ld bytes each way%s\n", r, r * size * n,
           timed_out ? " (time is up)" : "");
    free(buf);
    pvm_exit();
    return timed_out ? 3 : 0;
}
