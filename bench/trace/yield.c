/*
 * yield.c - how fast one node records (bench/trace-compare.sh): two ULPs
 * yield to each other N times; every switch is one SWITCH record when the
 * job is traced.  Built with upvmcc, run with and without UPVM_TRACE_FILE.
 *
 *   yield [N]   (default 10000000)
 * Prints "RESULT yield switches=S ns_per_switch=X".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <upvm.h>

static long rounds;

static void yielder(void *arg)
{
    for (long i = 0; i < rounds; i++)
        upvm_yield();
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 10000000;
    double t0 = now_ns();
    upvm_id_t a = upvm_create(yielder, NULL, NULL), b = upvm_create(yielder, NULL, NULL);
    if (a <= 0 || b <= 0 || upvm_join(a, NULL) != 0 || upvm_join(b, NULL) != 0) {
        fprintf(stderr, "yield: cannot run its ULPs\n");
        return 1;
    }
    double ns = now_ns() - t0;
    long switches = 2 * rounds;
    printf("RESULT yield switches=%ld ns_per_switch=%.2f\n", switches, ns / (double)switches);
    return 0;
}
