/*
 * mcast_proto.h - the multicast benchmark's exchange, one text for both
 * sides: bench/pvm/mcast.c (genuine PVM, -lpvm3) and bench/bench_pvm.c
 * (UPVM) include it, so both do exactly the same PVM calls.
 *
 * What it measures: the cost of one pvm_mcast() of `size` bytes from a
 * master to N tasks, until every receiver has the data.  One iteration:
 *
 *   master: pvm_initsend(enc); pvm_pkbyte(size); pvm_mcast(N tids, DATA);
 *           then N x pvm_recv(-1, ACK)
 *   each receiver: pvm_recv(parent, -1); pvm_upkbyte(size);
 *           pvm_initsend(enc); pvm_send(parent, ACK)        (0-byte ack)
 *
 * The time per iteration (us per multicast) thus includes the N unpacks
 * and N empty acks; per_task_us = mcast_us / N.  Before the timed blocks
 * every receiver checks the data once (it answers a PROBE with a checksum
 * of what it unpacked), and the calibration runs warm up routes and pools.
 *
 * Receivers are spawned as "-child <route> <enc>" copies of the program
 * (genuine PVM) or of the registered task "mcast" (UPVM).
 */
#ifndef MCAST_PROTO_H
#define MCAST_PROTO_H

#include "pvmbench.h"

#define MC_TAG_CTRL 30  /* int size: next size, or < 0: exit */
#define MC_TAG_DATA 31  /* payload; answer with a 0-byte ACK */
#define MC_TAG_PROBE 32 /* payload; answer with ACK carrying a checksum */
#define MC_TAG_ACK 33
#define MC_MAXN 1024

/* ---------------------------------------------------------- receivers */

static inline void mc_ack(int parent, int enc, const char *buf, int size,
                          int probe)
{
    if (!probe) {
        pvm_initsend(enc);
        pvm_send(parent, MC_TAG_ACK);
        return;
    }
    int sum = pb_checksum(buf, size);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&sum, 1, 1);
    pvm_send(parent, MC_TAG_ACK);
}

/* A receiver: argv = { name, "-child", route, enc }. */
static inline int mcast_child(int argc, char **argv)
{
    int parent = pvm_parent(), size = 0, bytes, tag, src;
    char *buf = NULL;

    if (argc < 4) {
        pvm_exit();
        return 2;
    }
    pb_apply_route(argv[2]);
    int enc = pb_parse_enc(argv[3]);
    for (;;) {
        int bufid = pvm_recv(parent, -1);
        if (bufid < 0 || pvm_bufinfo(bufid, &bytes, &tag, &src) < 0)
            break;
        if (tag == MC_TAG_CTRL) {
            pvm_upkint(&size, 1, 1);
            if (size < 0 || !(buf = realloc(buf, (size_t)size + 1)))
                break;
            continue;
        }
        if (size > 0)
            pvm_upkbyte(buf, size, 1);
        mc_ack(parent, enc, buf, size, tag == MC_TAG_PROBE);
    }
    free(buf);
    pvm_exit();
    return 0;
}

/* ------------------------------------------------------------- master */

struct mc_ctx {
    int *tids, n, enc, size;
    char *buf;
};

static inline void mc_send(struct mc_ctx *c, int tag)
{
    pvm_initsend(c->enc);
    if (c->size > 0)
        pvm_pkbyte(c->buf, c->size, 1);
    pvm_mcast(c->tids, c->n, tag);
}

/* One timed iteration per multicast: send, then collect the N acks. */
static inline void mc_loop(void *ctx, long iters)
{
    struct mc_ctx *c = ctx;
    for (long i = 0; i < iters; i++) {
        mc_send(c, MC_TAG_DATA);
        for (int k = 0; k < c->n; k++)
            pvm_recv(-1, MC_TAG_ACK);
    }
}

static inline void mc_ctrl(struct mc_ctx *c, int value)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&value, 1, 1);
    pvm_mcast(c->tids, c->n, MC_TAG_CTRL);
}

/* Every receiver unpacks the pattern once and returns its checksum. */
static inline int mc_probe(struct mc_ctx *c, int seed)
{
    int want, got, bad = 0;
    pb_fill(c->buf, c->size, seed);
    want = pb_checksum(c->buf, c->size);
    mc_send(c, MC_TAG_PROBE);
    for (int k = 0; k < c->n; k++) {
        pvm_recv(-1, MC_TAG_ACK);
        if (pvm_upkint(&got, 1, 1) < 0 || got != want)
            bad++;
    }
    return bad;
}

static inline int mc_measure(struct mc_ctx *c, const struct pb_opts *o,
                             const char *route, double spawn_us)
{
    double t[PB_MAXBLOCKS], min;
    mc_ctrl(c, c->size);
    if (mc_probe(c, c->size + c->n)) {
        fprintf(stderr, "mcast: data mismatch at size %d, n %d\n", c->size,
                c->n);
        return 1;
    }
    long iters = pb_calibrate(mc_loop, c, 2, o->block_ms * 1e6);
    pb_time_blocks(mc_loop, c, iters, o->blocks, t);
    double med = pb_median(t, o->blocks, &min);
    printf("RESULT mcast route=%s deliver=%s enc=%s n=%d size=%d iters=%ld "
           "blocks=%d mcast_us=%.4f min_us=%.4f per_task_us=%.4f "
           "spawn_us=%.0f\n",
           route, o->deliver, o->encname, c->n, c->size, iters, o->blocks,
           med / 1e3, min / 1e3, med / 1e3 / c->n, spawn_us);
    fflush(stdout);
    return 0;
}

static inline int mc_spawn(struct mc_ctx *c, const struct pb_opts *o)
{
    char name[4096];
    char *cargv[] = {"-child", (char *)o->route, (char *)o->encname, NULL};
    int got = pvm_spawn(pb_spawn_name("mcast", name, sizeof name), cargv,
                        PvmTaskDefault, "", c->n, c->tids);
    if (got == c->n)
        return 0;
    fprintf(stderr, "mcast: spawned %d of %d tasks (%s): first result %d\n",
            got, c->n, name, c->tids[0]);
    for (int k = 0; k < got; k++)
        pvm_kill(c->tids[k]);
    return 1;
}

/* The master: spawn o->ntask receivers, measure every size, stop them.
 * route is the label printed as route= (genuine: daemon|direct; UPVM). */
static inline int mcast_master(const struct pb_opts *o, const char *route)
{
    struct mc_ctx c = {.n = o->ntask, .enc = o->enc};
    int maxsize = 0, rc = 0;

    if (c.n < 1 || c.n > MC_MAXN) {
        fprintf(stderr, "mcast: -n must be 1..%d\n", MC_MAXN);
        return 2;
    }
    for (int k = 0; k < o->nsizes; k++)
        maxsize = o->sizes[k] > maxsize ? o->sizes[k] : maxsize;
    c.tids = calloc((size_t)c.n, sizeof *c.tids);
    c.buf = malloc((size_t)maxsize + 1);
    if (!c.tids || !c.buf)
        return 1;
    double t0 = pb_now_ns();
    if (mc_spawn(&c, o))
        return 1;
    double spawn_us = (pb_now_ns() - t0) / 1e3;
    for (int k = 0; k < o->nsizes && !rc; k++) {
        c.size = o->sizes[k];
        rc = mc_measure(&c, o, route, spawn_us);
    }
    mc_ctrl(&c, -1);
    free(c.tids);
    free(c.buf);
    return rc;
}

#endif /* MCAST_PROTO_H */
