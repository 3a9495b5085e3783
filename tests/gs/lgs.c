/*
 * lgs.c - an over-decomposed iterative solver in the manner of the UPVM
 * paper's LGS: V virtual processors (process-mode tasks) on a ring, each
 * iteration a compute phase then an exchange with both neighbours; the
 * result depends on nothing but the arguments, wherever the VPs run.
 *
 *   lgs [-v VPS] [-i ITERS] [-w WORK] [-s SKEW] [-b] [-f]
 *     VPS    virtual processors (default 16)
 *     ITERS  iterations (default 50)
 *     WORK   inner loop steps per VP and iteration (default 200000)
 *     SKEW   0: every VP the same work; 1: VP i does WORK * w(i), w
 *            drawn from a fixed skewed table (some VPs up to 4x); 2: the
 *            even VPs do 3x the work of the odd ones (placed in turn on
 *            2 nodes, all the heavy ones land on one node)
 *     -b     a barrier over all VPs each iteration too (pvm_barrier)
 *     -f     VP 0 holds a file open all along (it cannot migrate)
 * Prints "lgs V VPs I iterations: checksum C" (C: the VPs' final values
 * combined, exact) and "time S s" (the master's wall time from the first
 * spawn to the last result).
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

enum { TAG_GO = 1, TAG_HALO, TAG_DONE };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The work of VP i relative to the others (skew > 0): a fixed table. */
static double weight(int i, int skew)
{
    static const double table[] = {4.0, 1.0, 1.0, 2.5, 1.0, 0.5, 1.0, 3.0,
                                   1.0, 0.5, 2.0, 1.0, 1.5, 1.0, 0.5, 1.0};
    if (skew == 2)
        return i % 2 == 0 ? 3.0 : 1.0;
    return skew ? table[i % 16] : 1.0;
}

static double compute(double x, long steps)
{
    for (long k = 0; k < steps; k++)
        x = x * 0.999999 + 1e-7 * (double)(k & 7);
    return x;
}

static void vp(int parent)
{
    int me, v, iters, skew, barrier, hold;
    long work;
    int ring[1024];
    pvm_recv(parent, TAG_GO);
    pvm_upkint(&me, 1, 1);
    pvm_upkint(&v, 1, 1);
    pvm_upkint(&iters, 1, 1);
    pvm_upklong(&work, 1, 1);
    pvm_upkint(&skew, 1, 1);
    pvm_upkint(&barrier, 1, 1);
    pvm_upkint(&hold, 1, 1);
    pvm_upkint(ring, v, 1);
    FILE *held = hold && me == 0 ? fopen("/dev/null", "r") : NULL;
    if (barrier)
        pvm_joingroup("lgs");
    int left = ring[(me + v - 1) % v], right = ring[(me + 1) % v];
    double x = 1.0 + me, steps = (double)work * weight(me, skew);
    for (int it = 0; it < iters; it++) {
        x = compute(x, (long)steps);
        pvm_initsend(PvmDataDefault);
        pvm_pkdouble(&x, 1, 1);
        pvm_send(left, TAG_HALO);
        pvm_send(right, TAG_HALO);
        double a, b;
        pvm_recv(left, TAG_HALO);
        pvm_upkdouble(&a, 1, 1);
        pvm_recv(right, TAG_HALO);
        pvm_upkdouble(&b, 1, 1);
        x = (a + x + b) / 3.0 + 0.001 * it;
        if (barrier)
            pvm_barrier("lgs", v);
    }
    if (barrier)
        pvm_lvgroup("lgs");
    if (held)
        fclose(held);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    pvm_pkdouble(&x, 1, 1);
    pvm_send(parent, TAG_DONE);
}

int main(int argc, char **argv)
{
    pvm_mytid();
    if (argc > 1 && !strcmp(argv[1], "-vp")) {
        vp(pvm_parent());
        pvm_exit();
        return 0;
    }
    int v = 16, iters = 50, skew = 0, barrier = 0, hold = 0, opt;
    long work = 200000;
    while ((opt = getopt(argc, argv, "v:i:w:s:bf")) != -1) {
        switch (opt) {
        case 'v': v = atoi(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'w': work = atol(optarg); break;
        case 's': skew = atoi(optarg); break;
        case 'b': barrier = 1; break;
        case 'f': hold = 1; break;
        default:
            fprintf(stderr, "usage: lgs [-v VPS] [-i ITERS] [-w WORK] [-s SKEW] [-b] [-f]\n");
            return 2;
        }
    }
    if (v < 2 || v > 1024)
        return 2;
    int *tids = calloc((size_t)v, sizeof *tids);
    double t0 = now_s();
    if (pvm_spawn(argv[0], (char *[]){"-vp", NULL}, PvmTaskDefault, "", v, tids) != v) {
        fprintf(stderr, "lgs: cannot spawn %d VPs\n", v);
        return 1;
    }
    for (int i = 0; i < v; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&i, 1, 1);
        pvm_pkint(&v, 1, 1);
        pvm_pkint(&iters, 1, 1);
        pvm_pklong(&work, 1, 1);
        pvm_pkint(&skew, 1, 1);
        pvm_pkint(&barrier, 1, 1);
        pvm_pkint(&hold, 1, 1);
        pvm_pkint(tids, v, 1);
        pvm_send(tids[i], TAG_GO);
    }
    double *x = calloc((size_t)v, sizeof *x);
    for (int k = 0; k < v; k++) {
        int me;
        double val;
        pvm_recv(-1, TAG_DONE);
        pvm_upkint(&me, 1, 1);
        pvm_upkdouble(&val, 1, 1);
        if (me >= 0 && me < v)
            x[me] = val;
    }
    double t = now_s() - t0;
    unsigned long long sum = 0;
    for (int i = 0; i < v; i++) {
        unsigned long long bits;
        memcpy(&bits, &x[i], sizeof bits);
        sum = sum * 1000003u + bits;
    }
    printf("lgs %d VPs %d iterations: checksum %llx\n", v, iters, sum);
    printf("time %.3f s\n", t);
    free(x);
    free(tids);
    pvm_exit();
    return 0;
}
