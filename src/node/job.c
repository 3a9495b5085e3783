/*
 * job.c - one node of a job of several (job.h).
 *
 * Everything here runs on the node's scheduler thread: from the API calls,
 * and from the transport poll the scheduler makes (core_idle_ops).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/core.h"
#include "net/net.h"
#include "node/board.h"
#include "mem/mem.h"
#include "node/job.h"
#include "node/launch.h"
#include "node/control.h"
#include "util/cpus.h"
#include "node/kinds.h"
#include "node/rpc.h"
#include "node/hostname.h"
#include "node/vm.h"
#include "util/env.h"
#include "util/output.h"

enum shutdown_mode { SHUT_DONE, SHUT_STUCK, SHUT_DEADLOCK, SHUT_LOST, SHUT_DELETED };

/* Idle node 0 looks for a job-wide deadlock after this long, then less
 * and less often. */
#define PROBE_IDLE_FIRST_NS  (200u * 1000000u)
#define PROBE_IDLE_MAX_NS    (2000u * 1000000u)
#define BYE_WAIT_NS          (2000u * 1000000u)
/* A job of MPI ranks: how long a node waits for the others' host names. */
#define JOIN_WAIT_NS         (60ull * 1000000000u)

struct queued {
    struct queued *next;
    size_t len;
    unsigned char data[];
};

static struct {
    bool multi;
    int self, slots;
    node_frame_fn handlers[NODE_KIND_MAX];
    const struct node_job_hooks *hooks[NODE_HOOKS_MAX];
    int nhooks;
    struct queued *qhead[NODE_MAX], *qtail[NODE_MAX];
    int nqueued;
    uint32_t events_seen;
    enum net_peer_state known[NODE_MAX];
    bool deleting[NODE_MAX];
    /* frames other than probes, per peer: traffic with a node that is
     * gone no longer counts (it can neither send nor receive any more) */
    uint64_t sent_to[NODE_MAX], recvd_from[NODE_MAX];

    /* node 0: waves of probes */
    int wave;                        /* current wave number, 0: none running */
    int acks_missing;
    bool acked[NODE_MAX];
    bool all_idle;
    uint64_t sum_sent, sum_recvd;
    long sum_live;
    bool prev_quiet;                 /* the previous wave was quiet ... */
    uint64_t prev_sent;              /* ... with these totals */
    long prev_live;
    bool finishing;                  /* node_job_finish runs */
    int verdict;                     /* 0 running, 1 done, 2 stuck */
    uint64_t idle_probe_ns;          /* next idle probe interval */
    uint64_t quiet_since;            /* node 0 idle with no frame since (0: not) */
    /* node 0: a node died; the other nodes say whether anyone was told */
    struct gone_vote {
        bool pending;
        int fired;                   /* notifications delivered so far */
        uint64_t waiting;            /* nodes whose K_GONE_ACK is missing */
    } gone[NODE_MAX];
    int byes_missing;                /* shutdown: nodes in bye_due */
    bool bye_due[NODE_MAX];          /* told to shut down, neither said bye nor died */

    /* a job of MPI ranks (node_job_join): every node's host name, and the
     * names its host answers to (NUL-separated: short name, full name,
     * addresses), which pvm_addhosts and PvmTaskHost may use */
    bool ranks;
    char host[NODE_MAX][NODE_HOST_MAX];
    char *aliases[NODE_MAX];
    size_t aliases_len[NODE_MAX];
    bool standby[NODE_MAX];          /* not in the VM until node_job_add_host */
    int nhosts_known;

    /* a persistent VM (vm.h): nodes never finish, no deadlock is judged,
     * a node's loss never ends it; programs join as nodes and leave, and
     * their slots are used again (net.h) */
    bool persistent;
    bool joined;                     /* this node is a program that joined */
    int vm_nodes;                    /* slots below are the VM's own nodes */
    int vm_conn;                     /* joined: the connection to the launcher */
    unsigned join_gen;               /* joined: programs its slot held before */
    bool one_cpu;                    /* joined: its process may use one CPU only */
    bool forget_due[NODE_MAX];       /* gone: forget it at the next poll */
    int nforget;
    int gone_fired[NODE_MAX];        /* notifications fired here, for the vote */

    /* every node: shutdown ordered */
    bool shutdown;
    int shutdown_mode;
    upvm_waitq_t mainq;              /* the main ULP (serve / finish) */
    upvm_waitq_t goneq;              /* ULPs waiting for a deleted node's end */
} job = {.self = 0, .slots = 1};

static void send_bare(int dst, int kind, int a, int b, int c);
static void shutdown_all(int mode);
static _Noreturn void job_exit(int code);
static void gone_vote_start(int n, int fired);
static void gone_vote_check(int n);
static void gone_vote_drop_voter(int voter);

/* ------------------------------------------------------------ environment */

int node_job_cores(void)
{
    int cpus = util_cpus_usable();
    return cpus > NODE_MAX / 2 ? NODE_MAX / 2 : cpus;
}

int node_job_nodes_from_env(int dflt)
{
    const struct env_word cores[] = {{"cores", (uint64_t)node_job_cores()}, {NULL, 0}};
    const struct env_num spec = {.min = 1, .max = NODE_MAX / 2, .dflt = (uint64_t)dflt,
                                 .words = cores};
    uint64_t n;
    (void)env_uint("UPVM_NODES", &spec, &n);
    return (int)n;
}

bool node_job_multi(void) { return job.multi; }
int node_job_self(void) { return job.self; }
int node_job_slots(void) { return job.slots; }

bool node_job_up(int n)
{
    if (!job.multi)
        return n == 0;
    return n >= 0 && n < job.slots && job.known[n] == NET_PEER_UP;
}

static void membership_changed(void);

bool node_job_alive(int n)
{
    if (job.multi && net_events() != job.events_seen)
        membership_changed();
    return node_job_up(n);
}

/* How many of the job's nodes run on node n's host, and n's rank among
 * them. */
static int host_share(int n, int *index)
{
    int count = 0;
    *index = 0;
    for (int m = 0; m < job.slots; m++) {
        if (strcmp(job.host[m], job.host[n]) != 0)
            continue;
        if (m < n)
            (*index)++;
        count++;
    }
    return count;
}

const char *node_job_name(int n, char *buf, size_t len)
{
    int index;
    if (!job.ranks || n < 0 || n >= job.slots)
        snprintf(buf, len, "node%d", n);
    else if (host_share(n, &index) == 1)
        snprintf(buf, len, "%s", job.host[n]);
    else
        snprintf(buf, len, "%s:%d", job.host[n], index);
    return buf;
}

const char *node_job_host(int n)
{
    return job.ranks && n >= 0 && n < job.slots ? job.host[n] : NULL;
}

void node_on_frame(unsigned kind, node_frame_fn fn)
{
    if (kind < NODE_KIND_MAX)
        job.handlers[kind] = fn;
}

bool node_dispatch(int src, const struct node_frame *f, const void *payload, size_t len)
{
    if (f->kind >= NODE_KIND_MAX || !job.handlers[f->kind])
        return false;
    job.handlers[f->kind](src, f, payload, len);
    return true;
}

int node_job_add_hooks(const struct node_job_hooks *h)
{
    if (job.nhooks == NODE_HOOKS_MAX)
        return -ENOSPC;
    job.hooks[job.nhooks++] = h;
    return 0;
}

/* Every layer's peer_gone, in registration order: the notifications they
 * delivered, together. */
static int hooks_peer_gone(int n, int status, bool deleted)
{
    int fired = 0;
    for (int i = 0; i < job.nhooks; i++)
        if (job.hooks[i]->peer_gone)
            fired += job.hooks[i]->peer_gone(n, status, deleted);
    return fired;
}

static void hooks_peer_up(int n)
{
    for (int i = 0; i < job.nhooks; i++)
        if (job.hooks[i]->peer_up)
            job.hooks[i]->peer_up(n);
}

static void hooks_describe_stuck(void)
{
    for (int i = 0; i < job.nhooks; i++)
        if (job.hooks[i]->describe_stuck)
            job.hooks[i]->describe_stuck();
}

/* ------------------------------------------------------------ sending */

/* The termination waves count frames that may make work: not their own,
 * nor the balancer's reports (every node sends them each period, work or
 * not: counted, they would keep an idle job from ever looking settled). */
static bool counted(uint32_t kind)
{
    return kind != K_PROBE && kind != K_PROBE_ACK &&
           (kind < NODE_KINDS_GS || kind >= NODE_KINDS_SVM);
}

/* The frame made of iov[0 .. n) (len bytes) waits in dst's queue. */
static int enqueue(int dst, const struct iovec *iov, int n, size_t len)
{
    struct queued *q = malloc(sizeof *q + len);
    if (!q)
        return -ENOMEM;
    q->next = NULL;
    q->len = len;
    for (size_t off = 0; n > 0; iov++, n--) {
        if (iov->iov_len) /* an empty piece may have no address at all */
            memcpy(q->data + off, iov->iov_base, iov->iov_len);
        off += iov->iov_len;
    }
    if (job.qtail[dst])
        job.qtail[dst]->next = q;
    else
        job.qhead[dst] = q;
    job.qtail[dst] = q;
    job.nqueued++;
    return 0;
}

static void drop_queue(int dst)
{
    struct queued *q = job.qhead[dst];
    while (q) {
        struct queued *next = q->next;
        free(q);
        job.nqueued--;
        q = next;
    }
    job.qhead[dst] = job.qtail[dst] = NULL;
}

static void flush_queues(void)
{
    for (int d = 0; job.nqueued && d < job.slots; d++) {
        struct queued *q;
        while ((q = job.qhead[d]) && net_send(d, q->data, q->len) == 0) {
            job.qhead[d] = q->next;
            if (!q->next)
                job.qtail[d] = NULL;
            free(q);
            job.nqueued--;
        }
    }
}

/* A frame that neither the transport nor the queue could take (no memory,
 * a broken MPI job): the node cannot go on without losing it, so it ends,
 * saying why; its death is then handled as any node's (node 0: the job
 * ends; another node: its tasks are reported lost or their watchers told). */
static _Noreturn void cannot_send(int dst, unsigned kind, int rc)
{
    fprintf(stderr, "upvm: node %d: cannot send a frame (kind %u) to node %d: %s; this "
                    "node ends rather than lose it%s\n",
            job.self, kind, dst, strerror(-rc),
            rc == -ENOMEM ? " (see ulimit -v and vm.overcommit_memory)" : "");
    job_exit(rc == -ENOMEM ? 75 : 1);
}

int node_sendv(int dst, const struct node_frame *hdr, const struct iovec *iov, int n)
{
    if (dst < 0 || dst >= job.slots || dst == job.self || hdr->kind >= NODE_KIND_MAX ||
        n < 0 || n > NODE_IOV_MAX)
        return -EINVAL;
    /* (a standby rank, ABSENT, runs: node 0 tells it the job's changes) */
    if (job.known[dst] == NET_PEER_GONE || (job.known[dst] == NET_PEER_ABSENT && !job.ranks))
        return -EHOSTDOWN;
    /* The header and the pieces go to the ring as they lie (net_sendv):
     * nothing is put together first. */
    struct iovec v[NODE_IOV_MAX + 1];
    size_t len = sizeof *hdr;
    v[0] = (struct iovec){(void *)hdr, sizeof *hdr}; /* read only */
    for (int i = 0; i < n; i++) {
        v[i + 1] = iov[i];
        len += iov[i].iov_len;
    }
    int rc = -EAGAIN;
    if (likely(!job.qhead[dst]))
        rc = net_sendv(dst, v, n + 1);
    if (rc == -EAGAIN)
        rc = enqueue(dst, v, n + 1, len);
    if (unlikely(rc == -ENOMEM || rc == -EIO))
        cannot_send(dst, hdr->kind, rc);
    if (rc == 0 && counted(hdr->kind)) /* the termination waves count what went */
        job.sent_to[dst]++;
    return rc;
}

void node_postv(int dst, const struct node_frame *hdr, const struct iovec *iov, int n)
{
    int rc = node_sendv(dst, hdr, iov, n);
    if (unlikely(rc != 0 && rc != -EHOSTDOWN))
        fprintf(stderr, "upvm: node %d: a frame of kind %u for node %d was refused (%s): "
                        "a bug in UPVM, please report it\n",
                job.self, hdr->kind, dst, strerror(-rc));
}

void node_post(int dst, const struct node_frame *hdr, const void *p1, size_t l1, const void *p2,
               size_t l2)
{
    struct iovec v[2] = {{(void *)p1, l1}, {(void *)p2, l2}}; /* read only */
    node_postv(dst, hdr, v, 2);
}

int node_send(int dst, const struct node_frame *hdr, const void *p1, size_t l1,
              const void *p2, size_t l2)
{
    struct iovec v[2] = {{(void *)p1, l1}, {(void *)p2, l2}}; /* read only */
    return node_sendv(dst, hdr, v, 2);
}

/* A frame with no payload; a node that is gone simply misses it. */
static void send_bare(int dst, int kind, int a, int b, int c)
{
    struct node_frame f = {(uint32_t)kind, a, b, c};
    node_post(dst, &f, NULL, 0, NULL, 0);
}

/* ------------------------------------------------------------ receiving */

static void dispatch(void *ctx, int src, const void *data, size_t len)
{
    (void)ctx;
    struct node_frame f;
    if (len < sizeof f) {
        fprintf(stderr, "upvm: node %d: a %zu-byte frame from node %d is too short to "
                        "be one; dropped (a bug in UPVM: please report it)\n",
                job.self, len, src);
        return;
    }
    memcpy(&f, data, sizeof f);
    node_frame_fn fn = f.kind < NODE_KIND_MAX ? job.handlers[f.kind] : NULL;
    if (!fn) {
        fprintf(stderr, "upvm: node %d: frame of unknown kind %u from node %d dropped "
                        "(a bug in UPVM: please report it)\n", job.self, f.kind, src);
        return;
    }
    if (counted(f.kind) && src < NODE_MAX)
        job.recvd_from[src]++;
    fn(src, &f, (const unsigned char *)data + sizeof f, len - sizeof f);
}

/* ------------------------------------------------------------ membership */

/* Node 0 in shutdown_all: node n said goodbye, or died: it counts once
 * (a node that said goodbye exits right after, and is seen gone then). */
static void bye_received(int n)
{
    if (n > 0 && n < NODE_MAX && job.bye_due[n]) {
        job.bye_due[n] = false;
        job.byes_missing--;
    }
}

static void node_gone(int n)
{
    drop_queue(n);
    bool deleted = job.deleting[n];
    int status = net_peer_status(n);
    node_rpc_node_gone(n); /* its answers never come */
    (void)upvm_wake_all(&job.goneq);
    int fired = hooks_peer_gone(n, status, deleted);
    if (job.persistent) {
        /* its slot will be used again: what it sent is delivered first, then
         * it is forgotten, and only then does this node vote on its loss
         * (forget_pending) */
        job.forget_due[n] = true;
        job.nforget++;
        job.gone_fired[n] = fired;
    }
    if (job.self != 0) {
        if (n != 0 && !job.persistent)
            send_bare(0, K_GONE_ACK, n, fired, 0);
        return;
    }
    /* A wave under way summed n's counts of frames, which no longer
     * balance: judge a fresh wave instead (a wave that waited for n's
     * answer would otherwise wait for ever: pvm_delhosts then the end of
     * main hung the job). */
    if (job.wave) {
        job.wave = 0;
        job.prev_quiet = false;
        if (job.finishing)
            (void)upvm_wake_one(&job.mainq);
    }
    bye_received(n); /* a node that died says no goodbye */
    if ((!deleted || job.persistent) && !job.shutdown)
        gone_vote_start(n, fired); /* first: a report on another names n too */
    gone_vote_drop_voter(n); /* its votes on earlier deaths never come */
}

/* Slot n, gone, was recycled (net.h): a new node may come there, with
 * nothing of the old one's. */
static void slot_reused(int n)
{
    net_peer_reset(n);
    job.sent_to[n] = job.recvd_from[n] = 0;
    job.deleting[n] = false;
    job.gone[n] = (struct gone_vote){0};
}

/* A VM: the nodes that are gone are forgotten here, what they sent
 * delivered; then this node votes on their loss (node 0 counts itself as
 * a voter there: the vote's end gives the slot back, vm_node_gone). */
static void forget_pending(void)
{
    (void)net_poll(dispatch, NULL, 0); /* what they sent before they went */
    for (int n = 0; n < job.slots; n++) {
        if (!job.forget_due[n])
            continue;
        job.forget_due[n] = false;
        job.nforget--;
        net_peer_forget(n);
        if (job.self != 0 && n != 0)
            send_bare(0, K_GONE_ACK, n, job.gone_fired[n], 0);
        else if (job.self == 0 && job.gone[n].pending) { /* its own vote */
            job.gone[n].waiting &= ~(uint64_t)1;
            gone_vote_check(n);
        }
    }
}

static void membership_changed(void)
{
    job.events_seen = net_events();
    for (int n = 0; n < job.slots; n++) {
        enum net_peer_state now = net_peer_state(n);
        enum net_peer_state was = job.known[n];
        if (now == was || n == job.self)
            continue;
        job.known[n] = now;
        if (now == NET_PEER_GONE && (was == NET_PEER_UP || was == NET_PEER_STARTING)) {
            node_gone(n);
            continue;
        }
        if (was == NET_PEER_GONE)
            slot_reused(n);
        if (now == NET_PEER_UP)
            hooks_peer_up(n);
    }
}

/* A job of MPI ranks has no launcher that watches its nodes: node 0 says
 * when one joins the VM (a standby node added) or leaves it (deleted),
 * with K_NODE_STATE, and every node takes it as the launcher's word. */
static void rank_state(int n, enum net_peer_state now)
{
    if (n < 0 || n >= job.slots || n == job.self || job.known[n] == now)
        return;
    enum net_peer_state was = job.known[n];
    job.known[n] = now;
    if (now == NET_PEER_GONE && (was == NET_PEER_UP || was == NET_PEER_STARTING))
        node_gone(n);
    else if (now == NET_PEER_UP)
        hooks_peer_up(n);
}

static void on_node_state(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (src == 0)
        rank_state(f->a, (enum net_peer_state)f->b);
}

/* Node 0: node n joins or leaves; every node still running (standby ones
 * too: they may join later) is told. */
static void rank_state_all(int n, enum net_peer_state now)
{
    for (int m = 1; m < job.slots; m++)
        if (m != n && job.known[m] != NET_PEER_GONE)
            send_bare(m, K_NODE_STATE, n, (int)now, 0);
    rank_state(n, now);
}

/* ------------------------------------------------------------ idle ops */

/* A layer's periodic work (node_on_tick): the balancer's reports. */
static void (*tick_fn)(void);
static uint64_t tick_period_ns, tick_next_ns;

void node_on_tick(void (*fn)(void), uint64_t period_ns)
{
    tick_fn = fn;
    tick_period_ns = period_ns;
    tick_next_ns = upvm_now_ns() + period_ns;
}

static void tick_if_due(void)
{
    uint64_t now = upvm_now_ns();
    if (now < tick_next_ns)
        return;
    tick_next_ns = now + tick_period_ns;
    tick_fn();
}

static void (*poll_fns[NODE_POLL_FNS])(void);
static int npoll_fns;

int node_on_poll(void (*fn)(void))
{
    if (npoll_fns == NODE_POLL_FNS)
        return -ENOSPC;
    poll_fns[npoll_fns++] = fn;
    return 0;
}

/* ------------------------------------------------------------ urgent polls */

static bool urgent_kinds[NODE_KIND_MAX];

/* A frame an urgent poll kept for the next ordinary one. */
struct kept_frame {
    struct kept_frame *next;
    int src;
    size_t len;
    unsigned char data[];
};
static struct kept_frame *kept_head, **kept_tail = &kept_head;
/* Frames from a node stay in the order it sent them: once one of its
 * frames is kept, the rest from it are kept too, urgent or not. */
static bool kept_from[NODE_MAX];

void node_set_urgent(unsigned kind)
{
    if (kind < NODE_KIND_MAX)
        urgent_kinds[kind] = true;
}

static void dispatch_urgent(void *ctx, int src, const void *data, size_t len)
{
    struct node_frame f;
    bool in_order = src < 0 || src >= NODE_MAX || !kept_from[src];
    if (len >= sizeof f && in_order) {
        memcpy(&f, data, sizeof f);
        if (f.kind < NODE_KIND_MAX && urgent_kinds[f.kind]) {
            dispatch(ctx, src, data, len);
            return;
        }
    }
    if (src >= 0 && src < NODE_MAX)
        kept_from[src] = true;
    struct kept_frame *k = malloc(sizeof *k + len);
    if (!k) {
        fprintf(stderr, "upvm: node %d: out of memory keeping a frame from node %d\n",
                job.self, src);
        _exit(71);
    }
    k->next = NULL;
    k->src = src;
    k->len = len;
    memcpy(k->data, data, len);
    *kept_tail = k;
    kept_tail = &k->next;
}

int node_poll_urgent(void)
{
    if (!job.multi || job.shutdown)
        return 0;
    int n = net_poll(dispatch_urgent, NULL, 0);
    if (job.nqueued)
        flush_queues();
    return n;
}

/* What urgent polls kept, in the order it came. */
static void dispatch_kept(void)
{
    while (kept_head) {
        struct kept_frame *k = kept_head;
        kept_head = k->next;
        if (!kept_head)
            kept_tail = &kept_head;
        dispatch(NULL, k->src, k->data, k->len);
        free(k);
    }
    memset(kept_from, 0, sizeof kept_from);
}

static void job_poll(void)
{
    for (int i = 0; i < npoll_fns; i++)
        poll_fns[i]();
    if (unlikely(kept_head != NULL))
        dispatch_kept();
    if (tick_fn)
        tick_if_due();
    if (unlikely(net_events() != job.events_seen))
        membership_changed();
    /* node 0: requests from outside (upvm migrate); none once the job
     * ends: their clients see the socket close */
    if (unlikely(atomic_load_explicit(&node_ctl_pending, memory_order_acquire)) && !job.shutdown)
        node_ctl_serve();
    if (list_empty(&core_sched.runq)) {
        /* Idle: frames one at a time until one makes a ULP ready, which
         * then runs at once.  Looking for a next frame first would put a
         * cache miss (its header is a line the sender writes) before it;
         * the next poll, when the node is idle again, finds that frame. */
        while (net_poll(dispatch, NULL, 1) > 0 && list_empty(&core_sched.runq))
            ;
    } else {
        (void)net_poll(dispatch, NULL, 0);
    }
    if (job.nqueued)
        flush_queues();
    if (unlikely(job.nforget))
        forget_pending();
}

static void start_wave(void);

/* Node 0 has been idle for idle_probe_ns: is the whole job? */
static void probe_idle_job(void)
{
    start_wave();
    if (job.idle_probe_ns < PROBE_IDLE_MAX_NS)
        job.idle_probe_ns *= 2;
}

static void job_wait(uint64_t deadline)
{
    bool probing = job.self == 0 && !job.wave && !job.finishing && !job.shutdown &&
                   !job.persistent;
    /* Node 0 wakes for its tick (the balancer decides there, idle or
     * not); an idle node elsewhere ticks when it next has work. */
    bool ticking = tick_fn && job.self == 0;
    if (deadline == UINT64_MAX && !ticking) { /* no timer: no clock to read either */
        int woke = net_wait(probing ? (int64_t)job.idle_probe_ns : -1);
        if (probing && !woke)
            probe_idle_job();
        return;
    }
    /* Quiet (no frame, no wake-up) for idle_probe_ns, over as many waits
     * as the timers and ticks cut it into: probe. */
    uint64_t now = upvm_now_ns();
    if (!job.quiet_since)
        job.quiet_since = now;
    uint64_t probe_at = probing ? job.quiet_since + job.idle_probe_ns : UINT64_MAX;
    uint64_t until = deadline < probe_at ? deadline : probe_at;
    if (ticking && tick_next_ns < until)
        until = tick_next_ns;
    int woke = net_wait(until == UINT64_MAX ? -1 : until > now ? (int64_t)(until - now) : 0);
    if (woke || until == deadline) { /* a frame, or a ULP's timer: work */
        job.quiet_since = 0;
    } else if (probing && upvm_now_ns() >= probe_at) {
        job.quiet_since = 0;
        probe_idle_job();
    }
}

/* Any thread: a ULP came back from a kernel context (src/blt). */
static void job_kick(void)
{
    net_wake(job.self);
}

static const struct core_idle_ops job_idle_ops = {job_poll, job_wait, job_kick};

/* ------------------------------------------------------------ probes */

/* Frames sent to / received from the nodes still up. */
static void live_counts(uint64_t *sent, uint64_t *recvd)
{
    *sent = *recvd = 0;
    for (int n = 0; n < job.slots; n++) {
        if (n != job.self && job.known[n] != NET_PEER_UP)
            continue;
        *sent += job.sent_to[n];
        *recvd += job.recvd_from[n];
    }
}

static bool node_idle(void)
{
    struct ulp *cur = core_current();
    return list_empty(&core_sched.runq) && core_timer_next() == UINT64_MAX &&
           !core_sched.ncoupled && cur->state != ULP_RUNNING && cur->state != ULP_READY;
}

/* ULPs that are the job's work: all but the node's main ULP when it only
 * serves (other nodes) or waits for the end (node 0 finishing). */
static int live_ulps(void)
{
    return core_sched.nlive - (job.self != 0 || job.finishing);
}

/* A wave is complete: judge it. */
static void wave_done(void)
{
    job.wave = 0;
    bool quiet = job.all_idle && job.sum_sent == job.sum_recvd;
    bool settled = quiet && job.prev_quiet && job.prev_sent == job.sum_sent &&
                   job.prev_live == job.sum_live;
    job.prev_quiet = quiet;
    job.prev_sent = job.sum_sent;
    job.prev_live = job.sum_live;
    if (!settled) {
        if (!quiet)
            job.idle_probe_ns = PROBE_IDLE_FIRST_NS;
        if (quiet && !job.finishing)
            start_wave(); /* confirm at once */
        else if (job.finishing)
            (void)upvm_wake_one(&job.mainq);
        return;
    }
    if (job.finishing) {
        job.verdict = job.sum_live == 0 ? 1 : 2;
        (void)upvm_wake_one(&job.mainq);
        return;
    }
    /* Every ULP of the job waits for a message no one will send.  Node 0
     * lists its ULPs, then the others theirs (on K_SHUTDOWN), then the
     * advice comes last. */
    int up = 1;
    for (int n = 1; n < job.slots; n++)
        up += job.known[n] == NET_PEER_UP;
    fprintf(stderr, "upvm: deadlock: every ULP of the job's %d node(s) is blocked and no "
                    "message is in flight:\n", up);
    hooks_describe_stuck();
    fflush(stderr);
    shutdown_all(SHUT_DEADLOCK);
    fprintf(stderr, "upvm: check the program's receives, barriers and joins; the job ends "
                    "with exit status 70.\n");
    job_exit(70);
}

static void start_wave(void)
{
    static int next_wave;
    job.wave = ++next_wave;
    job.all_idle = job.finishing ? list_empty(&core_sched.runq) && !core_sched.ncoupled &&
                                   core_timer_next() == UINT64_MAX
                             : node_idle();
    live_counts(&job.sum_sent, &job.sum_recvd);
    job.sum_live = live_ulps();
    job.acks_missing = 0;
    for (int n = 1; n < job.slots; n++) {
        job.acked[n] = job.known[n] != NET_PEER_UP;
        if (!job.acked[n]) {
            job.acks_missing++;
            send_bare(n, K_PROBE, job.wave, 0, 0);
        }
    }
    if (!job.acks_missing)
        wave_done();
}

static void on_probe(int src, const struct node_frame *f, const void *p, size_t len)
{
    uint64_t counts[2];
    live_counts(&counts[0], &counts[1]);
    struct node_frame ack = {K_PROBE_ACK, f->a, node_idle(), live_ulps()};
    node_post(src, &ack, counts, sizeof counts, NULL, 0);
}

static void on_probe_ack(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (job.self != 0 || f->a != job.wave || src >= job.slots || job.acked[src] ||
        len < 2 * sizeof(uint64_t))
        return; /* an old wave's */
    uint64_t counts[2];
    memcpy(counts, p, sizeof counts);
    job.acked[src] = true;
    job.all_idle = job.all_idle && f->b;
    job.sum_live += f->c;
    job.sum_sent += counts[0];
    job.sum_recvd += counts[1];
    if (--job.acks_missing == 0)
        wave_done();
}

/* ------------------------------------------------------------ ending */

static void shutdown_all(int mode)
{
    job.shutdown = true;
    job.byes_missing = 0;
    memset(job.bye_due, 0, sizeof job.bye_due);
    for (int n = 1; n < job.slots; n++) {
        /* (standby ranks run too, and must leave MPI with the others) */
        if (job.known[n] != NET_PEER_UP && !(job.ranks && job.known[n] == NET_PEER_ABSENT))
            continue;
        send_bare(n, K_SHUTDOWN, mode, 0, 0);
        job.bye_due[n] = true;
        job.byes_missing++;
    }
    /* Wait for the others to say goodbye (their reports come first). */
    uint64_t end = upvm_now_ns() + BYE_WAIT_NS;
    while (job.byes_missing > 0 && upvm_now_ns() < end) {
        job_poll();
        if (job.byes_missing > 0)
            (void)net_wait(10 * 1000000);
    }
    while (job.nqueued && upvm_now_ns() < end) {
        flush_queues();
        (void)net_wait(1000000);
    }
}

static void on_shutdown(int src, const struct node_frame *f, const void *p, size_t len)
{
    job.shutdown = true;
    job.shutdown_mode = f->a;
    (void)upvm_wake_one(&job.mainq);
}

static void on_bye(int src, const struct node_frame *f, const void *p, size_t len)
{
    bye_received(src);
    if (job.ranks && job.self == 0 && src > 0 && src < job.slots && job.deleting[src])
        rank_state_all(src, NET_PEER_GONE); /* deleted: its process waits for the end */
}

/* "died of signal 9 (Killed)" / "exited with status 3" */
static const char *fate(int status, char *buf, size_t len)
{
    if (status > 128)
        snprintf(buf, len, "died of signal %d (%s)", status - 128, strsignal(status - 128));
    else
        snprintf(buf, len, "exited with status %d", status);
    return buf;
}

/* "node1 (pid 123) died of signal 9 (Killed)" */
static const char *node_fate(int n, char *buf, size_t len)
{
    char name[32], what[96];
    snprintf(buf, len, "%s (pid %d) %s", node_job_name(n, name, sizeof name),
             node_board_pid(net_board(n)), fate(net_peer_status(n), what, sizeof what));
    return buf;
}

/* The tasks node n ran, from its board (nothing if none). */
static void print_lost_tasks(int n)
{
    const void *board = net_board(n);
    int ntasks = node_board_ntasks(board);
    if (ntasks <= 0)
        return;
    fprintf(stderr, "upvm:   its %d task(s), lost:\n", ntasks);
    node_board_print(stderr, board, "upvm:    ");
}

/*
 * Node 0, every node has said how many of its tasks it told of node n's
 * death: the job goes on if any task was told (the application handles
 * it) or if n ran no task (nothing is lost); otherwise the job ends with a
 * report naming n and its tasks, read from n's board (board.h), and n's
 * exit status (1 if it exited with 0).  Nodes that died at the same time
 * and are not decided yet are named too.
 */
/* Node 0 of a VM: node n is gone, and forgotten on every node (the vote
 * is over).  The VM goes on, whatever it ran; what was lost is said in
 * its log, and the launcher may give the slot to the next program. */
static void vm_node_gone(int n)
{
    int fired = job.gone[n].fired, status = net_peer_status(n);
    const void *board = net_board(n);
    if (n < job.vm_nodes || status != 0 || node_board_ntasks(board) > 0) {
        char what[96];
        fprintf(stderr, "upvm: %s%d (pid %d) %s; the VM goes on%s\n",
                n < job.vm_nodes ? "node" : "the program of node", n, node_board_pid(board),
                status == NODE_VM_VANISHED ? "ended without saying goodbye (it died)"
                                           : fate(status, what, sizeof what),
                fired ? " (its watchers were told: pvm_notify)" : "");
        print_lost_tasks(n);
    }
    /* (the VM's own nodes are not started again) */
    if (n >= job.vm_nodes && net_request_recycle(n) == 0)
        (void)kill(getppid(), SIGUSR1);
}

static void lost_node_decision(int n)
{
    int fired = job.gone[n].fired, status = net_peer_status(n);
    char who[192];
    if (job.persistent) {
        vm_node_gone(n);
        return;
    }
    node_fate(n, who, sizeof who);
    if (fired > 0 || node_board_ntasks(net_board(n)) <= 0) {
        if (fired > 0)
            fprintf(stderr, "upvm: %s; the job goes on: %d notification(s) delivered "
                            "(pvm_notify)\n", who, fired);
        else
            fprintf(stderr, "upvm: %s; the job goes on: it ran no task\n", who);
        print_lost_tasks(n);
        return;
    }
    int code = status ? status : 1;
    fprintf(stderr, "upvm: %s, and no task had asked to be told (pvm_notify PvmHostDelete "
                    "or PvmTaskExit)\n", who);
    print_lost_tasks(n);
    for (int m = 1; m < job.slots; m++) {
        if (m == n || !(job.gone[m].pending || (job.known[m] == NET_PEER_UP &&
                                               net_peer_state(m) == NET_PEER_GONE)))
            continue;
        fprintf(stderr, "upvm: %s too\n", node_fate(m, who, sizeof who));
        print_lost_tasks(m);
    }
    fprintf(stderr, "upvm: ending the job (exit status %d); to let a job go on when a node "
                    "dies, ask for PvmHostDelete or PvmTaskExit with pvm_notify\n", code);
    shutdown_all(SHUT_LOST);
    job_exit(code);
}

/* The nodes up now, but this one and n. */
static uint64_t voters(int n)
{
    uint64_t m = 0;
    for (int i = 0; i < job.slots; i++)
        if (i != job.self && i != n && job.known[i] == NET_PEER_UP)
            m |= (uint64_t)1 << i;
    return m;
}

static void gone_vote_check(int n)
{
    if (job.gone[n].pending && !job.gone[n].waiting) {
        job.gone[n].pending = false;
        lost_node_decision(n);
    }
}

/* Node 0 saw node n die, fired notifications for it here: ask the rest. */
static void gone_vote_start(int n, int fired)
{
    /* in a VM node 0 votes too, once it has forgotten n (forget_pending) */
    uint64_t self = job.persistent ? 1 : 0;
    job.gone[n] = (struct gone_vote){.pending = true, .fired = fired,
                                     .waiting = voters(n) | self};
    gone_vote_check(n);
}

/* Node 0: voter is gone too: no vote of it will come. */
static void gone_vote_drop_voter(int voter)
{
    for (int n = 0; n < job.slots; n++) {
        if (!job.gone[n].pending || !(job.gone[n].waiting & ((uint64_t)1 << voter)))
            continue;
        job.gone[n].waiting &= ~((uint64_t)1 << voter);
        gone_vote_check(n);
    }
}

static void on_gone_ack(int src, const struct node_frame *f, const void *p, size_t len)
{
    /* The sender may have seen the death before this node did. */
    if (net_events() != job.events_seen)
        membership_changed();
    int n = f->a;
    if (job.self != 0 || n < 0 || n >= job.slots || src >= NODE_MAX || !job.gone[n].pending ||
        !(job.gone[n].waiting & ((uint64_t)1 << src)))
        return;
    job.gone[n].fired += f->b;
    job.gone[n].waiting &= ~((uint64_t)1 << src);
    gone_vote_check(n);
}

/* A job of MPI ranks, node 0 at its end: the others are gone (or going),
 * this process leaves MPI too (MPI_Finalize waits for every rank), and
 * nothing is sent any more. */
static void leave_ranks(void)
{
    fflush(NULL);
    net_fini();
    for (int n = 0; n < job.slots; n++)
        if (n != job.self)
            job.known[n] = NET_PEER_GONE;
    job.ranks = false;
}

/* This node ends (job_exit, or node 0's exit: an atexit handler): a
 * failed write of the job's output goes on its board, for the launcher to
 * say once for the whole job; a job of MPI ranks has no launcher, so each
 * of its nodes says its own. */
static void note_output(void)
{
    if (!job.ranks) {
        (void)node_board_note_output();
        return;
    }
    int err = out_check();
    if (err)
        out_report(err);
}

/* Every way a node process ends: a job of MPI ranks leaves MPI first (a
 * rank that exits without MPI_Finalize makes mpirun end the whole job). */
static void (*ending_hook)(int code);

void node_job_set_ending_hook(void (*fn)(int code))
{
    ending_hook = fn;
}

static _Noreturn void job_exit(int code)
{
    if (ending_hook)
        ending_hook(code);
    note_output();
    if (job.ranks) {
        fflush(NULL);
        net_fini();
    }
    fflush(NULL);
    _exit(code);
}

/* A node's main ULP after a shutdown order: say goodbye and go. */
static _Noreturn void leave(void)
{
    int code = 0;
    if (job.shutdown_mode == SHUT_STUCK || job.shutdown_mode == SHUT_DEADLOCK) {
        hooks_describe_stuck();
        code = job.shutdown_mode == SHUT_DEADLOCK ? 70 : 0;
    }
    fflush(NULL);
    send_bare(0, K_BYE, 0, 0, 0);
    uint64_t end = upvm_now_ns() + BYE_WAIT_NS;
    while ((job.nqueued || net_flush() != 0) && upvm_now_ns() < end) {
        flush_queues();
        (void)net_wait(1000000);
    }
    job_exit(code);
}

_Noreturn void node_job_serve(void)
{
    while (!job.shutdown)
        (void)core_block(&job.mainq, -1);
    leave();
}

int node_job_finish(int status)
{
    if (!job.multi || job.self != 0)
        return status;
    job.finishing = true;
    uint64_t pause_ns = 0;
    while (!job.verdict) {
        if (!job.wave)
            start_wave();
        while (job.wave && !job.verdict)
            (void)core_block(&job.mainq, 1000 * 1000000);
        if (job.verdict)
            break;
        if (pause_ns)
            (void)upvm_sleep_ns(pause_ns);
        pause_ns = pause_ns ? (pause_ns < 50000000 ? pause_ns * 2 : pause_ns) : 100000;
    }
    node_ctl_stop(); /* the job is over: nothing more to migrate */
    if (job.verdict == 2) {
        fprintf(stderr, "upvm: main exited; %ld ULP(s) of the job still waiting for "
                        "messages were ended with it:\n", job.sum_live);
        hooks_describe_stuck();
    }
    shutdown_all(job.verdict == 2 ? SHUT_STUCK : SHUT_DONE);
    if (job.ranks)
        leave_ranks();
    return status;
}

/* ------------------------------------------------------------ add, delete */

bool node_job_on_host(int n, const char *name)
{
    if (!job.ranks || n < 0 || n >= job.slots || !job.aliases[n] || !name)
        return false;
    for (size_t off = 0; off < job.aliases_len[n]; off += strlen(job.aliases[n] + off) + 1)
        if (strcmp(job.aliases[n] + off, name) == 0)
            return true;
    return false;
}

int node_job_add_host(const char *name)
{
    if (!job.multi || job.self != 0)
        return -EINVAL;
    if (!job.ranks)
        return -EOPNOTSUPP;
    bool known = false;
    for (int n = 1; n < job.slots; n++) {
        if (!node_job_on_host(n, name))
            continue;
        known = true;
        if (job.known[n] != NET_PEER_ABSENT)
            continue;
        rank_state_all(n, NET_PEER_UP);
        return n;
    }
    return known ? -EEXIST : -ENOENT;
}

int node_job_add(void)
{
    if (!job.multi || job.self != 0 || job.ranks)
        return -EINVAL;
    for (int n = 1; n < job.slots; n++) {
        if (job.known[n] != NET_PEER_ABSENT || net_request_start(n) != 0)
            continue;
        job.known[n] = NET_PEER_STARTING;
        kill(getppid(), SIGUSR1);
        return n;
    }
    return -ENOSPC;
}

int node_job_halt(int tid)
{
    if (!job.multi || job.ranks)
        return -ENOTSUP;
    fflush(NULL); /* this node ends by the launcher's SIGTERM */
    if (job.joined) { /* the launcher is not our parent: tell it on our connection */
        char line[48];
        snprintf(line, sizeof line, "halt %d\n", tid);
        int rc = node_vm_say(job.vm_conn, line);
        if (rc != 0)
            return rc;
    } else if (sigqueue(getppid(), NODE_SIG_HALT, (union sigval){.sival_int = tid}) != 0)
        return -errno;
    for (;;) /* until the launcher's SIGTERM (or, past a handler, SIGKILL) */
        pause();
}

int node_job_delete(int n)
{
    if (!job.multi || job.self != 0 || n <= 0 || n >= job.slots || job.known[n] != NET_PEER_UP)
        return -EINVAL;
    job.deleting[n] = true;
    send_bare(n, K_SHUTDOWN, SHUT_DELETED, 0, 0);
    return 0;
}

int node_job_wait_gone(int n, int64_t timeout_ns)
{
    if (!job.multi || n < 0 || n >= job.slots || n == job.self)
        return -EINVAL;
    uint64_t end = upvm_now_ns() + (uint64_t)timeout_ns;
    while (job.known[n] == NET_PEER_UP || job.known[n] == NET_PEER_STARTING) {
        uint64_t now = upvm_now_ns();
        if (now >= end)
            return -ETIMEDOUT;
        (void)core_block(&job.goneq, (int64_t)(end - now));
    }
    return 0;
}

/* ------------------------------------------------------------ starting */

/* This process runs as node `node` of the job now (its transport up):
 * the node layer's state, frames and idle ops. */
static void job_begin(int node)
{
    job.multi = true;
    job.self = node;
    job.slots = net_nnodes();
    job.idle_probe_ns = PROBE_IDLE_FIRST_NS;
    upvm_waitq_init(&job.mainq, node == 0 ? "the end of the job" : "node service");
    upvm_waitq_init(&job.goneq, "a deleted node's end");
    job.events_seen = net_events();
    for (int n = 0; n < job.slots; n++)
        job.known[n] = net_peer_state(n);
    /* (no shared segment: the board lies in this node's memory, for good) */
    node_board_open(net_board(node) ? net_board(node) : calloc(1, NET_BOARD_BYTES));
    node_ctl_register_frames();
    node_on_frame(K_PROBE, on_probe);
    node_on_frame(K_PROBE_ACK, on_probe_ack);
    node_on_frame(K_SHUTDOWN, on_shutdown);
    node_on_frame(K_BYE, on_bye);
    node_on_frame(K_GONE_ACK, on_gone_ack);
    node_rpc_init();
    core_set_idle_ops(&job_idle_ops);
    (void)atexit(note_output); /* node 0 ends with exit(): main's status */
}

int node_job_start(int nnodes, bool vm)
{
    if ((nnodes <= 1 && !vm) || job.multi)
        return 0;
    if (core_enter() != 0)
        return -EPERM;
    int capacity = nnodes + (vm ? NODE_VM_JOINED_MAX : nnodes < 4 ? 4 : nnodes);
    if (capacity > NODE_MAX)
        capacity = NODE_MAX;
    /* Every node hands out slots from one bitmap, so that a ULP's slot is
     * its own on every node (migration keeps its addresses). */
    int rc = mem_window_share();
    if (rc != 0)
        return rc;
    if (vm && mem_window_share_fd() < 0)
        return -ENOSYS; /* no memfd: nothing to give a program that joins */
    int node = node_job_fork(nnodes, capacity, vm ? mem_window_share_fd() : -1);
    if (node < 0)
        return node;
    job.persistent = vm;
    job_begin(node);
    job.vm_nodes = vm ? nnodes : job.slots;
    if (node == 0)
        node_ctl_start();
    /* A node started late never sees the deaths before its start; node 0
     * may count on its vote for them all the same: it told no one. */
    for (int n = 1; node != 0 && n < job.slots; n++)
        if (job.known[n] == NET_PEER_GONE)
            send_bare(0, K_GONE_ACK, n, 0, 0);
    return node;
}

/* ------------------------------------------------------------ a persistent VM */

bool node_job_persistent(void) { return job.persistent; }
unsigned node_job_generation(void) { return job.join_gen; }
bool node_job_joined(void) { return job.joined; }

static bool vacated[NODE_MAX];

void node_job_set_vacated(int n, bool on)
{
    if (n >= 0 && n < NODE_MAX)
        vacated[n] = on;
}

bool node_job_places(int n)
{
    if (n >= 0 && n < NODE_MAX && vacated[n])
        return false;
    if (!node_job_up(n) || !job.persistent)
        return node_job_up(n);
    /* a program on one CPU keeps its tasks: a VM node would only take
     * turns with it there, every message a switch of processes (15 µs
     * against 0.1 µs in one process: docs/benchmarks.md) */
    if (job.joined && job.one_cpu)
        return n == job.self;
    return n < job.vm_nodes;
}

/* A joined program ends: it says so (its slot is then used again without a
 * report of lost tasks). */
static void vm_bye(void)
{
    (void)node_vm_say(job.vm_conn, "bye 0\n");
}

/* SIGIO on the connection to the launcher: did the VM go away?  (A VM
 * halted sends SIGTERM; this is for one whose launcher was killed.) */
static void vm_conn_signal(int sig)
{
    (void)sig;
    char c;
    ssize_t r = recv(job.vm_conn, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    if (r != 0)
        return;
    static const char msg[] = "upvm: the VM this program joined is gone; it ends\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static void watch_vm(int conn)
{
    struct sigaction sa = {.sa_handler = vm_conn_signal};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGIO, &sa, NULL) != 0)
        return;
    (void)fcntl(conn, F_SETOWN, getpid());
    (void)fcntl(conn, F_SETFL, fcntl(conn, F_GETFL) | O_ASYNC);
}

int node_job_join_vm(char *why, size_t len)
{
    if (job.multi)
        return -EBUSY;
    if (core_enter() != 0)
        return -EPERM;
    struct node_vm_joined j;
    int rc = node_vm_join(&j, why, len);
    if (rc != 0)
        return rc;
    rc = mem_window_attach(j.map_fd);
    close(j.map_fd);
    if (rc == 0)
        rc = net_init_shm_fd(j.seg_fd, j.slot, NULL);
    if (rc != 0) {
        snprintf(why, len, "cannot map the VM's memory: %s", strerror(-rc));
        close(j.seg_fd);
        close(j.conn); /* the launcher sees it leave */
        return rc;
    }
    job.persistent = job.joined = true;
    job.vm_conn = j.conn;
    job.join_gen = j.gen;
    job.one_cpu = util_cpus_usable() == 1;
    job_begin(j.slot);
    job.vm_nodes = j.vm_nodes;
    /* nodes gone before this one came: it has nothing of theirs */
    for (int n = 0; n < job.slots; n++) {
        if (n == job.self || job.known[n] != NET_PEER_GONE)
            continue;
        net_peer_forget(n);
        if (n != 0)
            send_bare(0, K_GONE_ACK, n, 0, 0);
    }
    (void)atexit(vm_bye);
    watch_vm(j.conn);
    return j.slot;
}

/* ------------------------------------------------------------ a job of MPI ranks */

/* Another node's slot came back to its owner's share (mem.h). */
static void slot_released(int slot, int owner)
{
    send_bare(owner, K_SLOT_FREE, slot, 0, 0);
}

static void on_slot_free(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (mem_slot_taken(f->a))
        mem_slot_free(f->a);
}

/* Node src's names (its K_HOST frame, or this node's own): the short host
 * name first, then its aliases, each NUL-terminated; a: standby. */
static void learn_host(int src, bool standby, const char *names, size_t len)
{
    if (src < 0 || src >= job.slots || job.host[src][0] || len == 0 || names[len - 1])
        return;
    /* the short name, cut to the table's width (a name is at most 64
     * bytes in practice: HOST_NAME_MAX) */
    size_t n = strnlen(names, sizeof job.host[src] - 1);
    memcpy(job.host[src], names, n);
    job.host[src][n] = '\0';
    job.aliases[src] = malloc(len);
    if (job.aliases[src]) {
        memcpy(job.aliases[src], names, len);
        job.aliases_len[src] = len;
    }
    job.standby[src] = standby && src != 0; /* node 0 runs the program */
    if (job.standby[src] && src != job.self)
        job.known[src] = NET_PEER_ABSENT;
    job.nhosts_known++;
}

static void on_host(int src, const struct node_frame *f, const void *p, size_t len)
{
    learn_host(src, f->a, p, len);
}

/* Every node tells every other its host names, and waits for theirs: the
 * job's names are known before the first task runs, and every node has
 * registered its layers' frames before any of them comes (a node sends its
 * names once it has). */
static int exchange_hosts(void)
{
    char names[NODE_ALIASES_MAX];
    size_t len = node_host_names(names, sizeof names);
    bool standby = node_host_standby(names, len);
    learn_host(job.self, standby, names, len);
    struct node_frame f = {K_HOST, standby, 0, 0};
    for (int n = 0; n < job.slots; n++)
        if (n != job.self && node_send(n, &f, names, len, NULL, 0) != 0)
            return -EIO;
    uint64_t end = upvm_now_ns() + JOIN_WAIT_NS;
    while (job.nhosts_known < job.slots && upvm_now_ns() < end) {
        job_poll();
        if (job.nhosts_known < job.slots)
            (void)net_wait(10 * 1000000);
    }
    return job.nhosts_known == job.slots ? 0 : -ETIMEDOUT;
}

int node_job_join(void)
{
    if (job.multi)
        return -EBUSY;
    if (core_enter() != 0)
        return -EPERM;
    int rc = net_start_mpi(NULL);
    if (rc != 0)
        return rc;
    if (net_nnodes() > NODE_MAX) {
        net_fini();
        return -E2BIG;
    }
    /* No memory is shared between hosts: each node hands out slots from
     * its own share of the window (mem.h). */
    rc = mem_window_partition(net_node(), net_nnodes(), slot_released);
    if (rc != 0) {
        net_fini();
        return rc;
    }
    job.ranks = true;
    job_begin(net_node());
    node_on_frame(K_SLOT_FREE, on_slot_free);
    node_on_frame(K_HOST, on_host);
    node_on_frame(K_NODE_STATE, on_node_state);
    return job.self;
}

void node_job_ready(void)
{
    if (!job.ranks || job.nhosts_known)
        return;
    if (exchange_hosts() != 0) {
        fprintf(stderr, "upvm: node %d: the other ranks did not answer within %d s\n",
                job.self, (int)(JOIN_WAIT_NS / 1000000000u));
        job_exit(1);
    }
    if (job.self == 0) { /* no launcher: node 0 makes the socket and removes it */
        node_ctl_prepare(getpid());
        node_ctl_start();
        node_ctl_remove_on_signals();
    }
}
