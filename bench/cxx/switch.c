/*
 * switch.c - what C++'s per-ULP exception state costs a switch
 * (docs/cxx.md): the 2-ULP upvm_yield loop of bench_core, built twice from
 * this one source, as C and as C++.  In the C++ build libstdc++ is in the
 * process, so libupvm saves and restores the exception globals on every
 * switch; in the C build nothing is registered.
 *
 *   gcc -O2 -Iinclude bench/cxx/switch.c -Lbuild/src -lupvm \
 *       -Wl,-rpath,$PWD/build/src -o switch-c
 *   g++ -O2 -x c++ -Iinclude bench/cxx/switch.c -x none -Lbuild/src -lupvm \
 *       -Wl,-rpath,$PWD/build/src -o switch-cxx
 *   taskset -c 0 ./switch-c; taskset -c 0 ./switch-cxx
 *
 * Each prints the median (min, p10, p90) of 15 runs of 1,000,000 yields per ULP,
 * in ns per switch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <upvm.h>
#ifdef __cplusplus
#include <stdexcept>
#endif

#define ITERS 1000000L
#define RUNS 15

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void yielder(int ordinal, void *arg)
{
    (void)ordinal;
    (void)arg;
    for (long i = 0; i < ITERS; i++)
        upvm_yield();
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
#ifdef __cplusplus
    try { /* the C++ runtime in use, as in a real program */
        throw std::runtime_error("warm");
    } catch (const std::exception &) {
    }
    const char *lang = "C++ (exception state per ULP)";
#else
    const char *lang = "C (nothing registered)";
#endif
    double runs[RUNS];
    for (int r = 0; r < RUNS; r++) {
        if (upvm_spawn_func(yielder, NULL, 2, NULL, NULL) != 2)
            return 1;
        double t0 = now_ns();
        upvm_join_all();
        runs[r] = (now_ns() - t0) / (2.0 * ITERS);
    }
    qsort(runs, RUNS, sizeof runs[0], by_value);
    printf("2-ULP yield, %s: %.2f ns per switch (median of %d; min %.2f, p10 %.2f, p90 %.2f)\n",
           lang, runs[RUNS / 2], RUNS, runs[0], runs[1], runs[RUNS - 2]);
    return 0;
}
