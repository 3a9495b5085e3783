/*
 * test-net-mpi - the transport of a job of MPI ranks (net_init_mpi:
 * src/net/hybrid.c over mpi.c and shm.c) against net.h's contract, as the
 * shm tests check shm.c.  Run by mpirun with 2 and 3 ranks
 * (tests/net/CMakeLists.txt): with UPVM_NET_LOCAL=mpi over TCP and over
 * Open MPI's default transports (every frame by MPI, mpi.c alone); and as
 * the hybrid, where ranks of one host use shared memory, with every rank
 * on one host, and with rank 2 on a pretend host of its own
 * (UPVM_TEST_NET_HOSTS=0,0,1, read by mpi.c: the MPI library sees one
 * machine), so that the cases mix both paths.  Every rank runs every case,
 * and each case brings the transport up with its own settings (the
 * environment's UPVM_NET_LOCAL) and ends with every frame and wake it
 * sent taken, then a barrier and net_fini.
 *
 * Frame (src, dst, seq) has a length and bytes that are functions of the
 * three alone (frame_len, nt_fill), so a receiver that counts what each
 * sender sent it checks contents, pairwise FIFO and exactly-once at once:
 * a lost, repeated or reordered frame has the wrong length or bytes.
 *
 * Nothing waits on a wall-clock sleep: a rank waits for a condition (a
 * frame, a count, a thread's state in /proc) with net_wait and MPI, under
 * an alarm that fails a hang.  Exit 77 (skipped) when the build has no MPI
 * transport.
 */
#ifndef UPVM_HAVE_MPI
#include <stdio.h>

int main(void)
{
    fprintf(stderr, "skipped: this build has no MPI transport (no MPI library was found, or "
                    "UPVM_WITH_MPI=OFF; scripts/install-deps.sh installs Open MPI)\n");
    return 77;
}
#else
#define _GNU_SOURCE
#include "nettest.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#ifdef UPVM_SANITIZE
#include <sanitizer/lsan_interface.h>
#endif

#define MAXN 16
#define MB ((size_t)1 << 20)
#define BIG (64 * MB)     /* the storm's one big frame, from node 0 to node 1 */
#define STORM_FRAMES 300  /* per ordered pair */

static int me, nn;

#define RUN_CASE(name)                                                         \
    do {                                                                       \
        if (me == 0)                                                           \
            fprintf(stderr, "-- %s (%d ranks)\n", #name, nn);                  \
        test_##name();                                                         \
    } while (0)

/* ---------------------------------------------------------------- frames */

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

/* Mostly small frames (0 B included), some of a few KiB, a few of up to
 * 3.25 MiB, and one of 64 MiB from node 0 to node 1. */
static size_t frame_len(int src, int dst, uint32_t seq)
{
    uint32_t h = mix((uint32_t)src * 7919u + (uint32_t)dst * 104729u + seq);
    if (src == 0 && dst == 1 && seq == 7)
        return BIG;
    if (seq % 50 == 3)
        return 256 * 1024 + h % (3 * MB);
    if (seq % 10 == 5)
        return 1024 + h % 65536;
    return h % 200;
}

/* Whether buf holds nt_fill's bytes of frame (src, dst, seq), checked as
 * they are generated (no second buffer of 64 MiB or 2 GiB). */
static bool frame_ok(const uint8_t *buf, size_t len, int src, int dst, uint32_t seq)
{
    uint64_t x = ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ seq ^ 0x9e3779b97f4a7c15ull;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        if (memcmp(buf + i, &x, 8) != 0)
            return false;
    }
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return memcmp(buf + i, &x, len - i) == 0;
}

static uint8_t *frame_new(size_t len, int src, int dst, uint32_t seq)
{
    uint8_t *b = malloc(len + 8);
    CHECK(b);
    nt_fill(b, len, src, dst, seq);
    return b;
}

/* What this node got: frames from each sender, in order. */
struct got {
    uint32_t n[MAXN];
    size_t bytes;
    size_t (*len_of)(int src, int dst, uint32_t seq);
};

static void take(void *ctx, int src, const void *data, size_t len)
{
    struct got *g = ctx;
    uint32_t seq = g->n[src];
    CHECK(src >= 0 && src < nn && src != me);
    size_t want = g->len_of(src, me, seq);
    if (len != want || !frame_ok(data, len, src, me, seq)) {
        fprintf(stderr, "node %d: frame %u from %d: %zu bytes, wanted %zu%s\n", me, seq, src,
                len, want, len == want ? ", wrong bytes" : "");
        exit(1);
    }
    g->n[src]++;
    g->bytes += len;
}

static void no_frame(void *ctx, int src, const void *data, size_t len)
{
    fprintf(stderr, "node %d: unexpected frame of %zu bytes from %d\n", me, len, src);
    exit(1);
}

/* Polls (waiting when nothing came) until g has n frames from src. */
static void take_until(struct got *g, int src, uint32_t n)
{
    while (g->n[src] < n) {
        int rc = net_poll(take, g, 0);
        CHECK(rc >= 0);
        if (rc == 0)
            net_wait(-1);
    }
}

/* net_send, retried after poll / wait while the path is full. */
static void send_retry(int dst, const void *data, size_t len, struct got *g)
{
    int rc;
    while ((rc = net_send(dst, data, len)) == -EAGAIN)
        if (net_poll(take, g, 0) == 0)
            net_wait(-1);
    CHECK_EQ(rc, 0);
}

/* ------------------------------------------------------------ bring-up */

static void up(size_t ring, net_idle_t idle)
{
    net_config_t cfg;
    (void)net_config_from_env(&cfg); /* UPVM_NET_LOCAL */
    cfg.ring_bytes = ring;
    cfg.idle = idle;
    cfg.spin_ns = 5000;
    cfg.spin_max_ns = 100000;
    CHECK_EQ(net_init_mpi(&cfg), 0);
    CHECK_EQ(net_node(), me);
    CHECK_EQ(net_nnodes(), nn);
}

/* Every frame and wake of the case was taken (its protocol says so); the
 * barrier keeps one node's net_fini from dropping what another still
 * sends. */
static void down(void)
{
    while (net_flush() == -EAGAIN)
        net_wait(1000000);
    MPI_Barrier(MPI_COMM_WORLD);
    net_fini();
}

/* ----------------------------------------------------------------- cases */

/* Node numbers, membership as net.h says for MPI, argument checks. */
static void test_basics(void)
{
    CHECK_EQ(net_node(), -1);
    CHECK_EQ(net_send(0, "x", 1), -ENOTCONN);
    CHECK_EQ(net_path(0), -ENOTCONN);
    up(NET_RING_DEFAULT, NET_IDLE_BLOCK);
    CHECK_EQ(net_init_mpi(NULL), -EBUSY);
    for (int n = 0; n < nn; n++) {
        CHECK_EQ(net_peer_state(n), NET_PEER_UP);
        CHECK(net_board(n) == NULL);
        CHECK_EQ(net_request_start(n), -EBUSY);
        CHECK_EQ(net_peer_status(n), 0);
    }
    CHECK_EQ(net_peer_state(nn), NET_PEER_ABSENT);
    CHECK_EQ(net_request_start(nn), -EINVAL);
    CHECK_EQ(net_events(), 0);
    CHECK_EQ(net_send(me, "x", 1), -EINVAL);
    CHECK_EQ(net_send(nn, "x", 1), -EINVAL);
    CHECK_EQ(net_send(-1, "x", 1), -EINVAL);
    struct iovec v[NET_IOV_MAX + 1] = {{NULL, 0}};
    CHECK_EQ(net_sendv((me + 1) % nn, v, 0), -EINVAL);
    CHECK_EQ(net_sendv((me + 1) % nn, v, NET_IOV_MAX + 1), -EINVAL);
    v[0].iov_len = NET_FRAME_MAX;
    v[1].iov_len = 1;
    CHECK_EQ(net_sendv((me + 1) % nn, v, 2), -EMSGSIZE);
    CHECK_EQ(net_wait(0), 0);
    down();
    CHECK_EQ(net_node(), -1);
    CHECK_EQ(net_events(), 0);
}

/* ----------------------------------------------------------------- paths */

/* Rank r's pretend host: mpi.c's reading of UPVM_TEST_NET_HOSTS. */
static int test_host(int r)
{
    return net_mpi_test_host(r);
}

/* Ranks of one host share memory unless UPVM_NET_LOCAL=mpi. */
static bool local_shm(void)
{
    const char *l = getenv("UPVM_NET_LOCAL");
    return !l || strcmp(l, "mpi") != 0;
}

/* How frames to dst should go (shared: the segment was shared). */
static int want_path(int dst, bool shared)
{
    return shared && test_host(dst) == test_host(me) ? NET_PATH_SHM : NET_PATH_MPI;
}

/* Whether this process maps a segment of the transport, and whether it
 * holds an fd to one (memfds are named "upvm-net": /memfd:upvm-net). */
static void memfd_use(bool *mapped, bool *open)
{
    char line[512], path[300], target[256];
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f);
    *mapped = *open = false;
    while (fgets(line, sizeof line, f))
        *mapped |= strstr(line, "/memfd:upvm-net") != NULL;
    fclose(f);
    DIR *d = opendir("/proc/self/fd");
    CHECK(d);
    for (struct dirent *e; (e = readdir(d));) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n > 0) {
            target[n] = 0;
            *open |= strncmp(target, "/memfd:upvm-net", 15) == 0;
        }
    }
    closedir(d);
}

/* Each rank sends every other 3 frames and takes theirs. */
static size_t three_len(int src, int dst, uint32_t seq)
{
    return seq == 1 ? 100000 : 8 * seq;
}

static void exchange_three(void)
{
    struct got g = {.len_of = three_len};
    for (uint32_t s = 0; s < 3; s++)
        for (int d = 0; d < nn; d++)
            if (d != me) {
                uint8_t *b = frame_new(three_len(me, d, s), me, d, s);
                send_retry(d, b, three_len(me, d, s), &g);
                free(b);
            }
    for (int s = 0; s < nn; s++)
        if (s != me)
            take_until(&g, s, 3);
}

/* Frames to the ranks of this (pretend) host go through shared memory,
 * the others by MPI, as net_path says; the segment is mapped then, and
 * no fd of it is left open (the creator closed its own after the others
 * had mapped it), nor the mapping after net_fini. */
static void test_paths(void)
{
    bool mapped, open;
    int nshm = 0;
    up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
    for (int d = 0; d < nn; d++) {
        if (d == me) {
            CHECK_EQ(net_path(d), -EINVAL);
            continue;
        }
        CHECK_EQ(net_path(d), want_path(d, local_shm()));
        nshm += net_path(d) == NET_PATH_SHM;
    }
    CHECK_EQ(net_path(nn), -EINVAL);
    memfd_use(&mapped, &open);
    CHECK_EQ(mapped, nshm > 0);
    CHECK(!open);
    fprintf(stderr, "   node %d: %d of %d peers through shared memory\n", me, nshm, nn - 1);
    exchange_three();
    down();
    memfd_use(&mapped, &open);
    CHECK(!mapped && !open);
}

/* When the ranks of a host cannot share the segment (a hardened /proc:
 * UPVM_TEST_NET_NO_PROC=1 makes the joiners' open fail), all of that
 * host's frames go by MPI, and one line per host says so. */
static void test_fallback(void)
{
    char name[] = "/tmp/test-net-mpi-XXXXXX", buf[4096];
    int tmp = mkstemp(name), lines = 0, total = 0, hosts = 0;
    CHECK(tmp >= 0);
    unlink(name);
    fflush(stderr);
    int saved = dup(2);
    CHECK(saved >= 0 && dup2(tmp, 2) == 2);
    setenv("UPVM_TEST_NET_NO_PROC", "1", 1);
    up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
    unsetenv("UPVM_TEST_NET_NO_PROC");
    fflush(stderr);
    CHECK(dup2(saved, 2) == 2);
    close(saved);
    ssize_t n = pread(tmp, buf, sizeof buf - 1, 0);
    close(tmp);
    buf[n > 0 ? n : 0] = 0;
    for (char *p = buf; (p = strstr(p, "cannot share memory")); p++)
        lines++;
    if (lines)
        fprintf(stderr, "   node %d said: %s", me, buf);
    for (int d = 0; d < nn; d++)
        if (d != me)
            CHECK_EQ(net_path(d), NET_PATH_MPI);
    bool mapped, open;
    memfd_use(&mapped, &open);
    CHECK(!mapped && !open);
    exchange_three();
    down();
    MPI_Allreduce(&lines, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int h = 0; local_shm() && h < nn; h++) { /* pretend hosts with 2+ ranks */
        int k = 0;
        for (int r = 0; r < nn; r++)
            k += test_host(r) == h;
        hosts += k >= 2;
    }
    CHECK_EQ(total, hosts);
}

/* Sizes around MPI's and malloc's thresholds, 0 B first, from every node
 * to every other. */
static const size_t some_sizes[] = {0, 1, 7, 8, 56, 4095, 4096, 65535, 65536, 65537, MB, 0};
#define NSOME (sizeof some_sizes / sizeof some_sizes[0])

static size_t some_len(int src, int dst, uint32_t seq)
{
    return some_sizes[seq % NSOME];
}

static void test_sizes(void)
{
    struct got g = {.len_of = some_len};
    up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
    for (uint32_t s = 0; s < NSOME; s++)
        for (int d = 0; d < nn; d++)
            if (d != me) {
                uint8_t *b = frame_new(some_len(me, d, s), me, d, s);
                send_retry(d, b, some_len(me, d, s), &g);
                free(b);
            }
    for (int s = 0; s < nn; s++)
        if (s != me)
            take_until(&g, s, NSOME);
    down();
}

/* net_sendv: a frame in up to 8 pieces, empty ones (with no address)
 * among them, arrives as their concatenation, in order with net_send's. */
#define SENDV_FRAMES 64

static size_t sendv_len(int src, int dst, uint32_t seq)
{
    return seq % 4 == 3 ? 300000 + seq : seq * 37;
}

static void test_sendv(void)
{
    struct got g = {.len_of = sendv_len};
    up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
    for (uint32_t s = 0; s < SENDV_FRAMES; s++)
        for (int d = 0; d < nn; d++) {
            if (d == me)
                continue;
            size_t len = sendv_len(me, d, s);
            uint8_t *b = frame_new(len, me, d, s);
            if (s % 2) { /* net_send */
                send_retry(d, b, len, &g);
                free(b);
                continue;
            }
            struct iovec v[NET_IOV_MAX];
            int k = 1 + (int)(s / 2) % NET_IOV_MAX;
            size_t off = 0;
            for (int i = 0; i < k; i++) {
                size_t piece = i == k - 1 ? len - off : (i % 3 == 1 ? 0 : (len - off) / 3);
                v[i] = (struct iovec){piece ? b + off : NULL, piece};
                off += piece;
            }
            int rc;
            while ((rc = net_sendv(d, v, k)) == -EAGAIN)
                if (net_poll(take, &g, 0) == 0)
                    net_wait(-1);
            CHECK_EQ(rc, 0);
            memset(b, 0xa5, len); /* copied: the bytes are ours again */
            free(b);
        }
    for (int s = 0; s < nn; s++)
        if (s != me)
            take_until(&g, s, SENDV_FRAMES);
    down();
}

/* Every node sends STORM_FRAMES frames of mixed sizes (0 B to 3 MiB, and
 * one of 64 MiB) to every other at once, retrying on -EAGAIN, while it
 * takes the others'; each arrives once, intact, in its sender's order. */
static void test_storm(void)
{
    struct got g = {.len_of = frame_len};
    uint32_t sent[MAXN] = {0};
    uint8_t *pending[MAXN] = {NULL};
    int left = nn - 1;
    uint64_t t0 = nt_now_ns();
    up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
    for (int d = 0; d < nn; d++)
        if (d == me)
            sent[d] = STORM_FRAMES;
    for (;;) {
        bool moved = false;
        for (int d = 0; d < nn; d++) {
            if (sent[d] == STORM_FRAMES)
                continue;
            size_t len = frame_len(me, d, sent[d]);
            if (!pending[d])
                pending[d] = frame_new(len, me, d, sent[d]);
            int rc = net_send(d, pending[d], len);
            if (rc == -EAGAIN)
                continue;
            CHECK_EQ(rc, 0);
            free(pending[d]);
            pending[d] = NULL;
            moved = true;
            if (++sent[d] == STORM_FRAMES)
                left--;
        }
        int rc = net_poll(take, &g, 0);
        CHECK(rc >= 0);
        bool all = left == 0;
        for (int s = 0; s < nn; s++)
            all = all && (s == me || g.n[s] == STORM_FRAMES);
        if (all)
            break;
        if (!moved && rc == 0)
            net_wait(-1);
    }
    if (me == 0)
        fprintf(stderr, "   node 0 took %.1f MB in %.2f s\n", (double)g.bytes / 1e6,
                (double)(nt_now_ns() - t0) / 1e9);
    down();
}

/* A node that does not poll: small frames to it get -EAGAIN after about
 * ring_bytes of them (the budget), frames to the others still go; once it
 * drains, net_wait(-1) of the sender returns (space freed) and the rest go
 * through.  Then one frame larger than the budget: accepted alone, the next
 * one -EAGAIN until it was taken; net_flush says -EAGAIN meanwhile. */
#define FLOOD_RING 65536
#define FLOOD_MORE 3000

static size_t small_len(int src, int dst, uint32_t seq)
{
    return 8;
}

static size_t big_or_small(int src, int dst, uint32_t seq)
{
    return seq == 0 ? 4 * FLOOD_RING : 8;
}

static void flood_sender(void)
{
    struct got g = {.len_of = small_len};
    uint32_t n = 0;
    uint8_t b[8];
    int rc;
    for (;; n++) {
        nt_fill(b, 8, 0, 1, n);
        if ((rc = net_send(1, b, 8)) != 0)
            break;
        CHECK(n < 100000);
    }
    CHECK_EQ(rc, -EAGAIN);
    fprintf(stderr, "   -EAGAIN after %u frames of 8 B (budget %d B)\n", n, FLOOD_RING);
    CHECK(n >= FLOOD_RING / (8 + 64) / 2); /* not refused early either */
    if (nn > 2) { /* the path to node 2 is not node 1's */
        nt_fill(b, 8, 0, 2, 0);
        CHECK_EQ(net_send(2, b, 8), 0);
    }
    MPI_Send(&n, 1, MPI_UINT32_T, 1, 0, MPI_COMM_WORLD);
    for (uint32_t end = n + FLOOD_MORE; n < end; n++) {
        nt_fill(b, 8, 0, 1, n);
        while ((rc = net_send(1, b, 8)) == -EAGAIN)
            if (net_poll(take, &g, 0) == 0)
                CHECK_EQ(net_wait(-1), 1); /* nothing comes to us: space freed */
        CHECK_EQ(rc, 0);
    }
}

static void flood_receiver(void)
{
    struct got g = {.len_of = small_len};
    uint32_t n;
    MPI_Recv(&n, 1, MPI_UINT32_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    take_until(&g, 0, n + FLOOD_MORE);
}

static void big_sender(void)
{
    struct got g = {.len_of = big_or_small};
    uint8_t *b = frame_new(4 * FLOOD_RING, 0, 1, 0);
    CHECK_EQ(net_send(1, b, 4 * FLOOD_RING), 0); /* nothing in flight: accepted */
    free(b);
    uint8_t s[8];
    nt_fill(s, 8, 0, 1, 1);
    CHECK_EQ(net_send(1, s, 8), -EAGAIN);
    CHECK_EQ(net_flush(), -EAGAIN);
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    send_retry(1, s, 8, &g);
}

static void test_flood(void)
{
    up(FLOOD_RING, NET_IDLE_BLOCK);
    if (me == 0) {
        flood_sender();
    } else if (me == 1) {
        flood_receiver();
    } else {
        struct got g = {.len_of = small_len};
        take_until(&g, 0, 1);
    }
    down();
    up(FLOOD_RING, NET_IDLE_BLOCK);
    if (me == 0) {
        big_sender();
    } else if (me == 1) {
        struct got g = {.len_of = big_or_small};
        int go;
        MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        take_until(&g, 0, 2);
    }
    down();
}

/* The callback sends: every node but 0 echoes node 0's frames from inside
 * its callback (keeping those refused with -EAGAIN for after the poll). */
#define ECHO_FRAMES 2000

static size_t echo_len(int src, int dst, uint32_t seq)
{
    return seq % 100 == 99 ? 200000 : seq % 64;
}

struct echo {
    uint32_t n;                  /* frames taken from node 0 */
    uint32_t echoed;             /* of which sent back */
    uint8_t *keep[ECHO_FRAMES];  /* refused ones, to send again */
    size_t keep_len[ECHO_FRAMES];
};

static void echo_back(void *ctx, int src, const void *data, size_t len)
{
    struct echo *e = ctx;
    CHECK_EQ(src, 0);
    CHECK(len == echo_len(0, me, e->n) && frame_ok(data, len, 0, me, e->n));
    e->n++;
    if (e->echoed == e->n - 1 && net_send(0, data, len) == 0) {
        e->echoed++;
        return;
    }
    e->keep[e->n - 1] = malloc(len + 1); /* in order after the refused one */
    CHECK(e->keep[e->n - 1]);
    memcpy(e->keep[e->n - 1], data, len);
    e->keep_len[e->n - 1] = len;
}

/* The echo of frame (0 -> me, seq) is that frame's bytes. */
static void take_echo(void *ctx, int src, const void *data, size_t len)
{
    uint32_t *n = ctx;
    CHECK(len == echo_len(0, src, n[src]) && frame_ok(data, len, 0, src, n[src]));
    n[src]++;
}

static void test_echo(void)
{
    up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
    if (me == 0) {
        uint32_t back[MAXN] = {0}, sent[MAXN] = {0};
        bool done = false;
        while (!done) {
            bool moved = false;
            done = true;
            for (int d = 1; d < nn; d++) {
                if (sent[d] < ECHO_FRAMES) {
                    size_t len = echo_len(0, d, sent[d]);
                    uint8_t *b = frame_new(len, 0, d, sent[d]);
                    int rc = net_send(d, b, len);
                    free(b);
                    CHECK(rc == 0 || rc == -EAGAIN);
                    moved |= rc == 0;
                    sent[d] += rc == 0;
                }
                done = done && back[d] == ECHO_FRAMES;
            }
            int rc = net_poll(take_echo, back, 0);
            CHECK(rc >= 0);
            if (!moved && rc == 0 && !done)
                net_wait(-1);
        }
    } else {
        struct echo *e = calloc(1, sizeof *e);
        CHECK(e);
        while (e->echoed < ECHO_FRAMES) {
            int rc = net_poll(echo_back, e, 0);
            CHECK(rc >= 0);
            bool moved = false;
            while (e->echoed < e->n && e->keep[e->echoed] &&
                   net_send(0, e->keep[e->echoed], e->keep_len[e->echoed]) == 0) {
                free(e->keep[e->echoed]);
                e->keep[e->echoed++] = NULL;
                moved = true;
            }
            if (rc == 0 && !moved)
                net_wait(-1);
        }
        free(e);
    }
    down();
}

/* net_wait: a timeout returns 0 after it, whatever the policy; a wake of
 * this node before the wait makes it return at once, and only once. */
static void test_wait_timeout(void)
{
    static const net_idle_t idles[] = {NET_IDLE_SPIN, NET_IDLE_BLOCK, NET_IDLE_ADAPTIVE};
    for (int i = 0; i < 3; i++) {
        up(NET_RING_DEFAULT, idles[i]);
        CHECK_EQ(net_wait(0), 0);
        uint64_t t0 = nt_now_ns();
        CHECK_EQ(net_wait(30000000), 0);
        uint64_t dt = nt_now_ns() - t0;
        CHECK(dt >= 30000000u);
        CHECK(dt < 2000000000u); /* generous: a loaded machine */
        net_wake(me);
        CHECK_EQ(net_wait(-1), 1);
        CHECK_EQ(net_wait(1000000), 0);
        CHECK_EQ(net_poll(no_frame, NULL, 0), 0);
        down();
    }
}

/* The scheduler thread's state letter in /proc ('S': asleep). */
static char thread_state(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    CHECK(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

struct waker {
    pid_t tid;        /* the thread in net_wait */
    int node;         /* whom to wake */
    _Atomic uint64_t woke_at;
};

/* Waits until the scheduler thread sleeps, then wakes `node`. */
static void *waker_main(void *arg)
{
    struct waker *w = arg;
    uint64_t deadline = nt_now_ns() + 10000000000ull;
    while (thread_state(w->tid) != 'S')
        CHECK(nt_now_ns() < deadline);
    atomic_store(&w->woke_at, nt_now_ns());
    net_wake(w->node);
    return NULL;
}

/* net_wake from another thread ends a net_wait(-1) of this node (the
 * control socket's thread does so on node 0); net_wake of another node
 * from the scheduler thread, then from another thread (by MPI: handed to
 * the scheduler thread), ends that node's net_wait(-1), and no frame
 * comes of it. */
static void test_wake(void)
{
    up(NET_RING_DEFAULT, NET_IDLE_BLOCK);
    struct waker w = {.tid = (pid_t)syscall(SYS_gettid), .node = me};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, waker_main, &w), 0);
    CHECK_EQ(net_wait(-1), 1);
    uint64_t late = nt_now_ns() - atomic_load(&w.woke_at);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(net_poll(no_frame, NULL, 0), 0);
    if (me == 0)
        fprintf(stderr, "   woken from another thread: net_wait returned %.0f us after\n",
                (double)late / 1e3);
    CHECK(late < 500000000u);
    MPI_Barrier(MPI_COMM_WORLD);

    /* from the scheduler thread: each node wakes the next */
    net_wake((me + 1) % nn);
    CHECK_EQ(net_wait(-1), 1);
    CHECK_EQ(net_poll(no_frame, NULL, 0), 0);
    MPI_Barrier(MPI_COMM_WORLD);

    /* from another thread, to another node: node 0 wakes node 1 (by MPI:
     * the wake is handed to node 0's scheduler thread, which is woken to
     * send it; through shared memory the helper wakes node 1 itself, and
     * node 0 sleeps on until its wait ends) */
    if (me == 0) {
        struct waker o = {.tid = w.tid, .node = 1};
        CHECK_EQ(pthread_create(&t, NULL, waker_main, &o), 0);
        if (net_path(1) == NET_PATH_MPI) {
            CHECK_EQ(net_wait(-1), 1); /* the helper woke us to send it */
        } else {
            while (!atomic_load(&o.woke_at))
                (void)net_wait(20000000);
        }
        CHECK_EQ(pthread_join(t, NULL), 0);
        CHECK_EQ(net_poll(no_frame, NULL, 0), 0);
    } else if (me == 1) {
        CHECK_EQ(net_wait(-1), 1);
        CHECK_EQ(net_poll(no_frame, NULL, 0), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* the same from node 1 to node 2 (in the hybrid with rank 2 on a host
     * of its own: by MPI, from a node that sleeps on its shared futex word) */
    if (nn > 2 && me == 1) {
        struct waker o = {.tid = w.tid, .node = 2};
        CHECK_EQ(pthread_create(&t, NULL, waker_main, &o), 0);
        if (net_path(2) == NET_PATH_MPI) {
            CHECK_EQ(net_wait(-1), 1);
        } else {
            while (!atomic_load(&o.woke_at))
                (void)net_wait(20000000);
        }
        CHECK_EQ(pthread_join(t, NULL), 0);
        CHECK_EQ(net_poll(no_frame, NULL, 0), 0);
    } else if (nn > 2 && me == 2) {
        CHECK_EQ(net_wait(-1), 1);
        CHECK_EQ(net_poll(no_frame, NULL, 0), 0);
    }
    down();
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* A node waiting with nothing coming: block and adaptive use next to no
 * CPU (the whole process's, MPI's threads included: getrusage), whether
 * it sleeps in mpi.c or in the hybrid (on its futex word, probing MPI
 * between sleeps when it has remote peers).  A node that spun would use
 * all of the wait's time. */
#define IDLE_CPU_MAX 0.05 /* of the wait: generous (ASan, a loaded machine) */

static const char *path_name(int dst)
{
    return net_path(dst) == NET_PATH_SHM ? "shm" : "MPI";
}

static void test_idle_cpu(void)
{
    static const net_idle_t idles[] = {NET_IDLE_BLOCK, NET_IDLE_ADAPTIVE};
    static const char *const names[] = {"block", "adaptive"};
    static const int64_t waits[] = {500000000, 1000000000}; /* the default: 1 s */
    for (int i = 0; i < 2; i++) {
        up(NET_RING_DEFAULT, idles[i]);
        double c0 = cpu_s(), t0 = (double)nt_now_ns();
        CHECK_EQ(net_wait(waits[i]), 0);
        double wall = ((double)nt_now_ns() - t0) / 1e9, frac = (cpu_s() - c0) / wall;
        CHECK(wall >= (double)waits[i] / 1e9);
        fprintf(stderr, "   node %d (to node %d: %s), %s: %.2f%% of a core while idle %.2f s\n",
                me, (me + 1) % nn, path_name((me + 1) % nn), names[i], 100 * frac, wall);
        CHECK(frac < IDLE_CPU_MAX);
        down();
    }
}

/* A sleeping node waits on the process's sockets too (mpi.c's doorbell):
 * a socket with data that nobody reads (here a socketpair's end the test
 * wrote to) must not turn its sleeps into spinning. */
static void test_idle_unread_socket(void)
{
    int sv[2];
    char byte = 'x';
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    CHECK_EQ(write(sv[1], &byte, 1), 1); /* sv[0] stays readable */
    up(NET_RING_DEFAULT, NET_IDLE_BLOCK);
    double c0 = cpu_s(), t0 = (double)nt_now_ns();
    CHECK_EQ(net_wait(1000000000), 0);
    double wall = ((double)nt_now_ns() - t0) / 1e9, frac = (cpu_s() - c0) / wall;
    fprintf(stderr, "   node %d, a socket with unread data: %.2f%% of a core while idle %.2f s\n",
            me, 100 * frac, wall);
    CHECK(frac < IDLE_CPU_MAX);
    down();
    close(sv[0]);
    close(sv[1]);
}

/* Frames above the block size go as one message of a derived datatype (as
 * frames above INT_MAX bytes always do): node 0 sends and receives that
 * way, node 1 with plain bytes, both ways, 64 MiB + 3 and 3 MiB. */
static size_t blocky_len(int src, int dst, uint32_t seq)
{
    return seq == 0 ? BIG + 3 : 3 * MB + seq;
}

static void test_blocks(void)
{
    if (me > 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
        down();
        return;
    }
    if (me == 0)
        net_mpi_set_block(MB + 8);
    MPI_Barrier(MPI_COMM_WORLD);
    up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
    struct got g = {.len_of = blocky_len};
    int peer = 1 - me;
    for (uint32_t s = 0; s < 3; s++) {
        uint8_t *b = frame_new(blocky_len(me, peer, s), me, peer, s);
        send_retry(peer, b, blocky_len(me, peer, s), &g);
        free(b);
    }
    take_until(&g, peer, 3);
    down();
    net_mpi_set_block(0);
}

/* Opt-in (UPVM_TEST_NET_MPI_HUGE=1; 6 GiB of memory): one frame of
 * NET_FRAME_MAX bytes, above INT_MAX, from node 0 to node 1. */
static size_t huge_len(int src, int dst, uint32_t seq)
{
    return NET_FRAME_MAX;
}

static void test_huge(void)
{
    up(NET_RING_DEFAULT, NET_IDLE_ADAPTIVE);
    struct got g = {.len_of = huge_len};
    if (me == 0) {
        uint8_t *b = frame_new(NET_FRAME_MAX, 0, 1, 0);
        uint64_t t0 = nt_now_ns();
        send_retry(1, b, NET_FRAME_MAX, &g);
        free(b);
        while (net_flush() == -EAGAIN)
            net_wait(1000000);
        fprintf(stderr, "   2 GiB frame sent in %.2f s\n", (double)(nt_now_ns() - t0) / 1e9);
    } else if (me == 1) {
        take_until(&g, 0, 1);
    }
    down();
}

int main(int argc, char **argv)
{
    int level;
    alarm(240); /* a hang fails this rank, and mpirun ends the others */
    CHECK_EQ(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &level), MPI_SUCCESS);
    CHECK(level >= MPI_THREAD_FUNNELED);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nn);
    if (nn < 2 || nn > MAXN) {
        fprintf(stderr, "test-net-mpi: run it with 2 to %d ranks (mpirun -np 2)\n", MAXN);
        MPI_Finalize();
        return 2;
    }
    RUN_CASE(basics);
    RUN_CASE(paths);
    RUN_CASE(sizes);
    RUN_CASE(sendv);
    RUN_CASE(storm);
    RUN_CASE(flood);
    RUN_CASE(echo);
    RUN_CASE(wait_timeout);
    RUN_CASE(wake);
    RUN_CASE(idle_cpu);
    RUN_CASE(idle_unread_socket);
    RUN_CASE(blocks);
    RUN_CASE(fallback);
    const char *huge = getenv("UPVM_TEST_NET_MPI_HUGE");
    if (huge && strcmp(huge, "1") == 0)
        RUN_CASE(huge);
#ifdef UPVM_SANITIZE
    /* Leaks are looked for here, while MPI's components are still loaded:
     * after MPI_Finalize unloads them, what they never freed has no name
     * that mpi-lsan.supp could match (the ctest sets leak_check_at_exit=0). */
    CHECK_EQ(__lsan_do_recoverable_leak_check(), 0);
#endif
    MPI_Finalize();
    return 0;
}
#endif
