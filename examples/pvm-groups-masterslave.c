/*
 * pvm-groups-masterslave.c - a PVM master/slave program built on dynamic
 * groups: the master and its slaves join one group, synchronise with a
 * barrier, the master broadcasts the problem size and scatters a vector,
 * every member computes the sum of squares and the largest element of
 * its part, reduce combines them at the master (PvmSum, PvmMax), gather
 * brings each member's partial sum back, and everyone leaves the group.
 * The master checks the results against the closed form and exits with
 * status 1 if anything is wrong.
 *
 * It is an ordinary PVM program: under UPVM the slaves are ULPs of this
 * process (registered with UPVM_TASK below); with genuine PVM it spawns
 * copies of its executable (put it where PVM_PATH finds it, link with
 * -lgpvm3 -lpvm3) and prints the same results.
 *
 * Usage: pvm-groups-masterslave [nslaves]     (default 4)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pvm3.h>
#if defined(__has_include)
#if __has_include(<upvm.h>)
#include <upvm.h>
#endif
#endif

#define PROGRAM "pvm-groups-masterslave"
#define GROUP   "masterslave"
#define CHUNK   25 /* vector items per member */
#define MAXMEMBERS 64

enum { TAG_PARAMS = 1, TAG_SCATTER, TAG_SUM, TAG_MAX, TAG_GATHER };

/* The part each member gets: sum of squares and largest item. */
static void work(const int *part, int n, double *sumsq, int *max)
{
    *sumsq = 0;
    *max = part[0];
    for (int i = 0; i < n; i++) {
        *sumsq += (double)part[i] * part[i];
        if (part[i] > *max)
            *max = part[i];
    }
}

/* What every member does once the group is complete.  The master
 * (instance 0) passes the whole vector and gets the results back;
 * reduce may overwrite its operands, so they are copies. */
static int compute(int inst, const int *vector, double *total, int *max, double *partials)
{
    int chunk, part[CHUNK], rc;
    if (inst == 0) {
        chunk = CHUNK;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&chunk, 1, 1);
        if ((rc = pvm_bcast(GROUP, TAG_PARAMS)) < 0)
            return rc;
    } else {
        if ((rc = pvm_recv(-1, TAG_PARAMS)) < 0)
            return rc;
        pvm_upkint(&chunk, 1, 1);
    }
    if ((rc = pvm_scatter(part, (void *)vector, chunk, PVM_INT, TAG_SCATTER, GROUP, 0)) < 0)
        return rc;
    double sumsq;
    int mymax;
    work(part, chunk, &sumsq, &mymax);
    double mine = sumsq;
    if ((rc = pvm_reduce(PvmSum, &sumsq, 1, PVM_DOUBLE, TAG_SUM, GROUP, 0)) < 0 ||
        (rc = pvm_reduce(PvmMax, &mymax, 1, PVM_INT, TAG_MAX, GROUP, 0)) < 0 ||
        (rc = pvm_gather(partials, &mine, 1, PVM_DOUBLE, TAG_GATHER, GROUP, 0)) < 0)
        return rc;
    *total = sumsq;
    *max = mymax;
    return 0;
}

static int slave(void)
{
    int inst = pvm_joingroup(GROUP);
    int members = 0;
    if (inst < 0)
        return 1;
    /* the master tells us the group's size: wait for all to have joined */
    pvm_recv(pvm_parent(), TAG_PARAMS);
    pvm_upkint(&members, 1, 1);
    if (pvm_barrier(GROUP, members) < 0)
        return 1;
    double total, partials[1];
    int max;
    int rc = compute(inst, NULL, &total, &max, partials);
    pvm_barrier(GROUP, -1); /* everyone is done before anyone leaves */
    pvm_lvgroup(GROUP);
    pvm_exit();
    return rc < 0;
}

static int master(int nslaves)
{
    int tids[MAXMEMBERS], vector[MAXMEMBERS * CHUNK];
    double partials[MAXMEMBERS], total = 0;
    int members = nslaves + 1, max = 0;
    printf("master t%x: %d slaves, group \"%s\"\n", (unsigned)pvm_mytid(), nslaves, GROUP);
    if (pvm_joingroup(GROUP) != 0)
        return 1;
    char *args[] = {"slave", NULL};
    int started = pvm_spawn(PROGRAM, args, PvmTaskDefault, "", nslaves, tids);
    if (started != nslaves) {
        fprintf(stderr, "master: started %d of %d slaves\n", started, nslaves);
        return 1;
    }
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&members, 1, 1);
    pvm_mcast(tids, nslaves, TAG_PARAMS);
    if (pvm_barrier(GROUP, members) < 0)
        return 1;
    printf("group complete: gsize %d, instance 1 is t%x\n", pvm_gsize(GROUP),
           (unsigned)pvm_gettid(GROUP, 1));

    int n = members * CHUNK;
    for (int i = 0; i < n; i++)
        vector[i] = i + 1;
    int rc = compute(0, vector, &total, &max, partials);
    pvm_barrier(GROUP, -1);
    pvm_lvgroup(GROUP);
    if (rc < 0) {
        fprintf(stderr, "master: a collective failed: %d\n", rc);
        return 1;
    }

    /* check: sum of i^2 for i = 1..n, the largest item, the partials */
    double want = (double)n * (n + 1) * (2.0 * n + 1) / 6, sum = 0;
    for (int i = 0; i < members; i++) {
        int lo = i * CHUNK + 1, hi = lo + CHUNK - 1;
        double part = ((double)hi * (hi + 1) * (2.0 * hi + 1) -
                       (double)(lo - 1) * lo * (2.0 * lo - 1)) / 6;
        printf("  instance %d: items %4d..%4d, sum of squares %10.0f%s\n", i, lo, hi,
               partials[i], partials[i] == part ? "" : "  WRONG");
        sum += partials[i];
        if (partials[i] != part)
            return 1;
    }
    printf("reduce: sum of squares 1..%d = %.0f (expected %.0f), max = %d\n", n, total,
           want, max);
    int ok = total == want && sum == want && max == n;
    printf("%s\n", ok ? "results OK" : "results WRONG");
    pvm_exit();
    return ok ? 0 : 1;
}

static int task_main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "slave") == 0)
        return slave();
    int nslaves = argc > 1 ? atoi(argv[1]) : 4;
    if (nslaves < 1 || nslaves >= MAXMEMBERS) {
        fprintf(stderr, "usage: %s [nslaves < %d]\n", argv[0], MAXMEMBERS);
        return 2;
    }
    return master(nslaves);
}

#ifdef UPVM_TASK
/* UPVM's thread mode: pvm_spawn(PROGRAM) runs task_main as a new ULP. */
UPVM_TASK(PROGRAM, task_main)
#endif

int main(int argc, char **argv)
{
    return task_main(argc, argv);
}
