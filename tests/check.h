/*
 * check.h - the assertions of UPVM's tests (the runner is harness.h, which
 * includes this).  Each prints where, the expression and the values, then
 * ends the process with status 1: a failed check is never silent and never
 * compiled out (NDEBUG does not touch it).  Under the harness a case runs
 * in its own process, so ending it fails that case and no other.
 *
 *   CHECK(cond)                  ASSERT(cond) is the same
 *   CHECK_EQ(a, b)               as integers (long long); ASSERT_EQ
 *   CHECK_STR_CONTAINS(hay, s)   hay (may be NULL) contains s
 *   CHECK_MEM_EQ(a, b, n)        n bytes; both shown in hex; ASSERT_MEM_EQ
 *   CHECK_OK(call)               call returns 0 (PvmOk); ASSERT_OK
 *   FAIL(fmt, ...)               fails with a message of its own
 *   SKIP(fmt, ...)               ends the case as skipped (TAP "# SKIP"):
 *                                for what this machine cannot check
 */
#ifndef UPVM_TESTS_CHECK_H
#define UPVM_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The status a skipped case ends with (ctest's and automake's "skipped"). */
#define CHECK_SKIP_STATUS 77

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                        \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        exit(1);                                                               \
    } while (0)

#define SKIP(...)                                                              \
    do {                                                                       \
        fflush(stdout);                                                        \
        fprintf(stderr, "skipped: ");                                          \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        exit(CHECK_SKIP_STATUS);                                               \
    } while (0)

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            FAIL("CHECK(%s) failed", #cond);                                   \
    } while (0)

#define CHECK_EQ(a, b)                                                         \
    do {                                                                       \
        long long va_ = (long long)(a), vb_ = (long long)(b);                  \
        if (va_ != vb_)                                                        \
            FAIL("CHECK_EQ(%s, %s) failed: %lld (0x%llx) != %lld (0x%llx)", #a, \
                 #b, va_, (unsigned long long)va_, vb_, (unsigned long long)vb_); \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                        \
    do {                                                                       \
        const char *h_ = (hay), *n_ = (needle);                                \
        if (!h_ || !strstr(h_, n_))                                            \
            FAIL("expected to find \"%s\" in:\n%s", n_, h_ ? h_ : "(null)");   \
    } while (0)

static inline void check_hex(const char *what, const void *p, size_t n)
{
    const unsigned char *c = p;
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%02x", i % 4 ? "" : " ", c[i]);
    fprintf(stderr, "\n");
}

#define CHECK_MEM_EQ(a, b, n)                                                  \
    do {                                                                       \
        size_t n_ = (n);                                                       \
        if (memcmp((a), (b), n_) != 0) {                                       \
            check_hex(#a, (a), n_);                                            \
            check_hex(#b, (b), n_);                                            \
            FAIL("%s and %s differ (%zu bytes)", #a, #b, n_);                  \
        }                                                                      \
    } while (0)

/* A call that must succeed: 0 is success (PvmOk, and most of our calls). */
#define CHECK_OK(call) CHECK_EQ((call), 0)

/* The names the msg tests were written with. */
#define ASSERT(cond) CHECK(cond)
#define ASSERT_EQ(a, b) CHECK_EQ(a, b)
#define ASSERT_MEM_EQ(a, b, n) CHECK_MEM_EQ(a, b, n)
#define ASSERT_OK(call) CHECK_OK(call)

#endif
