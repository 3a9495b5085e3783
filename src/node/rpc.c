/*
 * rpc.c - requests between nodes that wait for an answer (rpc.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/kinds.h"
#include "node/rpc.h"
#include "util/env.h"

/* A request waiting for its answer, on the asking ULP's stack. */
struct rpc {
    list_link_t link;
    struct ulp *owner;         /* the ULP waiting (its stack holds this) */
    int id, node;              /* node: the server */
    int asked_from;            /* the node the answer goes to */
    int died;                  /* the result if the server dies first */
    bool done;
    int result;
    void *data;
    size_t len;
    upvm_waitq_t q;
};

#define RPC_ID_NODE_SHIFT 24   /* NODE_MAX (64) nodes fit below the sign bit */

/* A record that left with its task before its answer came: the answer,
 * when it comes here, goes on to the task (by tid). */
struct rpc_away {
    list_link_t link;
    int id, tid, node;         /* node: the server */
};

static list_link_t rpcs = {&rpcs, &rpcs};
static list_link_t rpcs_away = {&rpcs_away, &rpcs_away};
static struct node_rpc_ops rpc_ops;

void node_rpc_set_ops(const struct node_rpc_ops *ops)
{
    rpc_ops = *ops;
}

static void forget_exited(struct ulp *u);

static void rpc_begin(struct rpc *r, int node, int died)
{
    static int next_id;
    static bool hooked;
    if (unlikely(!hooked)) /* also in a job of one node (requests to itself) */
        hooked = core_add_exit_hook(forget_exited) == 0;
    next_id = (next_id + 1) & ((1 << RPC_ID_NODE_SHIFT) - 1);
    *r = (struct rpc){.id = node_job_self() << RPC_ID_NODE_SHIFT | next_id, .node = node,
                      .asked_from = node_job_self(), .owner = core_current(),
                      .died = died};
    upvm_waitq_init(&r->q, "a reply from another node");
    list_push_back(&rpcs, &r->link);
}

static void rpc_complete(struct rpc *r, int result, const void *p, size_t len)
{
    r->result = result;
    if (len && (r->data = malloc(len)) != NULL) {
        memcpy(r->data, p, len);
        r->len = len;
    }
    r->done = true;
    (void)core_wake_one(&r->q);
}

static struct rpc *rpc_of(int id)
{
    list_for_each(l, &rpcs) {
        struct rpc *r = list_entry(l, struct rpc, link);
        if (r->id == id && !r->done)
            return r;
    }
    return NULL;
}

/* The node's own requests are served at once, in the asking ULP, by the
 * kind's handler; the answer comes back through node_rpc_reply. */
static int serve_here(const struct node_frame *f, const struct node_rpc_req *q)
{
    unsigned char *p = malloc(q->l1 + q->l2 + 1);
    if (!p)
        return q->down;
    if (q->l1)
        memcpy(p, q->p1, q->l1);
    if (q->l2)
        memcpy(p + q->l1, q->p2, q->l2);
    bool served = node_dispatch(node_job_self(), f, p, q->l1 + q->l2);
    free(p);
    return served ? 0 : q->down;
}

/* How long a request waits before its silence is said (rpc_send): 10 s,
 * or UPVM_TEST_RPC_SLOW_MS (tests only: tests/node/blocked.c). */
#define RPC_SLOW_NS (10ll * 1000 * 1000 * 1000)

static int64_t slow_ns(void)
{
    static int64_t ns = -1;
    if (ns < 0) {
        static const struct env_num spec = {.min = 1, .max = 3600000,
                                            .dflt = RPC_SLOW_NS / 1000000};
        uint64_t ms;
        (void)env_uint("UPVM_TEST_RPC_SLOW_MS", &spec, &ms);
        ns = (int64_t)ms * 1000000;
    }
    return ns;
}

/* Send r's request and wait for its answer (or its server's death), at
 * most limit_ns (< 0: no limit; -ETIMEDOUT when it passed). */
static int rpc_send(struct rpc *r, const struct node_rpc_req *q, int64_t limit_ns)
{
    struct node_frame f = {q->kind, q->a, r->id, q->c};
    bool sent = r->node == node_job_self()
                    ? serve_here(&f, q) == 0
                    : node_send(r->node, &f, q->p1, q->l1, q->p2, q->l2) == 0;
    if (!sent) {
        list_unlink(&r->link);
        return q->down;
    }
    /* Only the asking ULP waits: the node's other ULPs and timers go on.
     * A server that does not answer for long is said once (a node whose
     * task blocks in a system call serves nothing meanwhile). */
    bool said = limit_ns >= 0; /* (a bounded wait goes on by itself: nothing to say) */
    uint64_t end = limit_ns >= 0 ? upvm_now_ns() + (uint64_t)limit_ns : UINT64_MAX;
    while (!r->done) {
        uint64_t now = upvm_now_ns();
        if (now >= end) {
            list_unlink(&r->link); /* a late answer finds no record: dropped */
            return -ETIMEDOUT;
        }
        int64_t wait = said ? -1 : slow_ns();
        if (end != UINT64_MAX && (wait < 0 || (uint64_t)wait > end - now))
            wait = (int64_t)(end - now);
        int woke = core_block(&r->q, wait);
        if (!r->done && !said && woke == -ETIMEDOUT && upvm_now_ns() < end) {
            said = true;
            fprintf(stderr, "upvm: node %d: node %d has not answered a request (frame kind %u) "
                            "for %.3g s: a task there may be blocked in a system call, which "
                            "stalls its node; still waiting\n",
                    node_job_self(), r->node, q->kind, (double)slow_ns() / 1e9);
        }
    }
    list_unlink(&r->link);
    return r->result;
}

/* node_rpc_call, waiting at most limit_ns (< 0: for ever). */
static int call(const struct node_rpc_req *req, enum node_rpc_mode mode, void **data, size_t *len,
                int64_t limit_ns)
{
    struct rpc r;
    struct ulp *me = core_current();
    rpc_begin(&r, req->node, req->died);
    if (mode == NODE_RPC_PINNED)
        core_ulp_pin(me);
    int rc = rpc_send(&r, req, limit_ns);
    if (mode == NODE_RPC_PINNED)
        core_ulp_unpin(me);
    if (data) {
        *data = r.data;
        *len = r.len;
    } else {
        free(r.data);
    }
    return rc;
}

int node_rpc_call(const struct node_rpc_req *req, enum node_rpc_mode mode, void **data,
                  size_t *len)
{
    return call(req, mode, data, len, -1);
}

int node_rpc_call_within(const struct node_rpc_req *req, int64_t limit_ns)
{
    return call(req, NODE_RPC_PINNED, NULL, NULL, limit_ns);
}

void node_rpc_complete(int id, int result, const void *p, size_t len)
{
    struct rpc *r = rpc_of(id);
    if (r)
        rpc_complete(r, result, p, len);
}

static void on_reply(int src, const struct node_frame *f, const void *p, size_t len)
{
    struct rpc *r = rpc_of(f->a); /* the id is enough: the answer may come from a
                                   * node the request was forwarded to */
    if (r) {
        rpc_complete(r, f->b, p, len);
        return;
    }
    list_for_each(l, &rpcs_away) {
        struct rpc_away *a = list_entry(l, struct rpc_away, link);
        if (a->id != f->a)
            continue;
        int tid = a->tid;
        list_unlink(l);
        free(a);
        if (rpc_ops.forward)
            rpc_ops.forward(tid, f->a, f->b, p, len);
        return;
    }
}

void node_rpc_reply(int node, int id, int result, const void *p, size_t len)
{
    struct node_frame f = {K_RPC_REPLY, id, result, 0};
    if (node == node_job_self())
        on_reply(node, &f, p, len);
    else
        node_post(node, &f, p, len, NULL, 0);
}

void node_rpc_node_gone(int n)
{
    list_for_each(l, &rpcs) {
        struct rpc *r = list_entry(l, struct rpc, link);
        if (r->node == n && !r->done) {
            r->done = true;
            r->result = r->died;
            (void)core_wake_one(&r->q);
        }
    }
    for (list_link_t *l = rpcs_away.next, *next; l != &rpcs_away; l = next) {
        next = l->next;
        if (list_entry(l, struct rpc_away, link)->node == n) {
            list_unlink(l);
            free(list_entry(l, struct rpc_away, link));
        }
    }
}

/* A ULP killed while it waited: its record goes with its stack. */
static void forget_exited(struct ulp *u)
{
    for (list_link_t *l = rpcs.next, *next; l != &rpcs; l = next) {
        next = l->next;
        if (list_entry(l, struct rpc, link)->owner == u)
            list_unlink(l);
    }
}

void node_rpc_init(void)
{
    node_on_frame(K_RPC_REPLY, on_reply);
}

/* ------------------------------------------------------------ moving with a ULP */

void node_rpc_move_pack(const struct ulp *u, struct bytes_out *w)
{
    size_t at = w->len;
    int32_t n = 0;
    bytes_put32(w, 0); /* the count, filled in below */
    list_for_each(l, &rpcs) {
        const struct rpc *r = list_entry(l, struct rpc, link);
        if (r->owner != u)
            continue;
        bytes_put64(w, (uint64_t)(uintptr_t)r);
        bytes_put64(w, r->done && r->data ? r->len : 0); /* an answer already here */
        if (r->done && r->data)
            bytes_put(w, r->data, r->len);
        n++;
    }
    if (!w->oom)
        memcpy(w->p + at, &n, sizeof n);
}

static void remember_away(const struct rpc *r, int tid)
{
    struct rpc_away *a = malloc(sizeof *a);
    if (!a) {
        fprintf(stderr, "upvm: node %d: no memory to pass an answer on to t%x: it may wait "
                        "for ever\n", node_job_self(), (unsigned)tid);
        return;
    }
    *a = (struct rpc_away){.id = r->id, .tid = tid, .node = r->node};
    list_push_back(&rpcs_away, &a->link);
}

void node_rpc_move_release(const struct ulp *u, int tid)
{
    for (list_link_t *l = rpcs.next, *next; l != &rpcs; l = next) {
        next = l->next;
        struct rpc *r = list_entry(l, struct rpc, link);
        if (r->owner != u)
            continue;
        list_unlink(l);
        free(r->data); /* this node's copy: the bytes went with the state */
        r->data = NULL;
        r->len = 0;
        if (!r->done && r->asked_from == node_job_self())
            remember_away(r, tid); /* its answer comes here: it is passed on */
    }
}

int node_rpc_move_unpack(struct bytes_in *rb, struct ulp *u, const void *lo, const void *hi)
{
    int n = bytes_get32(rb);
    for (int i = 0; i < n && !rb->bad; i++) {
        struct rpc *r = (struct rpc *)(uintptr_t)bytes_get64(rb);
        uint64_t len = bytes_get64(rb);
        if (rb->bad || (const void *)r < lo || (const void *)(r + 1) > hi ||
            len > (uint64_t)(rb->end - rb->p))
            return -EBADMSG;
        r->owner = u;
        r->data = NULL;
        r->len = 0;
        if (len && (r->data = malloc((size_t)len)) == NULL)
            return -ENOMEM;
        if (len) {
            (void)bytes_get(rb, r->data, (size_t)len);
            r->len = (size_t)len;
        }
        list_push_back(&rpcs, &r->link);
    }
    return rb->bad ? -EBADMSG : 0;
}
