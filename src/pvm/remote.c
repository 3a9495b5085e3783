/*
 * remote.c - the PVM layer across the nodes of a job (docs/design-notes.md
 * §8): messages to tasks on other nodes, remote spawn, notify, kill, pstat,
 * tasks, the nodes as hosts, and what a dead node means for the tasks.
 * Requests that wait for an answer use the node layer's (node/rpc.h); the
 * flush while a task moves is flush.c's.
 *
 * Wire: every frame is a node_frame (node/job.h) of one of pvm/frames.h's kinds
 * and a payload.  A message is K_MSG with its destination tid in `a` and
 * the message's serialised form (msg_buf_serialize: header with source,
 * tag and context, then the data) as payload.  Requests that need an
 * answer carry their id in `b` (node/rpc.h).
 *
 * Routing: a tid's host part names the node that created the task (its
 * home); a frame for a tid goes to the node the directory says, else to
 * the home, which forwards it if the task has moved (node_dir_next_hop).
 * Pairwise FIFO holds: every frame from one node to another goes through
 * one ring, in order, and forwarding queues behind earlier frames.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/directory.h"
#include "node/job.h"
#include "pvm/move.h"
#include "pvm/pvm.h"
#include "pvm/remote.h"
#include "pvm/tev.h"


struct node_dir pvm_dir;
static bool multi;

/* ------------------------------------------------------------ requests */

/* A request to another node that waits for its answer (node/rpc.h); a
 * server that dies first answers PvmHostFail. */
static int ask(enum node_rpc_mode mode, int node, unsigned kind, int a, int c, const void *p1,
               size_t l1, const void *p2, size_t l2, int down, void **data, size_t *len)
{
    struct node_rpc_req q = {.node = node, .kind = kind, .a = a, .c = c, .p1 = p1, .l1 = l1,
                             .p2 = p2, .l2 = l2, .down = down, .died = PvmHostFail};
    return node_rpc_call(&q, mode, data, len);
}

int pvm_rpc(int node, unsigned kind, int a, int c, const void *p1, size_t l1,
            const void *p2, size_t l2, int dead, void **data, size_t *len)
{
    return ask(NODE_RPC_PINNED, node, kind, a, c, p1, l1, p2, l2, dead, data, len);
}

int pvm_rpc_movable(int node, unsigned kind, int a, int c, const void *p1, size_t l1,
                    const void *p2, size_t l2, int dead, void **data, size_t *len)
{
    return ask(NODE_RPC_MOVABLE, node, kind, a, c, p1, l1, p2, l2, dead, data, len);
}

/* An answer that follows its task (routed by tid, like a message). */
static void on_reply_tid(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (pvm_route_here(src, f, p, len, f->a))
        node_rpc_complete(f->c, f->b, p, len);
}

/* node_rpc's forward op: an answer for a task that left this node. */
static void forward_answer(int tid, int id, int result, const void *p, size_t len)
{
    struct node_frame f = {K_REPLY_TID, tid, result, id};
    on_reply_tid(node_job_self(), &f, p, len);
}

/* ------------------------------------------------------------ nodes */

bool pvm_multi(void) { return multi; }

int pvm_tid_node(int tid)
{
    if (!multi)
        return 0;
    return node_dir_route(&pvm_dir, tid);
}

int pvm_machine_of(int node)
{
    const char *h = multi ? node_job_host(node) : NULL;
    if (!h)
        return 0; /* one host: every node is the machine of node 0 */
    for (int k = 0; k < node; k++) {
        const char *hk = node_job_host(k);
        if (hk && strcmp(hk, h) == 0)
            return k;
    }
    return node;
}

int pvm_machine_tid(int node)
{
    return (pvm_machine_of(node) + 1) << PVM_TID_HOST_SHIFT;
}

bool pvm_machine_up(int m, int except)
{
    if (!multi)
        return m == 0;
    for (int k = m; k < node_job_slots(); k++)
        if (k != except && node_job_up(k) && pvm_machine_of(k) == m)
            return true;
    return false;
}

int pvm_host_machine(int host_tid)
{
    if ((host_tid & PVM_TID_LOCAL_MASK) || host_tid <= 0 || !(host_tid & PVM_TID_HOST_MASK))
        return -1;
    int n = (host_tid >> PVM_TID_HOST_SHIFT) - 1;
    if (n >= (multi ? node_job_slots() : 1))
        return -1;
    return pvm_machine_of(n);
}

int pvm_name_lookup(const char *name, int *id)
{
    if (!name || !*name)
        return PVM_NAME_NONE;
    int self = multi ? node_job_self() : 0;
    if (strcmp(name, ".") == 0 || strcmp(name, "localhost") == 0 ||
        strcmp(name, pvm_node.hostname) == 0) {
        *id = pvm_machine_of(self);
        return PVM_NAME_MACHINE;
    }
    /* "node<n>" names node n in every job (UPVM's own: one node; a job of
     * one node has node0, this machine) */
    if (!multi)
        return strcmp(name, "node0") == 0 ? (*id = pvm_machine_of(self), PVM_NAME_MACHINE)
                                          : PVM_NAME_NONE;
    char *end;
    if (strncmp(name, "node", 4) == 0 && name[4] >= '0' && name[4] <= '9') {
        long n = strtol(name + 4, &end, 10);
        if (!*end && n < node_job_slots()) {
            *id = (int)n;
            return PVM_NAME_NODE;
        }
    }
    /* a job of MPI ranks: "host:k", the k-th node there */
    char buf[NODE_HOST_MAX + 16];
    for (int n = 0; n < node_job_slots() && strchr(name, ':'); n++)
        if (strcmp(name, node_job_name(n, buf, sizeof buf)) == 0) {
            *id = n;
            return PVM_NAME_NODE;
        }
    /* a host of a job of MPI ranks, by any of its names */
    for (int n = 0; n < node_job_slots(); n++)
        if (node_job_on_host(n, name) ||
            (node_job_host(n) && strcmp(node_job_host(n), name) == 0)) {
            *id = pvm_machine_of(n);
            return PVM_NAME_MACHINE;
        }
    return PVM_NAME_NONE;
}

const char *pvm_machine_name(int m)
{
    const char *h = multi ? node_job_host(m) : NULL;
    return h ? h : pvm_node.hostname;
}

/* ------------------------------------------------------------ messages */

static unsigned char *wire;
static size_t wire_cap;

/* b's serialised form put together in `wire`: for an in-place message of
 * more pieces than a frame carries.  0 or a PVM error. */
static int serialize_to_wire(msg_buf_t *b, size_t *n)
{
    *n = msg_buf_serial_size(b);
    if (*n > wire_cap) {
        size_t cap = wire_cap ? wire_cap : 4096;
        while (cap < *n)
            cap *= 2;
        unsigned char *p = realloc(wire, cap);
        if (!p)
            return PvmNoMem;
        wire = p;
        wire_cap = cap;
    }
    return msg_buf_serialize(b, wire, wire_cap, n) ? PvmSysErr : 0;
}

int pvm_remote_send(msg_buf_t *b, int dst_tid)
{
    int held = pvm_route_hold_send(msg_buf_hdr(b)->src, b, dst_tid);
    if (held != 1)
        return held;
    int node = node_dir_route(&pvm_dir, dst_tid);
    if (node < 0 || node == node_job_self() || !node_job_up(node))
        return 0; /* no such node: dropped, as PVM drops a message to no task */
    struct node_frame f = {K_MSG, dst_tid, 0, 0};
    /* The wire header and the message's data go into the ring as they lie
     * (no copy into a buffer first): one copy on the way out. */
    unsigned char head[MSG_WIRE_HDR];
    struct iovec v[NODE_IOV_MAX];
    int n = msg_buf_serial_iov(b, head, v + 1, NODE_IOV_MAX - 1);
    int rc;
    if (likely(n >= 0)) {
        v[0] = (struct iovec){head, sizeof head};
        rc = node_sendv(node, &f, v, n + 1);
    } else {
        size_t len;
        if ((rc = serialize_to_wire(b, &len)) != 0)
            return rc;
        rc = node_send(node, &f, wire, len, NULL, 0);
    }
    return rc == -ENOMEM ? PvmNoMem : 0;
}

static void on_msg(int src, const struct node_frame *f, const void *p, size_t len)
{
    int tid = f->a;
    if (!pvm_route_here(src, f, p, len, tid))
        return;
    struct pvm_task *dst = pvm_task_by_tid(tid);
    if (!dst)
        return; /* gone: PVM drops it */
    msg_buf_t *b;
    int rc = msg_buf_deserialize(p, len, &b);
    if (rc != 0) {
        fprintf(stderr, "upvm: node %d: a corrupt message for t%x from node %d was dropped "
                        "(%s)\n", node_job_self(), (unsigned)tid, src,
                pvm_errtext(pvm_code_from_errno(rc)));
        return;
    }
    (void)pvm_deliver_now(dst, b);
}

/* ------------------------------------------------------------ spawn */

struct spawn_spec {
    int32_t flag, ptid, ctx, program, nargs, out;
    struct pvm_tracer trc; /* the spawner's child tracer (tev.h) */
};

/* Where task i of n spawned with flag/where goes: a node, or a PVM error.
 * The candidates: every node (no host asked), one node ("node<n>"), the
 * nodes of one machine (a host name), or all but those (PvmHostCompl);
 * among them, as UPVM_PLACEMENT says (cyclic: in turn, from the node after
 * the spawner's; block: contiguous equal runs). */
static int place_cursor = -1;

int pvm_place(int flag, const char *where, int i, int n, int *node)
{
    int self = node_job_self();
    if (!multi) {
        *node = 0;
        return 0;
    }
    int kind = PVM_NAME_NONE, id = -1;
    bool compl = (flag & PvmHostCompl) != 0;
    if (flag & PvmTaskHost) {
        kind = pvm_name_lookup(where, &id);
        if (kind == PVM_NAME_NONE && !compl)
            return PvmNoHost;
    } else if (flag & PvmTaskArch) { /* every node is this machine's architecture */
        bool match = where && strcmp(where, "LINUX64") == 0;
        if (match == compl)
            return PvmNoHost;
        compl = false;
    } else {
        compl = false;
    }
    int up[NODE_MAX], nup = 0;
    for (int k = 0; k < node_job_slots(); k++) {
        /* a node named may be any; the default: the VM's own (node/job.h) */
        if (!(kind == PVM_NAME_NODE ? node_job_up(k) : node_job_places(k)))
            continue;
        bool named = kind == PVM_NAME_NODE      ? k == id
                     : kind == PVM_NAME_MACHINE ? pvm_machine_of(k) == id
                                                : !(flag & PvmTaskHost);
        if (named != compl)
            up[nup++] = k;
    }
    if (nup == 0)
        return PvmNoHost;
    if (nup == 1) {
        *node = up[0];
        return 0;
    }
    int me = -1;
    for (int k = 0; k < nup; k++)
        if (up[k] == self)
            me = k;
    if (pvm_node.placement == PVM_PLACE_BLOCK) {
        /* the spawner and its n tasks in nup contiguous equal chunks */
        *node = up[((me < 0 ? 0 : me) + (int)(((long)(i + 1) * nup) / (n + 1))) % nup];
        return 0;
    }
    if (place_cursor < 0)
        place_cursor = self + 1;
    /* the next candidate from the cursor on (the cursor counts nodes) */
    int slots = node_job_slots();
    for (int k = 0; k < slots; k++) {
        int cand = (place_cursor + k) % slots;
        for (int c = 0; c < nup; c++)
            if (up[c] == cand) {
                place_cursor = cand + 1;
                *node = cand;
                return 0;
            }
    }
    *node = up[0];
    return 0;
}

static void put_str(unsigned char **p, const char *s)
{
    size_t l = strlen(s) + 1;
    memcpy(*p, s, l);
    *p += l;
}

int pvm_remote_spawn(struct pvm_task *t, int node, int flag, const char *name,
                     const char *path, char **argv, int count, const int *given, int *tids)
{
    int nargs = 0;
    size_t bytes = sizeof(struct spawn_spec) + (size_t)count * sizeof(int32_t) + strlen(name) +
                   1 + strlen(path ? path : "") + 1;
    for (; argv && argv[nargs]; nargs++)
        bytes += strlen(argv[nargs]) + 1;
    unsigned char *buf = malloc(bytes), *p = buf;
    if (!buf)
        return PvmOutOfRes;
    struct spawn_spec spec = {flag, (flag & PvmNoSpawnParent) ? PvmParentNotSet : t->tid,
                              t->ctx, path != NULL, nargs, t->opt[PvmOutputTid], {0}};
    pvm_tev_child_tracer(t, &spec.trc);
    memcpy(p, &spec, sizeof spec);
    p += sizeof spec;
    memcpy(p, given, (size_t)count * sizeof(int32_t));
    p += (size_t)count * sizeof(int32_t);
    /* From now on, frames for them that reach this node (their home) go
     * there (a task may start to talk before the answer is back). */
    for (int i = 0; i < count; i++)
        if (given[i] > 0 && node_dir_set(&pvm_dir, given[i], node) != 0)
            fprintf(stderr, "upvm: node %d: no memory to record that t%x is on node %d\n",
                    node_job_self(), (unsigned)given[i], node);
    put_str(&p, name);
    put_str(&p, path ? path : "");
    for (int i = 0; i < nargs; i++)
        put_str(&p, argv[i]);
    void *got;
    size_t got_len;
    int rc = ask(NODE_RPC_MOVABLE, node, K_SPAWN, 0, count, buf, bytes, NULL, 0, PvmNoHost,
                 &got, &got_len);
    free(buf);
    if (rc == 0 && got_len == (size_t)count * sizeof(int)) {
        memcpy(tids, got, got_len);
    } else {
        for (int i = 0; i < count; i++)
            tids[i] = rc < 0 ? rc : PvmNoHost;
    }
    free(got);
    int started = 0;
    for (int i = 0; i < count; i++)
        started += tids[i] > 0;
    return started;
}

static const char *get_str(const unsigned char **p, const unsigned char *end)
{
    const unsigned char *z = memchr(*p, 0, (size_t)(end - *p));
    if (!z)
        return NULL;
    const char *s = (const char *)*p;
    *p = z + 1;
    return s;
}

/* ------------------------------------------------------------ exit statuses */

/* Here: a task whose exit status goes back to the node that spawned it. */
struct status_report {
    list_link_t link;
    upvm_id_t ulp;
    int tid, node;
};

/* There: statuses that came back, not yet waited for. */
struct status_arrived {
    list_link_t link;
    int tid, status;
};

static list_link_t status_reports = {&status_reports, &status_reports};
static list_link_t statuses = {&statuses, &statuses};
static upvm_waitq_t statusq = UPVM_WAITQ_INITIALIZER(statusq, "an exit status");

int pvm_report_status(int node, struct pvm_task *t)
{
    struct status_report *r = malloc(sizeof *r);
    if (!r)
        return -ENOMEM;
    *r = (struct status_report){.ulp = t->ulp->id, .tid = t->tid, .node = node};
    list_push_back(&status_reports, &r->link);
    return 0;
}

static void status_arrive(int tid, int status)
{
    struct status_arrived *a = malloc(sizeof *a);
    if (!a)
        return; /* the waiter sees the task gone with its node, at worst */
    *a = (struct status_arrived){.tid = tid, .status = status};
    list_push_back(&statuses, &a->link);
    (void)upvm_wake_all(&statusq);
}

void pvm_remote_on_exit(struct ulp *u)
{
    list_for_each(l, &status_reports) {
        struct status_report *r = list_entry(l, struct status_report, link);
        if (r->ulp != u->id)
            continue;
        struct node_frame f = {K_STATUS, r->tid, u->exit_status, 0};
        if (r->node == node_job_self())
            status_arrive(r->tid, u->exit_status);
        else
            node_post(r->node, &f, NULL, 0, NULL, 0);
        list_unlink(l);
        free(r);
        return;
    }
}

static void on_status(int src, const struct node_frame *f, const void *p, size_t len)
{
    status_arrive(f->a, f->b);
}

int pvm_wait_status(int tid)
{
    for (;;) {
        list_for_each(l, &statuses) {
            struct status_arrived *a = list_entry(l, struct status_arrived, link);
            if (a->tid == tid) {
                int status = a->status;
                list_unlink(l);
                free(a);
                return status;
            }
        }
        int node = multi ? pvm_tid_node(tid) : 0;
        if (node < 0 || !node_job_up(node))
            return 128 + SIGKILL;
        (void)core_block(&statusq, -1);
    }
}

static void tell_located(int spawner, const int *tids, int count);

static void on_spawn(int src, const struct node_frame *f, const void *payload, size_t len)
{
    const unsigned char *p = payload, *end = p + len;
    struct spawn_spec spec;
    int count = f->c;
    int *tids = count > 0 && count < (1 << 20) ? calloc((size_t)count, sizeof *tids) : NULL;
    char **argv = NULL;
    const char *name = NULL, *path = NULL;
    if (tids && len >= sizeof spec + (size_t)count * sizeof(int32_t)) {
        memcpy(&spec, p, sizeof spec);
        p += sizeof spec;
        memcpy(tids, p, (size_t)count * sizeof(int32_t)); /* the tids reserved for them */
        p += (size_t)count * sizeof(int32_t);
        name = get_str(&p, end);
        path = get_str(&p, end);
        argv = spec.nargs >= 0 && spec.nargs < 4096
                   ? calloc((size_t)spec.nargs + 1, sizeof *argv) : NULL;
        for (int i = 0; argv && i < spec.nargs; i++)
            if (!(argv[i] = (char *)get_str(&p, end)))
                name = NULL;
    }
    if (!tids || !argv || !name || !path) {
        node_rpc_reply(src, f->b, PvmOutOfRes, NULL, 0);
    } else {
        struct pvm_spawn_origin o = {spec.ptid, spec.ctx, src, spec.out, spec.trc};
        pvm_spawn_here(&o, spec.flag, name, spec.program ? path : NULL, argv, count, tids,
                       true);
        tell_located(src, tids, count);
        node_rpc_reply(src, f->b, 0, tids, (size_t)count * sizeof *tids);
    }
    free(tids);
    free(argv);
}

void pvm_remote_sibs(struct pvm_sibs *s)
{
    bool sent[NODE_MAX] = {false};
    for (int i = 0; i < s->n; i++) {
        int node = pvm_tid_node(s->tids[i]);
        if (node < 0 || node == node_job_self() || node >= NODE_MAX || sent[node])
            continue;
        sent[node] = true;
        struct node_frame f = {K_SIBS, 0, 0, s->n};
        node_post(node, &f, s->tids, (size_t)s->n * sizeof(int), NULL, 0);
    }
}

static void on_sibs(int src, const struct node_frame *f, const void *p, size_t len)
{
    int n = f->c;
    if (n < 1 || len != (size_t)n * sizeof(int))
        return;
    struct pvm_sibs *s = malloc(sizeof *s + len);
    if (!s)
        return;
    s->refs = 1;
    s->n = n;
    memcpy(s->tids, p, len);
    pvm_sibs_arrived(s);
    if (--s->refs == 0)
        free(s);
}

/* ------------------------------------------------------------ notify */

/* A PvmTaskExit watch on a task of another node, kept here too so that the
 * notification still comes if that node dies. */
struct remote_watch {
    list_link_t link;
    int watcher, watched, tag, ctx, node;
};

static list_link_t remote_watches = {&remote_watches, &remote_watches};

/* A watch kept here: watcher is told when watched ends or node dies.
 * 0, or -ENOMEM. */
static int keep_watch(int watcher, int watched, int tag, int ctx, int node)
{
    struct remote_watch *w = malloc(sizeof *w);
    if (!w)
        return -ENOMEM;
    *w = (struct remote_watch){.watcher = watcher, .watched = watched, .tag = tag, .ctx = ctx,
                               .node = node};
    list_push_back(&remote_watches, &w->link);
    return 0;
}

/* Fire and drop the exit watches kept here on tid `v` (BY_WATCHED) or on
 * tasks of node `v` (BY_NODE); how many fired. */
enum watch_key { BY_WATCHED, BY_NODE };

static int fire_watches(enum watch_key by, int v)
{
    int fired = 0;
    for (list_link_t *l = remote_watches.next, *next; l != &remote_watches; l = next) {
        next = l->next;
        struct remote_watch *w = list_entry(l, struct remote_watch, link);
        if ((by == BY_WATCHED ? w->watched : w->node) != v)
            continue;
        list_unlink(l);
        pvm_send_pvmd_int(w->watcher, w->tag, w->ctx, w->watched);
        free(w);
        fired++;
    }
    return fired;
}

/* tid is on node now: the exit watches on it here are about that node
 * (its death ends tid; the old node's does not). */
void pvm_remote_watches_follow(int tid, int node)
{
    list_for_each(l, &remote_watches) {
        struct remote_watch *w = list_entry(l, struct remote_watch, link);
        if (w->watched == tid)
            w->node = node;
    }
    if (node != node_job_self() && !node_job_up(node))
        (void)fire_watches(BY_WATCHED, tid); /* to a node whose death was handled already */
}

void pvm_task_lost(int tid)
{
    int self = node_job_self();
    struct node_frame f = {K_TASK_LOST, tid, self, 0};
    for (int n = 0; n < node_job_slots(); n++)
        if (n != self && node_job_up(n))
            node_post(n, &f, NULL, 0, NULL, 0);
    (void)fire_watches(BY_WATCHED, tid);
}

static void on_task_lost(int src, const struct node_frame *f, const void *p, size_t len)
{
    (void)fire_watches(BY_WATCHED, f->a);
}

/* Every node knows where each task of another node's is (a spawn there,
 * a move): the migration's flush sends its markers along every node's
 * route, which must lead to the task's node.  A task ending elsewhere than
 * its home is forgotten by every node, and its home frees its tid. */
void pvm_remote_task_gone(int tid)
{
    if (pvm_route_gone_later(tid)) /* its markers still travel the routes to here */
        return;
    node_dir_forget(&pvm_dir, tid);
    struct node_frame f = {K_TASK_GONE, tid, 0, 0};
    for (int n = 0; n < node_job_slots(); n++)
        if (n != node_job_self() && node_job_up(n))
            node_post(n, &f, NULL, 0, NULL, 0);
}

static void on_task_gone(int src, const struct node_frame *f, const void *p, size_t len)
{
    /* only if it is still where the sender says (not back here, nor gone
     * on by a move the sender had not heard of) */
    if (node_dir_route(&pvm_dir, f->a) != src)
        return;
    if (node_dir_home(&pvm_dir, f->a) == node_job_self())
        pvm_tid_release(f->a);
    else
        node_dir_forget(&pvm_dir, f->a);
}

/* Tasks of the spawner's tids started here (count of them in tids):
 * every other node learns where they are, before anything else this node
 * sends about them (a move: pvm/move.h), as of a move. */
static void tell_located(int spawner, const int *tids, int count)
{
    int32_t *got = malloc((size_t)count * sizeof *got);
    int n = 0;
    for (int i = 0; got && i < count; i++)
        if (tids[i] > 0)
            got[n++] = tids[i];
    struct node_frame f = {K_LOCATED, 0, 0, n};
    for (int k = 0; n && k < node_job_slots(); k++)
        if (k != node_job_self() && k != spawner && node_job_up(k))
            node_post(k, &f, got, (size_t)n * sizeof *got, NULL, 0);
    free(got);
}

static void on_located(int src, const struct node_frame *f, const void *p, size_t len)
{
    int n = f->c;
    if (n < 1 || len != (size_t)n * sizeof(int32_t))
        return;
    for (int i = 0; i < n; i++) {
        int32_t tid;
        memcpy(&tid, (const char *)p + (size_t)i * sizeof tid, sizeof tid);
        if (node_dir_set(&pvm_dir, tid, src) != 0)
            fprintf(stderr, "upvm: node %d: no memory to record that t%x is on node %d\n",
                    node_job_self(), (unsigned)tid, src);
        pvm_remote_watches_follow(tid, src);
    }
}

int pvm_tid_where(int tid)
{
    if (!multi || pvm_task_by_tid(tid))
        return node_job_self();
    int node = node_dir_route(&pvm_dir, tid), home = node_dir_home(&pvm_dir, tid);
    if (home < 0 || node != home || home == node_job_self() || !node_job_up(home))
        return node; /* known here (its home, or a move every node heard of) */
    int at = ask(NODE_RPC_PINNED, home, K_WHERE, tid, 0, NULL, 0, NULL, 0, -1, NULL, NULL);
    return at >= 0 ? at : home;
}

/* A program that joined a VM leaves it when it ends, and its slot goes to
 * the next: the tasks it spawns onto the VM's nodes outlive it, so their
 * home (which must know where they are) is node 0, which stays. */
int pvm_remote_tids(int n, int *tids)
{
    void *got = NULL;
    size_t len = 0;
    int rc = ask(NODE_RPC_PINNED, 0, K_TIDS, n, 0, NULL, 0, NULL, 0, -EHOSTDOWN, &got, &len);
    int k = rc > 0 && len == (size_t)n * sizeof(int32_t) ? rc : 0;
    for (int i = 0; i < n; i++) {
        int32_t tid = 0;
        if (k)
            memcpy(&tid, (char *)got + (size_t)i * sizeof tid, sizeof tid);
        tids[i] = tid;
    }
    free(got);
    return k;
}

static void on_tids(int src, const struct node_frame *f, const void *p, size_t len)
{
    int n = f->a > 0 && f->a <= 65536 ? f->a : 0;
    int *tids = n ? calloc((size_t)n, sizeof *tids) : NULL;
    int got = tids ? pvm_tids_reserve(n, tids) : 0;
    node_rpc_reply(src, f->b, got, tids, tids ? (size_t)n * sizeof *tids : 0);
    free(tids);
}

static void on_where(int src, const struct node_frame *f, const void *p, size_t len)
{
    node_rpc_reply(src, f->b, pvm_task_by_tid(f->a) ? node_job_self()
                                                    : node_dir_route(&pvm_dir, f->a), NULL, 0);
}

/* A PvmHostDelete watch (nodes of this job). */
static list_link_t host_del_watches = {&host_del_watches, &host_del_watches};

/* How long pvm_notify waits for the watched task's node (see below). */
#define NOTIFY_WAIT_NS (200ll * 1000 * 1000)

int pvm_remote_notify_exit(struct pvm_task *t, int watched, int tag, bool cancel)
{
    int node = pvm_tid_node(watched);
    if (node < 0 || !node_job_up(node)) {
        if (!cancel)
            pvm_send_pvmd_int(t->tid, tag, t->ctx, watched); /* already gone */
        return 0;
    }
    if (cancel) { /* PVM delivers a cancelled notification at once */
        for (list_link_t *l = remote_watches.next, *next; l != &remote_watches; l = next) {
            next = l->next;
            struct remote_watch *w = list_entry(l, struct remote_watch, link);
            if (w->watcher == t->tid && w->watched == watched && w->tag == tag) {
                list_unlink(l);
                pvm_send_pvmd_int(w->watcher, w->tag, w->ctx, w->watched);
                free(w);
            }
        }
    } else {
        if (keep_watch(t->tid, watched, tag, t->ctx, node) != 0)
            return PvmNoMem;
    }
    int32_t extra[3] = {t->ctx, cancel, tag};
    struct node_frame f = {K_NOTIFY, watched, 0, t->tid};
    if (cancel) {
        node_post(node, &f, extra, sizeof extra, NULL, 0);
        return 0;
    }
    /* A task already gone there is told of by a K_NOTIFY_FIRE (on_notify),
     * which also ends the watch kept here, and comes before the answer:
     * after the answer the notification is in the caller's queue, as PVM
     * delivers it "at once".  But the caller must not wait for ever on a
     * node that may be stalled (a task there blocked in a system call):
     * after NOTIFY_WAIT_NS it goes on, and the notification comes when
     * that node runs again. */
    struct node_rpc_req q = {.node = node, .kind = K_NOTIFY, .a = watched, .c = t->tid,
                             .p1 = extra, .l1 = sizeof extra, .down = 0, .died = 0};
    (void)node_rpc_call_within(&q, NOTIFY_WAIT_NS);
    return 0;
}

static void on_notify(int src, const struct node_frame *f, const void *p, size_t len)
{
    int32_t extra[3]; /* ctx, cancel, tag; the watcher in c, a request id in b */
    if (len != sizeof extra)
        return;
    if (!pvm_route_here(src, f, p, len, f->a))
        return;
    memcpy(extra, p, sizeof extra);
    if (extra[1]) {
        pvm_watch_exit_here(f->a, f->c, extra[2], extra[0], true);
        return;
    }
    if (!pvm_watch_exit_here(f->a, f->c, extra[2], extra[0], false))
        pvm_remote_fire(f->c, f->a, extra[2], extra[0]); /* gone already */
    int back = node_dir_route(&pvm_dir, f->c); /* the watcher waits there */
    node_rpc_reply(back >= 0 ? back : src, f->b, 0, NULL, 0); /* (after the fire) */
}

/* The watch kept here for (watcher, watched, tag) goes: it fired. */
static void drop_remote_watch(int watcher, int watched, int tag)
{
    list_for_each(l, &remote_watches) {
        struct remote_watch *w = list_entry(l, struct remote_watch, link);
        if (w->watcher == watcher && w->watched == watched && w->tag == tag) {
            list_unlink(&w->link);
            free(w);
            return;
        }
    }
}

void pvm_remote_watch_keep(int watcher, int watched, int tag, int ctx)
{
    if (keep_watch(watcher, watched, tag, ctx, node_job_self()) != 0)
        /* its new node's death would then go unsaid to this watcher */
        fprintf(stderr, "upvm: node %d: no memory to keep t%x's watch on t%x, which leaves\n",
                node_job_self(), (unsigned)watcher, (unsigned)watched);
}

void pvm_remote_fire(int watcher, int watched, int tag, int ctx)
{
    int node = pvm_tid_node(watcher);
    if (node == node_job_self() || node < 0) {
        drop_remote_watch(watcher, watched, tag); /* (kept when watched left: below) */
        pvm_send_pvmd_int(watcher, tag, ctx, watched);
        return;
    }
    struct node_frame f = {K_NOTIFY_FIRE, watcher, watched, tag};
    node_post(node, &f, &ctx, sizeof ctx, NULL, 0);
}

static void on_notify_fire(int src, const struct node_frame *f, const void *p, size_t len)
{
    int ctx;
    if (len != sizeof ctx || !pvm_route_here(src, f, p, len, f->a))
        return;
    memcpy(&ctx, p, sizeof ctx);
    drop_remote_watch(f->a, f->b, f->c);
    pvm_send_pvmd_int(f->a, f->c, ctx, f->b);
}

int pvm_remote_notify_host(struct pvm_task *t, int host_tid, int tag, bool cancel)
{
    if (cancel) {
        for (list_link_t *l = host_del_watches.next, *next; l != &host_del_watches; l = next) {
            next = l->next;
            struct pvm_watch *w = list_entry(l, struct pvm_watch, link);
            if (w->watcher == t->tid && w->tag == tag && (!host_tid || w->what == host_tid)) {
                list_unlink(l);
                free(w);
            }
        }
        return 0;
    }
    int m = pvm_host_machine(host_tid);
    if (m < 0 || !pvm_machine_up(m, -1)) {
        pvm_send_pvmd_int(t->tid, tag, t->ctx, host_tid); /* no such host */
        return 0;
    }
    struct pvm_watch *w = malloc(sizeof *w);
    if (!w)
        return PvmNoMem;
    *w = (struct pvm_watch){.watcher = t->tid, .tag = tag, .ctx = t->ctx, .what = host_tid};
    list_push_back(&host_del_watches, &w->link);
    return 0;
}

/* ------------------------------------------------------------ kill, pstat */

int pvm_remote_kill(int tid, int sig)
{
    int node = pvm_tid_node(tid);
    struct node_frame f = {K_KILL, tid, sig, 0};
    if (node >= 0 && node != node_job_self())
        node_post(node, &f, NULL, 0, NULL, 0);
    return 0;
}

static void on_kill(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (pvm_route_here(src, f, p, len, f->a))
        pvm_kill_here(f->a, f->b);
}

int pvm_remote_pstat(int tid)
{
    int node = pvm_tid_node(tid);
    if (node < 0 || !node_job_up(node))
        return PvmNoTask;
    return ask(NODE_RPC_MOVABLE, node, K_PSTAT, tid, node_job_self() + 1 /* where to answer */,
               NULL, 0, NULL, 0, PvmNoTask, NULL, NULL);
}

static void on_pstat(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (!pvm_route_here(src, f, p, len, f->a))
        return; /* it moved: asked where it is (or held while it arrives here) */
    node_rpc_reply(f->c > 0 ? f->c - 1 : src, f->b, pvm_task_by_tid(f->a) ? PvmOk : PvmNoTask, NULL,
          0);
}

/* ------------------------------------------------------------ tasks */

struct wire_task {
    int32_t tid, ptid, host, pid;
    char name[64];
    char waits[PVM_WAITS_MAX];
};

/* This node's tasks that `where` selects (0 or this host: all; a tid:
 * that task), as records in *out (malloc'd; NULL when none or no memory).
 * Returns how many. */
static int local_tasks(int where, struct wire_task **out)
{
    struct wire_task *w = calloc((size_t)pvm_node.ntasks + 1, sizeof *w);
    int n = 0;
    list_for_each(l, &pvm_node.tasks) {
        struct pvm_task *k = list_entry(l, struct pvm_task, node_link);
        if (!w || ((where & PVM_TID_LOCAL_MASK) && k->tid != where))
            continue; /* (a host: every task here) */
        w[n] = (struct wire_task){k->tid, k->ptid, pvm_machine_tid(node_job_self()),
                                  (int)getpid(), "", ""};
        snprintf(w[n].name, sizeof w[n].name, "%s", k->name);
        pvm_task_waits(k, w[n].waits, sizeof w[n].waits);
        n++;
    }
    *out = w;
    return n;
}

static void on_tasks(int src, const struct node_frame *f, const void *p, size_t len)
{
    struct wire_task *w;
    int n = local_tasks(f->a, &w);
    node_rpc_reply(src, f->b, n, w, (size_t)n * sizeof *w);
    free(w);
}

/* Interned names of remote tasks (pvm_tasks hands out pointers). */
static const char *name_keep(const char *s)
{
    static struct kept {
        struct kept *next;
        char s[];
    } *kept;
    for (struct kept *k = kept; k; k = k->next)
        if (strcmp(k->s, s) == 0)
            return k->s;
    struct kept *k = malloc(sizeof *k + strlen(s) + 1);
    if (!k)
        return "";
    strcpy(k->s, s);
    k->next = kept;
    kept = k;
    return k->s;
}

int pvm_remote_tasks(struct pvm_task *t, int where, int *ntaskp, struct pvmtaskinfo **tip)
{
    /* which nodes to ask */
    int nodes[NODE_MAX], nn = 0;
    if (where == 0) {
        for (int n = 0; n < node_job_slots(); n++)
            if (node_job_up(n))
                nodes[nn++] = n;
    } else if (!(where & PVM_TID_LOCAL_MASK)) { /* the tasks of a host: of its nodes */
        int m = pvm_host_machine(where);
        for (int n = 0; m >= 0 && n < node_job_slots(); n++)
            if (node_job_up(n) && pvm_machine_of(n) == m)
                nodes[nn++] = n;
        if (nn == 0)
            return PvmNoHost;
    } else {
        int n = pvm_tid_where(where);
        if (n < 0 || !node_job_up(n))
            return PvmNoTask;
        nodes[nn++] = n;
    }
    struct wire_task *all = NULL;
    int total = 0;
    for (int i = 0; i < nn; i++) {
        struct wire_task *w = NULL;
        int n;
        if (nodes[i] == node_job_self()) {
            n = local_tasks(where, &w);
        } else {
            size_t got_len;
            n = ask(NODE_RPC_MOVABLE, nodes[i], K_TASKS, where, 0, NULL, 0, NULL, 0, 0,
                    (void **)&w, &got_len);
            if (n < 0 || (size_t)n * sizeof *w != got_len)
                n = 0;
        }
        struct wire_task *grown = n ? realloc(all, (size_t)(total + n) * sizeof *all) : all;
        if (grown) {
            all = grown;
            if (n)
                memcpy(all + total, w, (size_t)n * sizeof *w);
            total += n;
        }
        free(w);
    }
    struct pvmtaskinfo *ti = pvm_task_result(t, PVM_RESULT_TASKS, (size_t)total, sizeof *ti);
    char (*waits)[PVM_WAITS_MAX] =
        pvm_task_result(t, PVM_RESULT_TASK_WAITS, (size_t)total, PVM_WAITS_MAX);
    if (!ti || !waits) {
        free(all);
        return PvmNoMem;
    }
    for (int i = 0; i < total; i++)
        ti[i] = (struct pvmtaskinfo){.ti_tid = all[i].tid, .ti_ptid = all[i].ptid,
                                     .ti_host = all[i].host, .ti_flag = 0x4,
                                     .ti_a_out = (char *)name_keep(all[i].name),
                                     .ti_pid = all[i].pid};
    for (int i = 0; i < total; i++)
        memcpy(waits[i], all[i].waits, PVM_WAITS_MAX);
    t->nresult_waits = total;
    free(all);
    if (where != 0 && total == 0 && (where & PVM_TID_LOCAL_MASK))
        return PvmNoTask;
    if (ntaskp)
        *ntaskp = total;
    if (tip)
        *tip = ti;
    return 0;
}

/* ------------------------------------------------------------ add, delete hosts */

int pvm_remote_addhost(const char *name)
{
    if (node_job_self() == 0)
        return node_job_add_host(name);
    return ask(NODE_RPC_MOVABLE, 0, K_ADDHOST, 0, 0, name, strlen(name) + 1, NULL, 0,
               -EHOSTDOWN, NULL, NULL);
}

static void on_addhost(int src, const struct node_frame *f, const void *p, size_t len)
{
    const char *name = p;
    int n = len > 0 && name[len - 1] == '\0' ? node_job_add_host(name) : -EINVAL;
    node_rpc_reply(src, f->b, n, NULL, 0);
}

/* How long pvm_delhosts waits for a deleted node to end (it ends within
 * its goodbye's bound; one stuck in a system call may take longer). */
#define DELHOST_WAIT_NS (10ull * 1000000000ull)

/* As in PVM, pvm_delhosts returns once the host is gone: pvm_config no
 * longer lists it, a second delete says PvmNoHost. */
int pvm_remote_delhost(int n)
{
    int rc = node_job_self() == 0 ? node_job_delete(n)
                                  : ask(NODE_RPC_MOVABLE, 0, K_DELHOST, n, 0, NULL, 0, NULL, 0,
                                        -EHOSTDOWN, NULL, NULL);
    if (rc == 0 && node_job_wait_gone(n, DELHOST_WAIT_NS) == -ETIMEDOUT)
        fprintf(stderr, "upvm: node %d: node %d, deleted (pvm_delhosts), has not ended after "
                        "%llu s; going on\n", node_job_self(), n,
                DELHOST_WAIT_NS / 1000000000ull);
    return rc;
}

static void on_delhost(int src, const struct node_frame *f, const void *p, size_t len)
{
    node_rpc_reply(src, f->b, node_job_delete(f->a), NULL, 0);
}

/* ------------------------------------------------------------ membership */

static int peer_gone(int n, int status, bool deleted)
{
    int fired = 0;
    int m = pvm_machine_of(n);
    bool host_gone = !pvm_machine_up(m, n); /* its machine's last node */
    pvm_route_node_gone(n);
    pvm_output_node_gone(n);
    if (node_job_self() == 0) {
        pvm_groups_node_gone(n);
        pvm_mbox_node_gone(n);
        pvm_tracer_peer_gone(n);
    }
    (void)upvm_wake_all(&statusq); /* statuses that never come */
    pvm_tids_node_gone(n);
    fired += fire_watches(BY_NODE, n);
    for (list_link_t *l = host_del_watches.next, *next; l != &host_del_watches; l = next) {
        next = l->next;
        struct pvm_watch *w = list_entry(l, struct pvm_watch, link);
        if (!host_gone || pvm_host_machine(w->what) != m)
            continue;
        list_unlink(l);
        pvm_send_pvmd_int(w->watcher, w->tag, w->ctx, w->what);
        free(w);
        fired++;
    }
    (void)status;
    (void)deleted;
    return fired;
}

static void describe_stuck(void)
{
    int listed = 0;
    char line[1024];
    int off = snprintf(line, sizeof line, "upvm:   node%d:", node_job_self());
    list_for_each(l, &pvm_node.tasks) {
        struct pvm_task *k = list_entry(l, struct pvm_task, node_link);
        if (k->ulp == core_sched.main && node_job_self() != 0)
            continue;
        if (listed++ == 20) {
            off += snprintf(line + off, sizeof line - (size_t)off, " ...");
            break;
        }
        const char *name = *k->name ? k->name : k->ulp->name ? k->ulp->name : "";
        if ((size_t)off < sizeof line - 80)
            off += snprintf(line + off, sizeof line - (size_t)off, " t%x%s%s",
                            (unsigned)k->tid, *name ? "/" : "", name);
    }
    if (listed)
        fprintf(stderr, "%s\n", line);
}

static void peer_up(int n)
{
    int host = pvm_machine_tid(n);
    if (!pvm_machine_up(pvm_machine_of(n), n)) /* its machine's first node: a new host */
        pvm_hosts_added(&host, 1);
    pvm_tracer_peer_up(n); /* the registered tracer, as the pvmd tells a new host */
}

/* ------------------------------------------------------------ start */

void pvm_remote_configure(void)
{
    /* before the fork: a bad setting is said once, not by every node */
    static const char *const placements[] = {"cyclic", "block", NULL}; /* PVM_PLACE_* */
    (void)env_choice("UPVM_PLACEMENT", placements, PVM_PLACE_CYCLIC, 0, &pvm_node.placement);
    pvm_delivery_from_env();
    pvm_trace_init();
}

void pvm_remote_register(void)
{
    node_on_frame(K_MSG, on_msg);
    pvm_route_register();
    node_on_frame(K_REPLY_TID, on_reply_tid);
    node_on_frame(K_SPAWN, on_spawn);
    node_on_frame(K_SIBS, on_sibs);
    node_on_frame(K_NOTIFY, on_notify);
    node_on_frame(K_NOTIFY_FIRE, on_notify_fire);
    node_on_frame(K_TASK_LOST, on_task_lost);
    node_on_frame(K_TASK_GONE, on_task_gone);
    node_on_frame(K_LOCATED, on_located);
    node_on_frame(K_WHERE, on_where);
    node_on_frame(K_TIDS, on_tids);
    node_on_frame(K_KILL, on_kill);
    node_on_frame(K_PSTAT, on_pstat);
    node_on_frame(K_TASKS, on_tasks);
    node_on_frame(K_ADDHOST, on_addhost);
    node_on_frame(K_DELHOST, on_delhost);
    node_on_frame(K_STATUS, on_status);
    node_on_frame(K_GROUP, pvm_groups_serve);
    node_on_frame(K_MBOX, pvm_mbox_serve);
    pvm_tracer_register_frames();
    pvm_output_register();
}

int pvm_remote_init(int node)
{
    static const struct node_job_hooks hooks = {
        .peer_gone = peer_gone, .peer_up = peer_up,
        .describe_stuck = describe_stuck,
    };
    static const struct node_rpc_ops rpc_ops = {.forward = forward_answer};
    if (node_dir_init(&pvm_dir, node, node_job_slots()) != 0 || node_job_add_hooks(&hooks) != 0)
        return -ENOMEM;
    multi = true;
    node_rpc_set_ops(&rpc_ops);
    pvm_remote_register();
    pvm_node.host_tid = (node + 1) << PVM_TID_HOST_SHIFT;
    pvm_tids_after_join();
    return 0;
}

/* ------------------------------------------------------------ migration */

/* The notification records this node keeps for task tid (it asked for
 * them), as records of five ints: kind, then the record's fields. */
enum { WREC_REMOTE = 1, WREC_HOST_DEL, WREC_HOST_ADD, WREC_STATUS };

static void pack_watch_list(list_link_t *list, int kind, int tid, struct bytes_out *w, int *n)
{
    list_for_each(l, list) {
        struct pvm_watch *x = list_entry(l, struct pvm_watch, link);
        if (x->watcher != tid)
            continue;
        int32_t rec[5] = {kind, x->tag, x->ctx, x->what, 0};
        bytes_put(w, rec, sizeof rec);
        (*n)++;
    }
}

void pvm_remote_move_pack(int tid, struct bytes_out *w)
{
    size_t at = w->len;
    int32_t n = 0;
    bytes_put32(w, 0); /* the count, filled in below */
    list_for_each(l, &remote_watches) {
        struct remote_watch *x = list_entry(l, struct remote_watch, link);
        if (x->watcher != tid)
            continue;
        int32_t rec[5] = {WREC_REMOTE, x->tag, x->ctx, x->watched, x->node};
        bytes_put(w, rec, sizeof rec);
        n++;
    }
    pack_watch_list(&host_del_watches, WREC_HOST_DEL, tid, w, &n);
    pack_watch_list(&pvm_node.host_watches, WREC_HOST_ADD, tid, w, &n);
    list_for_each(l, &status_reports) { /* where its exit status goes */
        const struct status_report *r = list_entry(l, struct status_report, link);
        if (r->tid != tid)
            continue;
        int32_t rec[5] = {WREC_STATUS, r->node, 0, 0, 0};
        bytes_put(w, rec, sizeof rec);
        n++;
    }
    if (!w->oom)
        memcpy(w->p + at, &n, sizeof n);
}

static void release_watch_list(list_link_t *list, int tid)
{
    for (list_link_t *l = list->next, *next; l != list; l = next) {
        next = l->next;
        struct pvm_watch *x = list_entry(l, struct pvm_watch, link);
        if (x->watcher == tid) {
            list_unlink(l);
            free(x);
        }
    }
}

void pvm_remote_move_release(int tid)
{
    for (list_link_t *l = remote_watches.next, *next; l != &remote_watches; l = next) {
        next = l->next;
        struct remote_watch *x = list_entry(l, struct remote_watch, link);
        if (x->watcher == tid) {
            list_unlink(l);
            free(x);
        }
    }
    release_watch_list(&host_del_watches, tid);
    release_watch_list(&pvm_node.host_watches, tid);
    for (list_link_t *l = status_reports.next, *next; l != &status_reports; l = next) {
        next = l->next;
        if (list_entry(l, struct status_report, link)->tid == tid) {
            list_unlink(l);
            free(list_entry(l, struct status_report, link));
        }
    }
}

int pvm_remote_move_unpack(struct bytes_in *r, int tid)
{
    int n = bytes_get32(r);
    for (int i = 0; i < n && !r->bad; i++) {
        int32_t rec[5];
        if (!bytes_get(r, rec, sizeof rec))
            break;
        if (rec[0] == WREC_STATUS) {
            struct pvm_task *t = pvm_task_by_tid(tid);
            if (!t || pvm_report_status(rec[1], t) != 0)
                return PvmNoMem;
            continue;
        }
        if (rec[0] == WREC_REMOTE) {
            struct remote_watch *x = malloc(sizeof *x);
            if (!x)
                return PvmNoMem;
            *x = (struct remote_watch){.watcher = tid, .tag = rec[1], .ctx = rec[2],
                                       .watched = rec[3], .node = rec[4]};
            list_push_back(&remote_watches, &x->link);
            continue;
        }
        struct pvm_watch *x = malloc(sizeof *x);
        if (!x)
            return PvmNoMem;
        *x = (struct pvm_watch){.watcher = tid, .tag = rec[1], .ctx = rec[2], .what = rec[3]};
        list_push_back(rec[0] == WREC_HOST_DEL ? &host_del_watches : &pvm_node.host_watches,
                       &x->link);
    }
    return r->bad ? PvmBadMsg : 0;
}
