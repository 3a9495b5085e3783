/*
 * messages.c - sending and receiving between tasks of the node: send,
 * mcast, psend, recv, nrecv, trecv, probe, precv, recvf, message handlers
 * and contexts.
 *
 * Delivery (UPVM paper section 3).  A send gives the receiver a new handle
 * on the sender's message data (msg_buf_ref: no byte copied) and appends it
 * to the receiver's incoming queue; with UPVM_DELIVER_COPY every receiver
 * gets a private copy instead (M-PVM's second strategy).  A receiver waiting
 * for such a message is made ready; the sender goes on (waking is cheaper
 * than switching at once: a sender that then receives, as in a ping-pong,
 * switches to the receiver anyway, and one that multicasts wakes all its
 * receivers with no switch in between).
 *
 * Receiving looks through the queue in arrival order (so messages from one
 * sender are taken in the order sent) for the first that matches the
 * requested source and tag (-1 matches any) in the current context, or that
 * the pvm_recvf matcher picks.  A receiver that must wait for a message from
 * one task that is ready to run hands the CPU to that task directly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvm/move.h"
#include "pvm/pvm.h"
#include "pvm/remote.h"
#include "pvm/tev.h"

/* ------------------------------------------------------------ queue entries */

static struct pvm_qmsg *qmsg_alloc(void)
{
    list_link_t *l = list_pop_front(&pvm_node.free_qmsgs);
    if (likely(l))
        return list_entry(l, struct pvm_qmsg, link);
    return malloc(sizeof(struct pvm_qmsg));
}

void pvm_qmsg_free(struct pvm_qmsg *q)
{
    msg_buf_unref(q->buf);
#if UPVM_ASAN
    free(q); /* let the sanitizer see every use after free */
#else
    list_push_front(&pvm_node.free_qmsgs, &q->link);
#endif
}

/* ------------------------------------------------------------ matching */

static inline bool header_matches(const msg_hdr_t *h, int tid, int tag, int ctx)
{
    return h->ctx == ctx && (tid == -1 || h->src == tid) && (tag == -1 || h->tag == tag);
}

static bool mhf_matches(const struct pvm_mhf *m, const msg_hdr_t *h)
{
    return m->used && (m->src == -1 || m->src == h->src) &&
           (m->tag == -1 || m->tag == h->tag) && (m->ctx == -1 || m->ctx == h->ctx);
}

static int mhf_find(const struct pvm_task *t, const msg_hdr_t *h)
{
    for (int i = 0; i < t->nmhfs; i++)
        if (mhf_matches(&t->mhfs[i], h))
            return i;
    return -1;
}

/* Would this message end t's wait? */
static bool wakes(const struct pvm_task *t, const msg_hdr_t *h)
{
    if (t->recvf || (t->active_mhfs && mhf_find(t, h) >= 0))
        return true; /* decided when t runs */
    return header_matches(h, t->want_tid, t->want_tag, t->want_ctx);
}

/* ------------------------------------------------------------ delivery */

int pvm_buf_for_receiver(msg_buf_t *src, msg_buf_t **out)
{
    int rc = msg_buf_ref(src, out);
    if (rc == 0 && pvm_node.delivery == UPVM_DELIVER_COPY &&
        (rc = msg_buf_make_private(*out)) != 0)
        msg_buf_unref(*out);
    return pvm_code_from_errno(rc);
}

int pvm_deliver(struct pvm_task *dst, msg_buf_t *b)
{
    if (unlikely(dst->hold_local))
        return pvm_route_hold_local(dst, b);
    return pvm_deliver_now(dst, b);
}

int pvm_deliver_now(struct pvm_task *dst, msg_buf_t *b)
{
    struct pvm_qmsg *q = qmsg_alloc();
    if (unlikely(!q)) {
        msg_buf_unref(b);
        return PvmNoMem;
    }
    q->buf = b;
    q->lbid = 0;
    list_push_back(&dst->inq, &q->link);
    if (dst->waiting && wakes(dst, msg_buf_hdr(b))) {
        dst->waiting = false;
        (void)core_wake_one(&dst->recvq);
    }
    return 0;
}

void pvm_send_pvmd_int(int tid, int tag, int ctx, int value)
{
    struct pvm_task *dst = pvm_task_by_tid(tid);
    msg_buf_t *b;
    if (!dst || msg_buf_new(PvmDataDefault, &b) != 0)
        return;
    if (msg_pack(b, PVM_INT, &value, 1, 1) != 0) {
        msg_buf_unref(b);
        return;
    }
    *msg_buf_hdr(b) = (msg_hdr_t){.tag = tag, .ctx = ctx, .src = PVM_TID_PVMD, .dst = tid};
    (void)pvm_deliver(dst, b);
}

/* Address out, a holder of t's send buffer s, to dst_tid with tag. */
static inline void address(msg_buf_t *out, const struct pvm_task *t,
                           const struct pvm_bufslot *s, int dst_tid, int tag)
{
    msg_hdr_t *h = msg_buf_hdr(out);
    h->src = t->tid;
    h->dst = dst_tid;
    h->tag = tag;
    if (!s->ctx_set)
        h->ctx = t->ctx;
}

/* The trace's records of a message out and in (util/trace.h: TRC_SEND,
 * TRC_RECV), out of line: one load and a branch when tracing is off. */
static COLD void trace_msg(unsigned kind, const struct pvm_task *t, msg_buf_t *b)
{
    const msg_hdr_t *h = msg_buf_hdr(b); /* addressed: the peer and tag are there */
    int peer = kind == TRC_SEND ? h->dst : h->src;
    trc_put((uint16_t)kind, 0, (uint32_t)t->tid, (uint32_t)peer, (uint32_t)h->tag,
            (uint64_t)(uint32_t)h->ctx << 32 | (uint32_t)msg_buf_len(b));
}

/* One receiver's copy of t's send buffer `id`, addressed and delivered. */
static int send_to(struct pvm_task *t, int id, struct pvm_task *dst, int tag)
{
    const struct pvm_bufslot *s = &t->bufs[id];
    pvm_count_send(t, dst->tid, msg_buf_len(s->buf));
    msg_buf_t *out;
    int rc = pvm_buf_for_receiver(s->buf, &out);
    if (unlikely(rc))
        return rc;
    address(out, t, s, dst->tid, tag);
    if (unlikely(trc_on))
        trace_msg(TRC_SEND, t, out);
    return pvm_deliver(dst, out);
}

/* ------------------------------------------------------------ sending */

/* t's send buffer `id` to dst_tid on another node. */
static int send_remote(struct pvm_task *t, int id, int dst_tid, int tag)
{
    const struct pvm_bufslot *s = &t->bufs[id];
    pvm_count_send(t, dst_tid, msg_buf_len(s->buf));
    msg_buf_t *out; /* a handle only to carry the header: serialised, dropped */
    int rc = msg_buf_ref(s->buf, &out);
    if (unlikely(rc))
        return pvm_code_from_errno(rc);
    address(out, t, s, dst_tid, tag);
    if (unlikely(trc_on))
        trace_msg(TRC_SEND, t, out);
    rc = pvm_remote_send(out, dst_tid);
    msg_buf_unref(out);
    return rc;
}

int pvm_send_msg(struct pvm_task *t, msg_buf_t *b, int dst_tid, int tag, int ctx)
{
    int src = t ? t->tid : PVM_TID_PVMD;
    *msg_buf_hdr(b) = (msg_hdr_t){.tag = tag, .ctx = ctx, .src = src, .dst = dst_tid};
    struct pvm_task *dst = pvm_task_by_tid(dst_tid);
    if (dst) /* b is the receiver's alone, as psend's */
        return pvm_deliver(dst, b);
    int rc = pvm_multi() ? pvm_remote_send(b, dst_tid) : 0;
    msg_buf_unref(b);
    return rc;
}

/* Can tid be a destination?  Reserved (negative, pvmd) tids only with
 * PvmResvTids, as in PVM. */
static bool dest_ok(const struct pvm_task *t, int tid)
{
    return pvm_is_task_tid(tid) || (t->opt[PvmResvTids] && tid != 0);
}

/* The bytes of t's send buffer, as pvm_bufinfo says them (-1: none):
 * the MNB of a send's trace event. */
static int sbuf_bytes(struct pvm_task *t)
{
    msg_buf_t *b = pvm_buf(t, t->sbuf);
    return !b ? -1 : msg_buf_enc(b) == PvmDataInPlace ? 0 : (int)msg_buf_len(b);
}

static int send_body(struct pvm_task *t, int tid, int tag)
{
    if (unlikely(tid == PVM_TRACE_TID && tag == PVM_TRACE_CODE))
        return pvm_tev_user_event(t); /* a user-defined trace event */
    if (unlikely((tag < 0 && !t->opt[PvmResvTids]) || !dest_ok(t, tid)))
        return PvmBadParam;
    if (unlikely(!pvm_buf(t, t->sbuf)))
        return PvmNoBuf;
    struct pvm_task *dst = pvm_task_by_tid(tid);
    if (likely(dst))
        return send_to(t, t->sbuf, dst, tag);
    if (pvm_multi())
        return send_remote(t, t->sbuf, tid, tag);
    return 0; /* PVM drops a message to a task that is gone, silently */
}

int pvm_send(int tid, int tag)
{
    TASK_OR_FAIL(t, "pvm_send");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_SEND)) {
        pvm_tev_int(t, TEV_DID_MNB, sbuf_bytes(t));
        pvm_tev_int(t, TEV_DID_DST, tid);
        pvm_tev_int(t, TEV_DID_MC, tag);
        pvm_tev_int(t, TEV_DID_MCX, t->ctx);
        pvm_tev_end(t);
    }
    int cc = send_body(t, tid, tag);
    if (pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_end(t);
    }
    return unlikely(cc) ? pvm_fail(t, "pvm_send", cc) : 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int mcast_body(struct pvm_task *t, int *tids, int n, int tag)
{
    if (n < 0 || (n > 0 && !tids) || (tag < 0 && !t->opt[PvmResvTids]))
        return PvmBadParam;
    for (int i = 0; i < n; i++)
        if (!dest_ok(t, tids[i]))
            return PvmBadParam;
    if (!pvm_buf(t, t->sbuf))
        return PvmNoBuf;
    if (n == 0)
        return 0;
    /* PVM sends once to each distinct task and never to the sender. */
    int *set = malloc((size_t)n * sizeof *set);
    if (!set)
        return PvmNoMem;
    memcpy(set, tids, (size_t)n * sizeof *set);
    qsort(set, (size_t)n, sizeof *set, cmp_int);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if ((i > 0 && set[i] == set[i - 1]) || set[i] == t->tid)
            continue;
        struct pvm_task *dst = pvm_task_by_tid(set[i]);
        if (dst)
            rc = send_to(t, t->sbuf, dst, tag);
        else if (pvm_multi())
            rc = send_remote(t, t->sbuf, set[i], tag);
    }
    free(set);
    return rc;
}

int pvm_mcast(int *tids, int n, int tag)
{
    TASK_OR_FAIL(t, "pvm_mcast");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_MCAST)) {
        pvm_tev_int(t, TEV_DID_MNB, sbuf_bytes(t));
        pvm_tev_int(t, TEV_DID_MC, tag);
        pvm_tev_int(t, TEV_DID_MCX, t->ctx);
        pvm_tev_ints(t, TEV_DID_MDL, tids, tids && n > 0 ? n : 0);
        pvm_tev_end(t);
    }
    int cc = mcast_body(t, tids, n, tag);
    if (pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_end(t);
    }
    return cc ? pvm_fail(t, "pvm_mcast", cc) : 0;
}

/* Bytes of one item of a PVM data type, or 0 for an unknown type. */
static int type_size(int type)
{
    switch (type) {
    case PVM_BYTE: return 1;
    case PVM_SHORT: case PVM_USHORT: return 2;
    case PVM_INT: case PVM_UINT: case PVM_FLOAT: return 4;
    case PVM_LONG: case PVM_ULONG: case PVM_DOUBLE: case PVM_CPLX: return 8;
    case PVM_DCPLX: return 16;
    default: return 0;
    }
}

/* pvm_psend, its errors reported. */
static int psend_body(struct pvm_task *t, int tid, int tag, void *buf, int len, int type)
{
    if ((tag < 0 && !t->opt[PvmResvTids]) || !dest_ok(t, tid)) {
        (void)pvm_fail(t, "pvm_send", PvmBadParam);
        return pvm_fail(t, "pvm_psend", PvmBadParam);
    }
    if (type == PVM_STR)
        return pvm_fail(t, "pvm_psend", PvmNotImpl);
    if (!type_size(type))
        return pvm_fail(t, "pvm_psend", PvmBadParam);
    msg_buf_t *b;
    int rc = msg_buf_new(PvmDataRaw, &b);
    if (rc)
        return pvm_fail(t, "pvm_psend", pvm_code_from_errno(rc));
    if (len != 0 && (rc = msg_pack(b, type, buf, len, 1)) != 0) /* still sent, empty */
        (void)pvm_fail(t, "pvm_pkbyte", pvm_code_from_errno(rc));
    struct pvm_task *dst = pvm_task_by_tid(tid);
    *msg_buf_hdr(b) = (msg_hdr_t){.tag = tag, .ctx = t->ctx, .src = t->tid, .dst = tid};
    pvm_count_send(t, tid, msg_buf_len(b));
    if (!dst) {
        rc = pvm_multi() ? pvm_remote_send(b, tid) : 0;
        msg_buf_unref(b);
        return rc ? pvm_fail(t, "pvm_psend", rc) : 0;
    }
    /* b is new and the receiver's alone: no strategy has anything to do */
    rc = pvm_deliver(dst, b);
    return rc ? pvm_fail(t, "pvm_psend", rc) : 0;
}

int pvm_psend(int tid, int tag, void *buf, int len, int type)
{
    TASK_OR_FAIL(t, "pvm_psend");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_PSEND)) {
        pvm_tev_int(t, TEV_DID_DST, tid);
        pvm_tev_int(t, TEV_DID_MC, tag);
        pvm_tev_int(t, TEV_DID_MCX, t->ctx);
        pvm_tev_long(t, TEV_DID_PDA, (long)buf);
        pvm_tev_int(t, TEV_DID_PC, len);
        pvm_tev_int(t, TEV_DID_PDT, type);
        pvm_tev_end(t);
    }
    int cc = psend_body(t, tid, tag, buf, len, type);
    if (pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_end(t);
    }
    return cc;
}

/* ------------------------------------------------------------ handlers */

/* Run the handler for every queued message one matches (PVM runs them as
 * messages arrive, before any matching).  Inside, the message is the
 * receive buffer, there is no send buffer, and the context is the
 * message's; all three are restored afterwards. */
static void run_handlers(struct pvm_task *t)
{
    for (list_link_t *l = t->inq.next, *next; l != &t->inq; l = next) {
        next = l->next;
        struct pvm_qmsg *q = list_entry(l, struct pvm_qmsg, link);
        int h = mhf_find(t, msg_buf_hdr(q->buf));
        if (h < 0)
            continue;
        list_unlink(l);
        int id = q->lbid;
        if (id)
            t->bufs[id].queued = NULL;
        else if ((id = pvm_buf_install(t, q->buf)) < 0) {
            list_push_front(&t->inq, l); /* no memory: leave it queued */
            return;
        }
        q->buf = NULL;
        pvm_qmsg_free(q);
        int saved_s = t->sbuf, saved_r = t->rbuf, saved_ctx = t->ctx;
        t->sbuf = 0;
        t->rbuf = id;
        t->ctx = msg_buf_hdr(t->bufs[id].buf)->ctx;
        const struct pvm_mhf *m = &t->mhfs[h];
        if (m->by_ref) {
            int ref = id;
            (void)((int (*)(int *))(void (*)(void))m->fn)(&ref);
        } else {
            (void)m->fn(id);
        }
        if (pvm_buf(t, id))
            pvm_buf_drop(t, id);
        if (t->sbuf && t->sbuf != saved_s && t->sbuf != saved_r)
            pvm_buf_drop(t, t->sbuf);
        t->sbuf = pvm_buf(t, saved_s) ? saved_s : 0;
        t->rbuf = pvm_buf(t, saved_r) ? saved_r : 0;
        t->ctx = saved_ctx;
        next = t->inq.next; /* the handler may have received anything */
    }
}

/* pvm_addmhf's work: fn is an int (*)(int *) when by_ref. */
static int add_mhf(int src, int tag, int ctx, int (*fn)(int), bool by_ref)
{
    TASK_OR_FAIL(t, "pvm_addmhf");
    if (!fn)
        return pvm_fail(t, "pvm_addmhf", PvmBadParam);
    int free_slot = -1;
    for (int i = 0; i < t->nmhfs; i++) {
        const struct pvm_mhf *m = &t->mhfs[i];
        if (!m->used) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        /* Overlap in either direction is a clash (PVM: PvmExists). */
        if ((m->src == -1 || src == -1 || m->src == src) &&
            (m->tag == -1 || tag == -1 || m->tag == tag) &&
            (m->ctx == -1 || ctx == -1 || m->ctx == ctx))
            return pvm_fail(t, "pvm_addmhf", PvmExists);
    }
    if (free_slot < 0) {
        struct pvm_mhf *m = pvm_task_realloc(t, t->mhfs, (size_t)(t->nmhfs + 1) * sizeof *m);
        if (!m)
            return pvm_fail(t, "pvm_addmhf", PvmNoMem);
        t->mhfs = m;
        free_slot = t->nmhfs++;
    }
    t->mhfs[free_slot] = (struct pvm_mhf){src, tag, ctx, fn, true, by_ref};
    t->active_mhfs++;
    return PVM_MHF_FIRST + free_slot;
}

int pvm_addmhf(int src, int tag, int ctx, int (*fn)(int))
{
    return add_mhf(src, tag, ctx, fn, false);
}

int pvm_addmhf_byref(int src, int tag, int ctx, int (*fn)(int *bufid))
{
    return add_mhf(src, tag, ctx, (int (*)(int))(void (*)(void))fn, true);
}

int pvm_delmhf(int id)
{
    TASK_OR_FAIL(t, "pvm_delmhf");
    if (id < 0)
        return pvm_fail(t, "pvm_delmhf", PvmBadParam);
    int i = id - PVM_MHF_FIRST;
    if (i < 0 || i >= t->nmhfs || !t->mhfs[i].used)
        return pvm_fail(t, "pvm_delmhf", PvmNotFound);
    t->mhfs[i].used = false;
    t->active_mhfs--;
    return 0;
}

/* ------------------------------------------------------------ receiving */

/* A buffer id for the queued message q, which stays queued (pvm_probe, a
 * recvf matcher): its id or PvmNoMem. */
static int queued_id(struct pvm_task *t, struct pvm_qmsg *q)
{
    if (!q->lbid) {
        int id = pvm_buf_install(t, q->buf);
        if (id < 0)
            return id;
        t->bufs[id].queued = q;
        q->lbid = id;
    }
    return q->lbid;
}

/*
 * The queued message to take for (tid, tag), or NULL; *err gets a
 * negative matcher result (pvm_recvf functions may return errors).  As in
 * PVM, a custom matcher sees every queued message, whatever its context
 * (the default one checks the context).
 */
static struct pvm_qmsg *find_custom(struct pvm_task *t, int tid, int tag, int *err)
{
    struct pvm_qmsg *best = NULL;
    int best_rank = 1;
    list_for_each(l, &t->inq) {
        struct pvm_qmsg *q = list_entry(l, struct pvm_qmsg, link);
        int id = queued_id(t, q); /* the matcher gets an id it can inspect */
        if (id < 0) {
            *err = id;
            return NULL;
        }
        int rank = t->recvf(id, tid, tag);
        if (rank < 0) {
            *err = rank;
            return NULL;
        }
        if (rank == 1)
            return q;
        if (rank > best_rank) {
            best = q;
            best_rank = rank;
        }
    }
    return best;
}

static inline struct pvm_qmsg *find(struct pvm_task *t, int tid, int tag, int *err)
{
    if (unlikely(t->recvf != NULL))
        return find_custom(t, tid, tag, err);
    list_for_each(l, &t->inq) {
        struct pvm_qmsg *q = list_entry(l, struct pvm_qmsg, link);
        if (header_matches(msg_buf_hdr(q->buf), tid, tag, t->ctx))
            return q;
    }
    return NULL;
}

/* Take q out of the queue as t's new receive buffer (keeping its probe
 * id if it has one); the old receive buffer is freed. */
static int take(struct pvm_task *t, struct pvm_qmsg *q)
{
    if (unlikely(trc_on))
        trace_msg(TRC_RECV, t, q->buf);
    int id = q->lbid;
    if (id) {
        t->bufs[id].queued = NULL;
        pvm_set_rbuf_replacing(t, id);
    } else if (unlikely((id = pvm_buf_install_as_rbuf(t, q->buf)) < 0)) {
        return id;
    }
    list_unlink(&q->link);
    q->buf = NULL;
    pvm_qmsg_free(q);
    return id;
}

/* The ULP to hand the CPU to while waiting for a message from tid. */
static struct ulp *handoff_target(int tid)
{
    if (tid == -1)
        return NULL;
    struct pvm_task *s = pvm_task_by_tid(tid);
    return s ? s->ulp : NULL;
}

enum recv_mode { RECV_TAKE, RECV_PROBE };

/*
 * pvm_trecv's timeout, as libpvm 3.4.6 computes it (probe p17_trecv_timeout,
 * docs/reference/pvm-probed-semantics.md section 3).  PVM never normalises
 * the caller's timeval: pvm_trecv compares it field by field with the time
 * elapsed since the call (TVXLTY: seconds first, then microseconds) and
 * hands what is left (TVXSUBY, one borrow of a second at most) to mxfer,
 * which does the same with that rest and gives select(2) the result.  So
 *
 *   - {0,0} polls once; a time already behind the elapsed one (negative
 *     seconds, {0, negative}) returns 0 at once (PVM without even polling;
 *     here after one poll, see trecv_step);
 *   - {1,-5} waits a second: the pair is compared, not its sum; {1,-500000}
 *     too (mxfer's select ends after half a second, then pvm_trecv polls in
 *     a loop until its seconds are up);
 *   - {0,1500000} waits 1.5 s (select normalises microseconds);
 *   - a rest with negative microseconds reaches select ({2,-1500000} after
 *     half a second, {5,-3000000} at once): EINVAL, which libpvm logs
 *     ("mxfer() select: Invalid argument") and pvm_trecv reports as
 *     PvmSysErr; so do microseconds that glibc's select takes as a negative
 *     int32_t ({0,LONG_MAX}: at once);
 *   - huge seconds ({LONG_MAX,0}) wait for ever.
 * This is the same arithmetic, step by step, with the node's clock in
 * microseconds; PVM's busy polling is a wait that a message still ends.
 */
struct pvm_tv {
    int64_t sec, usec;
};

struct trecv_clock {
    struct pvm_tv tmout;  /* the caller's, as given */
    uint64_t start;       /* of the call, ns */
    bool zero;            /* {0,0}: one poll */
    bool polled;
    bool in_mxfer;        /* inside libpvm's mxfer: waiting for `left` */
    bool waited;          /* that mxfer has waited once */
    struct pvm_tv left;   /* pvm_trecv's rest, mxfer's timeout */
    uint64_t mxfer_start; /* ns */
};

enum trecv_step { TRECV_DONE, TRECV_POLL, TRECV_WAIT, TRECV_EINVAL };

/* Time since start (ns) as PVM's clock gives it: whole seconds, usec. */
static struct pvm_tv tv_since(uint64_t start)
{
    uint64_t us = (upvm_now_ns() - start) / 1000;
    return (struct pvm_tv){(int64_t)(us / 1000000), (int64_t)(us % 1000000)};
}

/* x < y (TVXLTY). */
static bool tv_before(struct pvm_tv x, struct pvm_tv y)
{
    return x.sec < y.sec || (x.sec == y.sec && x.usec < y.usec);
}

/* x - y with x >= y by TVXLTY, and y a clock reading (TVXSUBY): no
 * overflow, the result's seconds are >= 0, its microseconds any. */
static struct pvm_tv tv_minus(struct pvm_tv x, struct pvm_tv y)
{
    if (x.usec >= y.usec)
        return (struct pvm_tv){x.sec - y.sec, x.usec - y.usec};
    return (struct pvm_tv){x.sec - y.sec - 1, x.usec + 1000000 - y.usec};
}

/* What select(2) makes of timeout r on the probed system (glibc 2.36 takes
 * the microseconds as an int32_t, then normalises): ns (-1: beyond any
 * clock), or -EINVAL. */
static int64_t select_ns(struct pvm_tv r)
{
    int32_t us = (int32_t)r.usec;
    if (r.sec < 0 || us < 0)
        return -EINVAL;
    if (r.sec > INT64_MAX / 1000000000 - 1 - INT32_MAX / 1000000) /* ~292 years */
        return -1;
    return (r.sec + us / 1000000) * 1000000000 + (int64_t)(us % 1000000) * 1000;
}

/* ns from now until pvm_trecv's own comparison says its time is up (used
 * when mxfer's time was up at once: PVM then polls in a loop until it). */
static int64_t trecv_left_ns(const struct trecv_clock *c)
{
    const struct pvm_tv *t = &c->tmout;
    if (t->sec < 0 || t->sec > INT64_MAX / 1000000000 - 3)
        return 0;
    int64_t us = t->usec < 0 ? t->sec * 1000000
                 : t->usec < 1000000 ? t->sec * 1000000 + t->usec + 1
                 : (t->sec + 1) * 1000000;
    int64_t left = us * 1000 - (int64_t)(upvm_now_ns() - c->start);
    return left > 0 ? left : 0;
}

/* The next step of a pvm_trecv that found nothing: end with nothing, poll
 * once, wait *ns (-1: for ever; a message ends it) or fail (EINVAL). */
static enum trecv_step trecv_step(struct trecv_clock *c, int64_t *ns)
{
    if (c->zero || !c->in_mxfer) {
        struct pvm_tv e = c->zero ? (struct pvm_tv){0, 0} : tv_since(c->start);
        if (c->zero || tv_before(c->tmout, e)) {
            if (c->polled)
                return TRECV_DONE;
            /* One poll, then a last look.  PVM polls its socket only for
             * {0,0}; a time up at once ({-1,0}) just looks at what it has
             * read.  Here every form lets the ready tasks run once, so that
             * a loop on it cannot keep the node's other tasks from running. */
            c->polled = true;
            return TRECV_POLL;
        }
        c->left = tv_minus(c->tmout, e); /* the same reading: tmout >= e */
        c->in_mxfer = true;
        c->waited = false;
        c->mxfer_start = upvm_now_ns();
    }
    struct pvm_tv e = tv_since(c->mxfer_start);
    if (tv_before(c->left, e)) {
        c->in_mxfer = false; /* mxfer polls a last time and returns */
        if (c->waited || (*ns = trecv_left_ns(c)) == 0)
            return TRECV_POLL;
        return TRECV_WAIT;
    }
    *ns = select_ns(tv_minus(c->left, e));
    if (*ns == -EINVAL)
        return TRECV_EINVAL;
    if (*ns == 0) {
        c->in_mxfer = false;
        return TRECV_POLL;
    }
    c->waited = true;
    return TRECV_WAIT;
}

/*
 * The receive family's one loop.  tmout: NULL waits for ever, else
 * pvm_trecv's timeout ({0,0}: a poll).  Returns a buffer id, 0 (nothing:
 * poll or timeout) or an error.
 */
static int receive(struct pvm_task *t, const char *fn, int tid, int tag,
                   const struct timeval *tmout, enum recv_mode mode)
{
    struct trecv_clock c = {.zero = tmout && tmout->tv_sec == 0 && tmout->tv_usec == 0};
    if (tmout && !c.zero) {
        c.tmout = (struct pvm_tv){tmout->tv_sec, tmout->tv_usec};
        c.start = upvm_now_ns();
    }
    for (;;) {
        if (unlikely(t->active_mhfs))
            run_handlers(t);
        int err = 0;
        struct pvm_qmsg *q = find(t, tid, tag, &err);
        if (unlikely(err))
            return pvm_fail(t, fn, err);
        if (q && mode == RECV_PROBE) {
            int id = queued_id(t, q);
            return id < 0 ? pvm_fail(t, fn, id) : id;
        }
        if (q) {
            int id = take(t, q);
            return unlikely(id < 0) ? pvm_fail(t, fn, id) : id;
        }
        int64_t ns = -1;
        switch (tmout ? trecv_step(&c, &ns) : TRECV_WAIT) {
        case TRECV_DONE: return 0;
        case TRECV_POLL: pvm_poll_yield(); continue; /* let the senders run, look again */
        case TRECV_EINVAL: {
            char who[32];
            fprintf(stderr, "libpvm [%s] mxfer() select: %s\n", pvm_whoami(who, sizeof who),
                    strerror(EINVAL));
            return pvm_fail(t, fn, PvmSysErr);
        }
        case TRECV_WAIT: break;
        }
        t->waiting = true;
        t->want_tid = tid;
        t->want_tag = tag;
        t->want_ctx = t->ctx;
        (void)core_block_to(&t->recvq, ns, handoff_target(tid));
        t->waiting = false;
    }
}

/* nrecv and trecv that find nothing free the receive buffer, as PVM does. */
static int nothing_received(struct pvm_task *t)
{
    if (t->rbuf)
        pvm_buf_drop(t, t->rbuf);
    return 0;
}

/* A receive's ENTRY event: what it waits for (and trecv's timeout). */
static void recv_entry(struct pvm_task *t, int tid, int tag, const struct timeval *tmout)
{
    pvm_tev_int(t, TEV_DID_RST, tid);
    pvm_tev_int(t, TEV_DID_RMC, tag);
    pvm_tev_int(t, TEV_DID_RCX, t->ctx);
    if (tmout) {
        pvm_tev_int(t, TEV_DID_MTS, (int)tmout->tv_sec);
        pvm_tev_int(t, TEV_DID_MTU, (int)tmout->tv_usec);
    }
    pvm_tev_end(t);
}

/* A receive's EXIT event: the buffer id it returned (or its error), then
 * the message's bytes, tag, context and source (-1 when none came). */
static void recv_exit(struct pvm_task *t, int id)
{
    msg_buf_t *b = id > 0 ? pvm_buf(t, id) : NULL;
    const msg_hdr_t *h = b ? msg_buf_hdr(b) : NULL;
    pvm_tev_int(t, TEV_DID_MB, id);
    pvm_tev_int(t, TEV_DID_MNB, b ? (int)msg_buf_len(b) : -1);
    pvm_tev_int(t, TEV_DID_MC, h ? h->tag : -1);
    pvm_tev_int(t, TEV_DID_MCX, t->ctx);
    pvm_tev_int(t, TEV_DID_SRC, h ? h->src : -1);
    pvm_tev_end(t);
}

/* pvm_recv, pvm_nrecv, pvm_trecv: the receive and its trace points. */
static int recv_traced(struct pvm_task *t, int kind, const char *fn, int tid, int tag,
                       const struct timeval *tmout)
{
    struct pvm_api a;
    if (pvm_api_enter(t, &a, kind))
        recv_entry(t, tid, tag, kind == TEV_TRECV ? tmout : NULL);
    int id = receive(t, fn, tid, tag, tmout, RECV_TAKE);
    if (kind == TEV_NRECV && id == 0)
        id = nothing_received(t);
    else if (kind == TEV_TRECV && id <= 0) /* PVM frees it first, whatever comes */
        (void)nothing_received(t);
    if (pvm_api_leave(t, &a))
        recv_exit(t, id);
    return id;
}

int pvm_recv(int tid, int tag)
{
    TASK_OR_FAIL(t, "pvm_recv");
    return recv_traced(t, TEV_RECV, "pvm_recv", tid, tag, NULL);
}

static const struct timeval poll_now = {0, 0};

int pvm_nrecv(int tid, int tag)
{
    TASK_OR_FAIL(t, "pvm_nrecv");
    return recv_traced(t, TEV_NRECV, "pvm_nrecv", tid, tag, &poll_now);
}

int pvm_trecv(int tid, int tag, struct timeval *tmout)
{
    TASK_OR_FAIL(t, "pvm_trecv");
    return recv_traced(t, TEV_TRECV, "pvm_trecv", tid, tag, tmout);
}

int pvm_probe(int tid, int tag)
{
    TASK_OR_FAIL(t, "pvm_probe");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_PROBE))
        recv_entry(t, tid, tag, NULL);
    int cc = receive(t, "pvm_probe", tid, tag, &poll_now, RECV_PROBE);
    if (pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_end(t);
    }
    return cc;
}

/* pvm_precv, its errors reported; what came in *src, *tag, *len (-1: none). */
static int precv_body(struct pvm_task *t, int tid, int tag, void *buf, int len, int type,
                      int got[3])
{
    if (type == PVM_STR)
        return pvm_fail(t, "pvm_precv", PvmNotImpl);
    int size = type_size(type);
    if (!size || len < 0 || (len > 0 && !buf))
        return pvm_fail(t, "pvm_precv", PvmBadParam);
    /* Receive into a temporary buffer, leaving the receive buffer alone. */
    int saved = t->rbuf;
    t->rbuf = 0;
    int id = receive(t, "pvm_precv", tid, tag, NULL, RECV_TAKE);
    if (id <= 0) {
        t->rbuf = saved;
        return id;
    }
    msg_buf_t *b = t->bufs[id].buf;
    const msg_hdr_t *h = msg_buf_hdr(b);
    size_t have = msg_buf_remaining(b);
    size_t want = (size_t)len * (size_t)size;
    int rc = 0;
    if (want && have) /* the bytes as they are: PVM does not decode them */
        rc = pvm_code_from_errno(
            msg_unpack(b, PVM_BYTE, buf, (int)(want < have ? want : have), 1));
    got[0] = h->src;
    got[1] = h->tag;
    got[2] = (int)msg_buf_len(b);
    pvm_buf_drop(t, id);
    t->rbuf = pvm_buf(t, saved) ? saved : 0;
    return rc ? pvm_fail(t, "pvm_precv", rc) : 0;
}

int pvm_precv(int tid, int tag, void *buf, int len, int type, int *rtid, int *rtag,
              int *rlen)
{
    TASK_OR_FAIL(t, "pvm_precv");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_PRECV)) {
        pvm_tev_int(t, TEV_DID_RST, tid);
        pvm_tev_int(t, TEV_DID_RMC, tag);
        pvm_tev_int(t, TEV_DID_RCX, t->ctx);
        pvm_tev_long(t, TEV_DID_PDA, (long)buf);
        pvm_tev_int(t, TEV_DID_PC, len);
        pvm_tev_int(t, TEV_DID_PDT, type);
        pvm_tev_end(t);
    }
    int got[3] = {-1, -1, -1}; /* source, tag, bytes */
    int cc = precv_body(t, tid, tag, buf, len, type, got);
    if (got[0] != -1 || got[1] != -1 || got[2] != -1) {
        if (rtid)
            *rtid = got[0];
        if (rtag)
            *rtag = got[1];
        if (rlen)
            *rlen = got[2];
    }
    if (pvm_api_leave(t, &a)) {
        bool none = cc < 0;
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_int(t, TEV_DID_MNB, none ? -1 : got[2]);
        pvm_tev_int(t, TEV_DID_MC, none ? -1 : got[1]);
        pvm_tev_int(t, TEV_DID_MCX, t->ctx);
        pvm_tev_int(t, TEV_DID_SRC, none ? -1 : got[0]);
        pvm_tev_end(t);
    }
    return cc;
}

/* The matcher PVM installs by default; returned by pvm_recvf so that a
 * caller can restore it or call it. */
static int default_match(int bufid, int tid, int tag)
{
    struct pvm_task *t = pvm_current();
    msg_buf_t *b = t ? pvm_buf(t, bufid) : NULL;
    return b && header_matches(msg_buf_hdr(b), tid, tag, t->ctx);
}

/* pvm3.h declares pvm_recvf's result with PVM 3.4.6's own (odd) type; what
 * it returns is the previous matcher, int f(int bufid, int tid, int tag),
 * which callers keep in an unprototyped int (*)(). */
typedef int (*recvf_result_t)(int (*)(int, int, int));

recvf_result_t pvm_recvf(int (*newf)(int bufid, int tid, int tag))
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return NULL;
    int (*old)(int, int, int) = t->recvf ? t->recvf : default_match;
    t->recvf = newf == default_match ? NULL : newf;
    recvf_result_t r;
    memcpy(&r, &old, sizeof r);
    return r;
}

/* ------------------------------------------------------------ contexts */

static int ctx_add(int c)
{
    if (pvm_node.nctxs == pvm_node.capctxs) {
        int cap = pvm_node.capctxs ? 2 * pvm_node.capctxs : 16;
        int *v = realloc(pvm_node.ctxs, (size_t)cap * sizeof *v);
        if (!v)
            return PvmNoMem;
        pvm_node.ctxs = v;
        pvm_node.capctxs = cap;
    }
    pvm_node.ctxs[pvm_node.nctxs++] = c;
    return c;
}

static int newcontext_body(void)
{
    TASK_OR_FAIL(t, "pvm_newcontext");
    if (pvm_node.next_ctx > PVM_TID_LOCAL_MASK)
        return pvm_fail(t, "pvm_newcontext", PvmOutOfRes);
    int c = ctx_add(pvm_node.host_tid | pvm_node.next_ctx);
    if (c < 0)
        return pvm_fail(t, "pvm_newcontext", c);
    pvm_node.next_ctx++;
    return c;
}

int pvm_newcontext(void)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t)
        pvm_api_enter_bare(t, &a, TEV_NEWCONTEXT);
    int cc = newcontext_body();
    return t ? pvm_api_leave_int(t, &a, TEV_DID_CXN, cc) : cc;
}

static int setcontext_body(int ctx)
{
    TASK_OR_FAIL(t, "pvm_setcontext");
    int old = t->ctx;
    t->ctx = ctx; /* any value, unchecked, as in PVM */
    return old;
}

int pvm_setcontext(int ctx)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_SETCONTEXT)) {
        pvm_tev_int(t, TEV_DID_CXS, ctx);
        pvm_tev_end(t);
    }
    int cc = setcontext_body(ctx);
    return t ? pvm_api_leave_int(t, &a, TEV_DID_CC, cc) : cc;
}

static int getcontext_body(void)
{
    TASK_OR_FAIL(t, "pvm_getcontext");
    return t->ctx;
}

int pvm_getcontext(void)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t)
        pvm_api_enter_bare(t, &a, TEV_GETCONTEXT);
    int cc = getcontext_body();
    return t ? pvm_api_leave_int(t, &a, TEV_DID_CXC, cc) : cc;
}

static int freecontext_body(int ctx)
{
    TASK_OR_FAIL(t, "pvm_freecontext");
    if (ctx == 0) /* 0 means "new" in the pvmd protocol: PVM allocates */
        return pvm_newcontext();
    for (int i = 0; i < pvm_node.nctxs; i++)
        if (pvm_node.ctxs[i] == ctx) {
            pvm_node.ctxs[i] = pvm_node.ctxs[--pvm_node.nctxs];
            return 0;
        }
    return pvm_fail(t, "pvm_freecontext", PvmNotFound);
}

int pvm_freecontext(int ctx)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_FREECONTEXT)) {
        pvm_tev_int(t, TEV_DID_CXF, ctx);
        pvm_tev_end(t);
    }
    int cc = freecontext_body(ctx);
    return t ? pvm_api_leave_int(t, &a, TEV_DID_CC, cc) : cc;
}
