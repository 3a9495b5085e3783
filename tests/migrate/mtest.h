/*
 * mtest.h - helpers shared by the migration tests' programs (built with
 * upvmcc, run by test-migrate.sh).  A failed check prints one line naming
 * the task, its node, the source line and both values, and is counted:
 * the program goes on where it can (so that one failure does not hide the
 * others behind a hang) and its exit status says whether any failed.
 */
#ifndef UPVM_TESTS_MTEST_H
#define UPVM_TESTS_MTEST_H

#include <pvm3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>

static int mt_failures;
static const char *mt_role = "?";

__attribute__((format(printf, 3, 4), unused)) static void mt_fail(const char *file, int line,
                                                                  const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("FAIL %s (t%x on node %d) %s:%d: %s\n", mt_role, pvm_mytid(), upvm_node_of(0), file,
           line, msg);
    fflush(stdout);
    mt_failures++;
}

#define MT_FAIL(...) mt_fail(__FILE__, __LINE__, __VA_ARGS__)

#define MT_CHECK(cond)                                                                    \
    do {                                                                                  \
        if (!(cond))                                                                      \
            MT_FAIL("CHECK(%s)", #cond);                                                  \
    } while (0)

#define MT_CHECK_EQ(a, b)                                                                 \
    do {                                                                                  \
        long long va_ = (long long)(a), vb_ = (long long)(b);                             \
        if (va_ != vb_)                                                                   \
            MT_FAIL("CHECK_EQ(%s, %s): %lld (0x%llx) != %lld (0x%llx)", #a, #b, va_,      \
                    (unsigned long long)va_, vb_, (unsigned long long)vb_);               \
    } while (0)

#define MT_CHECK_STR(a, b)                                                                \
    do {                                                                                  \
        const char *sa_ = (a), *sb_ = (b);                                                \
        if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0)                                        \
            MT_FAIL("CHECK_STR(%s, %s): \"%s\" != \"%s\"", #a, #b, sa_ ? sa_ : "(null)",  \
                    sb_ ? sb_ : "(null)");                                                \
    } while (0)

#define MT_CHECK_CONTAINS(hay, needle)                                                    \
    do {                                                                                  \
        const char *h_ = (hay), *n_ = (needle);                                           \
        if (!h_ || !strstr(h_, n_))                                                       \
            MT_FAIL("expected \"%s\" in \"%s\"", n_, h_ ? h_ : "(null)");                 \
    } while (0)

/* splitmix64: deterministic data and choices. */
static inline uint64_t mt_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A seeded generator (one per task). */
struct mt_rng {
    uint64_t s;
};
static inline uint64_t mt_next(struct mt_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return mt_mix(r->s);
}
static inline int mt_below(struct mt_rng *r, int n)
{
    return (int)(mt_next(r) % (uint64_t)n);
}

/* FNV-1a over bytes. */
static inline uint64_t mt_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    if (!h)
        h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

/* A well-formed env count, or dflt. */
__attribute__((unused)) static int mt_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 1000000 ? dflt : (int)x;
}

/* Send / receive small int vectors (default encoding). */
__attribute__((unused)) static int mt_send_ints(int tid, int tag, const int *v, int n)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint((int *)v, n, 1);
    return pvm_send(tid, tag);
}

__attribute__((unused)) static int mt_recv_ints(int tid, int tag, int *v, int n)
{
    int bid = pvm_recv(tid, tag);
    if (bid < 0)
        return bid;
    return pvm_upkint(v, n, 1);
}

#endif
