/*
 * svmtest.h - what the shared virtual memory tests (the .c files of tests/svm) share:
 * a failed check that says where and ends the whole job (pvm_halt), a seeded
 * pseudo-random generator, shared pointers in PVM messages, and the node's
 * upvm_svm_stats on one line.  Thread-mode PVM programs (UPVM_NODES > 1),
 * each printing OK on success.
 */
#ifndef UPVM_TESTS_SVMTEST_H
#define UPVM_TESTS_SVMTEST_H

#include <inttypes.h>
#include <pvm3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <upvm.h>
#include <upvm_svm.h>

/* Messages carry 64-bit words (shared pointers, cell values): PVM's XDR
 * (PvmDataDefault) packs a long in 32 bits and refuses larger values
 * (PvmOverflow), so every message here is PvmDataRaw. */
#define SVM_ENC PvmDataRaw

/* The test's name, for its lines (each test defines it). */
extern const char *svmtest_name;

static inline void svm_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void svm_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: FAILED: ", svmtest_name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(NULL);
    /* the whole job ends (status 143): a ULP of another node blocked for
     * ever (an await, a spinning helper) must not keep it up */
    (void)pvm_halt();
    exit(1);
}

#define SVM_CHECK(cond, ...)                                                            \
    do {                                                                                \
        if (!(cond))                                                                    \
            svm_fail(__VA_ARGS__);                                                      \
    } while (0)

/* xorshift64*: a seeded sequence, the same on every run with one seed. */
static inline uint64_t svm_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t svm_seed(uint64_t seed, uint64_t stream)
{
    uint64_t s = seed ^ (stream + 1) * 0x9E3779B97F4A7C15ULL;
    return s ? s : 1;
}

/* An unsigned integer from the environment, or dflt. */
static inline unsigned long svm_env_ul(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoul(v, NULL, 0) : dflt;
}

/* pvm_spawn of one task named name on node `node` (by the name pvm_config
 * gives it: node<n> on one host, the host's name across hosts); its tid. */
static inline int svm_spawn_on(const char *name, int node)
{
    char where[256];
    int tid = 0, nhost = 0, narch = 0;
    struct pvmhostinfo *hosts = NULL;
    snprintf(where, sizeof where, "node%d", node);
    if (pvm_config(&nhost, &narch, &hosts) == 0 && node < nhost)
        snprintf(where, sizeof where, "%s", hosts[node].hi_name);
    int n = pvm_spawn((char *)name, NULL, PvmTaskHost, where, 1, &tid);
    SVM_CHECK(n == 1, "pvm_spawn(%s) on %s: %d (tid/error %d)", name, where, n, tid);
    return tid;
}

static inline void svm_pk_ptr(const void *p)
{
    unsigned long v = (unsigned long)(uintptr_t)p;
    SVM_CHECK(pvm_pkulong(&v, 1, 1) == 0, "pvm_pkulong of a pointer");
}

static inline void *svm_upk_ptr(void)
{
    unsigned long v = 0;
    SVM_CHECK(pvm_upkulong(&v, 1, 1) == 0, "pvm_upkulong of a pointer");
    return (void *)(uintptr_t)v;
}

#define SVM_NSTATS 7
static inline void svm_stats_array(const struct upvm_svm_stats *st, unsigned long a[SVM_NSTATS])
{
    a[0] = st->read_faults;
    a[1] = st->write_faults;
    a[2] = st->pages_in;
    a[3] = st->pages_out;
    a[4] = st->invalidations;
    a[5] = st->frames;
    a[6] = st->forwards;
}

/* This node's counters as an array (svm_stats_array's order). */
static inline void svm_my_stats(unsigned long a[SVM_NSTATS])
{
    struct upvm_svm_stats st = {0};
    int rc = upvm_svm_stats(&st);
    SVM_CHECK(rc == 0, "upvm_svm_stats: %d", rc);
    svm_stats_array(&st, a);
}

static inline void svm_print_stats(const char *what, const unsigned long a[SVM_NSTATS])
{
    printf("%s: %s: read_faults=%lu write_faults=%lu pages_in=%lu pages_out=%lu "
           "invalidations=%lu frames=%lu forwards=%lu\n",
           svmtest_name, what, a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
}

#endif
