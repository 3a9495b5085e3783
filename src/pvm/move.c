/*
 * move.c - a task's PVM state across a migration (src/migrate).
 *
 * A process-mode task's struct pvm_task and the arrays it owns (buffer
 * table, handlers, siblings, results) live in its own heap, so they arrive
 * with its memory at the same addresses.  What does not are the node's
 * objects it refers to: message buffers (shared, reference-counted data
 * of the node's pools), queued messages, notification records, its place
 * in the node's tables.  pvm_move_pack writes them out and lets go of them
 * on the node the task leaves; pvm_move_unpack makes them anew on the node
 * it reaches, in the same order (the queue's order is the messages'
 * order), and puts the task in that node's tables.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvm/move.h"
#include "pvm/remote.h"
#include "pvm/tev.h"

/* A message: its serialised form, length first. */
static void put_msg(struct bytes_out *w, const msg_buf_t *b)
{
    size_t n = msg_buf_serial_size(b);
    bytes_put64(w, n);
    if (w->oom)
        return;
    size_t at = w->len;
    bytes_put(w, NULL, n); /* room */
    if (w->oom)
        return;
    w->len = at;
    size_t wrote = 0;
    if (msg_buf_serialize(b, w->p + at, n, &wrote) != 0)
        w->oom = true;
    w->len = at + wrote;
}

static msg_buf_t *get_msg(struct bytes_in *r)
{
    uint64_t n = bytes_get64(r);
    if (r->bad || (uint64_t)(r->end - r->p) < n) {
        r->bad = true;
        return NULL;
    }
    msg_buf_t *b = NULL;
    if (msg_buf_deserialize(r->p, (size_t)n, &b) != 0) {
        r->bad = true;
        return NULL;
    }
    r->p += n;
    return b;
}

/* ------------------------------------------------------------ out */

/* The index in t's queue of the queued message q. */
static int queue_index(const struct pvm_task *t, const struct pvm_qmsg *q)
{
    int i = 0;
    list_for_each(l, &t->inq) {
        if (list_entry(l, struct pvm_qmsg, link) == q)
            return i;
        i++;
    }
    return -1;
}

int pvm_move_pack(struct pvm_task *t, struct bytes_out *w)
{
    pvm_tev_moving(t); /* its trace buffer is this node's: sent before it goes */
    if (pvm_task_own_sibs(t) != 0)
        return PvmNoMem;
    size_t nlen = strlen(t->name) + 1;
    bytes_put64(w, nlen);
    bytes_put(w, t->name, nlen);
    /* the queue, oldest first */
    int32_t nq = 0;
    list_for_each(l, &t->inq) nq++;
    bytes_put32(w, nq);
    list_for_each(l, &t->inq) {
        struct pvm_qmsg *q = list_entry(l, struct pvm_qmsg, link);
        bytes_put32(w, q->lbid);
        bytes_put64(w, msg_buf_tell(q->buf));
        put_msg(w, q->buf);
    }
    /* buffer ids */
    int32_t nb = 0;
    for (int id = 1; id < t->nbufs; id++)
        nb += t->bufs[id].buf != NULL;
    bytes_put32(w, nb);
    for (int id = 1; id < t->nbufs; id++) {
        const struct pvm_bufslot *s = &t->bufs[id];
        if (!s->buf)
            continue;
        bytes_put32(w, id);
        bytes_put32(w, s->ctx_set | s->trace << 1);
        int qi = s->queued ? queue_index(t, s->queued) : -1;
        bytes_put32(w, qi);
        if (qi < 0) {
            bytes_put64(w, msg_buf_tell(s->buf));
            put_msg(w, s->buf);
        }
    }
    /* notifications others asked for on t's exit */
    int32_t nw = 0;
    list_for_each(l, &t->watchers) nw++;
    bytes_put32(w, nw);
    list_for_each(l, &t->watchers) {
        const struct pvm_watch *x = list_entry(l, struct pvm_watch, link);
        int32_t rec[4] = {x->watcher, x->tag, x->ctx, x->what};
        bytes_put(w, rec, sizeof rec);
    }
    pvm_remote_move_pack(t->tid, w); /* the ones t asked for, kept by this node */
    node_rpc_move_pack(t->ulp, w);    /* the answers it waits for */
    return w->oom ? PvmNoMem : 0;
}

void pvm_move_release(struct pvm_task *t)
{
    list_link_t *l;
    while ((l = list_pop_front(&t->inq))) {
        struct pvm_qmsg *q = list_entry(l, struct pvm_qmsg, link);
        list_init(&q->link);
        pvm_qmsg_free(q);
    }
    for (int id = 1; id < t->nbufs; id++) {
        struct pvm_bufslot *s = &t->bufs[id];
        if (s->buf && !s->queued)
            msg_buf_unref(s->buf);
        s->buf = NULL;
        s->queued = NULL;
    }
    while ((l = list_pop_front(&t->watchers))) {
        struct pvm_watch *x = list_entry(l, struct pvm_watch, link);
        if (x->watcher != t->tid && pvm_task_by_tid(x->watcher)) /* a watcher here (remote.h) */
            pvm_remote_watch_keep(x->watcher, t->tid, x->tag, x->ctx);
        free(x);
    }
    pvm_remote_move_release(t->tid);
    node_rpc_move_release(t->ulp, t->tid);
    pvm_task_unregister(t);
}

/* ------------------------------------------------------------ in */

static int unpack_queue(struct pvm_task *t, struct bytes_in *r, struct pvm_qmsg ***byindex,
                        int *nq)
{
    *nq = bytes_get32(r);
    if (r->bad || *nq < 0)
        return PvmBadMsg;
    *byindex = calloc((size_t)*nq + 1, sizeof **byindex);
    if (!*byindex)
        return PvmNoMem;
    for (int i = 0; i < *nq; i++) {
        int lbid = bytes_get32(r);
        uint64_t pos = bytes_get64(r);
        msg_buf_t *b = get_msg(r);
        if (!b)
            return PvmBadMsg;
        (void)msg_buf_seek(b, (size_t)pos);
        if (pvm_deliver_now(t, b) != 0)
            return PvmNoMem;
        struct pvm_qmsg *q = list_entry(t->inq.prev, struct pvm_qmsg, link);
        q->lbid = lbid;
        (*byindex)[i] = q;
    }
    return 0;
}

static int unpack_bufs(struct pvm_task *t, struct bytes_in *r, struct pvm_qmsg **byindex,
                       int nq)
{
    int nb = bytes_get32(r);
    if (r->bad || nb < 0)
        return PvmBadMsg;
    for (int i = 0; i < nb; i++) {
        int id = bytes_get32(r), ctx_set = bytes_get32(r), qi = bytes_get32(r);
        if (r->bad || id <= 0 || id >= t->nbufs || qi >= nq)
            return PvmBadMsg;
        struct pvm_bufslot *s = &t->bufs[id];
        s->ctx_set = ctx_set & 1;
        s->trace = ctx_set & 2;
        if (qi >= 0) {
            s->queued = byindex[qi];
            s->buf = byindex[qi]->buf;
            continue;
        }
        uint64_t pos = bytes_get64(r);
        msg_buf_t *b = get_msg(r);
        if (!b)
            return PvmBadMsg;
        (void)msg_buf_seek(b, (size_t)pos);
        s->buf = b;
        s->queued = NULL;
    }
    return 0;
}

static int unpack_watchers(struct pvm_task *t, struct bytes_in *r)
{
    int nw = bytes_get32(r);
    if (r->bad || nw < 0)
        return PvmBadMsg;
    for (int i = 0; i < nw; i++) {
        int32_t rec[4];
        if (!bytes_get(r, rec, sizeof rec))
            return PvmBadMsg;
        struct pvm_watch *x = malloc(sizeof *x);
        if (!x)
            return PvmNoMem;
        *x = (struct pvm_watch){.watcher = rec[0], .tag = rec[1], .ctx = rec[2],
                                .what = rec[3]};
        list_push_back(&t->watchers, &x->link);
    }
    return 0;
}

int pvm_move_unpack(struct pvm_task *t, struct ulp *u, const void *p, size_t len,
                    const void *lo, const void *hi)
{
    struct bytes_in r = {p, (const unsigned char *)p + len, false};
    char name[256];
    uint64_t nlen = bytes_get64(&r);
    if (r.bad || nlen == 0 || nlen > sizeof name || !bytes_get(&r, name, (size_t)nlen))
        return PvmBadMsg;
    name[nlen - 1] = '\0';
    t->name = pvm_intern(name);
    /* what pointed at the other node's objects starts empty */
    list_init(&t->inq);
    list_init(&t->watchers);
    for (int id = 1; id < t->nbufs; id++)
        t->bufs[id] = (struct pvm_bufslot){NULL, NULL, false, false};
    int rc = pvm_task_register(t, u);
    if (rc != 0)
        return rc;
    struct pvm_qmsg **byindex = NULL;
    int nq = 0;
    rc = unpack_queue(t, &r, &byindex, &nq);
    if (rc == 0)
        rc = unpack_bufs(t, &r, byindex, nq);
    free(byindex);
    if (rc == 0)
        rc = unpack_watchers(t, &r);
    if (rc == 0)
        rc = pvm_remote_move_unpack(&r, t->tid);
    if (rc == 0)
        rc = pvm_code_from_errno(node_rpc_move_unpack(&r, u, lo, hi));
    t->moving = false;
    return rc;
}

/* ------------------------------------------------------------ tracing */

bool pvm_tracing;

void pvm_trace_init(void)
{
    /* balance: src/gs's decisions; all: both */
    static const char *const what[] = {"migrate", "balance", "all", NULL};
    int w;
    pvm_tracing = env_choice("UPVM_TRACE", what, -1, 0, &w) > 0 && w != 1;
}

void pvm_trace_line(const char *fmt, ...)
{
    char line[512];
    /* the monotonic clock, the same in every node: lines of several nodes
     * sort into one story */
    uint64_t now = upvm_now_ns();
    int n = snprintf(line, sizeof line, "upvm-trace %llu.%06llu node %d: ",
                     (unsigned long long)(now / 1000000000u),
                     (unsigned long long)(now % 1000000000u / 1000u), node_job_self());
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof line)
        n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    (void)!write(STDERR_FILENO, line, (size_t)n); /* one write: lines of nodes do not mix */
}
