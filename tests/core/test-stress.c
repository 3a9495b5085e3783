/*
 * test-stress.c - many ULPs: 100,000 (STRESS_ULPS=n to change) are created, each
 * yields a few times and exits; every one must run every round exactly
 * once, in round-robin order, and everything must be reclaimed.
 * Then the same with churn: ULPs that create ULPs, so stacks are reused.
 * One case: the churn is meant to reuse what the first part left.
 */
#include <stdint.h>
#include <upvm.h>

#include "harness.h"

#define ROUNDS 3

static int nulps;
static uint8_t *rounds_done; /* per ordinal */
static long total_steps;

static void worker(int ordinal, void *arg)
{
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_EQ(rounds_done[ordinal], r);
        rounds_done[ordinal]++;
        total_steps++;
        upvm_yield();
        /* Round robin: by the time we run again, every other ULP has
         * done this round too. */
    }
}

static long spawned_by_chain;
static void chain(void *arg)
{
    intptr_t left = (intptr_t)arg;
    spawned_by_chain++;
    upvm_yield();
    if (left > 0) {
        upvm_attr_t attr = UPVM_ATTR_INIT;
        attr.flags = UPVM_DETACHED;
        CHECK(upvm_create(chain, (void *)(left - 1), &attr) > 0);
    }
}

TEST(many_ulps_then_churn)
{
    const char *n = getenv("STRESS_ULPS");
    nulps = n ? atoi(n) : 100000;
    CHECK(nulps > 0);
    rounds_done = calloc((size_t)nulps, 1);
    CHECK(rounds_done);

    upvm_attr_t attr = UPVM_ATTR_INIT;
    attr.flags = UPVM_DETACHED;
    CHECK_EQ(upvm_spawn_func(worker, NULL, nulps, NULL, &attr), nulps);
    CHECK_EQ(upvm_count(), nulps + 1);
    CHECK_EQ(upvm_join_all(), 0);
    CHECK_EQ(upvm_count(), 1);
    CHECK_EQ(total_steps, (long)nulps * ROUNDS);
    for (int i = 0; i < nulps; i++)
        CHECK_EQ(rounds_done[i], ROUNDS);

    /* Churn: 64 chains of nulps/64 generations each, at most 64 alive. */
    for (int c = 0; c < 64; c++)
        CHECK(upvm_create(chain, (void *)(intptr_t)(nulps / 64 - 1), &attr) > 0);
    CHECK_EQ(upvm_join_all(), 0);
    CHECK_EQ(spawned_by_chain, (long)(nulps / 64) * 64);
    CHECK_EQ(upvm_count(), 1);
    printf("test-stress: %d ULPs x %d yields, then %ld chained ULPs: ok\n", nulps,
           ROUNDS, spawned_by_chain);
    free(rounds_done);
}

HARNESS_MAIN()
