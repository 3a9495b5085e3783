/*
 * test-net-sendv - the gather send (net_sendv): a frame sent in pieces
 * arrives as their concatenation, in one FIFO with frames of net_send,
 * whether it is one record, fragmented, or partly in the backlog; a full
 * path gives -EAGAIN and takes nothing; many laps round a small ring (PAD
 * records, records ending exactly at the ring's end) deliver every frame
 * once; arguments out of range are refused.
 *
 * Node 0 sends, node 1 receives and checks.  A frame's bytes are seq (4
 * bytes) then nt_fill, whatever the pieces; frames of length 1 end a
 * test.  The wrap-around case fills frames with words that look like
 * published ring record headers, so a consumer that took a leftover of an
 * older lap for a record would deliver a frame that is not one.
 */
#include "harness.h"
#include "nettest.h"

#include <errno.h>

#define RING 4096
#define BIG (1u << 20) /* 256 times RING: fragmented, mostly backlog */

enum { FILL_RANDOM, FILL_HEADERS };

struct plan {
    int fill;
    int wake_fd[2]; /* full ring: the sender says "read now" through it */
};

static void fill(uint8_t *buf, size_t len, uint32_t seq, int how)
{
    if (how == FILL_RANDOM) {
        nt_fill(buf, len, 0, 1, seq);
    } else {
        /* little-endian {len 8, kind 2}: a published 8-byte WHOLE record */
        uint64_t w = (uint64_t)2 << 32 | 8;
        for (size_t i = 0; i < len; i += 8)
            memcpy(buf + i, &w, len - i < 8 ? len - i : 8);
    }
    memcpy(buf, &seq, len < 4 ? len : 4);
}

/* ------------------------------------------------------------ receiver */

struct rx {
    uint32_t next;
    bool end;
    int fill;
    uint8_t *want;
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
    CHECK(len >= 4);
    uint32_t seq;
    memcpy(&seq, data, sizeof seq);
    CHECK_EQ(seq, rx->next);
    rx->next++;
    fill(rx->want, len, seq, rx->fill);
    CHECK(memcmp(rx->want, data, len) == 0);
}

static int receive_all(const struct plan *p)
{
    struct rx rx = {.fill = p->fill, .want = malloc(BIG)};
    CHECK(rx.want != NULL);
    char go;
    if (p->wake_fd[0] >= 0) /* the sender first fills the ring */
        CHECK_EQ(read(p->wake_fd[0], &go, 1), 1);
    while (!rx.end)
        if (net_poll(on_frame, &rx, 0) == 0)
            net_wait(-1);
    free(rx.want);
    return 0;
}

/* ------------------------------------------------------------ sender */

/* Frame seq of len bytes cut into n pieces of the given lengths (the last
 * takes the rest), sent with net_sendv until it is accepted. */
static void send_pieces(uint8_t *buf, uint32_t seq, size_t len, int how, const size_t *cuts,
                        int n)
{
    struct iovec v[NET_IOV_MAX];
    fill(buf, len, seq, how);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t k = i == n - 1 ? len - off : cuts[i] < len - off ? cuts[i] : len - off;
        /* an empty piece may have no address at all */
        v[i] = (struct iovec){k ? buf + off : NULL, k};
        off += k;
    }
    int rc;
    while ((rc = net_sendv(1, v, n)) == -EAGAIN)
        net_wait(-1);
    CHECK_EQ(rc, 0);
}

static void send_plain(uint8_t *buf, uint32_t seq, size_t len, int how)
{
    fill(buf, len, seq, how);
    int rc;
    while ((rc = net_send(1, buf, len)) == -EAGAIN)
        net_wait(-1);
    CHECK_EQ(rc, 0);
}

static void send_end(void)
{
    while (net_send(1, "E", 1) == -EAGAIN)
        net_wait(-1);
    while (net_flush() != 0)
        net_wait(-1);
}

/* Pieces of every count, empty ones among them, around small and
 * fragmented sizes; plain sends between them. */
static int sender_mixed(void)
{
    static uint8_t buf[BIG];
    static const struct {
        int n;                   /* pieces; the last one takes the rest */
        size_t cut[NET_IOV_MAX];
    } cuts[] = {
        {1, {0}},
        {3, {16, 40}},
        {5, {16, 0, 40, 0}},
        {8, {1, 2, 3, 4, 5, 6, 7}},
        {8, {0, 0, 0, 0, 0, 0, 0}},
        {5, {100, 900, 0, 1000}},
        {6, {16, 40, 1500, 7, 3000}},
    };
    static const size_t sizes[] = {4, 56, 57, 1000, 1024, 2000, 5000, 70000, BIG};
    uint32_t seq = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            send_pieces(buf, seq++, sizes[s], FILL_RANDOM, cuts[c].cut, cuts[c].n);
            send_plain(buf, seq++, sizes[s] / 3 + 4, FILL_RANDOM);
        }
    }
    send_end();
    return 0;
}

/* Fill the ring with sendv frames while nobody reads: -EAGAIN, and again
 * after a while (nothing taken); a big frame then goes partly to the
 * backlog, and -EAGAIN holds until the backlog has drained. */
static int sender_full(const struct plan *p)
{
    static uint8_t buf[BIG];
    static const size_t cuts[] = {16, 40};
    struct iovec v[3];
    uint32_t seq = 0;
    for (;;) {
        fill(buf, 100, seq, FILL_RANDOM);
        v[0] = (struct iovec){buf, 16};
        v[1] = (struct iovec){buf + 16, 40};
        v[2] = (struct iovec){buf + 56, 44};
        int rc = net_sendv(1, v, 3);
        if (rc == -EAGAIN)
            break;
        CHECK_EQ(rc, 0);
        seq++;
    }
    CHECK(seq > 4 && seq < RING / 100);
    usleep(10000);
    CHECK_EQ(net_sendv(1, v, 3), -EAGAIN); /* nobody read: still full */
    CHECK_EQ(write(p->wake_fd[1], "g", 1), 1);
    send_pieces(buf, seq++, 100, FILL_RANDOM, cuts, 3); /* waits for room */
    send_pieces(buf, seq++, BIG, FILL_RANDOM, cuts, 3);
    fill(buf, 100, seq, FILL_RANDOM);
    CHECK_EQ(net_sendv(1, v, 3), -EAGAIN); /* the backlog comes first */
    while (net_flush() != 0)
        net_wait(-1);
    send_pieces(buf, seq++, 100, FILL_RANDOM, cuts, 3);
    send_end();
    return 0;
}

/* Many laps round the ring: records of one line (56-byte frames) end
 * exactly at its end; others of varied lengths need PAD records. */
static int sender_laps(void)
{
    static uint8_t buf[4 * RING];
    static const size_t cuts[] = {16, 40, 3};
    uint32_t seq = 0;
    for (int i = 0; i < 3000; i++) {
        size_t len = i < 1000 ? 56 : 4 + (size_t)(i * 53) % 900;
        if (i % 3)
            send_pieces(buf, seq++, len, FILL_HEADERS, cuts, 3);
        else
            send_plain(buf, seq++, len, FILL_HEADERS);
    }
    send_end();
    return 0;
}

/* ------------------------------------------------------------ cases */

static int run_mixed(int me, void *arg)
{
    return me == 0 ? sender_mixed() : receive_all(arg);
}

static int run_full(int me, void *arg)
{
    return me == 0 ? sender_full(arg) : receive_all(arg);
}

static int run_laps(int me, void *arg)
{
    return me == 0 ? sender_laps() : receive_all(arg);
}

TEST(sendv_is_concatenation_in_fifo)
{
    struct plan p = {.fill = FILL_RANDOM, .wake_fd = {-1, -1}};
    net_config_t cfg = nt_config(RING * 4, NET_IDLE_ADAPTIVE);
    nt_run_job(2, &cfg, run_mixed, &p);
}

TEST(sendv_full_ring_eagain_then_backlog)
{
    struct plan p = {.fill = FILL_RANDOM};
    CHECK_EQ(pipe(p.wake_fd), 0);
    net_config_t cfg = nt_config(RING, NET_IDLE_BLOCK);
    nt_run_job(2, &cfg, run_full, &p);
    close(p.wake_fd[0]);
    close(p.wake_fd[1]);
}

TEST(sendv_wraps_round_the_ring)
{
    struct plan p = {.fill = FILL_HEADERS, .wake_fd = {-1, -1}};
    net_config_t cfg = nt_config(RING, NET_IDLE_ADAPTIVE);
    nt_run_job(2, &cfg, run_laps, &p);
}

TEST(sendv_bad_arguments)
{
    net_shm_seg_t *seg;
    net_config_t cfg = nt_config(RING, NET_IDLE_BLOCK);
    struct iovec v[NET_IOV_MAX + 1] = {{(void *)"ab", 2}};
    CHECK_EQ(net_sendv(1, v, 1), -ENOTCONN);
    CHECK_EQ(net_shm_create(2, &cfg, &seg), 0);
    CHECK_EQ(net_init_shm(seg, 0, &cfg), 0);
    CHECK_EQ(net_sendv(1, v, 0), -EINVAL);
    CHECK_EQ(net_sendv(1, v, NET_IOV_MAX + 1), -EINVAL);
    CHECK_EQ(net_sendv(0, v, 1), -EINVAL); /* itself */
    v[1] = (struct iovec){NULL, NET_FRAME_MAX};
    CHECK_EQ(net_sendv(1, v, 2), -EMSGSIZE); /* 2 + NET_FRAME_MAX */
    net_fini();
    net_shm_destroy(seg);
}

HARNESS_MAIN()
