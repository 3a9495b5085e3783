/*
 * migrate.c - moving a process-mode task to another node of its job: the
 * MPVM/UPVM protocol's four stages (docs/design-notes.md §9).
 *
 *   1. Event.  A request (upvm_migrate, the control socket) travels to the
 *      node that has the task, routed by tid like a message.  That node
 *      (the source) checks what would make the move impossible (a thread-
 *      mode task, ...) and refuses with a reason, or marks the task: it
 *      moves as soon as it is not running (blocked on its own receive
 *      queue, sleeping or ready), which a short-lived "migrator" ULP
 *      notices (the core calls our hook when a marked task stops).
 *   2. Prepare.  The destination opens the program, maps its text in the
 *      task's slot (the same address: the job shares one slot bitmap),
 *      commits its writable part and checks that its libraries lie where
 *      the source's do.  It says yes, or no with the reason.
 *   3. Flush and state transfer.  The source freezes the task (off its run
 *      queue, out of its tables), sends its core and PVM state (pending
 *      messages, buffers, notifications), tells every node where the task
 *      goes (each sends a marker the old way, then sends the new way:
 *      pvm/move.h), and streams the used bytes of the slot: writable image,
 *      stack from the saved stack pointer, heap to its top.  Chunks go
 *      straight from the slot into the transport's ring, a window at a
 *      time (the destination acknowledges), so nothing is copied twice.
 *   4. Restart.  With the last byte the destination thaws the task where it
 *      was (ready, blocked, sleeping), rebuilds its PVM state, and the
 *      answer goes to whoever asked.  The task's tid never changes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "migrate/migrate.h"
#include "net/net.h"
#include "node/job.h"
#include "proc/proc.h"
#include "pvm/move.h"
#include "pvm/remote.h"
#include "util/copy.h"
#include "util/env.h"

#if UPVM_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define CHUNK_MAX ((size_t)256 << 10)

/* The migration layer's frames, in its range (node/job.h). */
enum migrate_frame_kind {
    K_MIG_REQ = NODE_KINDS_MIGRATE, /* a: tid, b: request id, c: to; payload: int32 origin
                                     * (routed like a message) */
    K_MIG_DONE,     /* a: request id, b: rc; payload: struct + why */
    K_MIG_PREP,     /* a: tid, b: 1 = cancelled; payload: int32 origin, int32 request id,
                     * proc_move, layout */
    K_MIG_PREP_ACK, /* a: tid, b: rc; payload: why */
    K_MIG_STATE,    /* a: tid; payload: core, request, PVM state */
    K_MIG_DATA,     /* a: tid, c: last; payload: uint64 address, bytes */
    K_MIG_ACK,      /* a: tid; payload: uint64 bytes received so far */
};
_Static_assert(K_MIG_ACK < NODE_KINDS_GS, "migrate's frame kinds overflow its range");

/* ------------------------------------------------------------ tests */

/*
 * Tests only: UPVM_TEST_MIGRATE_PAUSE=POINT stops this node's process
 * (SIGSTOP) when a move reaches POINT, after one line on stderr naming
 * the node, its pid and the point, so that a test can kill a node at a
 * chosen stage of the protocol and then let the stopped one go on
 * (tests/migrate/test-migrate-stages.sh).  Points: src:prepared (the
 * destination said yes, the task not frozen yet), src:frozen (its state
 * sent, no data yet), src:sent (every byte sent), dst:prepared, dst:state
 * (the state came), dst:data (every byte came, not restarted yet).
 */
static void test_pause(const char *point)
{
    static const char *const points[] = {"src:prepared", "src:frozen", "src:sent",
                                         "dst:prepared", "dst:state", "dst:data", NULL};
    static const char *want = (const char *)1;
    if (want == (const char *)1) {
        int i;
        want = env_choice("UPVM_TEST_MIGRATE_PAUSE", points, -1, 0, &i) > 0 ? points[i] : NULL;
    }
    if (likely(!want) || strcmp(want, point) != 0)
        return;
    fprintf(stderr, "upvm-test: node %d (pid %d) paused at %s\n", node_job_self(), (int)getpid(),
            point);
    fflush(stderr);
    want = NULL; /* once per process */
    raise(SIGSTOP);
}

/* ------------------------------------------------------------ requests */

/* A request this node made, waiting for its answer. */
struct request {
    list_link_t link;
    int id;
    int tid, to, node;     /* node: where the request went (its answer comes from there
                            * or from a node it sent it on to) */
    migrate_done_fn done;
    void *ctx;
    uint64_t t0;
};

/* A request the task's node accepted: the task moves when it can. */
struct pending {
    list_link_t link;
    int tid, to;
    int origin, id;        /* where the answer goes (origin -1: the task itself) */
    uint64_t t_src;        /* when it reached this node */
    bool prepared;         /* the destination said yes */
    bool lazy;             /* its memory follows it (migrate_lazy_ops) */
};

/* What a task that moves itself waits for, on its own stack (it moves
 * with it): ulp->ext[ULP_EXT_MIGRATE]. */
struct self_wait {
    bool done;
    int rc;
    char why[512];
    struct upvm_migrate_stats stats;
    uint64_t t0;
};

/* The destination's side of a move in progress. */
struct incoming {
    list_link_t link;
    int tid, from, slot;
    struct loader_image *img;
    bool have_state;
    struct core_frozen core;
    int origin, id;
    uint64_t told, expect, got, obtrusive_ns;
    unsigned char *pvm;
    size_t pvmlen;
    struct iovec lazy[PROC_MOVE_RANGES + 1]; /* what follows it (a lazy move) */
    int nlazy;
    bool restarting;       /* a restarter ULP has it (lazy): not dropped under it */
    int lazy_rc;           /* what migrate_lazy_ops.expect said */
};

static struct {
    bool ready;
    int next_id;
    list_link_t requests, pendings, incomings;
    upvm_waitq_t answers;    /* upvm_migrate callers (on the node: not movable) */
    upvm_waitq_t acks;       /* the migrator, for a prepare answer or window room */
    struct ulp *migrator;
    char why[512];           /* upvm_migrate_error */
    struct upvm_migrate_stats last;
    /* the migrator's conversation with a destination */
    int ack_tid, ack_rc;
    int talking_to;          /* the destination of the move under way, or -1 */
    bool dest_gone;          /* ... which died meanwhile */
    bool ack_done;
    char ack_why[512];
    uint64_t acked;
    size_t chunk, window;    /* of the move under way (use_path) */
} mig;

static void on_hook(struct ulp *u);
static void on_flushed(int tid);
static void register_frames(void);
static int on_peer_gone(int n, int status, bool deleted);

static void ensure(void)
{
    if (mig.ready)
        return;
    mig.ready = true;
    list_init(&mig.requests);
    list_init(&mig.pendings);
    list_init(&mig.incomings);
    upvm_waitq_init(&mig.answers, "a migration's answer");
    upvm_waitq_init(&mig.acks, "the destination of a migration");
    mig.talking_to = -1;
    core_set_migrate_hook(on_hook);
    pvm_route_on_flushed(on_flushed);
    register_frames();
    static const struct node_job_hooks hooks = {.peer_gone = on_peer_gone};
    if (node_job_add_hooks(&hooks) != 0)
        fprintf(stderr, "upvm: node %d: no room for migration's node hooks: a move to a node "
                        "that dies may wait for ever\n", node_job_self());
}

/* K_MIG_DONE to node; for `relay` (>= 0) when node is to pass it on. */
static void answer_frame(int node, int relay, int id, const struct migrate_result *r)
{
    int64_t rec[6] = {r->tid, r->from, r->to, (int64_t)r->obtrusive_ns, (int64_t)r->bytes, 0};
    struct node_frame f = {K_MIG_DONE, id, r->rc, relay};
    node_post(node, &f, rec, sizeof rec, r->why, strlen(r->why) + 1);
}

/* A stage of a move, for the trace (util/trace.h: TRC_MIGRATE). */
static inline void trace_stage(int tid, enum trc_migrate_stage stage, int other, uint32_t b,
                               uint64_t bytes)
{
    trc_put(TRC_MIGRATE, (uint16_t)stage, (uint32_t)tid, (uint32_t)other, b, bytes);
}

static void finish_request(int id, struct migrate_result *r)
{
    list_for_each(l, &mig.requests) {
        struct request *q = list_entry(l, struct request, link);
        if (q->id != id)
            continue;
        list_unlink(l);
        r->total_ns = upvm_now_ns() - q->t0;
        q->done(q->ctx, r);
        free(q);
        return;
    }
}

/*
 * The answer to (origin, id): the local callback, or a frame.  A move's
 * answer to a third node goes through the node the task left: it then
 * follows, on the same ring, that node's K_MIG_MOVED notice, so the asker
 * has the new route (upvm_node_of) by the time it hears of the move.
 */
static void answer(int origin, int id, struct migrate_result *r)
{
    int self = node_job_self();
    pvm_trace("t%x: answer %d to node %d (request %d): %s", (unsigned)r->tid, r->rc, origin, id,
              r->why);
    trace_stage(r->tid, r->rc ? TRC_MIG_FAILED : TRC_MIG_ANSWERED, origin, (uint32_t)r->rc,
                r->bytes);
    if (origin == self)
        finish_request(id, r);
    else if (origin >= 0 && r->rc == 0 && r->from != self && r->from != origin &&
             node_job_up(r->from))
        answer_frame(r->from, origin, id, r);
    else if (origin >= 0)
        answer_frame(origin, -1, id, r);
}

static void refuse(int origin, int id, int tid, int rc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The task that asked to move itself, while its request is looked at. */
static struct self_wait *asking_self;

static void refuse(int origin, int id, int tid, int rc, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (origin < 0 && asking_self) {
        asking_self->rc = rc;
        snprintf(asking_self->why, sizeof asking_self->why, "%s", why);
        asking_self->done = true;
        return;
    }
    struct migrate_result r = {.rc = rc, .why = why, .tid = tid, .from = node_job_self(),
                               .to = -1};
    answer(origin, id, &r);
}

/* ------------------------------------------------------------ source */

static void kick(void);

/* The request for tid has reached the node that has it. */
static void accept_request_checked(int tid, int to, int origin, int id,
                                   struct self_wait *self);

/* A thread-mode ULP running code of the slot [lo, hi): a task a
 * process-mode program started with upvm_task_spawn_func or by the name
 * it registered (UPVM_TASK).  Its code and globals would leave with it. */
struct slot_user {
    const char *lo, *hi;
    const struct ulp *found;
};

static void find_slot_user(struct ulp *u, void *ctx)
{
    struct slot_user *s = ctx;
    if (s->found || u->state == ULP_DEAD || u->ext[ULP_EXT_PROC])
        return; /* a process-mode ULP runs its own slot's code */
    const char *fn = u->ordinal_entry ? (const char *)u->entry.ordinal
                                      : (const char *)u->entry.plain;
    const char *arg = u->arg;
    if ((fn >= s->lo && fn < s->hi) || (arg >= s->lo && arg < s->hi))
        s->found = u;
}

/* What keeps t on this node now, in why (false: nothing): a ULP waiting
 * to join it, files it holds, thread-mode tasks running its code.  Checked
 * when a move is asked for and again just before the freeze. */
static bool held_here(const struct pvm_task *t, const char *name, char *why, size_t len)
{
    struct proc *pr = t->ulp->ext[ULP_EXT_PROC];
    if (t->ulp->joining) {
        snprintf(why, len, "%s is waited for by another ULP of node %d (upvm_join): it "
                 "cannot leave it", name, node_job_self());
        return true;
    }
    if (core_ulp_has_state(t->ulp)) {
        snprintf(why, len, "%s is handling a C++ exception (in a catch block, or in a "
                 "destructor while one unwinds), whose objects are its node's memory: move it "
                 "once that has ended", name);
        return true;
    }
    const char *cxx = proc_cxx_pins(pr);
    if (cxx) {
        snprintf(why, len, "%s cannot move: %s", name, cxx);
        return true;
    }
    const char *files = proc_open_files(pr);
    if (files) {
        snprintf(why, len, "%s holds open files or sockets (%s): they do not migrate; close "
                 "them before it moves", name, files);
        return true;
    }
    const char *lo = mem_slot_base(mem_window(), pr->slot);
    struct slot_user s = {lo, lo + mem_window()->slot_size, NULL};
    core_for_each_ulp(find_slot_user, &s);
    if (s.found) {
        const struct pvm_task *h = s.found->ext[ULP_EXT_PVM];
        char who[64];
        if (h)
            snprintf(who, sizeof who, "t%x", (unsigned)h->tid);
        else
            snprintf(who, sizeof who, "ULP %d", s.found->id);
        snprintf(why, len, "%s has a thread-mode task, %s, running its program's code on node "
                 "%d (upvm_task_spawn_func or UPVM_TASK): it cannot leave while that task "
                 "lives", name, who, node_job_self());
        return true;
    }
    return false;
}

/* In a request's `to` (K_MIG_REQ's c): asked by the balancer, not by the
 * program or a user; those pin the task where they put it (t->placed). */
#define TO_BY_BALANCER (1 << 30)
#define TO_LAZY (1 << 29)

static const struct migrate_lazy_ops *lazy_ops;

void migrate_set_lazy_ops(const struct migrate_lazy_ops *ops)
{
    lazy_ops = ops;
}

static void accept_request(int tid, int to, int origin, int id, struct self_wait *self)
{
    bool by_balancer = (to & TO_BY_BALANCER) != 0;
    to &= ~TO_BY_BALANCER;
    struct pvm_task *t = pvm_task_by_tid(tid);
    if (t && !by_balancer)
        t->placed = true; /* the balancer leaves it where it is asked to be */
    pvm_trace("t%x: asked to move to node %d (by node %d)", (unsigned)tid, to, origin);
    trace_stage(tid, TRC_MIG_REQUEST, to, (uint32_t)origin, 0);
    asking_self = self;
    accept_request_checked(tid, to, origin, id, self);
    asking_self = NULL;
}

static void accept_request_checked(int tid, int to, int origin, int id,
                                   struct self_wait *self)
{
    struct pvm_task *t = pvm_task_by_tid(tid);
    bool lazy = (to & TO_LAZY) != 0;
    to &= ~TO_LAZY;
    char name[96];
    if (!t) {
        refuse(origin, id, tid, PvmNoTask, "no task t%x in this job", (unsigned)tid);
        return;
    }
    snprintf(name, sizeof name, "t%x (%s)", (unsigned)tid, *t->name ? t->name : "?");
    if (to < 0 || to >= node_job_slots() || !node_job_up(to)) {
        refuse(origin, id, tid, PvmBadParam, "%s cannot move to node %d: it is not a running "
               "node of this job (it has nodes 0 to %d)", name, to, node_job_slots() - 1);
        return;
    }
    if (to == node_job_self()) {
        struct migrate_result r = {.rc = 0, .why = "", .tid = tid, .from = to, .to = to};
        if (self)
            self->done = true;
        else
            answer(origin, id, &r);
        return;
    }
    if (!t->heap || !t->ulp->ext[ULP_EXT_PROC]) {
        refuse(origin, id, tid, PvmNotImpl, "%s is a thread-mode task: it shares its "
               "program's globals with the other tasks of node %d, so it cannot leave it "
               "(only process-mode tasks, programs built with upvmcc, migrate)", name,
               node_job_self());
        return;
    }
    if (t->moving) {
        refuse(origin, id, tid, PvmNotImpl, "%s is already being migrated", name);
        return;
    }
    struct proc *tp = t->ulp->ext[ULP_EXT_PROC];
    if (lazy_ops && lazy_ops->busy(tp->slot)) {
        refuse(origin, id, tid, PvmNotImpl, "%s's memory is still arriving from its last "
               "(lazy) move: it can move again once all of it is there (the rest is on its "
               "way now: ask again shortly)", name);
        return;
    }
    char why[600];
    if (lazy) {
        int rc = lazy_ops ? lazy_ops->possible(why, sizeof why) : -ENOSYS;
        if (rc != 0) {
            refuse(origin, id, tid, PvmNotImpl, "%s cannot move lazily: %s", name,
                   lazy_ops ? why : "this build has no shared-memory layer");
            return;
        }
    }
    if (held_here(t, name, why, sizeof why)) {
        refuse(origin, id, tid, PvmNotImpl, "%s", why);
        return;
    }
    struct pending *p = malloc(sizeof *p);
    if (!p) {
        refuse(origin, id, tid, PvmSysErr, "out of memory");
        return;
    }
    *p = (struct pending){.tid = tid, .to = to, .origin = origin, .id = id,
                          .t_src = upvm_now_ns(), .lazy = lazy};
    list_push_back(&mig.pendings, &p->link);
    t->moving = true;
    t->ulp->ext[ULP_EXT_MIGRATE] = self;
    t->ulp->migrate_pending = true;
    kick();
}

/* A loaded object's GNU build id (its note, in memory) folded into 64
 * bits; 0 when it has none. */
static uint64_t loaded_build_id(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t name = (nh->n_namesz + 3u) & ~3u, desc = (nh->n_descsz + 3u) & ~3u;
            if (name + desc > (size_t)(end - p) - sizeof *nh)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(p + sizeof *nh, "GNU", 4) == 0) {
                uint64_t h = 0xcbf29ce484222325ull;
                for (size_t k = 0; k < nh->n_descsz; k++)
                    h = (h ^ p[sizeof *nh + name + k]) * 0x100000001b3ull;
                return h;
            }
            p += sizeof *nh + name + desc;
        }
    }
    return 0;
}

/* The libraries of this node, where they are and which build each is:
 * "address id name" lines.  Not what the MPI transport loaded (MPI, its
 * components: no ULP code uses them, and the hosts may load different
 * ones). */
static int layout_line(struct dl_phdr_info *info, size_t size, void *ctx)
{
    struct bytes_out *w = ctx;
    if (!info->dlpi_name || !*info->dlpi_name || net_mpi_loaded_object(info->dlpi_name))
        return 0;
    char line[512];
    int n = snprintf(line, sizeof line, "%lx %" PRIx64 " %s\n", (unsigned long)info->dlpi_addr,
                     loaded_build_id(info), info->dlpi_name);
    if (n > 0 && (size_t)n < sizeof line)
        bytes_put(w, line, (size_t)n);
    return 0;
}

static void layout(struct bytes_out *w)
{
    dl_iterate_phdr(layout_line, w);
    bytes_put(w, "", 1);
}

/*
 * The next frame of a move is due within microseconds: spin for it rather
 * than sleep (a sleep and a wake-up on both sides cost more than a small
 * move itself).  Only where every node of this host has a core of its
 * own: otherwise a spinning node keeps its peer off the cpu it needs.
 */
#define MIGRATE_SPIN_NS (2 * 1000 * 1000)

static void expect_soon(void)
{
    cpu_set_t cpus;
    static int ncpus = -1;
    if (ncpus < 0)
        ncpus = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    /* the nodes that share this node's cpus: all of a one-host job's, the
     * ones of this host in a job of several (node_job_host) */
    const char *here = node_job_host(node_job_self());
    int running = 0;
    for (int n = 0; n < node_job_slots(); n++)
        running += node_job_up(n) && (!here || !strcmp(node_job_host(n), here));
    if (running <= ncpus)
        net_spin_until(upvm_now_ns() + MIGRATE_SPIN_NS);
}

/* Wait (the migrator) for the destination's answer about tid. */
static int wait_prepared(int tid, char *why, size_t len)
{
    mig.ack_tid = tid;
    mig.ack_done = false;
    expect_soon();
    while (!mig.ack_done)
        (void)core_block(&mig.acks, -1);
    snprintf(why, len, "%s", mig.ack_why);
    return mig.ack_rc;
}

/* Send [lo, lo + n) of the slot to `to` in chunks, a window at a time. */
static void stream(int to, int tid, const char *lo, size_t n, bool last, uint64_t *sent,
                   uint64_t t_src)
{
    for (size_t off = 0; off < n || (last && n == 0 && off == 0);) {
        size_t len = n - off < mig.chunk ? n - off : mig.chunk;
        while (*sent - mig.acked + len > mig.window && !mig.dest_gone) {
            expect_soon();
            (void)core_block(&mig.acks, -1);
        }
        if (mig.dest_gone)
            return;
        uint64_t head[2] = {(uint64_t)(uintptr_t)(lo + off), upvm_now_ns() - t_src};
        bool end = last && off + len == n;
        struct node_frame f = {K_MIG_DATA, tid, 0, end};
        struct iovec v[2] = {{head, sizeof head}, {(void *)(lo + off), len}};
        if (node_sendv(to, &f, v, 2) != 0) { /* past the point of no return: */
            mig.dest_gone = true;             /* the task is lost (move_task says so) */
            return;
        }
        *sent += len;
        off += len;
        if (len == 0)
            break;
    }
}

/* The window and chunk of a move to node `to`: half of what its path lets
 * be in flight (the other half: the frames of other tasks meanwhile), in
 * chunks of a quarter, so that the next chunk goes while the destination
 * takes one. */
static void use_path(int to)
{
    mig.window = net_path_budget(to) / 2;
    mig.chunk = mig.window / 2 < CHUNK_MAX ? mig.window / 2 : CHUNK_MAX;
    if (mig.chunk < 4096)
        mig.chunk = 4096;
    if (mig.window < mig.chunk)
        mig.window = mig.chunk;
}

/*
 * A lazy move (migrate_lazy_ops): what goes now is the task's used stack
 * (proc_move_ranges' PROC_MOVE_STACK, from its saved stack pointer up: the
 * frames it returns into, and the records the runtime keeps for a waiting
 * task, a few KiB as a rule); its writable image and its heap follow, in
 * whole pages.  The ranges that go now replace v; the rest lands in later.
 * Returns the number of ranges that go now.
 */
static int lazy_split(struct iovec *v, int n, struct iovec *later, int *nlater)
{
    const uintptr_t pg = 4096;
    *nlater = 0;
    for (int i = 0; i < n; i++) {
        if (i == PROC_MOVE_STACK || !v[i].iov_len)
            continue;
        uintptr_t lo = (uintptr_t)v[i].iov_base & ~(pg - 1);
        uintptr_t hi = ((uintptr_t)v[i].iov_base + v[i].iov_len + pg - 1) & ~(pg - 1);
        later[(*nlater)++] = (struct iovec){(void *)lo, hi - lo};
    }
    v[0] = v[PROC_MOVE_STACK];
    return 1;
}

/* Move the task of p now (it is not running).  Returns true when done
 * (moved or refused), false when it must wait (it ran meanwhile). */
static bool move_task(struct pending *p)
{
    struct pvm_task *t = pvm_task_by_tid(p->tid);
    struct ulp *u = t->ulp;
    struct proc *pr = u->ext[ULP_EXT_PROC];
    struct self_wait *self = u->ext[ULP_EXT_MIGRATE];
    char why[512] = "";
    int rc = 0;
    mig.talking_to = p->to;
    mig.dest_gone = !node_job_up(p->to);
    use_path(p->to);
    if (!p->prepared) {
        struct proc_move info;
        proc_move_info(pr, &info);
        struct bytes_out w = {0};
        int32_t who[2] = {p->origin, p->id}; /* the destination answers if we die */
        bytes_put(&w, who, sizeof who);
        bytes_put(&w, &info, sizeof info);
        layout(&w);
        struct node_frame f = {K_MIG_PREP, p->tid, 0, 0};
        pvm_trace("t%x: asking node %d to prepare", (unsigned)p->tid, p->to);
        trace_stage(p->tid, TRC_MIG_PREPARE_ASKED, p->to, 0, 0);
        rc = w.oom ? PvmNoMem : node_send(p->to, &f, w.p, w.len, NULL, 0);
        free(w.p);
        if (rc == -EHOSTDOWN) { /* it died since the request came */
            rc = PvmHostFail;
            snprintf(why, sizeof why, "node %d died before t%x could move there", p->to,
                     (unsigned)p->tid);
        } else {
            rc = rc ? (rc == PvmNoMem ? PvmNoMem : PvmSysErr)
                    : wait_prepared(p->tid, why, sizeof why);
        }
        p->prepared = rc == 0;
    }
    /* the task may have run, or ended, while we waited */
    t = pvm_task_by_tid(p->tid);
    bool held = false;
    if (rc == 0 && t) { /* what it may have started or opened since it was asked */
        char name[300];
        snprintf(name, sizeof name, "t%x (%s)", (unsigned)t->tid, *t->name ? t->name : "?");
        held = held_here(t, name, why, sizeof why);
    }
    if (rc == 0 && t && !held) {
        test_pause("src:prepared");
        if (!node_job_alive(p->to)) { /* it died since it said yes: the task stays */
            rc = PvmHostFail;
            snprintf(why, sizeof why, "node %d died before t%x could move there", p->to,
                     (unsigned)p->tid);
        }
    }
    if (rc != 0 || !t || held) {
        if (rc == 0) { /* it ended, or stays: the destination lets go */
            struct node_frame c = {K_MIG_PREP, p->tid, 1, 0};
            node_post(p->to, &c, NULL, 0, NULL, 0);
        }
        if (held)
            rc = PvmNotImpl;
        if (t) {
            t->moving = false;
            t->ulp->migrate_pending = false;
            t->ulp->ext[ULP_EXT_MIGRATE] = NULL;
        }
        if (self && t) {
            self->rc = rc ? rc : PvmNoTask;
            snprintf(self->why, sizeof self->why, "%s", why);
            self->done = true;
        }
        if (!self)
            refuse(p->origin, p->id, p->tid, t ? rc : PvmNoTask, "%s",
                   t ? why : "the task ended before it could move");
        return true;
    }
    u = t->ulp;
    const char *slot_lo = mem_slot_base(mem_window(), pr->slot);
    if (core_ulp_why_not_freezable(u, slot_lo, slot_lo + mem_window()->slot_size)) {
        u->migrate_pending = true; /* prepared: moves at its next stop */
        return false;
    }
    /* 3: freeze, flush, state */
    struct bytes_out st = {0};
    if (pvm_move_pack(t, &st) != 0) {
        free(st.p);
        struct node_frame c = {K_MIG_PREP, p->tid, 1, 0};
        node_post(p->to, &c, NULL, 0, NULL, 0);
        t->moving = false;
        u->migrate_pending = false;
        refuse(p->origin, p->id, p->tid, PvmNoMem, "out of memory");
        return true;
    }
    proc_move_out(pr);
    struct core_frozen frozen;
    pvm_trace("t%x: frozen (state %d) for node %d", (unsigned)p->tid, u->state, p->to);
    core_ulp_freeze(u, &frozen);
    frozen.u.migrate_pending = false;
    struct iovec ranges[PROC_MOVE_RANGES], later[PROC_MOVE_RANGES + 1];
    int nr = proc_move_ranges(pr, &frozen.u, ranges), nlater = 0;
    if (p->lazy)
        nr = lazy_split(ranges, nr, later, &nlater);
    uint64_t total = 0;
    for (int i = 0; i < nr; i++)
        total += ranges[i].iov_len;
    trace_stage(p->tid, TRC_MIG_FROZEN, p->to, frozen.u.state, total);
    pvm_move_release(t);
    uint64_t told = pvm_route_moved(p->tid, p->to);
    int64_t meta[6] = {p->origin, p->id, (int64_t)told, (int64_t)total, nlater, 0};
    struct node_frame sf = {K_MIG_STATE, p->tid, 0, 0};
    struct iovec sv[4] = {{&frozen, sizeof frozen}, {meta, sizeof meta}, {st.p, st.len},
                          {later, (size_t)nlater * sizeof *later}};
    if (node_sendv(p->to, &sf, sv, 4) != 0)
        mig.dest_gone = true; /* frozen, its state not sent: lost, said below */
    trace_stage(p->tid, TRC_MIG_STATE_SENT, p->to, 0, sv[0].iov_len + sv[1].iov_len + sv[2].iov_len);
    test_pause("src:frozen");
    free(st.p);
    uint64_t sent = 0;
    mig.acked = 0;
    mig.ack_tid = p->tid;
#if UPVM_ASAN
    for (int i = 0; i < nr; i++) /* free heap blocks are poisoned: they travel too */
        ASAN_UNPOISON_MEMORY_REGION(ranges[i].iov_base, ranges[i].iov_len);
#endif
    for (int i = 0; i < nr; i++)
        stream(p->to, p->tid, ranges[i].iov_base, ranges[i].iov_len, i == nr - 1, &sent,
               p->t_src);
    trace_stage(p->tid, TRC_MIG_DATA_SENT, p->to, 0, sent);
    test_pause("src:sent");
    uint64_t obtrusive = upvm_now_ns() - p->t_src;
    /* A lazy move: the rest of its memory leaves from here, from now on
     * (restarting it there may touch some), and the slot goes once it has
     * (or once that node died). */
    if (nlater)
        lazy_ops->serve(p->tid, pr->slot, pr->inst.img, p->to, later, nlater);
    /* Until the destination says the task runs there (its last
     * acknowledgement), its death loses the task, and this node says so. */
    while (mig.acked < sent && !mig.dest_gone) {
        expect_soon();
        (void)core_block(&mig.acks, -1);
    }
    if (!nlater)
        proc_move_gone(pr->slot, pr->inst.img);
    if (mig.dest_gone) { /* its state left with the frames that node never took */
        fprintf(stderr, "upvm: node %d: t%x is lost: node %d died while the task moved "
                        "there\n", node_job_self(), (unsigned)p->tid, p->to);
        pvm_task_lost(p->tid);
        if (!self)
            refuse(p->origin, p->id, p->tid, PvmHostFail,
                   "node %d died while t%x moved there: the task is lost", p->to,
                   (unsigned)p->tid);
    }
    mig.talking_to = -1;
    mig.last.obtrusive_ns = obtrusive;
    return true;
}

static void migrator_main(void *unused)
{
    bool progress = true;
    while (progress) {
        progress = false;
        for (list_link_t *l = mig.pendings.next, *next; l != &mig.pendings; l = next) {
            next = l->next;
            struct pending *p = list_entry(l, struct pending, link);
            struct pvm_task *t = pvm_task_by_tid(p->tid);
            if (!t) {
                list_unlink(l);
                refuse(p->origin, p->id, p->tid, PvmNoTask, "t%x ended before it could move",
                       (unsigned)p->tid);
                free(p);
                continue;
            }
            struct proc *pr = t->ulp->ext[ULP_EXT_PROC];
            const char *lo = mem_slot_base(mem_window(), pr->slot);
            if (pvm_route_flushing(p->tid) ||
                core_ulp_why_not_freezable(t->ulp, lo, lo + mem_window()->slot_size)) {
                t->ulp->migrate_pending = true; /* it kicks us when it stops */
                continue;
            }
            list_unlink(l);
            if (move_task(p)) {
                free(p);
                progress = true;
            } else {
                list_push_back(&mig.pendings, l);
            }
            break; /* the list may have changed while we waited */
        }
    }
    mig.migrator = NULL;
}

static void kick(void)
{
    if (mig.migrator)
        return;
    upvm_attr_t a = {0, "upvm migrator", UPVM_DETACHED};
    upvm_id_t id = upvm_create(migrator_main, NULL, &a);
    mig.migrator = id > 0 ? core_ulp_lookup(id) : NULL;
}

static void on_hook(struct ulp *u)
{
    u->migrate_pending = false; /* until the migrator looks again */
    kick();
}

static void on_flushed(int tid)
{
    list_for_each(l, &mig.pendings) {
        if (list_entry(l, struct pending, link)->tid == tid) {
            kick();
            return;
        }
    }
}

/* ------------------------------------------------------------ destination */

static struct incoming *incoming_of(int tid)
{
    list_for_each(l, &mig.incomings) {
        struct incoming *in = list_entry(l, struct incoming, link);
        if (in->tid == tid)
            return in;
    }
    return NULL;
}

/* One "address id name" line of a layout: false when malformed. */
static bool layout_parse(const char *line, const char *nl, unsigned long *addr, uint64_t *id,
                         const char **name, size_t *nlen)
{
    char *end;
    *addr = strtoul(line, &end, 16);
    if (*end != ' ')
        return false;
    *id = strtoull(end + 1, &end, 16);
    if (*end != ' ' || end >= nl)
        return false;
    *name = end + 1;
    *nlen = (size_t)(nl - *name);
    return true;
}

/* My line for the library called name (its length nlen), or NULL. */
static const char *layout_find(const char *mine, const char *name, size_t nlen)
{
    for (const char *m = mine; m && *m;) {
        /* the name is what follows the second space */
        const char *mn = strchr(m, '\n'), *first = strchr(m, ' ');
        const char *second = first ? strchr(first + 1, ' ') : NULL;
        if (!mn || !second || second > mn)
            return NULL;
        if ((size_t)(mn - second - 1) == nlen && memcmp(second + 1, name, nlen) == 0)
            return m;
        m = mn + 1;
    }
    return NULL;
}

/* Is every library of the source's list (layout_line) here, at the same
 * address, the same build (its build id)?  Libraries loaded on one side
 * only do not count: a program's own are loaded here by now
 * (proc_move_prepare), at an address of this node's.  False with the
 * first that differs described in why. */
static bool layout_matches(const char *theirs, char *why, size_t len)
{
    struct bytes_out mine = {0};
    layout(&mine);
    bool ok = !mine.oom;
    for (const char *line = theirs; ok && *line;) {
        const char *nl = strchr(line, '\n'), *name;
        unsigned long addr, here_addr;
        uint64_t id, here_id;
        size_t nlen, hl;
        if (!nl || !layout_parse(line, nl, &addr, &id, &name, &nlen))
            break;
        const char *at = layout_find((const char *)mine.p, name, nlen), *hn;
        line = nl + 1;
        if (!at || !layout_parse(at, strchr(at, '\n'), &here_addr, &here_id, &hn, &hl))
            continue;
        if (here_addr != addr) {
            snprintf(why, len, "the nodes' library layouts differ: %.*s is at %#lx on the "
                     "source node and at %#lx on node %d; migration needs every library at "
                     "the same address (the same installation on every host, started alike)",
                     (int)nlen, name, addr, here_addr, node_job_self());
            ok = false;
        } else if (here_id != id) {
            const char *host = node_job_host(node_job_self());
            snprintf(why, len, "%.*s is another build on node %d (%s) than on the source "
                     "node: migration needs the same libraries on every host", (int)nlen, name,
                     node_job_self(), host ? host : "this host");
            ok = false;
        }
    }
    free(mine.p);
    return ok;
}

static void prep_answer(int src, int tid, int rc, const char *why)
{
    struct node_frame f = {K_MIG_PREP_ACK, tid, rc, 0};
    pvm_trace("t%x: prepared (%d)", (unsigned)tid, rc);
    node_post(src, &f, why, strlen(why) + 1, NULL, 0);
}

static void on_prep(int src, const struct node_frame *f, const void *p, size_t len)
{
    ensure();
    expect_soon(); /* the state and the data follow */
    struct incoming *in = incoming_of(f->a);
    if (f->b == 1) { /* cancelled */
        if (in) {
            proc_move_cancel(in->slot, in->img);
            pvm_route_unexpect(in->tid);
            list_unlink(&in->link);
            free(in);
        }
        return;
    }
    struct proc_move m;
    int32_t who[2];
    char why[512] = "";
    if (len < sizeof who + sizeof m || in) {
        prep_answer(src, f->a, PvmSysErr, "a malformed or repeated migration request");
        return;
    }
    memcpy(who, p, sizeof who);
    memcpy(&m, (const char *)p + sizeof who, sizeof m);
    m.path[sizeof m.path - 1] = '\0';
    const char *lines = (const char *)p + sizeof who + sizeof m;
    if (((const char *)p)[len - 1] != '\0') {
        prep_answer(src, f->a, PvmSysErr, "a malformed migration request");
        return;
    }
    struct loader_error err = {0, ""};
    struct loader_image *img = NULL;
    pvm_trace("t%x: preparing slot %d", (unsigned)f->a, m.slot);
    if (proc_move_prepare(&m, &img, &err) != 0) {
        snprintf(why, sizeof why, "node %d cannot take t%x: %.400s", node_job_self(),
                 (unsigned)f->a, err.msg);
        prep_answer(src, f->a, PvmNotImpl, why);
        return;
    }
    if (!layout_matches(lines, why, sizeof why) || pvm_route_expect(f->a) != 0 ||
        !(in = calloc(1, sizeof *in))) {
        proc_move_cancel(m.slot, img);
        prep_answer(src, f->a, PvmNotImpl, *why ? why : "out of memory");
        return;
    }
    *in = (struct incoming){.tid = f->a, .from = src, .slot = m.slot, .img = img,
                            .origin = who[0], .id = who[1]};
    list_push_back(&mig.incomings, &in->link);
    trace_stage(f->a, TRC_MIG_SLOT_READY, src, (uint32_t)m.slot, 0);
    prep_answer(src, f->a, 0, "");
    test_pause("dst:prepared");
}

static void on_prep_ack(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (f->a != mig.ack_tid)
        return;
    pvm_trace("t%x: node %d prepared (%d)", (unsigned)f->a, src, f->b);
    trace_stage(f->a, TRC_MIG_PREPARED, src, (uint32_t)f->b, 0);
    mig.ack_rc = f->b;
    snprintf(mig.ack_why, sizeof mig.ack_why, "%.*s", (int)(len ? len - 1 : 0), (const char *)p);
    mig.ack_done = true;
    (void)core_wake_one(&mig.acks);
}

static void on_state(int src, const struct node_frame *f, const void *p, size_t len)
{
    expect_soon();
    struct incoming *in = incoming_of(f->a);
    int64_t meta[6];
    if (!in || len < sizeof in->core + sizeof meta)
        return;
    memcpy(&in->core, p, sizeof in->core);
    memcpy(meta, (const char *)p + sizeof in->core, sizeof meta);
    in->origin = (int)meta[0];
    in->id = (int)meta[1];
    in->told = (uint64_t)meta[2];
    in->expect = (uint64_t)meta[3];
    in->nlazy = meta[4] > 0 && meta[4] <= PROC_MOVE_RANGES + 1 ? (int)meta[4] : 0;
    size_t lazy_len = (size_t)in->nlazy * sizeof *in->lazy;
    if (len < sizeof in->core + sizeof meta + lazy_len)
        return;
    memcpy(in->lazy, (const char *)p + len - lazy_len, lazy_len);
    in->pvmlen = len - sizeof in->core - sizeof meta - lazy_len;
    /* a lazy move: the source may send the rest from now on */
    if (in->nlazy)
        in->lazy_rc = lazy_ops ? lazy_ops->expect(in->tid, in->slot, in->from, in->lazy,
                                                  in->nlazy)
                               : -ENOSYS;
    in->pvm = malloc(in->pvmlen ? in->pvmlen : 1);
    if (in->pvm)
        memcpy(in->pvm, (const char *)p + sizeof in->core + sizeof meta, in->pvmlen);
    in->have_state = true;
    trace_stage(in->tid, TRC_MIG_ARRIVED, src, 0, in->expect);
    test_pause("dst:state");
}

/* 4: the last byte came: the task runs here now. */
static void restart(struct incoming *in)
{
    struct ulp *u;
    char why[512] = "";
    int rc = in->pvm ? in->lazy_rc : -ENOMEM;
    /* a lazy move restarts in a ULP that may wait for pages: the task stays
     * parked until its state is whole */
    if (rc == 0)
        rc = in->nlazy ? core_ulp_thaw_parked(&in->core, &u) : core_ulp_thaw(&in->core, &u);
    if (rc == 0) {
        struct proc *pr = u->ext[ULP_EXT_PROC];
        struct pvm_task *t = u->ext[ULP_EXT_PVM];
        trace_stage(in->tid, TRC_MIG_RESTARTED, in->from, 0, in->got);
        proc_move_in(pr, u, in->img);
        const char *lo = mem_slot_base(mem_window(), in->slot);
        rc = pvm_move_unpack(t, u, in->pvm, in->pvmlen, lo, lo + mem_window()->slot_size);
        if (rc != 0)
            snprintf(why, sizeof why, "t%x arrived on node %d but its PVM state did not "
                     "(%s): it may have lost messages", (unsigned)in->tid, node_job_self(),
                     pvm_errtext(rc));
        pvm_route_arrived(in->tid, in->told);
        struct self_wait *self = u->ext[ULP_EXT_MIGRATE];
        u->ext[ULP_EXT_MIGRATE] = NULL;
        if (self) {
            self->rc = rc;
            snprintf(self->why, sizeof self->why, "%s", why);
            self->stats = (struct upvm_migrate_stats){upvm_now_ns() - self->t0,
                                                      in->obtrusive_ns, in->got};
            self->done = true;
        }
        if (in->nlazy)
            core_ulp_unpark(u, &in->core);
    } else {
        snprintf(why, sizeof why, "node %d has no memory for t%x: it is lost",
                 node_job_self(), (unsigned)in->tid);
        fprintf(stderr, "upvm: %s\n", why);
    }
    struct migrate_result r = {.rc = rc, .why = why, .tid = in->tid, .from = in->from,
                               .to = node_job_self(), .obtrusive_ns = in->obtrusive_ns,
                               .bytes = in->got};
    answer(in->origin, in->id, &r);
    list_unlink(&in->link);
    free(in->pvm);
    free(in);
}

/* A lazy move restarts the task in a ULP of its own, not in the frame
 * handler: its memory is not all here, and restarting touches it (the
 * task's records of its waits, its streams), which may fault -- a ULP can
 * wait for a page, a frame handler cannot. */
static void restarter_main(void *arg)
{
    struct incoming *in = arg;
    int from = in->from, tid = in->tid;
    uint64_t got = in->got;
    restart(in);
    struct node_frame a = {K_MIG_ACK, tid, 0, 0};
    node_post(from, &a, &got, sizeof got, NULL, 0);
}

static bool start_restarter(struct incoming *in)
{
    upvm_attr_t attr = {.name = "upvm-lazy-restart", .flags = UPVM_DETACHED};
    in->restarting = upvm_create(restarter_main, in, &attr) > 0;
    return in->restarting;
}

static void on_data(int src, const struct node_frame *f, const void *p, size_t len)
{
    struct incoming *in = incoming_of(f->a);
    uint64_t head[2];
    if (!in || !in->have_state || len < sizeof head)
        return;
    memcpy(head, p, sizeof head);
    size_t n = len - sizeof head;
    char *to = (char *)(uintptr_t)head[0];
    const char *lo = mem_slot_base(mem_window(), in->slot);
    if (to < lo || to + n > lo + mem_window()->slot_size) {
        fprintf(stderr, "upvm: node %d: migration data for t%x outside its slot: dropped\n",
                node_job_self(), (unsigned)in->tid);
        return;
    }
    util_copy(to, (const char *)p + sizeof head, n);
    in->got += n;
    in->obtrusive_ns = head[1];
    struct node_frame a = {K_MIG_ACK, f->a, 0, 0};
    uint64_t got = in->got;
    if (!f->c) {
        node_post(src, &a, &got, sizeof got, NULL, 0);
        expect_soon(); /* more */
        return;
    }
    /* The last acknowledgement says the task runs here: until then the
     * source answers for it (move_task). */
    test_pause("dst:data");
    if (in->nlazy && start_restarter(in))
        return;
    restart(in);
    node_post(src, &a, &got, sizeof got, NULL, 0);
}

static void on_ack(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (f->a != mig.ack_tid || len != sizeof mig.acked)
        return;
    memcpy(&mig.acked, p, sizeof mig.acked);
    (void)core_wake_one(&mig.acks);
}

/* ------------------------------------------------------------ requests */

static void on_req(int src, const struct node_frame *f, const void *p, size_t len)
{
    int32_t origin;
    if (len != sizeof origin || !pvm_route_here(src, f, p, len, f->a))
        return;
    memcpy(&origin, p, sizeof origin);
    ensure();
    accept_request(f->a, f->c, origin, f->b, NULL);
}

static void on_done(int src, const struct node_frame *f, const void *p, size_t len)
{
    int64_t rec[6];
    if (len < sizeof rec + 1)
        return;
    memcpy(rec, p, sizeof rec);
    const char *why = (const char *)p + sizeof rec;
    if (why[len - sizeof rec - 1] != '\0')
        return;
    struct migrate_result r = {.rc = f->b, .why = why, .tid = (int)rec[0], .from = (int)rec[1],
                               .to = (int)rec[2], .obtrusive_ns = (uint64_t)rec[3],
                               .bytes = (uint64_t)rec[4]};
    if (f->c >= 0 && f->c != node_job_self())
        answer_frame(f->c, -1, f->a, &r); /* through here, behind K_MIG_MOVED */
    else
        finish_request(f->a, &r);
}

static void register_frames(void)
{
    node_on_frame(K_MIG_REQ, on_req);
    node_on_frame(K_MIG_DONE, on_done);
    node_on_frame(K_MIG_PREP, on_prep);
    node_on_frame(K_MIG_PREP_ACK, on_prep_ack);
    node_on_frame(K_MIG_STATE, on_state);
    node_on_frame(K_MIG_DATA, on_data);
    node_on_frame(K_MIG_ACK, on_ack);
}

void migrate_init(void)
{
    if (pvm_multi())
        ensure();
}

static int request_async(int tid, int to, migrate_done_fn done, void *ctx);

int migrate_request_async(int tid, int to, migrate_done_fn done, void *ctx)
{
    return request_async(tid, to, done, ctx);
}

int migrate_request_balance(int tid, int to, migrate_done_fn done, void *ctx)
{
    return request_async(tid, to | TO_BY_BALANCER, done, ctx);
}

int migrate_request_lazy(int tid, int to, migrate_done_fn done, void *ctx)
{
    return request_async(tid, to | TO_LAZY, done, ctx);
}

static int request_async(int tid, int to, migrate_done_fn done, void *ctx)
{
    if (!pvm_multi())
        return -ENOSYS;
    ensure();
    struct request *q = malloc(sizeof *q);
    if (!q)
        return -ENOMEM;
    *q = (struct request){.id = ++mig.next_id, .tid = tid, .to = to & ~(TO_BY_BALANCER | TO_LAZY),
                          .node = node_job_self(),
                          .done = done, .ctx = ctx, .t0 = upvm_now_ns()};
    list_push_back(&mig.requests, &q->link);
    if (pvm_task_by_tid(tid)) {
        accept_request(tid, to, node_job_self(), q->id, NULL);
        return 0;
    }
    int node = pvm_tid_node(tid);
    int32_t origin = node_job_self();
    struct node_frame f = {K_MIG_REQ, tid, q->id, to};
    q->node = node;
    expect_soon(); /* the answer */
    /* a tid whose route ends here is not here: no such task */
    if (node < 0 || node == origin || !node_job_up(node) ||
        node_send(node, &f, &origin, sizeof origin, NULL, 0) != 0) {
        list_unlink(&q->link);
        free(q);
        return -ESRCH;
    }
    return 0;
}

/* ------------------------------------------------------------ a node's death */

/* Drop a move into this node from a node that died: the task is lost with
 * its source (what arrived of it is not enough to run it). */
static void drop_incoming(struct incoming *in)
{
    char why[160];
    snprintf(why, sizeof why, "t%x is lost: node %d died while the task moved to node %d",
             (unsigned)in->tid, in->from, node_job_self());
    fprintf(stderr, "upvm: node %d: %s\n", node_job_self(), why);
    if (in->nlazy && lazy_ops)
        lazy_ops->forget(in->slot);
    proc_move_cancel(in->slot, in->img);
    pvm_route_unexpect(in->tid);
    pvm_task_lost(in->tid); /* its watchers hear of it as of an exit */
    struct migrate_result r = {.rc = PvmHostFail, .why = why, .tid = in->tid, .from = in->from,
                               .to = node_job_self()};
    answer(in->origin, in->id, &r);
    list_unlink(&in->link);
    free(in->pvm);
    free(in);
}

/* Node n is gone: nothing it was to send or answer comes.  Waits on it
 * end with PvmHostFail, moves from it are dropped. */
static int on_peer_gone(int n, int status, bool deleted)
{
    if (mig.talking_to == n) {
        mig.dest_gone = true;
        if (!mig.ack_done) {
            mig.ack_rc = PvmHostFail;
            snprintf(mig.ack_why, sizeof mig.ack_why,
                     "node %d died before it could take the task", n);
            mig.ack_done = true;
        }
        (void)upvm_wake_all(&mig.acks);
    }
    for (list_link_t *l = mig.incomings.next, *next; l != &mig.incomings; l = next) {
        next = l->next;
        struct incoming *in = list_entry(l, struct incoming, link);
        if (in->from == n && !in->restarting)
            drop_incoming(in);
    }
    for (list_link_t *l = mig.requests.next, *next; l != &mig.requests; l = next) {
        next = l->next;
        struct request *q = list_entry(l, struct request, link);
        if (q->node != n)
            continue;
        char why[160];
        snprintf(why, sizeof why, "node %d died before it answered: t%x may be lost", n,
                 (unsigned)q->tid);
        struct migrate_result r = {.rc = PvmHostFail, .why = why, .tid = q->tid, .from = n,
                                   .to = q->to};
        finish_request(q->id, &r);
    }
    return 0;
}

/* ------------------------------------------------------------ public API */

struct sync_wait {
    bool done;
    struct migrate_result r;
};

static void sync_done(void *ctx, const struct migrate_result *r)
{
    struct sync_wait *w = ctx;
    w->r = *r;
    snprintf(mig.why, sizeof mig.why, "%s", r->why);
    w->r.why = mig.why;
    w->done = true;
    (void)upvm_wake_all(&mig.answers);
}

static int migrate_self(struct pvm_task *t, int to, int flags)
{
    struct self_wait w = {.t0 = upvm_now_ns()};
    accept_request(t->tid, to | flags, -1, 0, &w);
    while (!w.done)
        upvm_yield(); /* the migrator takes it from here */
    snprintf(mig.why, sizeof mig.why, "%s", w.why);
    if (w.rc == 0)
        mig.last = w.stats;
    return w.rc;
}

static int migrate_api(int tid, int node, int flags)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return PvmSysErr;
    mig.why[0] = '\0';
    if (tid == 0)
        tid = t->tid;
    if (!pvm_is_task_tid(tid)) {
        snprintf(mig.why, sizeof mig.why, "%d is not a task id", tid);
        return PvmBadParam;
    }
    int nodes = upvm_nodes();
    if (node < 0 || node >= nodes || (pvm_multi() && !node_job_up(node))) {
        snprintf(mig.why, sizeof mig.why, "t%x cannot move to node %d: it is not a running node "
                 "of this job (nodes 0 to %d)", (unsigned)tid, node, nodes - 1);
        return PvmBadParam;
    }
    if (!pvm_multi()) {
        if (!pvm_task_by_tid(tid)) {
            snprintf(mig.why, sizeof mig.why, "no task t%x in this job", (unsigned)tid);
            return PvmNoTask;
        }
        return 0; /* one node: it is there */
    }
    ensure();
    if (tid == t->tid) {
        if (!t->heap) {
            snprintf(mig.why, sizeof mig.why, "t%x is a thread-mode task: it shares its "
                     "program's globals with the other tasks of node %d, so it cannot leave "
                     "it", (unsigned)tid, node_job_self());
            return PvmNotImpl;
        }
        /* A move the balancer asked for may have it already: let that one
         * take it (a sleep is a stop), then go where the program says. */
        for (int waited = 0; t->moving && waited < 5000; waited++)
            (void)upvm_sleep_ns(1000000);
        t = pvm_current(); /* perhaps on another node now */
        if (node == node_job_self())
            return 0;
        return migrate_self(t, node, flags);
    }
    struct sync_wait w = {false};
    int rc = request_async(tid, node | flags, sync_done, &w);
    if (rc != 0) {
        if (rc == -ESRCH)
            snprintf(mig.why, sizeof mig.why, "no task t%x in this job", (unsigned)tid);
        else
            snprintf(mig.why, sizeof mig.why, "cannot ask for t%x's move: %s", (unsigned)tid,
                     strerror(-rc));
        return pvm_code_from_errno(rc);
    }
    while (!w.done)
        (void)core_block(&mig.answers, -1);
    if (w.r.rc == 0)
        mig.last = (struct upvm_migrate_stats){w.r.total_ns, w.r.obtrusive_ns, w.r.bytes};
    return w.r.rc;
}

int upvm_migrate(int tid, int node)
{
    return migrate_api(tid, node, 0);
}

int upvm_migrate_lazy(int tid, int node)
{
    return migrate_api(tid, node, TO_LAZY);
}

const char *upvm_migrate_error(void)
{
    return mig.why;
}

void upvm_migrate_point(void)
{
    if (!core_on_sched_thread)
        return;
    /* A request comes as a frame, and a task that computes is all its node
     * runs: nobody else looks at the transport (a look is a few loads of
     * the rings' heads). */
    if (core_sched.idle)
        core_sched.idle->poll();
    /* While its move is under way (the migrator waits for the destination
     * between steps), every point lets the migrator go on. */
    struct ulp *me = core_current();
    const struct pvm_task *t = me->ext[ULP_EXT_PVM];
    if (unlikely(me->migrate_pending || (t && t->moving)))
        upvm_yield();
}

int upvm_node_of(int tid)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return -1;
    if (tid == 0 || tid == t->tid || pvm_task_by_tid(tid))
        return node_job_self();
    if (!pvm_multi() || !pvm_is_task_tid(tid))
        return -1;
    /* The route alone would name the home of a task that has ended, or
     * of a tid never used: the node it leads to says whether it is there
     * (a round trip, which follows the task if it is moving). */
    if (pvm_remote_pstat(tid) != PvmOk)
        return -1;
    return pvm_tid_node(tid);
}

int upvm_nodes(void)
{
    if (core_enter() != 0 || !pvm_multi())
        return 1;
    int n = 0;
    for (int i = 0; i < node_job_slots(); i++)
        if (node_job_up(i))
            n = i + 1;
    return n;
}

int upvm_migrate_stats(struct upvm_migrate_stats *out)
{
    if (!out)
        return PvmBadParam;
    *out = mig.last;
    return 0;
}
