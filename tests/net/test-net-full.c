/*
 * test-net-full - a slow receiver: the sender fills a 4 KiB ring until
 * -EAGAIN, which stays while nobody reads; a frame 256 times the ring is
 * accepted into the backlog, and further sends get -EAGAIN until it has
 * drained.  The sender then sleeps in net_wait with no limit and must be
 * woken by the receiver freeing space (want_space).  The receiver checks
 * that every frame came once, in order, intact.
 */
#include "harness.h"
#include "util/env.h"
#include "nettest.h"

#include <errno.h>

#define RING 4096
#define BIG (1u << 20)
#define TAIL_FRAMES 100
#define RECV_DELAY_NS 200000000ull

/* Frame i: 4 bytes of seq, then nt_fill bytes; length 1 ends the test. */
static size_t make(uint8_t *buf, uint32_t seq, size_t len)
{
    nt_fill(buf, len, 0, 1, seq);
    memcpy(buf, &seq, sizeof seq);
    return len;
}

static void send_retry(const uint8_t *buf, size_t len)
{
    int rc;
    while ((rc = net_send(1, buf, len)) == -EAGAIN)
        net_wait(-1);
    CHECK_EQ(rc, 0);
}

static int sender(void)
{
    static uint8_t buf[BIG];
    uint32_t seq = 0;
    while (net_send(1, buf, make(buf, seq, 64)) == 0)
        seq++;
    CHECK(seq > 10 && seq < RING / 64);
    usleep(20000);
    CHECK_EQ(net_send(1, buf, make(buf, seq, 64)), -EAGAIN); /* still full */
    CHECK_EQ(net_wait(0), 0);
    CHECK_EQ(net_wait(20000000), 0); /* nobody frees space: a timeout */
    /* Woken, with no time limit, by the receiver draining the ring: the
     * next frame fits at once. */
    CHECK_EQ(net_wait(-1), 1);
    CHECK_EQ(net_send(1, buf, make(buf, seq++, 64)), 0);
    send_retry(buf, make(buf, seq++, 64));
    send_retry(buf, make(buf, seq++, BIG)); /* mostly to the backlog */
    CHECK_EQ(net_send(1, buf, make(buf, seq, 8)), -EAGAIN);
    while (net_flush() != 0)
        net_wait(-1);
    for (int i = 0; i < TAIL_FRAMES; i++)
        send_retry(buf, make(buf, seq++, (size_t)(4 + i * 37)));
    send_retry(buf, 1);
    while (net_flush() != 0)
        net_wait(-1);
    return 0;
}

struct rx {
    uint32_t next;
    bool end;
    uint8_t *scratch;
};

static void on_frame(void *ctx, int src, const void *data, size_t len)
{
    struct rx *rx = ctx;
    CHECK_EQ(src, 0);
    CHECK(!rx->end);
    if (len == 1) {
        rx->end = true;
        return;
    }
    uint32_t seq;
    memcpy(&seq, data, sizeof seq);
    CHECK_EQ(seq, rx->next);
    rx->next++;
    make(rx->scratch, seq, len);
    CHECK(memcmp(rx->scratch, data, len) == 0);
}

static int receiver(void)
{
    struct rx rx = {.scratch = malloc(BIG)};
    usleep(RECV_DELAY_NS / 1000);
    while (!rx.end)
        if (net_poll(on_frame, &rx, 0) == 0)
            net_wait(-1);
    CHECK(rx.next > TAIL_FRAMES + 10);
    free(rx.scratch);
    return 0;
}

static int node(int me, void *arg) { return me == 0 ? sender() : receiver(); }

TEST(slow_receiver_block)
{
    net_config_t cfg = nt_config(RING, NET_IDLE_BLOCK);
    nt_run_job(2, &cfg, node, NULL);
}

TEST(slow_receiver_adaptive)
{
    net_config_t cfg = nt_config(RING, NET_IDLE_ADAPTIVE);
    nt_run_job(2, &cfg, node, NULL);
}

TEST(bad_arguments)
{
    net_shm_seg_t *seg;
    net_config_t cfg = nt_config(RING, NET_IDLE_BLOCK);
    CHECK_EQ(net_send(1, "", 0), -ENOTCONN);
    CHECK_EQ(net_shm_create(0, &cfg, &seg), -EINVAL);
    cfg.ring_bytes = 100;
    CHECK_EQ(net_shm_create(2, &cfg, &seg), -EINVAL);
    cfg.ring_bytes = RING;
    CHECK_EQ(net_shm_create(2, &cfg, &seg), 0);
    CHECK_EQ(net_init_shm(seg, 2, &cfg), -EINVAL);
    CHECK_EQ(net_init_shm(seg, 0, &cfg), 0);
    CHECK_EQ(net_init_shm(seg, 1, &cfg), -EBUSY);
    CHECK_EQ(net_nnodes(), 2);
    CHECK_EQ(net_send(0, "", 0), -EINVAL); /* itself */
    CHECK_EQ(net_send(2, "", 0), -EINVAL);
    CHECK_EQ(net_send(-1, "", 0), -EINVAL);
    CHECK_EQ(net_send(1, "", NET_FRAME_MAX + 1), -EMSGSIZE);
    net_fini();
    CHECK_EQ(net_node(), -1);
    net_shm_destroy(seg);
}

TEST(config_from_env)
{
    env_test_keep_going(); /* a bad value is returned, not the end of the test */
    net_config_t c;
    setenv("UPVM_NET_RING", "64K", 1);
    setenv("UPVM_NET_IDLE", "block", 1);
    CHECK_EQ(net_config_from_env(&c), 0);
    CHECK_EQ(c.ring_bytes, 65536);
    CHECK_EQ(c.idle, NET_IDLE_BLOCK);
    setenv("UPVM_NET_IDLE", "sometimes", 1);
    CHECK_EQ(net_config_from_env(&c), -EINVAL);
    setenv("UPVM_NET_RING", "12", 1); /* below the minimum */
    unsetenv("UPVM_NET_IDLE");
    CHECK_EQ(net_config_from_env(&c), -EINVAL);
    CHECK_EQ(c.ring_bytes, NET_RING_DEFAULT);
    unsetenv("UPVM_NET_RING");
}

HARNESS_MAIN()
