/*
 * clock.c - the offset of each host's clock to node 0's, for a traced job
 * of several hosts (trace.h: trace_node_wire; design notes §14.6).
 *
 * Every node of one host shares CLOCK_MONOTONIC, so one node per host
 * measures: the lowest-numbered node of each host other than node 0's.
 * It sends node 0 PING frames, one at a time; node 0 answers each with a
 * PONG carrying its CLOCK_MONOTONIC when the ping came.  With t0 (sent)
 * and t3 (answer seen) here and t1 at node 0, the offset is t1 - (t0 +
 * t3) / 2, exact when the two ways take as long; of ROUNDS samples the one
 * with the shortest round trip is kept (its error is at most half of it).
 * The result is one TRC_OFFSET record; the converter adds it to the times
 * of every node of this host.  Measured once, when the job starts.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "node/job.h"
#include "trace/trace.h"
#include "trace/trace_impl.h"
#include "util/trace.h"

enum {
    K_TRC_PING = NODE_KINDS_TRACE, /* a: round; payload: nothing */
    K_TRC_PONG,                    /* a: round; payload: u64 node 0's time */
};

#define ROUNDS     16
#define PONG_WAIT  (1000 * 1000 * 1000) /* ns: node 0 answers well within */

static struct {
    upvm_waitq_t answered;
    int round;         /* the ping in flight */
    bool got;          /* its pong came */
    uint64_t t1;       /* node 0's time in it */
} clk;

static void on_ping(int src, const struct node_frame *f, const void *p, size_t len)
{
    uint64_t t1 = trc_mono_ns();
    struct node_frame r = {K_TRC_PONG, f->a, 0, 0};
    node_post(src, &r, &t1, sizeof t1, NULL, 0);
}

static void on_pong(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (src != 0 || f->a != clk.round || len != sizeof clk.t1)
        return;
    memcpy(&clk.t1, p, sizeof clk.t1);
    clk.got = true;
    (void)upvm_wake_one(&clk.answered);
}

/* Is this node the first of a host that is not node 0's? */
static bool measures(void)
{
    int self = node_job_self();
    const char *mine = node_job_host(self), *zero = node_job_host(0);
    if (!mine || !zero || !strcmp(mine, zero))
        return false;
    for (int n = 1; n < self; n++) {
        const char *h = node_job_host(n);
        if (h && !strcmp(h, mine))
            return false;
    }
    return true;
}

static void measure(void *unused)
{
    int64_t best_offset = 0;
    uint64_t best_rtt = UINT64_MAX;
    for (int i = 1; i <= ROUNDS; i++) {
        clk.round = i;
        clk.got = false;
        uint64_t t0 = trc_mono_ns();
        struct node_frame f = {K_TRC_PING, i, 0, 0};
        if (node_send(0, &f, NULL, 0, NULL, 0) != 0)
            return;
        while (!clk.got && upvm_wait(&clk.answered, PONG_WAIT) == 0)
            ;
        if (!clk.got)
            return; /* node 0 is gone or stuck: no offset, said by the converter */
        uint64_t t3 = trc_mono_ns();
        if (t3 - t0 < best_rtt) {
            best_rtt = t3 - t0;
            best_offset = (int64_t)clk.t1 - (int64_t)(t0 + (t3 - t0) / 2);
        }
    }
    trc_put(TRC_OFFSET, 0, 0, (uint32_t)(best_rtt > UINT32_MAX ? UINT32_MAX : best_rtt), 0,
            (uint64_t)best_offset);
}

/* Started once every node is ready (node_job_ready: frames then reach
 * their handlers): the ULP runs when this node first schedules. */
static void start_measuring(void *unused)
{
    if (measures())
        measure(NULL);
}

void trace_node_wire(void)
{
    if (!trace.hdr || !node_job_multi())
        return;
    upvm_waitq_init(&clk.answered, "trace clock offset");
    node_on_frame(K_TRC_PING, on_ping);
    node_on_frame(K_TRC_PONG, on_pong);
    if (node_job_self() == 0)
        return;
    upvm_attr_t detached = {0, "trace clock", UPVM_DETACHED};
    /* < 0 (no memory): no offset, which the converter says */
    (void)!(upvm_create(start_measuring, NULL, &detached) > 0);
}
