/*
 * bench_pvm.c - UPVM's PVM messaging, measured exactly as genuine PVM is by
 * the baseline programs (shared/baseline/pvm: pingpong.c, ring.c) and by
 * bench/pvm/mcast.c; bench/pvm-compare.sh runs both sides and prints them
 * side by side.
 *
 *   bench_pvm pingpong [-e raw|inplace|default] [-d share|copy] [size ...]
 *   bench_pvm ring -n N [-e ...] [-d ...]
 *   bench_pvm mcast -n N [-e ...] [-d ...] [size ...]
 *   common: [-b blocks] [-T block_ms]      (default 5 blocks of >= 20 ms)
 *
 * main() is the master task; its partners are thread-mode tasks (ULPs of
 * this one process) registered under the names "pingpong", "ring" and
 * "mcast" and started with pvm_spawn(), with the same "-child route enc"
 * arguments the genuine programs give their copies.  -d selects UPVM's
 * delivery strategy (upvm_set_delivery): share one buffer, or copy at send.
 *
 * ping-pong: master and partner exchange `size` bytes (initsend + pkbyte +
 *   send, recv + upkbyte on both sides); one checked exchange, 50 warm-up
 *   round trips, then timed blocks; half_rtt = block time / (2 x round
 *   trips) - the measurement of Figure 3 of the UPVM paper.
 * ring: master (member 0) and N-1 partners pass one int around; hop_us =
 *   time per full trip / N.  Setup (tid table by pvm_mcast) and 20 warm-up
 *   trips as in ring.c.
 * mcast: the exchange in bench/pvm/mcast_proto.h, the same text the
 *   genuine-PVM mcast.c runs.
 *
 * Each block runs enough iterations to last >= block_ms (calibrated, see
 * pvmbench.h); the printed value is the median over blocks, in the same
 * "RESULT key=value" lines as the genuine programs, with route=upvm and
 * deliver=share|copy, times in us with 4 decimals.
 */
#include <pvm3.h>
#include <upvm.h>

#include "pvm/mcast_proto.h"
#include "pvm/pvmbench.h"

#define PP_TAG_CTRL 10
#define PP_TAG_PING 11
#define PP_TAG_PONG 12
#define RING_TAG_SETUP 20
#define RING_TAG_TOKEN 21
#define RING_MAXN 1024
#define MAXSIZE (16 * 1024 * 1024)

/* ------------------------------------------------------------ ping-pong */

/* The echo partner: argv = { name, "-child", route, enc }. */
static int pingpong_task(int argc, char **argv)
{
    int parent = pvm_parent(), size = 0, bytes, tag, src;
    char *buf = malloc(MAXSIZE);

    if (argc < 4 || !buf) {
        free(buf);
        pvm_exit();
        return 2;
    }
    int enc = pb_parse_enc(argv[3]);
    for (;;) {
        int bufid = pvm_recv(parent, -1);
        if (bufid < 0 || pvm_bufinfo(bufid, &bytes, &tag, &src) < 0)
            break;
        if (tag == PP_TAG_CTRL) {
            pvm_upkint(&size, 1, 1);
            if (size < 0)
                break;
            continue;
        }
        if (size > 0)
            pvm_upkbyte(buf, size, 1);
        pvm_initsend(enc);
        if (size > 0)
            pvm_pkbyte(buf, size, 1);
        pvm_send(parent, PP_TAG_PONG);
    }
    free(buf);
    pvm_exit();
    return 0;
}

struct pp_ctx {
    int peer, enc, size;
    char *sbuf, *rbuf;
};

static void pp_roundtrip(const struct pp_ctx *c)
{
    pvm_initsend(c->enc);
    if (c->size > 0)
        pvm_pkbyte(c->sbuf, c->size, 1);
    pvm_send(c->peer, PP_TAG_PING);
    pvm_recv(c->peer, PP_TAG_PONG);
    if (c->size > 0)
        pvm_upkbyte(c->rbuf, c->size, 1);
}

static void pp_loop(void *ctx, long iters)
{
    for (long i = 0; i < iters; i++)
        pp_roundtrip(ctx);
}

static void send_int(int tid, int tag, int value)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&value, 1, 1);
    pvm_send(tid, tag);
}

/* One size: tell the partner, check one exchange, warm up, time. */
static int pp_measure(struct pp_ctx *c, const struct pb_opts *o, int seed)
{
    double t[PB_MAXBLOCKS], min;

    send_int(c->peer, PP_TAG_CTRL, c->size);
    pb_fill(c->sbuf, c->size, seed);
    memset(c->rbuf, 0, (size_t)c->size);
    pp_roundtrip(c);
    if (memcmp(c->sbuf, c->rbuf, (size_t)c->size)) {
        fprintf(stderr, "bench_pvm: pingpong data mismatch at size %d\n",
                c->size);
        return 1;
    }
    pp_loop(c, 50);
    long iters = pb_calibrate(pp_loop, c, 100, o->block_ms * 1e6);
    pb_time_blocks(pp_loop, c, iters, o->blocks, t);
    for (int b = 0; b < o->blocks; b++)
        t[b] /= 2.0; /* per half round trip */
    double med = pb_median(t, o->blocks, &min);
    printf("RESULT pingpong route=upvm deliver=%s enc=%s size=%d iters=%ld "
           "blocks=%d half_rtt_us=%.4f min_us=%.4f\n",
           o->deliver, o->encname, c->size, iters, o->blocks, med / 1e3,
           min / 1e3);
    fflush(stdout);
    return 0;
}

static int pingpong_master(const struct pb_opts *o)
{
    struct pp_ctx c = {.enc = o->enc};
    char *cargv[] = {"-child", "upvm", (char *)o->encname, NULL};
    int rc = 0;

    if (pvm_spawn("pingpong", cargv, PvmTaskDefault, "", 1, &c.peer) != 1) {
        fprintf(stderr, "bench_pvm: pvm_spawn(pingpong) failed: %d\n", c.peer);
        return 1;
    }
    c.sbuf = malloc(MAXSIZE);
    c.rbuf = malloc(MAXSIZE);
    if (!c.sbuf || !c.rbuf)
        return 1;
    for (int k = 0; k < o->nsizes && !rc; k++) {
        c.size = o->sizes[k];
        rc = pp_measure(&c, o, k + 1);
    }
    send_int(c.peer, PP_TAG_CTRL, -1);
    free(c.sbuf);
    free(c.rbuf);
    return rc;
}

/* ----------------------------------------------------------------- ring */

static void ring_pass(int enc, int dest, int token)
{
    pvm_initsend(enc);
    pvm_pkint(&token, 1, 1);
    pvm_send(dest, RING_TAG_TOKEN);
}

static int ring_take(int src)
{
    int token = 0;
    pvm_recv(src, RING_TAG_TOKEN);
    pvm_upkint(&token, 1, 1);
    return token;
}

/* Member me of n forwards tokens until -1 has passed. */
static void ring_forward(const int *tids, int n, int me, int enc)
{
    for (;;) {
        int token = ring_take(tids[me - 1]);
        ring_pass(enc, tids[(me + 1) % n], token);
        if (token < 0)
            break;
    }
}

/* A ring member: argv = { name, "-child", route, enc }. */
static int ring_task(int argc, char **argv)
{
    int n = 0, me = -1, mytid = pvm_mytid();
    int *tids = malloc(RING_MAXN * sizeof *tids);

    if (argc >= 4 && tids) {
        pvm_recv(pvm_parent(), RING_TAG_SETUP);
        pvm_upkint(&n, 1, 1);
        if (n > 1 && n <= RING_MAXN)
            pvm_upkint(tids, n, 1);
        for (int i = 0; i < n && n <= RING_MAXN; i++)
            if (tids[i] == mytid)
                me = i;
        if (me >= 1)
            ring_forward(tids, n, me, pb_parse_enc(argv[3]));
    }
    free(tids);
    pvm_exit();
    return me >= 1 ? 0 : 1;
}

struct ring_ctx {
    int *tids, n, enc;
};

static void ring_loop(void *ctx, long trips)
{
    const struct ring_ctx *c = ctx;
    for (long i = 0; i < trips; i++) {
        ring_pass(c->enc, c->tids[1], (int)(i & 0xffffff));
        ring_take(c->tids[c->n - 1]);
    }
}

/* 20 warm-up trips, each checked; returns the first one's duration (us)
 * or -1 if a token came back wrong. */
static double ring_warm(const struct ring_ctx *c)
{
    double t0 = pb_now_ns(), first = 0;
    for (int i = 0; i < 20; i++) {
        ring_pass(c->enc, c->tids[1], i);
        if (ring_take(c->tids[c->n - 1]) != i)
            return -1;
        if (i == 0)
            first = (pb_now_ns() - t0) / 1e3;
    }
    return first;
}

static int ring_start(struct ring_ctx *c, const struct pb_opts *o)
{
    char *cargv[] = {"-child", "upvm", (char *)o->encname, NULL};
    int got = pvm_spawn("ring", cargv, PvmTaskDefault, "", c->n - 1,
                        c->tids + 1);
    if (got != c->n - 1) {
        fprintf(stderr, "bench_pvm: spawned %d of %d ring tasks\n", got,
                c->n - 1);
        return 1;
    }
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&c->n, 1, 1);
    pvm_pkint(c->tids, c->n, 1);
    pvm_mcast(c->tids + 1, c->n - 1, RING_TAG_SETUP);
    return 0;
}

static int ring_master(const struct pb_opts *o)
{
    struct ring_ctx c = {.n = o->ntask, .enc = o->enc};
    double t[PB_MAXBLOCKS], min;

    if (c.n < 2 || c.n > RING_MAXN || !(c.tids = calloc((size_t)c.n, sizeof(int)))) {
        fprintf(stderr, "bench_pvm: ring -n must be 2..%d\n", RING_MAXN);
        return 2;
    }
    c.tids[0] = pvm_mytid();
    double t0 = pb_now_ns();
    if (ring_start(&c, o))
        return 1;
    double spawn_us = (pb_now_ns() - t0) / 1e3, first_us = ring_warm(&c);
    if (first_us < 0) {
        fprintf(stderr, "bench_pvm: ring token corrupted\n");
        return 1;
    }
    long trips = pb_calibrate(ring_loop, &c, 1000 / c.n + 1, o->block_ms * 1e6);
    pb_time_blocks(ring_loop, &c, trips, o->blocks, t);
    double med = pb_median(t, o->blocks, &min) / 1e3;
    printf("RESULT ring route=upvm deliver=%s enc=%s n=%d trips=%ld blocks=%d "
           "trip_us=%.4f hop_us=%.4f min_trip_us=%.4f spawn_us=%.1f "
           "first_trip_us=%.1f\n",
           o->deliver, o->encname, c.n, trips, o->blocks, med, med / c.n,
           min / 1e3, spawn_us, first_us);
    fflush(stdout);
    ring_pass(c.enc, c.tids[1], -1); /* every member exits */
    ring_take(c.tids[c.n - 1]);
    free(c.tids);
    return 0;
}

/* ----------------------------------------------------------------- main */

UPVM_TASK("pingpong", pingpong_task)
UPVM_TASK("ring", ring_task)
UPVM_TASK("mcast", mcast_child)

static void default_sizes(struct pb_opts *o, const int *sizes, int n)
{
    if (o->nsizes == 0)
        for (int k = 0; k < n; k++)
            o->sizes[o->nsizes++] = sizes[k];
}

static int set_delivery(const char *name)
{
    if (!strcmp(name, "share"))
        return upvm_set_delivery(UPVM_DELIVER_SHARE) < 0;
    if (!strcmp(name, "copy"))
        return upvm_set_delivery(UPVM_DELIVER_COPY) < 0;
    fprintf(stderr, "bench_pvm: unknown delivery '%s' (share|copy)\n", name);
    return 1;
}

int main(int argc, char **argv)
{
    static const int pp_sizes[] = {0, 1, 512, 1000, 10000, 100000};
    static const int mc_sizes[] = {1024, 100 * 1024};
    struct pb_opts o = {.route = "upvm", .encname = "raw", .deliver = "share",
                        .blocks = 5, .block_ms = 20, .ntask = 0};
    const char *what = argc > 1 ? argv[1] : "";
    int rc = 2;

    pb_parse(argc, argv, 2, &o);
    if (set_delivery(o.deliver))
        return 2;
    if (pvm_mytid() < 0) {
        pvm_perror("bench_pvm: pvm_mytid");
        return 1;
    }
    if (!strcmp(what, "pingpong")) {
        default_sizes(&o, pp_sizes, 6);
        rc = pingpong_master(&o);
    } else if (!strcmp(what, "ring")) {
        o.ntask = o.ntask ? o.ntask : 4;
        rc = ring_master(&o);
    } else if (!strcmp(what, "mcast")) {
        default_sizes(&o, mc_sizes, 2);
        o.ntask = o.ntask ? o.ntask : 4;
        rc = mcast_master(&o, "upvm");
    } else {
        fprintf(stderr, "usage: bench_pvm pingpong|ring|mcast [options]\n");
    }
    pvm_exit();
    return rc;
}
