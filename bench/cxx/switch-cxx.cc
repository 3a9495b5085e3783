/*
 * switch-cxx.cc - what C++'s per-ULP exception state costs a switch
 * (docs/cxx.md): the 2-ULP upvm_yield of bench_core, in a C++ program, with
 * and without the exception globals saved and restored per ULP.
 *
 *   switch-cxx         no PVM call: nothing registered, switches as in C
 *   switch-cxx pvm     pvm_mytid() first: the C++ runtime is found and the
 *                      block is saved and restored on every switch
 *
 * Build: g++ -O2 -Iinclude bench/cxx/switch-cxx.cc -Lbuild/src -lupvm \
 *            -Wl,-rpath,$PWD/build/src -o build/bench/switch-cxx
 * Run pinned to one core (taskset -c 0); it prints the median of 15 runs
 * of 1,000,000 yields each, in ns per switch.
 */
#include <pvm3.h>
#include <upvm.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

static const long ITERS = 1000000;

static double now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void yielder(int, void *)
{
    for (long i = 0; i < ITERS; i++)
        upvm_yield();
}

int main(int argc, char **argv)
{
    bool pvm = argc > 1 && std::strcmp(argv[1], "pvm") == 0;
    if (pvm && pvm_mytid() < 0)
        return 1;
    try { /* the C++ runtime in use, as in a real program */
        throw std::runtime_error("warm");
    } catch (const std::exception &) {
    }
    std::vector<double> runs;
    for (int r = 0; r < 15; r++) {
        if (upvm_spawn_func(yielder, nullptr, 2, nullptr, nullptr) != 2)
            return 1;
        double t0 = now_ns();
        upvm_join_all();
        runs.push_back((now_ns() - t0) / (2.0 * ITERS));
    }
    std::sort(runs.begin(), runs.end());
    std::printf("2-ULP yield, C++ program, %s: %.2f ns per switch (median of 15; p10 %.2f, "
                "p90 %.2f)\n", pvm ? "exception state per ULP" : "nothing registered", runs[7],
                runs[1], runs[13]);
    if (pvm)
        pvm_exit();
    return 0;
}
