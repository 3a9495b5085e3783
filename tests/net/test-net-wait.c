/*
 * test-net-wait - idleness: a node in net_wait with the block (or
 * adaptive) policy uses no CPU (its process CPU time over 200 ms of
 * waiting stays near 0), and a send to it, or net_wake, wakes it.  A
 * ping-pong where both sides always sleep between frames checks that no
 * wake-up is ever lost (a lost one hangs and the alarm fails the test).
 */
#include "harness.h"
#include "nettest.h"

#include <errno.h>

#define IDLE_NS 200000000ll
#define CPU_MAX_NS 20000000ull /* 10% of the idle time, generous for ASan */
#define ROUNDS 2000

static void count_frame(void *ctx, int src, const void *data, size_t len)
{
    (*(int *)ctx)++;
}

/* Node 1 idles 200 ms (timeout), then sleeps with no limit until node 0's
 * frame comes; then until node 0's net_wake. */
static int idler(void)
{
    uint64_t cpu0 = nt_cpu_ns(), t0 = nt_now_ns();
    CHECK_EQ(net_wait(IDLE_NS), 0);
    CHECK(nt_now_ns() - t0 >= (uint64_t)IDLE_NS);
    int got = 0;
    while (got == 0) {
        CHECK_EQ(net_wait(-1), 1);
        CHECK(net_poll(count_frame, &got, 0) >= 0);
    }
    CHECK_EQ(got, 1);
    CHECK_EQ(net_wait(-1), 1); /* net_wake: no frame */
    CHECK_EQ(net_poll(count_frame, &got, 0), 0);
    uint64_t cpu = nt_cpu_ns() - cpu0;
    fprintf(stderr, "   idle node: %.2f ms CPU over %.0f ms\n", (double)cpu / 1e6,
            (double)(nt_now_ns() - t0) / 1e6);
    CHECK(cpu < CPU_MAX_NS);
    return 0;
}

static int waker(void)
{
    usleep(300000);
    CHECK_EQ(net_send(1, "x", 1), 0);
    usleep(50000);
    net_wake(1);
    return 0;
}

static int idle_node(int me, void *arg) { return me == 0 ? waker() : idler(); }

TEST(idle_block_no_cpu)
{
    net_config_t cfg = nt_config(4096, NET_IDLE_BLOCK);
    nt_run_job(2, &cfg, idle_node, NULL);
}

TEST(idle_adaptive_no_cpu)
{
    net_config_t cfg = nt_config(4096, NET_IDLE_ADAPTIVE);
    nt_run_job(2, &cfg, idle_node, NULL);
}

/* Ping-pong, each side asleep (no time limit) between frames. */
static int pingpong(int me, void *arg)
{
    int peer = 1 - me, got = 0;
    uint32_t expect = 0;
    for (uint32_t i = 0; i < ROUNDS; i++) {
        if (me == 0 || i > 0)
            CHECK_EQ(net_send(peer, &i, sizeof i), 0);
        while (got == (int)expect)
            if (net_poll(count_frame, &got, 0) == 0)
                net_wait(-1);
        expect++;
    }
    if (me == 1)
        CHECK_EQ(net_send(peer, &expect, sizeof expect), 0);
    return 0;
}

TEST(pingpong_block)
{
    net_config_t cfg = nt_config(4096, NET_IDLE_BLOCK);
    nt_run_job(2, &cfg, pingpong, NULL);
}

TEST(pingpong_adaptive)
{
    net_config_t cfg = nt_config(4096, NET_IDLE_ADAPTIVE);
    nt_run_job(2, &cfg, pingpong, NULL);
}

/* A wake for this very node is kept for its next net_wait. */
TEST(self_wake_pending)
{
    net_shm_seg_t *seg;
    net_config_t cfg = nt_config(4096, NET_IDLE_BLOCK);
    CHECK_EQ(net_shm_create(1, &cfg, &seg), 0);
    CHECK_EQ(net_init_shm(seg, 0, &cfg), 0);
    CHECK_EQ(net_wait(0), 0);
    net_wake(0);
    CHECK_EQ(net_wait(-1), 1);
    CHECK_EQ(net_wait(1000000), 0);
    net_fini();
    net_shm_destroy(seg);
}

HARNESS_MAIN()
