/*
 * bench_stats.h - the statistics every in-process benchmark prints: the
 * median of its samples, with the 10th and 90th percentiles.
 */
#ifndef UPVM_BENCH_STATS_H
#define UPVM_BENCH_STATS_H

#include <stdlib.h>

struct stats {
    double median, p10, p90;
};

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v (n >= 1 samples). */
static inline struct stats summarize(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    struct stats s = {v[n / 2], v[n / 10], v[(n * 9) / 10]};
    if (n % 2 == 0)
        s.median = (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

#endif
