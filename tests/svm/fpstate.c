/*
 * fpstate.c - a ULP that faults on a shared page keeps its vector and
 * floating-point registers (UPVM_NODES=2, thread mode).
 *
 * A fault on a page held elsewhere blocks the ULP inside the signal
 * handler, on its own stack (the kernel's signal frame, XSAVE area
 * included, is copied there), while the node runs its other ULPs, which
 * use the same registers; rt_sigreturn on the copy must give the faulting
 * ULP back every register as it was: the YMM upper halves (AVX2, where
 * the CPU has it), the XMM registers (SSE2), MXCSR.
 *
 * node1 fills an array of 64 pages of doubles with round-dependent values;
 * 3 ULPs on node0 then run vector kernels over it that keep accumulators
 * and constants in registers across every load (each first load of a
 * page faults, and the three ULPs fault on the same pages: one waits for
 * the request another made), each ULP with its own seed, and compare
 * their results bit for bit with the same kernel run over a private copy
 * of the values.  4 rounds; before each, node1 writes the array again
 * (node0's copies are invalidated, so every round faults again).  Prints
 * OK; a failed check prints which kernel, ULP, round, and both results,
 * and halts the job.
 */
#include <errno.h>
#include <immintrin.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>
#include <upvm_svm.h>

#include "svmtest.h"

const char *svmtest_name = "fpstate";

#define NPAGES 64
#define N (NPAGES * UPVM_SVM_PAGE / sizeof(double))
#define ROUNDS 4
#define NWORKERS 3
#define TAG_INIT 110
#define TAG_ROUND 111
#define TAG_RESULT 112

static double value(size_t i, int round)
{
    return (double)((i * 2654435761u + (size_t)round * 40503u) % 1000003u) / 1000003.0;
}

/* SSE2 (the x86-64 baseline): two accumulators and a constant in XMM
 * registers for the whole loop. */
static void kernel_sse2(const double *a, double seed, double out[4])
{
    __m128d acc0 = _mm_set1_pd(seed), acc1 = _mm_set_pd(-seed, seed * 0.5);
    const __m128d k = _mm_set_pd(1.5, -0.75), half = _mm_set1_pd(0.5);
    for (size_t i = 0; i < N; i += 2) {
        __m128d x = _mm_loadu_pd(a + i);
        acc0 = _mm_add_pd(_mm_mul_pd(acc0, half), _mm_mul_pd(x, k));
        acc1 = _mm_add_pd(_mm_mul_pd(acc1, half), _mm_mul_pd(x, acc0));
    }
    _mm_storeu_pd(out, acc0);
    _mm_storeu_pd(out + 2, acc1);
}

/* AVX2: the same in YMM registers (their upper halves live in the XSAVE
 * area's AVX part, which the copied signal frame must keep). */
__attribute__((target("avx2"))) static void kernel_avx2(const double *a, double seed, double out[8])
{
    __m256d acc0 = _mm256_set1_pd(seed), acc1 = _mm256_set_pd(-seed, seed * 0.5, seed * 0.25, 1);
    const __m256d k = _mm256_set_pd(1.5, -0.75, 0.125, -2.0), half = _mm256_set1_pd(0.5);
    for (size_t i = 0; i < N; i += 4) {
        __m256d x = _mm256_loadu_pd(a + i);
        acc0 = _mm256_add_pd(_mm256_mul_pd(acc0, half), _mm256_mul_pd(x, k));
        acc1 = _mm256_add_pd(_mm256_mul_pd(acc1, half), _mm256_mul_pd(x, acc0));
    }
    _mm256_storeu_pd(out, acc0);
    _mm256_storeu_pd(out + 4, acc1);
}

static void compare(const char *kernel, int w, int round, const double *got, const double *want,
                    int n)
{
    if (memcmp(got, want, (size_t)n * sizeof *got) == 0)
        return;
    for (int j = 0; j < n; j++)
        fprintf(stderr, "fpstate: %s lane %d: shared %.17g, private %.17g%s\n", kernel, j, got[j],
                want[j], memcmp(&got[j], &want[j], sizeof *got) ? "  <- differs" : "");
    svm_fail("%s kernel of worker %d (node 0), round %d: its registers changed across a fault "
             "(the results over shared and private memory differ, lanes above)",
             kernel, w, round);
}

static int worker(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int parent = pvm_parent(), w = -1;
    SVM_CHECK(pvm_recv(parent, TAG_INIT) > 0, "worker: the init message");
    const double *shared = svm_upk_ptr();
    SVM_CHECK(pvm_upkint(&w, 1, 1) == 0, "worker: unpack");
    double *priv = malloc(N * sizeof *priv);
    SVM_CHECK(priv != NULL, "worker %d: malloc", w);
    int avx2 = __builtin_cpu_supports("avx2");
    for (int round = 0; round < ROUNDS; round++) {
        SVM_CHECK(pvm_recv(parent, TAG_ROUND) > 0, "worker %d: round %d's message", w, round);
        for (size_t i = 0; i < N; i++)
            priv[i] = value(i, round);
        double seed = 1.0 + w + 0.125 * round, got[8], want[8];
        /* the ULPs of the node start at different pages' worth of work:
         * worker w first runs the kernels over the shared array, faulting */
        kernel_sse2(shared, seed, got);
        kernel_sse2(priv, seed, want);
        compare("SSE2", w, round, got, want, 4);
        if (avx2) {
            kernel_avx2(shared, seed, got);
            kernel_avx2(priv, seed, want);
            compare("AVX2", w, round, got, want, 8);
        }
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_pkint(&w, 1, 1) == 0 &&
                      pvm_send(parent, TAG_RESULT) == 0,
                  "worker %d: the result", w);
    }
    free(priv);
    return 0;
}
UPVM_TASK("fpworker", worker)

/* On node1: fill the array with round r's values when asked. */
static int filler(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int parent = pvm_parent();
    SVM_CHECK(pvm_recv(parent, TAG_INIT) > 0, "filler: the init message");
    volatile double *a = svm_upk_ptr();
    for (int round = 0; round < ROUNDS; round++) {
        SVM_CHECK(pvm_recv(parent, TAG_ROUND) > 0, "filler: round %d's message", round);
        for (size_t i = 0; i < N; i++)
            a[i] = value(i, round);
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_send(parent, TAG_RESULT) == 0,
                  "filler: done");
    }
    return 0;
}
UPVM_TASK("fpfiller", filler)

static void send_empty(int tid, int tag)
{
    SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_send(tid, tag) == 0, "send to t%x", tid);
}

int main(void)
{
    SVM_CHECK(pvm_mytid() > 0, "pvm_mytid (the job's nodes start here)");
    SVM_CHECK(upvm_nodes() == 2, "this test needs UPVM_NODES=2 (the job has %d nodes)",
              upvm_nodes());
    double *a = upvm_svm_alloc(N * sizeof *a);
    SVM_CHECK(a != NULL, "upvm_svm_alloc: errno %d", errno);
    int filler_tid = svm_spawn_on("fpfiller", 1), tids[NWORKERS];
    SVM_CHECK(pvm_initsend(SVM_ENC) > 0, "pvm_initsend");
    svm_pk_ptr(a);
    SVM_CHECK(pvm_send(filler_tid, TAG_INIT) == 0, "init the filler");
    for (int w = 0; w < NWORKERS; w++) {
        tids[w] = svm_spawn_on("fpworker", 0);
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0, "pvm_initsend");
        svm_pk_ptr(a);
        SVM_CHECK(pvm_pkint(&w, 1, 1) == 0 && pvm_send(tids[w], TAG_INIT) == 0,
                  "init worker %d", w);
    }
    printf("fpstate: %d ULPs on node 0, %d pages from node 1, %d rounds, kernels SSE2%s\n",
           NWORKERS, NPAGES, ROUNDS, __builtin_cpu_supports("avx2") ? " and AVX2" : "");
    for (int round = 0; round < ROUNDS; round++) {
        send_empty(filler_tid, TAG_ROUND);
        SVM_CHECK(pvm_recv(filler_tid, TAG_RESULT) > 0, "the filler's round %d", round);
        for (int w = 0; w < NWORKERS; w++)
            send_empty(tids[w], TAG_ROUND);
        for (int w = 0; w < NWORKERS; w++)
            SVM_CHECK(pvm_recv(-1, TAG_RESULT) > 0, "a worker's round %d", round);
    }
    unsigned long st[SVM_NSTATS];
    svm_my_stats(st);
    svm_print_stats("node 0's svm stats", st);
    SVM_CHECK(st[0] + st[1] >= ROUNDS, "node 0 faulted %lu times in %d rounds: the kernels did "
                                       "not run on remote pages",
              st[0] + st[1], ROUNDS);
    printf("OK\n");
    return 0;
}
