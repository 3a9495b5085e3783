/*
 * test-sched.c - the ULP core's scheduling contract: create/exit/join,
 * ordinals, round-robin yield, hand-off, errno isolation, sleep order,
 * wait-queue order and timeouts, error codes, and the idle node.
 * Every case ends with only main alive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <upvm.h>

#include "harness.h"

/* A log of small integers the ULPs append to, to check orders. */
static int events[256];
static int nevents;
static void log_event(int v)
{
    CHECK(nevents < (int)(sizeof events / sizeof events[0]));
    events[nevents++] = v;
}
static void reset_log(void) { nevents = 0; }
static void check_log(const int *want, int n)
{
    CHECK_EQ(nevents, n);
    for (int i = 0; i < n; i++) {
        if (events[i] != want[i]) {
            fprintf(stderr, "event %d: got %d, want %d\n", i, events[i], want[i]);
            CHECK_EQ(events[i], want[i]);
        }
    }
}

static void end_of_case(void)
{
    CHECK_EQ(upvm_join_all(), 0);
    CHECK_EQ(upvm_count(), 1);
}

/* ---------------------------------------------------------------- cases */

static void exit_with_arg(void *arg) { upvm_exit((int)(intptr_t)arg); }
static void return_plainly(void *arg) { (void)arg; }

TEST(join_returns_exit_status)
{
    upvm_id_t a = upvm_create(exit_with_arg, (void *)42, NULL);
    upvm_id_t b = upvm_create(return_plainly, NULL, NULL);
    CHECK(a > 1 && b > a);
    CHECK_EQ(upvm_count(), 3);
    int status = -1;
    CHECK_EQ(upvm_join(a, &status), 0);
    CHECK_EQ(status, 42);
    status = -1;
    CHECK_EQ(upvm_join(b, &status), 0);
    CHECK_EQ(status, 0);
    CHECK_EQ(upvm_join(a, &status), -ESRCH); /* already joined: gone */
    end_of_case();
}

static upvm_id_t spawned_ids[16];
static int seen_ordinal[16], seen_self[16];
static void record_ordinal(int ordinal, void *arg)
{
    CHECK(arg == (void *)&spawned_ids);
    CHECK_EQ(upvm_ordinal(), ordinal);
    seen_ordinal[ordinal]++;
    seen_self[ordinal] = upvm_self();
}

TEST(spawn_func_gives_each_its_ordinal)
{
    memset(seen_ordinal, 0, sizeof seen_ordinal);
    CHECK_EQ(upvm_spawn_func(record_ordinal, &spawned_ids, 16, spawned_ids, NULL), 16);
    for (int i = 0; i < 16; i++)
        CHECK_EQ(upvm_join(spawned_ids[i], NULL), 0);
    for (int i = 0; i < 16; i++) {
        CHECK_EQ(seen_ordinal[i], 1);
        CHECK_EQ(seen_self[i], spawned_ids[i]);
    }
    CHECK_EQ(upvm_ordinal(), -1); /* main has none */
    end_of_case();
}

static void yield_three_times(void *arg)
{
    int who = (int)(intptr_t)arg;
    for (int round = 0; round < 3; round++) {
        log_event(who * 10 + round);
        upvm_yield();
    }
}

TEST(yield_is_round_robin)
{
    reset_log();
    for (int who = 1; who <= 3; who++)
        CHECK(upvm_create(yield_three_times, (void *)(intptr_t)who, NULL) > 0);
    upvm_join_all();
    const int want[] = {10, 20, 30, 11, 21, 31, 12, 22, 32};
    check_log(want, 9);
    end_of_case();
}

static void log_once(void *arg) { log_event((int)(intptr_t)arg); }

TEST(yield_to_runs_target_first)
{
    reset_log();
    upvm_id_t a = upvm_create(log_once, (void *)1, NULL);
    upvm_id_t b = upvm_create(log_once, (void *)2, NULL);
    upvm_id_t c = upvm_create(log_once, (void *)3, NULL);
    CHECK(a > 0 && b > 0 && c > 0);
    CHECK_EQ(upvm_yield_to(c), 0);    /* c first, then the queue: a, b */
    log_event(0);                     /* main went to the tail, after a and b */
    const int want[] = {3, 1, 2, 0};
    check_log(want, 4);
    end_of_case();
}

static upvm_waitq_t parked = UPVM_WAITQ_INITIALIZER(parked, "parked");
static void park(void *arg) { (void)upvm_wait(&parked, -1); }

TEST(yield_to_errors)
{
    CHECK_EQ(upvm_yield_to(upvm_self()), 0);
    CHECK_EQ(upvm_yield_to(0), -ESRCH);
    CHECK_EQ(upvm_yield_to(-5), -ESRCH);
    CHECK_EQ(upvm_yield_to(1 << 30), -ESRCH);
    upvm_id_t p = upvm_create(park, NULL, NULL);
    upvm_yield(); /* p blocks */
    CHECK_EQ(upvm_yield_to(p), -EAGAIN);
    CHECK_EQ(upvm_wake_one(&parked), 1);
    int st;
    CHECK_EQ(upvm_join(p, &st), 0);
    CHECK_EQ(upvm_yield_to(p), -ESRCH);
    end_of_case();
}

static void errno_keeper(void *arg)
{
    int mine = (int)(intptr_t)arg;
    errno = mine;
    for (int i = 0; i < 100; i++) {
        upvm_yield();
        CHECK_EQ(errno, mine);
        errno = mine; /* a libc call could have changed it; set it again */
    }
}

TEST(errno_is_private_to_each_ulp)
{
    CHECK(upvm_create(errno_keeper, (void *)EINTR, NULL) > 0);
    CHECK(upvm_create(errno_keeper, (void *)EAGAIN, NULL) > 0);
    errno = ENOENT;
    for (int i = 0; i < 50; i++) {
        upvm_yield();
        CHECK_EQ(errno, ENOENT);
    }
    end_of_case();
    CHECK_EQ(errno, ENOENT);
}

struct sleeper {
    int tag;
    uint64_t ms;
};
static void sleep_then_log(void *arg)
{
    struct sleeper *s = arg;
    uint64_t t0 = upvm_now_ns();
    CHECK_EQ(upvm_sleep_ns(s->ms * 1000000u), 0);
    CHECK(upvm_now_ns() - t0 >= s->ms * 1000000u);
    log_event(s->tag);
}

TEST(sleepers_wake_in_deadline_order)
{
    reset_log();
    static struct sleeper s[] = {{1, 30}, {2, 10}, {3, 20}, {4, 10}, {5, 0}};
    for (int i = 0; i < 5; i++)
        CHECK(upvm_create(sleep_then_log, &s[i], NULL) > 0);
    end_of_case();
    const int want[] = {5, 2, 4, 3, 1}; /* equal deadlines: first to sleep first */
    check_log(want, 5);
}

static upvm_waitq_t fifo = UPVM_WAITQ_INITIALIZER(fifo, "fifo");
static void wait_then_log(void *arg)
{
    CHECK_EQ(upvm_wait(&fifo, -1), 0);
    log_event((int)(intptr_t)arg);
}

TEST(waitq_wakes_in_fifo_order)
{
    reset_log();
    for (int i = 1; i <= 5; i++)
        CHECK(upvm_create(wait_then_log, (void *)(intptr_t)i, NULL) > 0);
    upvm_yield(); /* all five block, in creation order */
    CHECK_EQ(upvm_wake_one(&fifo), 1);
    CHECK_EQ(upvm_wake_one(&fifo), 1);
    upvm_yield();
    const int first[] = {1, 2};
    check_log(first, 2);
    CHECK_EQ(upvm_wake_all(&fifo), 3);
    CHECK_EQ(upvm_wake_all(&fifo), 0);
    CHECK_EQ(upvm_wake_one(&fifo), 0);
    end_of_case();
    const int want[] = {1, 2, 3, 4, 5};
    check_log(want, 5);
}

static upvm_waitq_t never = UPVM_WAITQ_INITIALIZER(never, "never");

TEST(wait_times_out)
{
    uint64_t t0 = upvm_now_ns();
    CHECK_EQ(upvm_wait(&never, 5 * 1000000), -ETIMEDOUT);
    CHECK(upvm_now_ns() - t0 >= 5 * 1000000u);
    CHECK_EQ(upvm_wake_all(&never), 0); /* the timed-out waiter left the queue */
    CHECK_EQ(upvm_wait(&never, 0), -ETIMEDOUT);
    end_of_case();
}

static upvm_waitq_t early = UPVM_WAITQ_INITIALIZER(early, "early");
static int early_result = 99;
static void wait_with_long_timeout(void *arg) { early_result = upvm_wait(&early, 10000000000LL); }

TEST(wake_before_timeout_cancels_the_timer)
{
    upvm_id_t w = upvm_create(wait_with_long_timeout, NULL, NULL);
    upvm_yield();
    CHECK_EQ(upvm_wake_one(&early), 1);
    CHECK_EQ(upvm_join(w, NULL), 0);
    CHECK_EQ(early_result, 0);
    /* If the 10 s timer were still armed, this sleep would not be the only
     * timer and a stale entry would fire into a reclaimed ULP. */
    CHECK_EQ(upvm_sleep_ns(1000000), 0);
    end_of_case();
}

static upvm_waitq_t handq = UPVM_WAITQ_INITIALIZER(handq, "handoff");
static void handoff_waiter(void *arg)
{
    CHECK_EQ(upvm_wait(&handq, -1), 0);
    log_event(1);
}

TEST(handoff_wake_runs_the_waiter_at_once)
{
    reset_log();
    upvm_id_t w = upvm_create(handoff_waiter, NULL, NULL);
    upvm_yield(); /* w blocks */
    CHECK(upvm_create(log_once, (void *)2, NULL) > 0); /* ready, queued */
    CHECK_EQ(upvm_wake_one_handoff(&handq), 1);
    log_event(0); /* main resumes right after the waiter, before ULP "2" */
    const int want[] = {1, 0};
    check_log(want, 2);
    CHECK_EQ(upvm_wake_one_handoff(&handq), 0);
    CHECK_EQ(upvm_join(w, NULL), 0);
    end_of_case();
}

static void sleep_briefly(void *arg) { (void)upvm_sleep_ns(1000000); }

TEST(join_errors)
{
    CHECK_EQ(upvm_join(upvm_self(), NULL), -EDEADLK);
    CHECK_EQ(upvm_join(0, NULL), -ESRCH);
    CHECK_EQ(upvm_join(123456789, NULL), -ESRCH);
    upvm_attr_t attr = UPVM_ATTR_INIT;
    attr.flags = UPVM_DETACHED;
    upvm_id_t d = upvm_create(sleep_briefly, NULL, &attr);
    CHECK(d > 0);
    CHECK_EQ(upvm_join(d, NULL), -EINVAL);
    end_of_case();
    CHECK_EQ(upvm_join(d, NULL), -ESRCH); /* detached: gone after exit */
}

TEST(bad_arguments)
{
    CHECK_EQ(upvm_create(NULL, NULL, NULL), -EINVAL);
    upvm_attr_t huge = UPVM_ATTR_INIT;
    huge.stack_size = (size_t)2 << 30;
    CHECK_EQ(upvm_create(return_plainly, NULL, &huge), -EINVAL);
    CHECK_EQ(upvm_spawn_func(record_ordinal, NULL, 0, NULL, NULL), -EINVAL);
    CHECK_EQ(upvm_spawn_func(NULL, NULL, 3, NULL, NULL), -EINVAL);
    CHECK_EQ(upvm_spawn_func(record_ordinal, NULL, -1, NULL, NULL), -EINVAL);
    CHECK_EQ(upvm_count(), 1);
}

static void *call_from_other_thread(void *arg)
{
    int *rc = arg;
    rc[0] = upvm_create(return_plainly, NULL, NULL);
    rc[1] = upvm_yield_to(1);
    rc[2] = upvm_self();
    rc[3] = upvm_join_all();
    return NULL;
}

TEST(other_threads_get_eperm)
{
    pthread_t t;
    int rc[4];
    CHECK_EQ(upvm_self(), 1); /* the runtime starts here: it is this thread's */
    CHECK_EQ(pthread_create(&t, NULL, call_from_other_thread, rc), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(rc[i], -EPERM);
    CHECK_EQ(upvm_count(), 1);
}

static void use_half_a_megabyte(void *arg)
{
    volatile char big[512 * 1024];
    for (size_t i = 0; i < sizeof big; i += 4096)
        big[i] = (char)i;
    *(int *)arg = big[4096];
}

TEST(stack_size_attribute)
{
    CHECK_EQ(upvm_default_stack_size(), 256 * 1024);
    upvm_attr_t attr = UPVM_ATTR_INIT;
    attr.stack_size = 1 << 20;
    int out = 0;
    upvm_id_t u = upvm_create(use_half_a_megabyte, &out, &attr);
    CHECK(u > 0);
    CHECK_EQ(upvm_join(u, NULL), 0);
    CHECK_EQ(out, (char)4096);
    end_of_case();
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size, resident;
    CHECK(f && fscanf(f, "%ld %ld", &size, &resident) == 2);
    fclose(f);
    return resident * 4;
}

static upvm_waitq_t hold = UPVM_WAITQ_INITIALIZER(hold, "hold");
static void touch_little(void *arg) { (void)upvm_wait(&hold, -1); }

TEST(stacks_are_committed_lazily)
{
    upvm_attr_t attr = UPVM_ATTR_INIT;
    attr.stack_size = 64 << 20;
    long before = rss_kib();
    upvm_id_t ids[8];
    for (int i = 0; i < 8; i++)
        CHECK((ids[i] = upvm_create(touch_little, NULL, &attr)) > 0);
    upvm_yield(); /* each runs and blocks, having touched a page or two */
    long grown = rss_kib() - before;
    CHECK(grown < 8 * 1024); /* 512 MiB of stacks, well under 8 MiB resident */
    CHECK_EQ(upvm_wake_all(&hold), 8);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(upvm_join(ids[i], NULL), 0);
    end_of_case();
}

static void sleep_long(void *arg) { (void)upvm_sleep_ns(200 * 1000000u); }

TEST(idle_node_does_not_spin)
{
    struct timespec c0, c1;
    for (int i = 0; i < 4; i++)
        CHECK(upvm_create(sleep_long, NULL, NULL) > 0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    uint64_t t0 = upvm_now_ns();
    end_of_case();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    uint64_t wall = upvm_now_ns() - t0;
    double cpu = (c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec);
    CHECK(wall >= 200 * 1000000u);
    /* Spinning would burn the whole 200 ms; sleeping burns next to nothing. */
    CHECK(cpu < 0.25 * (double)wall);
}

static int joinall_done;
static void join_all_then_mark(void *arg)
{
    CHECK_EQ(upvm_join_all(), 0);
    joinall_done++;
}

TEST(join_all_waits_for_everyone)
{
    joinall_done = 0;
    CHECK(upvm_create(sleep_briefly, NULL, NULL) > 0);
    CHECK(upvm_create(join_all_then_mark, NULL, NULL) > 0);
    CHECK(upvm_create(sleep_briefly, NULL, NULL) > 0);
    CHECK_EQ(upvm_join_all(), 0);
    /* main and the other joiner both waited in join_all: neither waited
     * for the other, and both were released once the sleepers were done. */
    upvm_yield(); /* let the other joiner finish */
    CHECK_EQ(upvm_count(), 1);
    CHECK_EQ(joinall_done, 1);
}

HARNESS_MAIN()
