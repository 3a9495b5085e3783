/*
 * msgtest.h - a small test runner for the msg layer's tests.
 *
 * A test file defines tests with TEST(name) { ... } and ends with
 * MSGTEST_MAIN().  The executable then
 *   (no args)     runs every test, each in its own child process with a
 *                 time limit, and prints TAP ("ok 3 - name");
 *   --list        prints the test names;
 *   NAME...       runs just those (still each in a child);
 *   --inproc ...  runs in this process (for a debugger).
 * Every test must end with as many message handles and data blocks alive
 * as it started with: the runner checks msg_get_stats() and fails the test
 * otherwise.  Assertions print the expression and both values.
 */
#ifndef UPVM_TESTS_MSGTEST_H
#define UPVM_TESTS_MSGTEST_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msg/msg.h"

#define MSGTEST_MAX     128
#define MSGTEST_TIMEOUT 60 /* seconds per test */

struct msgtest {
    const char *name;
    void (*fn)(void);
};
static struct msgtest msgtests[MSGTEST_MAX];
static int msgtest_count;

static inline void msgtest_register(const char *name, void (*fn)(void))
{
    if (msgtest_count == MSGTEST_MAX) {
        fprintf(stderr, "msgtest: more than %d tests\n", MSGTEST_MAX);
        exit(2);
    }
    msgtests[msgtest_count].name = name;
    msgtests[msgtest_count].fn = fn;
    msgtest_count++;
}

#define TEST(name)                                                         \
    static void test_##name(void);                                         \
    __attribute__((constructor)) static void msgtest_reg_##name(void)      \
    {                                                                      \
        msgtest_register(#name, test_##name);                              \
    }                                                                      \
    static void test_##name(void)

#define FAIL(...)                                                          \
    do {                                                                   \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                    \
        fprintf(stderr, __VA_ARGS__);                                      \
        fprintf(stderr, "\n");                                             \
        exit(1);                                                           \
    } while (0)

#define ASSERT(cond)                                                       \
    do {                                                                   \
        if (!(cond))                                                       \
            FAIL("assertion failed: %s", #cond);                           \
    } while (0)

#define ASSERT_EQ(a, b)                                                    \
    do {                                                                   \
        long long a_ = (long long)(a), b_ = (long long)(b);                \
        if (a_ != b_)                                                      \
            FAIL("%s == %s: %lld (0x%llx) != %lld (0x%llx)", #a, #b, a_,   \
                 (unsigned long long)a_, b_, (unsigned long long)b_);      \
    } while (0)

/* The status of a call that must succeed. */
#define ASSERT_OK(call) ASSERT_EQ((call), PvmOk)

static inline void msgtest_hex(const char *what, const void *p, size_t n)
{
    const unsigned char *c = p;
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%02x", i % 4 ? "" : " ", c[i]);
    fprintf(stderr, "\n");
}

#define ASSERT_MEM_EQ(a, b, n)                                             \
    do {                                                                   \
        size_t n_ = (n);                                                   \
        if (memcmp((a), (b), n_) != 0) {                                   \
            msgtest_hex(#a, (a), n_);                                      \
            msgtest_hex(#b, (b), n_);                                      \
            FAIL("%s and %s differ (%zu bytes)", #a, #b, n_);              \
        }                                                                  \
    } while (0)

/* The serialised data bytes of b (after the header) must be exactly the
 * n bytes at expect. */
#define ASSERT_DATA(b, expect, n)                                          \
    do {                                                                   \
        unsigned char w_[4096];                                            \
        size_t wl_;                                                        \
        ASSERT_OK(msg_buf_serialize((b), w_, sizeof(w_), &wl_));           \
        ASSERT_EQ(wl_, MSG_WIRE_HDR + (size_t)(n));                        \
        ASSERT_MEM_EQ(w_ + MSG_WIRE_HDR, (expect), (size_t)(n));           \
    } while (0)

static inline void msgtest_run_one(const struct msgtest *t)
{
    msg_stats_t before, after;

    msg_get_stats(&before);
    t->fn();
    msg_get_stats(&after);
    if (after.bufs != before.bufs || after.datas != before.datas)
        FAIL("%s leaked: handles %ld -> %ld, data blocks %ld -> %ld",
             t->name, before.bufs, after.bufs, before.datas, after.datas);
}

/* Run t in a child; 0 when it passed. */
static inline int msgtest_fork(const struct msgtest *t)
{
    int status;
    pid_t pid = fork();

    if (pid < 0) {
        perror("msgtest: fork");
        return 1;
    }
    if (pid == 0) {
        alarm(MSGTEST_TIMEOUT);
        msgtest_run_one(t);
        msg_pool_trim();
        exit(0);
    }
    if (waitpid(pid, &status, 0) < 0) {
        perror("msgtest: waitpid");
        return 1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFSIGNALED(status))
        fprintf(stderr, "%s: killed by signal %d%s\n", t->name,
                WTERMSIG(status),
                WTERMSIG(status) == SIGALRM ? " (time limit)" : "");
    return 1;
}

static inline int msgtest_main(int argc, char **argv)
{
    int inproc = 0, failed = 0, planned = 0, first = 1;

    if (argc > 1 && !strcmp(argv[1], "--list")) {
        for (int i = 0; i < msgtest_count; i++)
            printf("%s\n", msgtests[i].name);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--inproc")) {
        inproc = 1;
        first = 2;
    }
    for (int i = 0; i < msgtest_count; i++) {
        int want = argc <= first;
        for (int a = first; a < argc && !want; a++)
            want = !strcmp(argv[a], msgtests[i].name);
        if (!want)
            continue;
        planned++;
        fflush(stdout);
        if (inproc) {
            msgtest_run_one(&msgtests[i]); /* exits on failure */
            printf("ok %d - %s\n", planned, msgtests[i].name);
        } else if (msgtest_fork(&msgtests[i]) == 0) {
            printf("ok %d - %s\n", planned, msgtests[i].name);
        } else {
            printf("not ok %d - %s\n", planned, msgtests[i].name);
            failed++;
        }
    }
    printf("1..%d\n", planned);
    if (planned == 0) {
        fprintf(stderr, "msgtest: no test matched\n");
        return 2;
    }
    return failed ? 1 : 0;
}

#define MSGTEST_MAIN()                                                     \
    int main(int argc, char **argv)                                        \
    {                                                                      \
        return msgtest_main(argc, argv);                                   \
    }

#endif /* UPVM_TESTS_MSGTEST_H */
