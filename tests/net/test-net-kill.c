/*
 * test-net-kill - a node killed with SIGKILL (asleep in net_wait, in the
 * middle of sending a fragmented frame) hangs nobody: sends to it fill
 * its ring and then get -EAGAIN, waiting on it times out, the two other
 * nodes keep talking, and what it published before dying is delivered.
 * The segment is a memfd: nothing appears in /dev/shm, before or after.
 */
#include "harness.h"
#include "nettest.h"

#include <errno.h>

#define RING (64 << 10)
#define BIG (4u << 20)
#define ROUNDS 200

static int ready_fd = -1;

/* Node 2: half a big frame to node 0, a whole one to node 1, then sleep. */
static int victim(void)
{
    uint8_t *big = calloc(1, BIG);
    CHECK(big);
    CHECK_EQ(net_send(0, big, BIG), 0); /* most of it stays in the backlog */
    CHECK_EQ(net_send(1, "hello", 5), 0);
    CHECK_EQ(write(ready_fd, "r", 1), 1);
    for (;;)
        net_wait(-1);
}

struct rx {
    int from[3];
    bool hello;
};

static void on_frame(void *ctx, int src, const void *data, size_t len)
{
    struct rx *rx = ctx;
    CHECK(src >= 0 && src < 2 + 1);
    rx->from[src]++;
    if (src == 2) {
        CHECK_EQ(len, 5);
        CHECK(memcmp(data, "hello", 5) == 0);
        rx->hello = true;
    }
}

static bool maps_have(const char *what)
{
    char line[512];
    bool found = false;
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f);
    while (fgets(line, sizeof line, f))
        found |= strstr(line, what) != NULL;
    fclose(f);
    return found;
}

/* Node 0: fills the dead node's ring, then ping-pongs with node 1. */
static int survivor0(struct rx *rx)
{
    CHECK(maps_have("memfd:upvm-net"));
    static uint8_t frame[1000];
    int n = 0, rc;
    while ((rc = net_send(2, frame, sizeof frame)) == 0)
        n++;
    CHECK_EQ(rc, -EAGAIN);
    CHECK(n > 0 && n <= RING / (int)sizeof frame);
    CHECK_EQ(net_poll(on_frame, rx, 0), 0); /* the start of node 2's frame */
    CHECK_EQ(net_wait(30000000), 0);        /* no one will free that space */
    for (uint32_t i = 0; i < ROUNDS; i++) {
        CHECK_EQ(net_send(1, &i, sizeof i), 0);
        while (rx->from[1] == (int)i)
            if (net_poll(on_frame, rx, 0) == 0)
                net_wait(-1);
        CHECK_EQ(net_send(2, frame, sizeof frame), -EAGAIN);
    }
    CHECK_EQ(rx->from[2], 0); /* its half frame never completes */
    return 0;
}

static int survivor1(struct rx *rx)
{
    for (uint32_t i = 0; i < ROUNDS; i++) {
        while (rx->from[0] == (int)i)
            if (net_poll(on_frame, rx, 0) == 0)
                net_wait(-1);
        CHECK_EQ(net_send(0, &i, sizeof i), 0);
    }
    while (!rx->hello)
        if (net_poll(on_frame, rx, 0) == 0)
            net_wait(-1);
    return 0;
}

static int node(int me, void *arg)
{
    struct rx rx = {{0}, false};
    if (me == 2)
        return victim();
    return me == 0 ? survivor0(&rx) : survivor1(&rx);
}

static void kill_one(net_idle_t idle)
{
    net_config_t cfg = nt_config(RING, idle);
    net_shm_seg_t *seg;
    int p[2];
    char c;
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(net_shm_create(3, &cfg, &seg), 0);
    ready_fd = p[1];
    pid_t v = nt_spawn(seg, 2, &cfg, node, NULL);
    CHECK_EQ(read(p[0], &c, 1), 1);
    usleep(10000); /* let it fall asleep in net_wait */
    CHECK_EQ(kill(v, SIGKILL), 0);
    int st;
    CHECK_EQ(waitpid(v, &st, 0), v);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    pid_t a = nt_spawn(seg, 0, &cfg, node, NULL);
    pid_t b = nt_spawn(seg, 1, &cfg, node, NULL);
    net_shm_destroy(seg);
    nt_expect_exit0(a);
    nt_expect_exit0(b);
    close(p[0]);
    close(p[1]);
}

TEST(killed_node_block) { kill_one(NET_IDLE_BLOCK); }
TEST(killed_node_adaptive) { kill_one(NET_IDLE_ADAPTIVE); }

/* Nothing in /dev/shm before a case, nor after it. */
static void no_shm_files(void) { CHECK_EQ(nt_upvm_shm_files(), 0); }
HARNESS_BEFORE(no_shm_files)
HARNESS_AFTER(no_shm_files)

HARNESS_MAIN()
