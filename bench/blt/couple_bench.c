/*
 * couple_bench.c - what coupling costs (thread mode; ULP-PiP's Table V):
 * getpid() alone, getpid() enclosed by upvm_couple()/upvm_decouple() from a
 * ULP (the KCs wait as UPVM_KC_WAIT says: the script runs it with spin,
 * block and the default), and the futex wake-up floor: two plain threads
 * that hand a turn back and forth with FUTEX_WAIT/FUTEX_WAKE (one round
 * trip: two wake-ups, as a blocking couple + decouple needs).
 *
 *   couple_bench [-n ITERS] [-r REPS]
 * Prints "RESULT name median p10 p90" (ns per operation, median of REPS
 * runs of ITERS operations each), run by bench/blt-compare.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#include "../bench_stats.h"

static long iters = 200000;
static int reps = 7;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void report(const char *name, double *v, int n)
{
    struct stats s = summarize(v, n);
    printf("RESULT %-22s %10.1f %10.1f %10.1f\n", name, s.median, s.p10, s.p90);
    fflush(stdout);
}

/* ------------------------------------------------------------ in a ULP */

static double *getpid_ns, *couple_ns;
static int failed;

static void ulp_main(void *arg)
{
    (void)arg;
    volatile pid_t sink;
    for (int i = 0; i < 1000; i++) { /* warm up: the first couple creates the KC */
        if (upvm_couple() != 0) {
            failed = 1;
            return;
        }
        sink = getpid();
        upvm_decouple();
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++)
            sink = getpid();
        double t1 = now_ns();
        /* about as long as the getpid loop, but at most iters / 4 (a
         * blocking couple may take 50 us on a VM) */
        long n = iters / 4;
        if (r > 0 && couple_ns[r - 1] > 0 && (t1 - t0) / couple_ns[r - 1] < (double)n)
            n = (long)((t1 - t0) / couple_ns[r - 1]) + 100;
        for (long i = 0; i < n; i++) {
            upvm_couple();
            sink = getpid();
            upvm_decouple();
        }
        double t2 = now_ns();
        getpid_ns[r] = (t1 - t0) / (double)iters;
        couple_ns[r] = (t2 - t1) / (double)n;
    }
    (void)sink;
}

/* ------------------------------------------------------------ futex floor */

static _Atomic uint32_t turn; /* 0: the main thread's, 1: the partner's */
static long pp_iters;

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)w, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static void wait_turn(uint32_t mine)
{
    uint32_t v;
    while ((v = atomic_load(&turn)) != mine)
        futex(&turn, FUTEX_WAIT, v);
}

static void give_turn(uint32_t other)
{
    atomic_store(&turn, other);
    futex(&turn, FUTEX_WAKE, 1);
}

static void *partner(void *arg)
{
    (void)arg;
    for (long i = 0; i < pp_iters; i++) {
        wait_turn(1);
        give_turn(0);
    }
    return NULL;
}

static double futex_round_trip_ns(long n)
{
    pthread_t t;
    pp_iters = n;
    atomic_store(&turn, 0);
    if (pthread_create(&t, NULL, partner, NULL) != 0)
        return -1;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        give_turn(1);
        wait_turn(0);
    }
    double t1 = now_ns();
    pthread_join(t, NULL);
    return (t1 - t0) / (double)n;
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        switch (opt) {
        case 'n': iters = atol(optarg); break;
        case 'r': reps = atoi(optarg); break;
        default: fprintf(stderr, "usage: %s [-n iters] [-r reps]\n", argv[0]); return 2;
        }
    }
    if (reps < 1 || iters < 4)
        return 2;
    getpid_ns = calloc((size_t)reps, sizeof(double));
    couple_ns = calloc((size_t)reps, sizeof(double));
    double *fx = calloc((size_t)reps, sizeof(double));
    if (!getpid_ns || !couple_ns || !fx)
        return 1;
    if (upvm_create(ulp_main, NULL, NULL) < 0) {
        fprintf(stderr, "couple_bench: upvm_create failed\n");
        return 1;
    }
    upvm_join_all();
    if (failed) {
        fprintf(stderr, "couple_bench: upvm_couple failed\n");
        return 1;
    }
    report("getpid", getpid_ns, reps);
    report("couple+getpid+decouple", couple_ns, reps);
    /* warm up, and the size of a sample: about 20 ms, at most iters / 4 */
    double est = futex_round_trip_ns(1000);
    long m = iters / 4;
    if (est > 0 && 2e7 / est < (double)m)
        m = (long)(2e7 / est) + 100;
    for (int r = 0; r < reps; r++)
        fx[r] = futex_round_trip_ns(m);
    report("futex-round-trip", fx, reps);
    return 0;
}
