/*
 * test-net-storm - every node sends K frames to every other node at once,
 * sizes drawn from 0 bytes to 5 MiB (most small, some fragmented, a few
 * far larger than the ring), while receiving.  Each receiver regenerates
 * what frame (src, me, seq) must hold and checks length and bytes: every
 * frame arrives once, in order per sender, intact.  Idle nodes wait with
 * no time limit, so a lost wake-up hangs (and the alarm fails the test).
 */
#include "harness.h"
#include "nettest.h"

#include <errno.h>

#define K 200
#define MAXN 4

static size_t frame_len(int src, int dst, uint32_t seq)
{
    uint64_t x = ((uint64_t)src * 131 + (uint64_t)dst * 7 + seq) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    unsigned r = (unsigned)(x % 1000);
    if (seq == 7)
        return 5u << 20;                        /* several MiB, always */
    if (r < 600)
        return (size_t)(x >> 20) % 257;         /* 0..256 */
    if (r < 900)
        return (size_t)(x >> 20) % 8193;
    if (r < 985)
        return (size_t)(x >> 20) % (200 << 10); /* fragmented in a 64 KiB ring */
    return 1 + (size_t)(x >> 20) % (3 << 20);
}

struct node_state {
    int me;
    uint32_t next_recv[MAXN];
    uint8_t *scratch;
};

static void on_frame(void *ctx, int src, const void *data, size_t len)
{
    struct node_state *st = ctx;
    CHECK(src >= 0 && src < MAXN && src != st->me);
    uint32_t seq = st->next_recv[src]++;
    CHECK(seq < K);
    CHECK_EQ(len, frame_len(src, st->me, seq));
    nt_fill(st->scratch, len, src, st->me, seq);
    if (memcmp(st->scratch, data, len) != 0) {
        fprintf(stderr, "frame %d->%d #%u: bytes differ\n", src, st->me, seq);
        exit(1);
    }
}

/* Tries the next frame to dst; true if it went. */
static bool try_send(int me, int dst, uint32_t *next, uint8_t **buf)
{
    size_t len = frame_len(me, dst, *next);
    if (!*buf) {
        *buf = malloc(len + 1);
        CHECK(*buf);
        nt_fill(*buf, len, me, dst, *next);
    }
    int rc = net_send(dst, *buf, len);
    if (rc == -EAGAIN)
        return false;
    CHECK_EQ(rc, 0);
    free(*buf);
    *buf = NULL;
    (*next)++;
    return true;
}

static bool all_done(int n, int me, const uint32_t *sent, const uint32_t *recvd)
{
    for (int p = 0; p < n; p++)
        if (p != me && (sent[p] < K || recvd[p] < K))
            return false;
    return true;
}

static int storm_node(int me, void *arg)
{
    int n = net_nnodes();
    struct node_state st = {.me = me, .scratch = malloc(6u << 20)};
    uint32_t sent[MAXN] = {0};
    uint8_t *pending[MAXN] = {0};
    CHECK(st.scratch);
    while (!all_done(n, me, sent, st.next_recv) || net_flush() != 0) {
        bool progress = false;
        for (int d = 0; d < n; d++)
            if (d != me && sent[d] < K)
                progress |= try_send(me, d, &sent[d], &pending[d]);
        int got = net_poll(on_frame, &st, 32);
        CHECK(got >= 0);
        if (!progress && got == 0)
            net_wait(-1);
    }
    free(st.scratch);
    return 0;
}

static void storm(int n, net_idle_t idle, size_t ring)
{
    net_config_t cfg = nt_config(ring, idle);
    uint64_t t0 = nt_now_ns();
    nt_run_job(n, &cfg, storm_node, NULL);
    fprintf(stderr, "   %d nodes, idle %d, ring %zu: %.0f ms\n", n, (int)idle, ring,
            (double)(nt_now_ns() - t0) / 1e6);
}

TEST(two_nodes_block) { storm(2, NET_IDLE_BLOCK, 64 << 10); }
TEST(two_nodes_spin) { storm(2, NET_IDLE_SPIN, 1 << 20); }
TEST(three_nodes_adaptive) { storm(3, NET_IDLE_ADAPTIVE, 64 << 10); }
TEST(three_nodes_tiny_ring) { storm(3, NET_IDLE_BLOCK, 4096); }

/* The segment is a memfd: nothing is left in /dev/shm. */
static void no_shm_files(void) { CHECK_EQ(nt_upvm_shm_files(), 0); }
HARNESS_AFTER(no_shm_files)

HARNESS_MAIN()
