/*
 * tls_bench.c - what a thread-local variable costs (bench/tls-compare.sh).
 *
 * Built twice from this file: by upvmcc (run as a process-mode ULP: its
 * TLS is general-dynamic, each access a call of UPVM's __tls_get_addr
 * through the PLT) and by the plain compiler as an ordinary executable
 * (-DPLAIN: local-exec, %fs:-offset).  Each measures, per access, a
 * thread-local int reached through a function that is not inlined (so
 * that every access computes the address again: a compiler would keep it
 * in a register inside a loop) against a global int reached the same way:
 * the difference is the TLS access.  The plain build also measures what
 * writing the FS base costs, which giving each ULP its own thread pointer
 * would add to every ULP switch: wrfsbase (where the CPU and the kernel
 * allow it: HWCAP2_FSGSBASE) and arch_prctl(ARCH_SET_FS).  Medians of 21
 * samples, with the 10th and 90th percentiles, in ns.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../bench_stats.h"

#define SAMPLES 21
#define N 2000000

__thread int tls_x;
int global_x;

__attribute__((noipa)) static int *tls_addr(void) { return &tls_x; }
__attribute__((noipa)) static int *global_addr(void) { return &global_x; }

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double per_op(int *(*addr)(void), long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        (*addr())++;
        __asm__ volatile("" ::: "memory");
    }
    return (now_ns() - t0) / (double)n;
}

static void report(const char *what, double *v)
{
    struct stats s = summarize(v, SAMPLES);
    printf("%-34s median %7.2f ns  (p10 %.2f, p90 %.2f)\n", what, s.median, s.p10, s.p90);
}

static void access_costs(const char *mode)
{
    double tls[SAMPLES], glob[SAMPLES], diff[SAMPLES];
    for (int s = 0; s < SAMPLES; s++) {
        tls[s] = per_op(tls_addr, N);
        glob[s] = per_op(global_addr, N);
        diff[s] = tls[s] - glob[s];
    }
    char line[80];
    snprintf(line, sizeof line, "tls access, %s", mode);
    report(line, tls);
    snprintf(line, sizeof line, "global access, %s", mode);
    report(line, glob);
    snprintf(line, sizeof line, "tls minus global, %s", mode);
    report(line, diff);
}

#ifdef PLAIN
#define HWCAP2_FSGSBASE_BIT (1ul << 1)

static void fsbase_costs(void)
{
    double v[SAMPLES];
    uintptr_t fs;
    syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
    if (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE_BIT) {
        for (int s = 0; s < SAMPLES; s++) {
            double t0 = now_ns();
            for (long i = 0; i < N; i++)
                __asm__ volatile("wrfsbase %0" ::"r"(fs) : "memory");
            v[s] = (now_ns() - t0) / N;
        }
        report("wrfsbase (same value)", v);
    } else {
        printf("wrfsbase: not allowed here (no HWCAP2_FSGSBASE)\n");
    }
    for (int s = 0; s < SAMPLES; s++) {
        double t0 = now_ns();
        for (long i = 0; i < N / 20; i++)
            syscall(SYS_arch_prctl, ARCH_SET_FS, fs);
        v[s] = (now_ns() - t0) / (N / 20);
    }
    report("arch_prctl(ARCH_SET_FS)", v);
}
#endif

int main(void)
{
#ifdef PLAIN
    access_costs("plain process, local-exec");
    fsbase_costs();
#else
    access_costs("ULP, general-dynamic");
#endif
    return tls_x == 0;
}
