/*
 * forward_proto.h - the "forward" ping-pong, one text for both sides:
 * bench/pvm/forward.c (genuine PVM, -lpvm3) and bench/bench_pvm.c (UPVM).
 *
 * The ping-pong of the UPVM paper's Figure 3 (bench_pvm pingpong, the
 * baseline's pingpong.c) packs and unpacks the data on every trip, so for
 * big messages it measures memcpy.  Here nothing is packed or unpacked in
 * the timed loop: it measures what PVM itself adds to moving a message.
 *
 *   master:  once: pvm_initsend(enc); pvm_pkbyte(size)
 *            per round trip: pvm_send(peer, PING); pvm_recv(peer, PONG)
 *            (pvm_send does not consume the send buffer: the same message
 *            goes out every time)
 *   partner: per round trip: pvm_recv(parent, PING);
 *            pvm_setsbuf(pvm_getrbuf()); pvm_send(parent, PONG)
 *            (the received message is sent on as it is)
 *
 * Before timing, the master unpacks one PONG and compares it with what it
 * packed.  half_rtt_us = block time / (2 x round trips).  Under UPVM both
 * sends hand over a reference to the same data: no byte is copied.
 */
#ifndef FORWARD_PROTO_H
#define FORWARD_PROTO_H

#include "pvmbench.h"

#define FW_TAG_CTRL 40 /* int size (< 0: exit); then the payload follows */
#define FW_TAG_PING 41
#define FW_TAG_PONG 42

/* The partner: argv = { name, "-child", route, enc }. */
static inline int forward_child(int argc, char **argv)
{
    int parent = pvm_parent(), tag, bytes, src, size;

    if (argc < 4) {
        pvm_exit();
        return 2;
    }
    pb_apply_route(argv[2]);
    for (;;) {
        int bufid = pvm_recv(parent, -1);
        if (bufid < 0 || pvm_bufinfo(bufid, &bytes, &tag, &src) < 0)
            break;
        if (tag == FW_TAG_CTRL) {
            if (pvm_upkint(&size, 1, 1) < 0 || size < 0)
                break;
            continue;
        }
        pvm_setsbuf(pvm_getrbuf()); /* send on what came in */
        pvm_send(parent, FW_TAG_PONG);
    }
    pvm_exit();
    return 0;
}

struct fw_ctx {
    int peer, size;
};

static inline void fw_loop(void *ctx, long iters)
{
    const struct fw_ctx *c = ctx;
    for (long i = 0; i < iters; i++) {
        pvm_send(c->peer, FW_TAG_PING);
        pvm_recv(c->peer, FW_TAG_PONG);
    }
}

static inline void fw_ctrl(int peer, int value)
{
    int old = pvm_setsbuf(0);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&value, 1, 1);
    pvm_send(peer, FW_TAG_CTRL);
    pvm_freebuf(pvm_setsbuf(old));
}

static inline int fw_measure(struct fw_ctx *c, const struct pb_opts *o, const char *route,
                             char *data, char *back)
{
    double t[PB_MAXBLOCKS], min;
    fw_ctrl(c->peer, c->size);
    pb_fill(data, c->size, c->size + 7);
    pvm_initsend(o->enc);
    if (c->size > 0)
        pvm_pkbyte(data, c->size, 1);
    fw_loop(c, 1);
    if (c->size > 0 && (pvm_upkbyte(back, c->size, 1) < 0 ||
                        memcmp(data, back, (size_t)c->size) != 0)) {
        fprintf(stderr, "forward: data mismatch at size %d\n", c->size);
        return 1;
    }
    fw_loop(c, 50);
    long iters = pb_calibrate(fw_loop, c, 100, o->block_ms * 1e6);
    pb_time_blocks(fw_loop, c, iters, o->blocks, t);
    for (int b = 0; b < o->blocks; b++)
        t[b] /= 2.0;
    double med = pb_median(t, o->blocks, &min);
    printf("RESULT forward route=%s deliver=%s enc=%s size=%d iters=%ld blocks=%d "
           "half_rtt_us=%.4f min_us=%.4f\n",
           route, o->deliver, o->encname, c->size, iters, o->blocks, med / 1e3, min / 1e3);
    fflush(stdout);
    return 0;
}

/* The master: spawn the partner, measure every size, stop it. */
static inline int forward_master(const struct pb_opts *o, const char *route)
{
    char name[4096];
    char *cargv[] = {"-child", (char *)o->route, (char *)o->encname, NULL};
    struct fw_ctx c = {0};
    int maxsize = 1, rc = 0;

    for (int k = 0; k < o->nsizes; k++)
        maxsize = o->sizes[k] > maxsize ? o->sizes[k] : maxsize;
    char *data = malloc((size_t)maxsize), *back = malloc((size_t)maxsize);
    if (!data || !back)
        return 1;
    if (pvm_spawn(pb_spawn_name("forward", name, sizeof name), cargv, PvmTaskDefault, "",
                  1, &c.peer) != 1) {
        fprintf(stderr, "forward: pvm_spawn(%s) failed: %d\n", name, c.peer);
        return 1;
    }
    for (int k = 0; k < o->nsizes && !rc; k++) {
        c.size = o->sizes[k];
        rc = fw_measure(&c, o, route, data, back);
    }
    fw_ctrl(c.peer, -1);
    free(data);
    free(back);
    return rc;
}

#endif /* FORWARD_PROTO_H */
