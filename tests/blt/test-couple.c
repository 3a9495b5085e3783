/*
 * test-couple.c - bi-level threads in thread mode: upvm_couple,
 * upvm_decouple, upvm_blocking (src/blt).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <upvm.h>

#include "harness.h"

static pid_t tid(void) { return (pid_t)syscall(SYS_gettid); }

static void end_of_case(void)
{
    CHECK_EQ(upvm_join_all(), 0);
    CHECK_EQ(upvm_count(), 1);
}

/* ---------------------------------------------------------------- pipe */

static int pipefd[2];
static char got[64];
static ssize_t got_n = -1;
static int computed;          /* compute ULPs that finished */
static upvm_waitq_t ring_q;
static int ring_token;        /* passed around by the compute ULPs */

static long blocking_read(void *arg)
{
    (void)arg;
    return read(pipefd[0], got, sizeof got);
}

static void reader(void *arg)
{
    (void)arg;
    got_n = upvm_blocking(blocking_read, NULL);
}

/* 100 ULPs that compute and hand a token around (the exchange) while the
 * reader sits in read(): each takes the token 20 times. */
#define NCOMPUTE 100
static void computer(void *arg)
{
    int me = (int)(intptr_t)arg;
    volatile double x = me;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 20000; i++)
            x = x * 1.0000001 + 1;
        while (ring_token % NCOMPUTE != me)
            CHECK_EQ(upvm_wait(&ring_q, -1), 0);
        ring_token++;
        upvm_wake_all(&ring_q);
    }
    computed++;
}

TEST(reader_in_read_stalls_nobody)
{
    CHECK_EQ(pipe(pipefd), 0);
    upvm_waitq_init(&ring_q, "token");
    CHECK(upvm_create(reader, NULL, NULL) > 0);
    for (int i = 0; i < NCOMPUTE; i++)
        CHECK(upvm_create(computer, (void *)(intptr_t)i, NULL) > 0);
    /* every compute ULP finishes while the reader is still in read() */
    while (computed < NCOMPUTE)
        upvm_yield();
    CHECK_EQ(ring_token, NCOMPUTE * 20);
    CHECK_EQ(got_n, -1);
    static const char msg[] = "exactly these bytes";
    CHECK_EQ(write(pipefd[1], msg, sizeof msg), (ssize_t)sizeof msg);
    end_of_case();
    CHECK_EQ(got_n, (ssize_t)sizeof msg);
    CHECK(memcmp(got, msg, sizeof msg) == 0);
}

/* ---------------------------------------------------------------- series */

static pid_t sched_tid, kc_tids[3];
static int series_rc[3];

static void series(void *arg)
{
    (void)arg;
    CHECK_EQ(upvm_coupled(), 0);
    CHECK_EQ(upvm_couple(), 0);
    CHECK_EQ(upvm_coupled(), 1);
    kc_tids[0] = tid();
    CHECK_EQ(upvm_couple(), 0); /* nested */
    kc_tids[1] = tid();
    CHECK_EQ(upvm_decouple(), 0);
    CHECK_EQ(upvm_coupled(), 1); /* still: the outer couple */
    kc_tids[2] = tid();
    series_rc[0] = upvm_yield_to(1); /* the scheduler's calls are not for a KC */
    CHECK_EQ(upvm_decouple(), 0);
    CHECK_EQ(upvm_coupled(), 0);
    CHECK_EQ(tid(), sched_tid);
    series_rc[1] = upvm_decouple();
}

TEST(a_series_runs_on_one_kernel_thread)
{
    sched_tid = tid();
    CHECK(upvm_create(series, NULL, NULL) > 0);
    end_of_case();
    CHECK(kc_tids[0] != sched_tid);
    CHECK_EQ(kc_tids[1], kc_tids[0]);
    CHECK_EQ(kc_tids[2], kc_tids[0]);
    CHECK_EQ(series_rc[0], -EPERM);
    CHECK_EQ(series_rc[1], -EINVAL);
}

/* ---------------------------------------------------------------- errno */

static int errno_after[2];

static long failing_open(void *arg)
{
    return open((const char *)arg, O_RDONLY);
}

static void errno_ulp(void *arg)
{
    (void)arg;
    errno = 0;
    long fd = upvm_blocking(failing_open, "/nonexistent/upvm-test");
    errno_after[0] = fd == -1 ? errno : -1;
    upvm_yield(); /* another ULP sets errno meanwhile */
    errno_after[1] = errno;
}

static void errno_clobber(void *arg)
{
    (void)arg;
    errno = EBADF;
}

TEST(errno_comes_back_from_the_kernel_context)
{
    CHECK(upvm_create(errno_ulp, NULL, NULL) > 0);
    CHECK(upvm_create(errno_clobber, NULL, NULL) > 0);
    end_of_case();
    CHECK_EQ(errno_after[0], ENOENT);
    CHECK_EQ(errno_after[1], ENOENT);
}

/* ---------------------------------------------------------------- stress */

#define STRESS_ULPS 200
#define STRESS_CYCLES 100
static _Atomic int stress_done;
static _Atomic long on_kc;

static long count_on_kc(void *arg)
{
    (void)arg;
    if (tid() != sched_tid)
        on_kc++;
    return 0;
}

static void stresser(void *arg)
{
    (void)arg;
    for (int i = 0; i < STRESS_CYCLES; i++) {
        CHECK_EQ(upvm_blocking(count_on_kc, NULL), 0);
        if (i % 7 == 0)
            upvm_yield();
    }
    stress_done++;
}

/* Many ULPs couple at once; with UPVM_KC_MAX=4 most of them wait for a
 * free kernel context: they must all get one, in the end. */
TEST(thousands_of_couplings_with_a_small_pool)
{
    setenv("UPVM_KC_MAX", "4", 1);
    sched_tid = tid();
    for (int i = 0; i < STRESS_ULPS; i++)
        CHECK(upvm_create(stresser, NULL, NULL) > 0);
    end_of_case();
    CHECK_EQ(stress_done, STRESS_ULPS);
    CHECK_EQ(on_kc, (long)STRESS_ULPS * STRESS_CYCLES);
}

TEST(couple_wait_policies)
{
    static const char *const policies[] = {"spin", "block", "adaptive"};
    for (int p = 0; p < 3; p++) {
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            setenv("UPVM_KC_WAIT", policies[p], 1);
            sched_tid = tid();
            for (int i = 0; i < 20; i++)
                CHECK(upvm_create(stresser, NULL, NULL) > 0);
            end_of_case();
            _exit(stress_done == 20 && on_kc == 20L * STRESS_CYCLES ? 0 : 1);
        }
        int st;
        CHECK_EQ(waitpid(child, &st, 0), child);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
}

/* ---------------------------------------------------------------- misc */

static void *plain_thread(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)upvm_couple();
}

TEST(not_a_ulp)
{
    pthread_t t;
    void *rc;
    CHECK(upvm_self() > 0); /* the scheduler is this thread */
    CHECK_EQ(pthread_create(&t, NULL, plain_thread, NULL), 0);
    CHECK_EQ(pthread_join(t, &rc), 0);
    CHECK_EQ((int)(intptr_t)rc, -EPERM);
    CHECK_EQ(upvm_decouple(), -EINVAL);
}

/* The main ULP couples too, and a coupled ULP that exits ends normally. */
static void exits_coupled(void *arg)
{
    (void)arg;
    CHECK_EQ(upvm_couple(), 0);
    upvm_exit(7);
}

TEST(main_couples_and_a_coupled_ulp_exits)
{
    sched_tid = tid();
    CHECK_EQ(upvm_couple(), 0);
    CHECK(tid() != sched_tid);
    CHECK_EQ(upvm_decouple(), 0);
    CHECK_EQ(tid(), sched_tid);
    upvm_id_t id = upvm_create(exits_coupled, NULL, NULL);
    int st = -1;
    CHECK_EQ(upvm_join(id, &st), 0);
    CHECK_EQ(st, 7);
    end_of_case();
}

HARNESS_MAIN()
