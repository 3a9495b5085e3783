/*
 * jacobi_common.h - the Jacobi solver's problem and step, shared by
 * ivy/jacobi.c (shared memory), ../jacobi-pvm.c (PVM messages) and their
 * sequential checks, so all of them do the same roundings.
 */
#ifndef UPVM_BENCH_JACOBI_COMMON_H
#define UPVM_BENCH_JACOBI_COMMON_H

#include "ivy.h"

/* Row i of A and b_i: off-diagonal in [0, 1), a_ii = n (dominant). */
static inline void gen_row(uint64_t seed, long n, long i, double *row, double *bi)
{
    uint64_t s = seed ^ ((uint64_t)i * 0x2545f4914f6cdd1dull);
    for (long j = 0; j < n; j++)
        row[j] = j == i ? (double)n : ivy_unit(&s);
    *bi = ivy_unit(&s) * (double)n;
}

/* xn[lo, hi) from x: one Jacobi step for rows lo..hi-1 (the same code for
 * the workers and the sequential check, so the same roundings; w: the
 * worker, for ivy_poll, or NULL). */
static inline void jacobi_rows(const double *A, const double *b, const double *x, double *xn, long n,
                               long lo, long hi, struct ivy_worker *w)
{
    for (long i = lo; i < hi; i++) {
        ivy_poll(w);
        const double *a = A + i * n;
        double s = b[i];
        for (long j = 0; j < i; j++)
            s -= a[j] * x[j];
        for (long j = i + 1; j < n; j++)
            s -= a[j] * x[j];
        xn[i] = s / a[i];
    }
}

#endif
