/*
 * check.h - assertions for UPVM's tests.  Each prints the expression, both
 * values and where, then aborts: a failed check is never silent and never
 * compiled out (NDEBUG does not touch it).
 */
#ifndef UPVM_TESTS_CHECK_H
#define UPVM_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__,  \
                    #cond);                                                    \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define CHECK_EQ(a, b)                                                         \
    do {                                                                       \
        long long va_ = (long long)(a), vb_ = (long long)(b);                  \
        if (va_ != vb_) {                                                      \
            fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n",  \
                    __FILE__, __LINE__, #a, #b, va_, vb_);                     \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                        \
    do {                                                                       \
        const char *h_ = (hay), *n_ = (needle);                                \
        if (!h_ || !strstr(h_, n_)) {                                          \
            fprintf(stderr, "%s:%d: expected to find \"%s\" in:\n%s\n",        \
                    __FILE__, __LINE__, n_, h_ ? h_ : "(null)");               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* A registry of named cases in one file: RUN(name) runs the static void
 * function test_<name>(void) and prints its name, so a failure says which. */
#define RUN(name)                                                              \
    do {                                                                       \
        fprintf(stderr, "-- %s\n", #name);                                     \
        test_##name();                                                         \
    } while (0)

#endif
