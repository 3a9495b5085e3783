/*
 * flush.c - routing frames for a task while it moves: the flush of the
 * MPVM/UPVM protocol, the PVM layer's part of a migration beside move.c
 * (move.h; docs/design-notes.md §9).
 *
 * While a task moves, frames for it may come two ways at once: the old way
 * (through the node it left, which forwards) and the new way (straight to
 * the node it reached).  Order holds per path (every ring is FIFO and a
 * node forwards in arrival order), so the destination holds what comes
 * the new way from a node until that node's marker has come the old way:
 * when a node learns of the move (K_MIG_MOVED), it sends a marker for the
 * task along its old route, then sends the new way.  Frames are held per
 * channel (the node they came from), so a frame that another node forwarded
 * is ordered with that node's own traffic, which is what the marker of the
 * forwarding node closes; by induction along any route, nothing of a
 * sender's is delivered before something it sent earlier.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/directory.h"
#include "pvm/move.h"
#include "pvm/remote.h"

struct held {
    list_link_t link;
    int src;
    struct node_frame f;
    size_t len;
    unsigned char p[];
};

struct flush {
    list_link_t link;
    int tid;
    bool installed;         /* the task runs here: frames may go in */
    int old;                /* the node it came from: every marker comes through it */
    uint64_t blocked;       /* channels (nodes) whose marker is missing */
    list_link_t frames;     /* held, in arrival order */
    list_link_t sends;      /* the task's own messages to other nodes, held */
    bool gone;              /* the task ended here: the others hear of it at the end */
    uint32_t nheld[NODE_MAX];
};

static list_link_t flushes = {&flushes, &flushes};
static struct flush *releasing; /* its held frames are being handed on */
static void (*on_flushed)(int tid);

void pvm_route_on_flushed(void (*fn)(int tid))
{
    on_flushed = fn;
}

static struct flush *flush_of(int tid)
{
    list_for_each(l, &flushes) {
        struct flush *x = list_entry(l, struct flush, link);
        if (x->tid == tid)
            return x;
    }
    return NULL;
}

bool pvm_route_flushing(int tid)
{
    return !list_empty(&flushes) && flush_of(tid) != NULL;
}

/*
 * Task tid ended here before its flush was over: the other nodes must not
 * hear of it (K_TASK_GONE: they forget their route to here, its home frees
 * the tid) until then.  The markers still missing travel the other nodes'
 * old routes, through the node it left, which forwards them by its route
 * to here; and frames from different nodes are not ordered, so this node's
 * K_TASK_GONE may reach the node it left before another node's marker
 * does.  That node, having forgotten the route, sends the marker to the
 * tid's home, which (the tid released) takes it for one of a task that is
 * gone: the marker never comes here, and the flush, with the messages the
 * task sent last held in it, waits for ever.
 */
bool pvm_route_gone_later(int tid)
{
    struct flush *x = list_empty(&flushes) ? NULL : flush_of(tid);
    if (!x)
        return false;
    x->gone = true;
    pvm_trace("t%x: ended during its flush: the others are told when it is over",
              (unsigned)tid);
    return true;
}

/* Record where tid is; out of memory for the directory, say so (frames
 * then go by the tid's home, which forwards). */
static void route_set(int tid, int node)
{
    if (node_dir_set(&pvm_dir, tid, node) != 0)
        fprintf(stderr, "upvm: node %d: no memory to record that t%x is on node %d\n",
                node_job_self(), (unsigned)tid, node);
    pvm_remote_watches_follow(tid, node);
}

static bool must_hold(const struct flush *x, int src)
{
    return !x->installed || (x->blocked >> src & 1) || x->nheld[src] > 0;
}

static int hold(struct flush *x, int src, const struct node_frame *f, const void *p, size_t len)
{
    struct held *h = malloc(sizeof *h + len);
    if (!h)
        return -ENOMEM;
    h->src = src;
    h->f = *f;
    h->len = len;
    if (len)
        memcpy(h->p, p, len);
    list_push_back(&x->frames, &h->link);
    x->nheld[src]++;
    pvm_trace("t%x: held frame kind %u from node %d (installed %d, blocked %#llx)",
              (unsigned)x->tid, f->kind, src, x->installed, (unsigned long long)x->blocked);
    return 0;
}

/* The task's messages to other nodes, held while its flush went on, go
 * now, in the order it sent them (through on_msg: routed, or delivered
 * here if their task is here by now). */
static void send_held(struct flush *x)
{
    list_link_t *l;
    while ((l = list_pop_front(&x->sends))) {
        struct held *h = list_entry(l, struct held, link);
        pvm_trace("t%x: sends its held message to t%x", (unsigned)x->tid, (unsigned)h->f.a);
        node_dispatch(node_job_self(), &h->f, h->p, h->len);
        free(h);
    }
}

/* Hand on every held frame whose channel is open now, in order; the flush
 * ends when nothing is held or blocked. */
static void release(struct flush *x)
{
    int self = node_job_self();
    for (list_link_t *l = x->frames.next, *next; x->installed && l != &x->frames; l = next) {
        next = l->next;
        struct held *h = list_entry(l, struct held, link);
        if (x->blocked >> h->src & 1)
            continue;
        list_unlink(l);
        x->nheld[h->src]--;
        pvm_trace("t%x: released held frame kind %u from node %d", (unsigned)x->tid, h->f.kind,
                  h->src);
        if (h->src == self && h->f.kind == K_MSG) { /* this node's own send */
            struct pvm_task *dst = pvm_task_by_tid(x->tid);
            msg_buf_t *b;
            if (dst && msg_buf_deserialize(h->p, h->len, &b) == 0)
                (void)pvm_deliver_now(dst, b);
        } else {
            releasing = x; /* in order already: not held again */
            node_dispatch(h->src, &h->f, h->p, h->len);
            releasing = NULL;
        }
        free(h);
        next = x->frames.next; /* a dispatch may have released more */
    }
    if (x->installed) {
        struct pvm_task *t = pvm_task_by_tid(x->tid);
        if (t && !(x->blocked >> self & 1))
            t->hold_local = false;
    }
    if (x->installed && !x->blocked && list_empty(&x->frames)) {
        int tid = x->tid;
        bool gone = x->gone;
        send_held(x);
        list_unlink(&x->link);
        free(x);
        pvm_trace("t%x: flush over", (unsigned)tid);
        if (gone) /* every marker is in: the routes to here may go now */
            pvm_remote_task_gone(tid);
        if (on_flushed)
            on_flushed(tid);
    }
}

bool pvm_route_here(int src, const struct node_frame *f, const void *p, size_t len, int tid)
{
    /* A task on its way here: what comes for it waits (before the route
     * is looked at: until it arrives, this node's route still points back
     * to the node it left). */
    struct flush *x = list_empty(&flushes) ? NULL : flush_of(tid);
    if (x && x != releasing && must_hold(x, src)) {
        (void)hold(x, src, f, p, len);
        return false;
    }
    /* No route (not a tid of this job), or a route that ends at a node
     * that died (the task was there, or on its way there or from there):
     * the task is gone, and the frame is handled here as one for no task
     * (a request is answered PvmNoTask, a message dropped), not sent on to
     * be lost on the way. */
    int next = node_dir_next_hop(&pvm_dir, tid, src);
    if (next >= 0 && next != node_job_self() && node_job_up(next)) {
        pvm_trace("t%x: forwarded frame kind %u from node %d to node %d", (unsigned)tid, f->kind,
                  src, next);
        node_post(next, f, p, len, NULL, 0); /* it moved: forward */
        return false;
    }
    return true;
}

/*
 * Messages a task sent before it moved may still be on their way from the
 * node it left (in that node's ring to their destination, or in its send
 * queue) when it sends again from here: the two take different paths, and
 * the destination's node may read the newer first.  Every other node's
 * marker (the flush's `blocked`) comes after that node has handled what
 * the old node sent it before the move, so the task's messages to other
 * nodes wait here until its flush is over.  Its messages to this node's
 * tasks need no wait: what the old node sent here came before the task.
 */
int pvm_route_hold_send(int src_tid, msg_buf_t *b, int dst_tid)
{
    struct flush *x = list_empty(&flushes) ? NULL : flush_of(src_tid);
    if (likely(!x || !x->installed))
        return 1;
    size_t n = msg_buf_serial_size(b);
    struct held *h = malloc(sizeof *h + n);
    size_t wrote = 0;
    if (!h || msg_buf_serialize(b, h->p, n, &wrote) != 0) {
        free(h);
        return PvmNoMem;
    }
    h->src = node_job_self();
    h->f = (struct node_frame){K_MSG, dst_tid, 0, 0};
    h->len = wrote;
    list_push_back(&x->sends, &h->link);
    pvm_trace("t%x: message to t%x held until its flush is over", (unsigned)src_tid,
              (unsigned)dst_tid);
    return 0;
}

int pvm_route_hold_local(struct pvm_task *dst, msg_buf_t *b)
{
    struct flush *x = flush_of(dst->tid);
    if (!x) {
        dst->hold_local = false;
        return pvm_deliver_now(dst, b);
    }
    size_t n = msg_buf_serial_size(b);
    unsigned char *w = malloc(n ? n : 1);
    size_t wrote = 0;
    int rc = w && msg_buf_serialize(b, w, n, &wrote) == 0 ? 0 : PvmNoMem;
    struct node_frame f = {K_MSG, dst->tid, 0, 0};
    if (rc == 0 && hold(x, node_job_self(), &f, w, wrote) != 0)
        rc = PvmNoMem;
    free(w);
    msg_buf_unref(b);
    return rc;
}

uint64_t pvm_route_moved(int tid, int to)
{
    int self = node_job_self();
    uint64_t told = 0;
    pvm_trace("t%x: left for node %d", (unsigned)tid, to);
    route_set(tid, to);
    struct node_frame f = {K_MIG_MOVED, tid, to, 0};
    for (int n = 0; n < node_job_slots(); n++)
        if (n != self && n != to && node_job_up(n) && node_send(n, &f, NULL, 0, NULL, 0) == 0)
            told |= 1ull << n;
    return told;
}

/* Another node's task moved: a marker the old way, then the new way. */
static void on_moved(int src, const struct node_frame *f, const void *p, size_t len)
{
    int tid = f->a, old = node_dir_route(&pvm_dir, tid), self = node_job_self();
    struct node_frame m = {K_MIG_MARK, tid, self, 0};
    pvm_trace("t%x: moved from node %d to node %d (told by node %d): marker to node %d",
              (unsigned)tid, old, f->b, src, old);
    if (old >= 0 && old != self)
        node_post(old, &m, NULL, 0, NULL, 0);
    route_set(tid, f->b);
}

static void on_mark(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (!pvm_route_here(src, f, p, len, f->a))
        return;
    struct flush *x = flush_of(f->a);
    pvm_trace("t%x: marker of node %d came (from node %d)%s", (unsigned)f->a, f->b, src,
              x ? "" : ": no flush");
    if (!x || f->b < 0 || f->b >= NODE_MAX)
        return;
    x->blocked &= ~(1ull << f->b);
    release(x);
}

int pvm_route_expect(int tid)
{
    struct flush *x = flush_of(tid);
    if (x)
        return x->installed ? -EBUSY : 0;
    if (!(x = calloc(1, sizeof *x)))
        return -ENOMEM;
    x->tid = tid;
    x->old = -1;
    list_init(&x->frames);
    list_init(&x->sends);
    list_push_back(&flushes, &x->link);
    pvm_trace("t%x: expected", (unsigned)tid);
    return 0;
}

void pvm_route_unexpect(int tid)
{
    struct flush *x = flush_of(tid);
    if (!x || x->installed)
        return;
    x->installed = true;
    x->blocked = 0;
    pvm_trace("t%x: not coming after all", (unsigned)tid);
    release(x);
}

void pvm_route_arrived(int tid, uint64_t blocked)
{
    struct flush *x = flush_of(tid);
    int self = node_job_self();
    if (!x)
        return;
    /* This node's own earlier sends went the old way: its marker follows
     * them, and its later sends wait for it. */
    int old = node_dir_route(&pvm_dir, tid);
    route_set(tid, self);
    if (old >= 0 && old != self && node_job_up(old)) {
        blocked |= 1ull << self;
        struct pvm_task *t = pvm_task_by_tid(tid);
        if (t)
            t->hold_local = true;
        struct node_frame m = {K_MIG_MARK, tid, self, 0};
        node_post(old, &m, NULL, 0, NULL, 0);
    }
    for (int n = 0; n < NODE_MAX; n++) /* a node gone sends no marker */
        if ((blocked >> n & 1) && n != self && !node_job_up(n))
            blocked &= ~(1ull << n);
    x->installed = true;
    x->blocked = blocked;
    x->old = old;
    pvm_trace("t%x: arrived (its old route here: node %d), waiting for markers %#llx",
              (unsigned)tid, old, (unsigned long long)blocked);
    release(x);
}

void pvm_route_node_gone(int n)
{
    for (list_link_t *l = flushes.next, *next; l != &flushes; l = next) {
        next = l->next;
        struct flush *x = list_entry(l, struct flush, link);
        x->blocked &= ~(1ull << n);
        /* Every marker comes the old way, through the node the task left:
         * those not through yet are lost with it, as are the frames they
         * were to follow. */
        if (x->installed && x->old == n)
            x->blocked = 0;
        release(x);
    }
}

void pvm_route_register(void)
{
    node_on_frame(K_MIG_MOVED, on_moved);
    node_on_frame(K_MIG_MARK, on_mark);
}
