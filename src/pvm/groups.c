/*
 * groups.c - the PVM 3 group library (libgpvm3): joingroup, lvgroup,
 * getinst, gettid, gsize, barrier, bcast, reduce (and the PvmMax, PvmMin,
 * PvmSum, PvmProduct operators), gather, scatter, freezegroup, and the
 * undocumented pvm_grphostinfo, pvm_grpvhostinfo and pvm_gsdump.
 *
 * PVM keeps groups in a server task (pvmgs) that every call asks by
 * message.  Here there is no server: the groups are node-level structures
 * the calling task reads and changes directly (everything runs on the
 * node's scheduler thread, so nothing locks).  What pvmgs did stays
 * observable in the same way (docs/reference/pvm-probed-semantics.md,
 * section 11, and the pvmgs sources):
 *
 *   - a group is created by its first join and deleted when its last
 *     member leaves; members hold the lowest free instance number.  The
 *     instance table grows by 10 slots and never shrinks, as pvmgs's does,
 *     because pvm_getinst(g, -1) reports its first free slot (-1 is the
 *     free-slot marker there: a PVM bug kept on purpose).
 *   - a barrier's count is fixed by its first caller (-1: the group's size
 *     then); a caller with another count gets PvmMismatch at once and is
 *     not counted.  More arrivals than the count (count 0, or < -1) poison
 *     the group's barrier: every later barrier is PvmMismatch until the
 *     group is deleted.  We keep that quirk: programs may test for it.
 *   - freezegroup works like a barrier that makes the group static: no one
 *     may join it any more; when a member of a static group leaves, the
 *     group is dead: waiting barriers end with PvmNoGroup, so do later
 *     barriers, and the broadcasts, gathers and scatters of tasks that do
 *     not know the group as static.
 *   - every task keeps a copy of each static group it heard of, as
 *     libgpvm3 does (see "a task's static groups" below): the members of a
 *     static group go on seeing its frozen membership after one of them
 *     left or exited.
 *   - a task that ends leaves all its groups (pvmgs is notified of its
 *     exit); a barrier it was counted in keeps counting it.
 *   - group calls never print: they only set pvm_errno (freezegroup not
 *     even that).  reduce, gather and scatter are in libgpvm3 itself and do
 *     report through PvmAutoErr as "pvm_reduce(): ...".
 *
 * bcast is pvm_mcast to the other members (one shared message).  reduce,
 * gather and scatter are message based, as in libgpvm3: contributions are
 * messages with the user's tag in PVM's system context for groups
 * (SYSCTX_DG), so a member's contribution never blocks it; the root (and
 * for reduce, the member that coordinates its host) receives them.  reduce
 * reduces per host first, at the host's coordinator (its lowest tid), as
 * PVM does; the coordinator's data array ends up holding its host's
 * result.  Contributions travel as PvmDataRaw (PVM uses XDR, which cuts
 * longs to 32 bits).
 *
 * In a job of several nodes the table lives on node 0 (pvmgs's place).
 * Changes (join, leave, barrier, freeze, a task's end) are requests to
 * it, answered when done, so a barrier's waiters on other nodes block on
 * their answer; reads (gsize, gettid, getinst, bcast's and gather's
 * member lists, reduce's plan) work on a copy of the group it sends.  The
 * data messages go task to task as on one node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvm/pvm.h"
#include "pvm/tev.h"
#include "pvm/remote.h"

/* PVM's SYSCTX_DG: the context of the group library's own messages. */
#define GRP_CTX        0x7fffc
/* Instance table growth (pvmgs's DELTANTIDS) and its free-slot marker. */
#define GRP_TABLE_STEP 10
#define GRP_FREE       (-1)
/* Contributions' encoding (see above). */
#define GRP_ENCODING   PvmDataRaw

enum grp_state { GRP_DYNAMIC, GRP_STATIC, GRP_STATIC_DEAD };

/* A task blocked in pvm_barrier or pvm_freezegroup, linked in the
 * group's list until released: the request to answer (a node 0 task asks
 * its own node the same way, so that a waiting task can move, remote.c). */
struct grp_waiter {
    list_link_t link;
    int tid;
    int node, request;
};

struct grp {
    list_link_t link;      /* grp_list, in creation order */
    struct grp *next_cached; /* a task's copies (grp_cache) */
    bool copy;             /* a copy from node 0 (grp_view), not the table's */
    int *tids;             /* tids[instance], GRP_FREE for a free slot */
    int cap;               /* slots in tids */
    int ntids;             /* members */
    enum grp_state state;
    int bar_count;         /* -1: no barrier in progress */
    int bar_reached;
    list_link_t bar_waiters;
    int frz_count;         /* -1: no freeze in progress */
    int frz_reached;
    list_link_t frz_waiters;
    char name[];
};

static list_link_t grp_list = {&grp_list, &grp_list};

/* ------------------------------------------------------------ the table */

static struct grp *grp_find(const char *name)
{
    list_for_each(l, &grp_list) {
        struct grp *g = list_entry(l, struct grp, link);
        if (strcmp(g->name, name) == 0)
            return g;
    }
    return NULL;
}

static struct grp *grp_new(const char *name)
{
    size_t len = strlen(name) + 1;
    struct grp *g = calloc(1, sizeof *g + len);
    if (!g)
        return NULL;
    memcpy(g->name, name, len);
    g->bar_count = g->frz_count = -1;
    list_init(&g->bar_waiters);
    list_init(&g->frz_waiters);
    list_push_back(&grp_list, &g->link);
    return g;
}

/* Let every waiter on list go with result. */
static void release(list_link_t *list, int result)
{
    list_link_t *l;
    while ((l = list_pop_front(list))) {
        struct grp_waiter *w = list_entry(l, struct grp_waiter, link);
        node_rpc_reply(w->node, w->request, result, NULL, 0);
        free(w);
    }
}

static void grp_free(struct grp *g)
{
    /* Waiters are members, so none is left; be safe anyway. */
    release(&g->bar_waiters, PvmNoGroup);
    release(&g->frz_waiters, PvmNoGroup);
    list_unlink(&g->link);
    free(g->tids);
    free(g);
}

/* The group called name: 0, PvmNullGroup or PvmNoGroup. */
static int grp_get(const char *name, struct grp **out)
{
    if (!name || !*name)
        return PvmNullGroup;
    *out = grp_find(name);
    return *out ? 0 : PvmNoGroup;
}

/* tid's instance (also for tid -1: the first free slot), or -1. */
static int inst_of(const struct grp *g, int tid)
{
    for (int i = 0; i < g->cap; i++)
        if (g->tids[i] == tid)
            return i;
    return -1;
}

/* The tid of instance inst, or PvmNoInst. */
static int tid_of(const struct grp *g, int inst)
{
    if (inst < 0 || inst >= g->cap || g->tids[inst] == GRP_FREE)
        return PvmNoInst;
    return g->tids[inst];
}

/* Add tid at the lowest free instance: the instance or PvmNoMem. */
static int grp_add(struct grp *g, int tid)
{
    if (g->ntids + 1 > g->cap) {
        int cap = g->cap + GRP_TABLE_STEP;
        int *tids = realloc(g->tids, (size_t)cap * sizeof *tids);
        if (!tids)
            return PvmNoMem;
        for (int i = g->cap; i < cap; i++)
            tids[i] = GRP_FREE;
        g->tids = tids;
        g->cap = cap;
    }
    int inst = inst_of(g, GRP_FREE);
    g->tids[inst] = tid;
    g->ntids++;
    return inst;
}

/* Remove instance inst; a static group dies, an empty one is deleted. */
static void grp_remove(struct grp *g, int inst)
{
    g->tids[inst] = GRP_FREE;
    g->ntids--;
    if (g->state == GRP_STATIC) {
        g->state = GRP_STATIC_DEAD;
        if (!list_empty(&g->bar_waiters)) {
            release(&g->bar_waiters, PvmNoGroup);
            g->bar_count = PvmNoGroup;
        }
    }
    if (g->ntids <= 0)
        grp_free(g);
}

/* The members' tids in instance order, for gather/scatter, which need
 * instances 0 .. n-1 without holes.  In t's memory (pvm_task_free: it is
 * held across sends and receives, where t may move); *n gets the count. */
static int tidlist_no_holes(struct pvm_task *t, const struct grp *g, int **out, int *n)
{
    if (g->state == GRP_STATIC_DEAD)
        return PvmNoGroup;
    for (int i = 0; i < g->ntids; i++)
        if (g->tids[i] == GRP_FREE)
            return PvmNoInst;
    if (!(*out = pvm_task_alloc(t, (size_t)g->ntids * sizeof **out)))
        return PvmNoMem;
    memcpy(*out, g->tids, (size_t)g->ntids * sizeof **out);
    *n = g->ntids;
    return 0;
}

/* Hosts of the group, and on host: its member count and coordinator
 * (the lowest tid there, -1 if none), as pvmgs keeps them. */
struct grp_hostinfo {
    int coord, nmembers, nhosts;
};

/* A member's host: the machine of the node its tid's host part names
 * (docs/pvm.md, "Tids, hosts and nodes": one host per machine; a task
 * spawned or moved to another machine of a job of MPI ranks still counts
 * on its tid's). */
static int host_of(int tid)
{
    int m = pvm_multi() ? pvm_host_machine(tid & PVM_TID_HOST_MASK) : -1;
    return m >= 0 ? (m + 1) << PVM_TID_HOST_SHIFT : tid & PVM_TID_HOST_MASK;
}

static struct grp_hostinfo host_info(const struct grp *g, int host)
{
    /* one bit per possible host part (12 bits of a tid) */
    uint64_t seen[(PVM_TID_HOST_MASK >> PVM_TID_HOST_SHIFT) / 64 + 1] = {0};
    struct grp_hostinfo h = {-1, 0, 0};
    for (int i = 0; i < g->cap; i++) {
        int tid = g->tids[i];
        if (tid == GRP_FREE)
            continue;
        unsigned hp = (unsigned)host_of(tid) >> PVM_TID_HOST_SHIFT;
        if (!(seen[hp / 64] & (UINT64_C(1) << (hp % 64)))) {
            seen[hp / 64] |= UINT64_C(1) << (hp % 64);
            h.nhosts++;
        }
        if (host_of(tid) == host) {
            h.nmembers++;
            if (h.coord < 0 || tid < h.coord)
                h.coord = tid;
        }
    }
    return h;
}

/* ------------------------------------------------------------ the table's side */

static void reply_view(int node, int request, const struct grp *g, int result);

/*
 * What node 0 does for a task, here or on another node (tid names it).
 * The barrier and freeze ones return ROUND_WAIT with w queued when the
 * caller has to wait for the others.
 */

static int table_join(const char *name, int tid)
{
    if (!name || !*name)
        return PvmNullGroup;
    struct grp *g = grp_find(name);
    bool fresh = !g;
    if (fresh && !(g = grp_new(name)))
        return PvmNoMem;
    if (g->state != GRP_DYNAMIC)
        return PvmNotInGroup; /* a (dead) static group */
    if (inst_of(g, tid) >= 0)
        return PvmDupGroup;
    int inst = grp_add(g, tid);
    if (inst < 0 && fresh)
        grp_free(g);
    return inst;
}

static int table_leave(const char *name, int tid)
{
    struct grp *g;
    int rc = grp_get(name, &g);
    if (rc)
        return rc;
    int inst = inst_of(g, tid);
    if (inst < 0)
        return PvmNotInGroup;
    grp_remove(g, inst);
    return 0;
}

/*
 * pvmgs's barrier and static-group formation share one scheme: the first
 * caller fixes the count (-1: the group's size), a caller with another
 * count is refused and not counted, the last arrival releases everyone.
 * More arrivals than the count (count 0, or < -1) leave the count set
 * for good: every later round is refused (see the top of the file).
 */
struct grp_round {
    int *count, *reached;
};

enum { ROUND_WAIT = 1 << 30, ROUND_COMPLETE = (1 << 30) + 1 };

/* ROUND_WAIT, ROUND_COMPLETE (the caller is the last) or PvmMismatch. */
static int round_arrive(const struct grp *g, struct grp_round r, int count)
{
    if (count == -1)
        count = g->ntids;
    if (*r.count == -1) {
        *r.count = count;
        *r.reached = 0;
    } else if (count != *r.count) {
        return PvmMismatch;
    }
    ++*r.reached;
    if (*r.count < *r.reached)
        return PvmMismatch;
    return *r.count == *r.reached ? ROUND_COMPLETE : ROUND_WAIT;
}

static int table_barrier(const char *name, int count, struct grp_waiter *w)
{
    struct grp *g;
    int rc = grp_get(name, &g);
    if (rc == 0 && g->state == GRP_STATIC_DEAD)
        rc = PvmNoGroup;
    if (rc == 0 && inst_of(g, w->tid) < 0)
        rc = PvmNotInGroup;
    if (rc < 0)
        return rc;
    rc = round_arrive(g, (struct grp_round){&g->bar_count, &g->bar_reached}, count);
    if (rc == ROUND_WAIT) /* released with 0, or PvmNoGroup: g may be gone */
        list_push_back(&g->bar_waiters, &w->link);
    if (rc == ROUND_COMPLETE) {
        release(&g->bar_waiters, 0);
        g->bar_count = -1;
        rc = 0;
    }
    return rc;
}

/* The group's size once frozen (to every caller), or an error. */
static int table_freeze(const char *name, int size, struct grp_waiter *w)
{
    struct grp *g;
    int rc = grp_get(name, &g);
    if (rc == 0 && g->state == GRP_STATIC)
        rc = PvmDupGroup;
    if (rc == 0 && inst_of(g, w->tid) < 0)
        rc = PvmNotInGroup;
    if (rc < 0)
        return rc;
    rc = round_arrive(g, (struct grp_round){&g->frz_count, &g->frz_reached}, size);
    if (rc == ROUND_WAIT)
        list_push_back(&g->frz_waiters, &w->link);
    if (rc == ROUND_COMPLETE) { /* the size, with the members: each caller keeps them */
        g->state = GRP_STATIC;
        list_link_t *l;
        while ((l = list_pop_front(&g->frz_waiters))) {
            struct grp_waiter *x = list_entry(l, struct grp_waiter, link);
            reply_view(x->node, x->request, g, g->frz_count);
            free(x);
        }
        rc = g->frz_count;
    }
    return rc;
}

/* tid's records in barrier and freeze queues (it ended while waiting).
 * A barrier still counts its arrival. */
static void drop_waiters(list_link_t *list, int tid)
{
    for (list_link_t *l = list->next, *next; l != list; l = next) {
        next = l->next;
        struct grp_waiter *w = list_entry(l, struct grp_waiter, link);
        if (w->tid != tid)
            continue;
        list_unlink(l);
        free(w);
    }
}

/* A task ended: it leaves every group. */
static void table_task_gone(int tid)
{
    for (list_link_t *l = grp_list.next, *next; l != &grp_list; l = next) {
        next = l->next; /* grp_remove may free this group */
        struct grp *g = list_entry(l, struct grp, link);
        drop_waiters(&g->bar_waiters, tid);
        drop_waiters(&g->frz_waiters, tid);
        int inst = inst_of(g, tid);
        if (inst >= 0)
            grp_remove(g, inst);
    }
}

/* ------------------------------------------------------------ node 0 serves */

enum grp_request { GRQ_JOIN, GRQ_LEAVE, GRQ_BARRIER, GRQ_FREEZE, GRQ_VIEW, GRQ_GONE, GRQ_DUMP };

/* A copy of group g for another node: state, ntids, cap, tids[cap]; the
 * answer's result is result. */
static void reply_view(int node, int request, const struct grp *g, int result)
{
    size_t len = (3 + (size_t)g->cap) * sizeof(int);
    int *v = malloc(len);
    if (!v) {
        node_rpc_reply(node, request, PvmNoMem, NULL, 0);
        return;
    }
    v[0] = (int)g->state;
    v[1] = g->ntids;
    v[2] = g->cap;
    memcpy(v + 3, g->tids, (size_t)g->cap * sizeof(int));
    node_rpc_reply(node, request, result, v, len);
    free(v);
}

static void pvm_gsdump_here(void);

/* K_GROUP {a: op, b: request, c: arg; payload: int tid, then the name}. */
void pvm_groups_serve(int src, const struct node_frame *f, const void *p, size_t len)
{
    int tid;
    const char *name = (const char *)p + sizeof tid;
    if (len < sizeof tid + 1 || name[len - sizeof tid - 1] != '\0') {
        node_rpc_reply(src, f->b, PvmSysErr, NULL, 0);
        return;
    }
    memcpy(&tid, p, sizeof tid);
    int rc = PvmBadParam;
    struct grp_waiter *w = NULL;
    switch (f->a) {
    case GRQ_JOIN: rc = table_join(name, tid); break;
    case GRQ_LEAVE: rc = table_leave(name, tid); break;
    case GRQ_BARRIER:
    case GRQ_FREEZE:
        if (!(w = malloc(sizeof *w))) {
            rc = PvmNoMem;
            break;
        }
        *w = (struct grp_waiter){.tid = tid, .node = src, .request = f->b};
        rc = f->a == GRQ_BARRIER ? table_barrier(name, f->c, w) : table_freeze(name, f->c, w);
        if (rc == ROUND_WAIT)
            return; /* answered when released */
        free(w);
        if (f->a == GRQ_FREEZE && rc > 0) { /* frozen: the members too */
            reply_view(src, f->b, grp_find(name), rc);
            return;
        }
        break;
    case GRQ_VIEW: {
        struct grp *g;
        if ((rc = grp_get(name, &g)) == 0) {
            reply_view(src, f->b, g, 0);
            return;
        }
        break;
    }
    case GRQ_GONE: table_task_gone(tid); return; /* no answer */
    case GRQ_DUMP: pvm_gsdump_here(); rc = 0; break;
    }
    node_rpc_reply(src, f->b, rc, NULL, 0);
}

void pvm_groups_node_gone(int n)
{
    /* Its tasks are gone: they leave, as pvmgs hears of a host's tasks. */
    for (bool again = true; again;) {
        again = false;
        list_for_each(l, &grp_list) {
            struct grp *g = list_entry(l, struct grp, link);
            for (int i = 0; i < g->cap && !again; i++)
                if (g->tids[i] != GRP_FREE && pvm_tid_node(g->tids[i]) == n) {
                    table_task_gone(g->tids[i]); /* may free g: look again */
                    again = true;
                }
            if (again)
                break;
        }
    }
}

/* ------------------------------------------------------------ asking node 0 */

static bool table_here(void)
{
    return node_job_self() == 0;
}

/* A request to node 0 for tid; the result (and *data, *len if given). */
static int ask(int op, int tid, const char *name, int arg, void **data, size_t *len)
{
    return pvm_rpc(0, K_GROUP, op, arg, &tid, sizeof tid, name, strlen(name) + 1, PvmSysErr,
                   data, len);
}

/* A group from reply_view's form (grp_done frees it): 0, PvmSysErr or
 * PvmNoMem. */
static int grp_from_view(const char *name, const void *data, size_t len, struct grp **out)
{
    const int *v = data;
    if (!v || len < 3 * sizeof(int) || v[2] < 0 || len != (3 + (size_t)v[2]) * sizeof(int))
        return PvmSysErr;
    struct grp *g = calloc(1, sizeof *g + strlen(name) + 1);
    int *tids = g ? malloc((size_t)v[2] * sizeof *tids + 1) : NULL;
    if (!g || !tids) {
        free(g);
        free(tids);
        return PvmNoMem;
    }
    *g = (struct grp){.copy = true, .tids = tids, .state = (enum grp_state)v[0],
                      .ntids = v[1], .cap = v[2], .bar_count = -1, .frz_count = -1};
    memcpy(tids, v + 3, (size_t)g->cap * sizeof *tids);
    strcpy(g->name, name);
    *out = g;
    return 0;
}

/* The group called name to read: the table's own on node 0, else a copy
 * from it (grp_done frees it).  0, PvmNullGroup or PvmNoGroup. */
static int grp_view(const char *name, struct grp **out)
{
    if (table_here() || !name || !*name)
        return grp_get(name, out);
    void *data = NULL;
    size_t len = 0;
    int rc = ask(GRQ_VIEW, 0, name, 0, &data, &len);
    if (rc == 0)
        rc = grp_from_view(name, data, len, out);
    free(data);
    return rc;
}

static void grp_done(struct grp *g)
{
    if (g && g->copy) {
        free(g->tids);
        free(g);
    }
}

/* ------------------------------------------------------------ a task's static groups */

/*
 * libgpvm3 keeps in every task a copy of each static group the task heard
 * of (probe tests/pvm-reference/p18_static_groups.c, ref §11.1): stored
 * when the task's pvm_freezegroup completes and whenever the server's
 * answer about a group says it is static (so not after a member left:
 * the group is dead then), dropped by the task's own pvm_lvgroup of it
 * (whatever the server answers), never brought up to date.  gsize answers
 * from it; gettid of an instance and getinst of a tid it holds too (others
 * ask the server); bcast, gather, scatter, reduce and the host information
 * take its members.  So after a member of a static group leaves or exits,
 * the tasks that knew the group still see its frozen membership and their
 * bcast still reaches the leaver; barriers always ask the server
 * (PvmNoGroup).  The copies live in the task's memory: they move with it.
 */

static struct grp *cache_find(const struct pvm_task *t, const char *name)
{
    for (struct grp *g = t->grp_cache; g; g = g->next_cached)
        if (strcmp(g->name, name) == 0)
            return g;
    return NULL;
}

static void cache_drop(struct pvm_task *t, const char *name)
{
    for (struct grp **pp = (struct grp **)&t->grp_cache; *pp; pp = &(*pp)->next_cached) {
        struct grp *g = *pp;
        if (strcmp(g->name, name) == 0) {
            *pp = g->next_cached;
            pvm_task_free(t, g->tids);
            pvm_task_free(t, g);
            return;
        }
    }
}

/* t keeps a copy of g, a static group as the server has it (without
 * memory for it, t goes on asking the server). */
static void cache_put(struct pvm_task *t, const struct grp *g)
{
    cache_drop(t, g->name);
    size_t len = strlen(g->name) + 1;
    struct grp *c = pvm_task_alloc(t, sizeof *c + len);
    int *tids = pvm_task_alloc(t, (size_t)(g->cap > 0 ? g->cap : 1) * sizeof *tids);
    if (!c || !tids) {
        pvm_task_free(t, c);
        pvm_task_free(t, tids);
        return;
    }
    *c = (struct grp){.next_cached = t->grp_cache, .tids = tids, .cap = g->cap,
                      .ntids = g->ntids, .state = GRP_STATIC, .bar_count = -1,
                      .frz_count = -1};
    memcpy(tids, g->tids, (size_t)g->cap * sizeof *tids);
    memcpy(c->name, g->name, len);
    t->grp_cache = c;
}

/* The server's view of the group (grp_view), which t keeps if static. */
static int grp_ask(struct pvm_task *t, const char *name, struct grp **out)
{
    int rc = grp_view(name, out);
    if (rc == 0 && (*out)->state == GRP_STATIC)
        cache_put(t, *out);
    return rc;
}

/* The group as t reads it: its own copy if it has one (grp_done leaves
 * that alone), else the server's view. */
static int grp_read(struct pvm_task *t, const char *name, struct grp **out)
{
    if (name && *name && (*out = cache_find(t, name)))
        return 0;
    return grp_ask(t, name, out);
}

/* pvm_getinst's answer: tid's instance, or an error. */
static int lookup_inst(struct pvm_task *t, const char *name, int tid)
{
    struct grp *g = name && *name ? cache_find(t, name) : NULL;
    int rc = g && tid != GRP_FREE ? inst_of(g, tid) : -1;
    if (rc >= 0)
        return rc;
    g = NULL;
    rc = grp_ask(t, name, &g);
    if (rc == 0 && (rc = inst_of(g, tid)) < 0)
        rc = PvmNotInGroup;
    grp_done(g);
    return rc;
}

/* pvm_gettid's answer: instance inst's tid, or an error. */
static int lookup_tid(struct pvm_task *t, const char *name, int inst)
{
    struct grp *g = name && *name ? cache_find(t, name) : NULL;
    int rc = g ? tid_of(g, inst) : PvmNoInst;
    if (rc >= 0)
        return rc;
    g = NULL;
    rc = grp_ask(t, name, &g);
    rc = rc ? rc : tid_of(g, inst);
    grp_done(g);
    return rc;
}

static void cache_clear(struct pvm_task *t)
{
    while (t->grp_cache)
        cache_drop(t, ((struct grp *)t->grp_cache)->name);
}

/* A barrier or freeze: a request whose answer comes when the round is
 * complete (on node 0 too: the wait is then the same, and the waiting task
 * can move). */
static int round_trip(int op, struct pvm_task *t, const char *name, int count)
{
    if (!name)
        name = "";
    return pvm_rpc_movable(0, K_GROUP, op, count, &t->tid, sizeof t->tid, name,
                           strlen(name) + 1, PvmSysErr, NULL, NULL);
}

/* ------------------------------------------------------------ membership */

#define TASK_OR_SYSERR(t)                                       \
    struct pvm_task *t = pvm_current();                         \
    if (unlikely(!t))                                           \
        return pvm_fail_silent(PvmSysErr)

/* Group calls only set pvm_errno (PVM's libgpvm3 never reports). */
static inline int group_rc(int rc)
{
    return rc < 0 ? pvm_fail_silent(rc) : rc;
}

/* A group operation's begin (or, with TRC_END in op, its end: a = its
 * result) for the trace (util/trace.h: TRC_GROUP).  By tid: the task may
 * have moved during the operation. */
static inline void trace_group(int tid, unsigned op, int a, int bytes, const char *group)
{
    if (unlikely(trc_on))
        trc_put(TRC_GROUP, (uint16_t)op, (uint32_t)tid, (uint32_t)a, (uint32_t)bytes,
                trc_str_copy(group ? group : ""));
}

static int joingroup_body(struct pvm_task *t, char *group)
{
    if (!group || !*group)
        return pvm_fail_silent(PvmNullGroup);
    int tid = t->tid;
    int rc = group_rc(table_here() ? table_join(group, t->tid)
                                   : ask(GRQ_JOIN, t->tid, group, 0, NULL, NULL));
    trace_group(tid, TRC_GROUP_JOIN | TRC_END, rc, 0, group);
    return rc;
}

static int lvgroup_body(struct pvm_task *t, char *group)
{
    if (!group || !*group)
        return pvm_fail_silent(PvmNullGroup);
    int tid = t->tid;
    cache_drop(t, group); /* first, whatever the server says (libgpvm3) */
    int rc = group_rc(table_here() ? table_leave(group, t->tid)
                                   : ask(GRQ_LEAVE, t->tid, group, 0, NULL, NULL));
    trace_group(tid, TRC_GROUP_LEAVE | TRC_END, rc, 0, group);
    return rc;
}

static int getinst_body(struct pvm_task *t, char *group, int tid)
{
    pvm_poll_yield(); /* often polled: let the members come */
    return group_rc(lookup_inst(t, group, tid));
}

static int gettid_body(struct pvm_task *t, char *group, int inst)
{
    pvm_poll_yield(); /* often polled: let the members come */
    return group_rc(lookup_tid(t, group, inst));
}

static int gsize_body(struct pvm_task *t, char *group)
{
    pvm_poll_yield(); /* often polled: let the members come */
    struct grp *g = NULL;
    int rc = grp_read(t, group, &g);
    rc = rc ? rc : g->ntids;
    grp_done(g);
    return group_rc(rc);
}

/* ------------------------------------------------------------ traced calls */

static int barrier_body(struct pvm_task *t, char *group, int count); /* below */

/* libgpvm3's trace points (BGN_TRACE, END_TRACE): the group's name and at
 * most one int when the call starts, one int when it returns. */
static void grp_enter(struct pvm_task *t, struct pvm_api *a, int kind, const char *group, int did,
                      const int *v)
{
    if (!pvm_api_enter(t, a, kind))
        return;
    pvm_tev_str(t, TEV_DID_GN, group ? group : "");
    if (v)
        pvm_tev_int(t, did, *v);
    pvm_tev_end(t);
}

static int grp_leave(struct pvm_task *t, struct pvm_api *a, int did, int v)
{
    if (pvm_api_leave(t, a)) {
        pvm_tev_int(t, did, v);
        pvm_tev_end(t);
    }
    return v;
}

int pvm_joingroup(char *group)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_JOINGROUP, group, 0, NULL);
    return grp_leave(t, &a, TEV_DID_CC, joingroup_body(t, group));
}

int pvm_lvgroup(char *group)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_LVGROUP, group, 0, NULL);
    return grp_leave(t, &a, TEV_DID_CC, lvgroup_body(t, group));
}

int pvm_getinst(char *group, int tid)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_GETINST, group, TEV_DID_GT, &tid);
    return grp_leave(t, &a, TEV_DID_GI, getinst_body(t, group, tid));
}

int pvm_gettid(char *group, int inst)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_GETTID, group, TEV_DID_GI, &inst);
    return grp_leave(t, &a, TEV_DID_GT, gettid_body(t, group, inst));
}

int pvm_gsize(char *group)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_GSIZE, group, 0, NULL);
    return grp_leave(t, &a, TEV_DID_GS, gsize_body(t, group));
}

int pvm_barrier(char *group, int count)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_BARRIER, group, TEV_DID_GBC, &count);
    int tid = t->tid;
    trace_group(tid, TRC_GROUP_BARRIER, count, 0, group);
    int rc = barrier_body(t, group, count);
    trace_group(tid, TRC_GROUP_BARRIER | TRC_END, rc, 0, group);
    return grp_leave(t, &a, TEV_DID_CC, rc);
}

/* ------------------------------------------------------------ barrier, freeze */

static int barrier_body(struct pvm_task *t, char *group, int count)
{
    return group_rc(round_trip(GRQ_BARRIER, t, group, count));
}

int pvm_freezegroup(char *group, int size)
{
    struct pvm_task *t = pvm_current();
    if (unlikely(!t))
        return PvmSysErr;
    const char *name = group ? group : "";
    void *data = NULL;
    size_t len = 0;
    int rc = pvm_rpc_movable(0, K_GROUP, GRQ_FREEZE, size, &t->tid, sizeof t->tid, name,
                             strlen(name) + 1, PvmSysErr, &data, &len);
    struct grp *g = NULL;
    t = pvm_current(); /* (it may have moved meanwhile) */
    if (rc > 0 && t && grp_from_view(name, data, len, &g) == 0)
        cache_put(t, g); /* the members it froze with */
    grp_done(g);
    free(data);
    return rc; /* PVM does not set pvm_errno here */
}

/* ------------------------------------------------------------ bcast */

/* The other members' tids, in a buffer reused by every bcast (pvm_mcast
 * copies what it needs and calls nothing that could bcast meanwhile). */
static int *bcast_tids;
static int bcast_cap;

static int bcast_list(const struct grp *g, int self, int *n)
{
    if (g->ntids > bcast_cap) {
        int *p = realloc(bcast_tids, (size_t)g->ntids * sizeof *p);
        if (!p)
            return PvmNoMem;
        bcast_tids = p;
        bcast_cap = g->ntids;
    }
    *n = 0;
    for (int i = 0; i < g->cap; i++)
        if (g->tids[i] != GRP_FREE && g->tids[i] != self)
            bcast_tids[(*n)++] = g->tids[i];
    return 0;
}

static int bcast_body(struct pvm_task *t, char *group, int msgtag, int *n)
{
    struct grp *g = NULL;
    int rc = grp_read(t, group, &g);
    if (rc == 0 && g->state == GRP_STATIC_DEAD)
        rc = PvmNoGroup;
    if (rc == 0 && g->ntids == 1 && inst_of(g, t->tid) >= 0)
        rc = PvmNoInst; /* the caller is the only member */
    if (rc == 0)
        rc = bcast_list(g, t->tid, n);
    grp_done(g);
    if (rc == 0)
        rc = pvm_mcast(bcast_tids, *n, msgtag); /* reports its own errors */
    return group_rc(rc > 0 ? 0 : rc);
}

int pvm_bcast(char *group, int msgtag)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_BCAST, group, TEV_DID_MC, &msgtag);
    int tid = t->tid;
    trace_group(tid, TRC_GROUP_BCAST, msgtag, 0, group);
    int n = 0, cc = bcast_body(t, group, msgtag, &n);
    trace_group(tid, TRC_GROUP_BCAST | TRC_END, cc, 0, group);
    if (pvm_api_leave(t, &a)) { /* as libgpvm3: the tids sent to, none on failure */
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_ints(t, TEV_DID_MDL, bcast_tids, cc < 0 ? 0 : n);
        pvm_tev_end(t);
    }
    return cc;
}

/* ------------------------------------------------------------ data messages */

/* Bytes of one item as pvm_reduce/gather/scatter take them (libgpvm3's
 * gs_get_datasize), or PvmBadParam.  PVM_STR moves bytes here. */
static int item_size(int type)
{
    switch (type) {
    case PVM_STR: case PVM_BYTE: return 1;
    case PVM_SHORT: return (int)sizeof(short);
    case PVM_INT: return (int)sizeof(int);
    case PVM_LONG: return (int)sizeof(long);
    case PVM_FLOAT: return (int)sizeof(float);
    case PVM_DOUBLE: return (int)sizeof(double);
    case PVM_CPLX: return 2 * (int)sizeof(float);
    case PVM_DCPLX: return 2 * (int)sizeof(double);
    default: return PvmBadParam;
    }
}

static int pack_type(int type)
{
    return type == PVM_STR ? PVM_BYTE : type;
}

/* Send count items at data to tid: a message (tag, GRP_CTX) from t.  A
 * destination that is gone is skipped, as pvm_send does. */
static int grp_send(struct pvm_task *t, int tid, int tag, int type, const void *data,
                    int count)
{
    if (tag < 0 && !t->opt[PvmResvTids])
        return PvmBadParam;
    struct pvm_task *dst = pvm_task_by_tid(tid);
    int node = dst || !pvm_multi() ? -1 : pvm_tid_node(tid);
    if (!dst && (node < 0 || node == node_job_self()))
        return 0;
    msg_buf_t *b;
    int rc = msg_buf_new(GRP_ENCODING, &b);
    if (rc)
        return pvm_code_from_errno(rc);
    if ((rc = msg_pack(b, pack_type(type), data, count, 1)) != 0) {
        msg_buf_unref(b);
        return pvm_code_from_errno(rc);
    }
    *msg_buf_hdr(b) = (msg_hdr_t){.tag = tag, .ctx = GRP_CTX, .src = t->tid, .dst = tid};
    if (!dst) { /* on another node */
        rc = pvm_remote_send(b, tid);
        msg_buf_unref(b);
        return rc;
    }
    return pvm_deliver(dst, b);
}

/* Receive a message (tid, tag, GRP_CTX) into count items at out, leaving
 * the caller's receive buffer and context as they were. */
static int grp_recv(struct pvm_task *t, int tid, int tag, int type, void *out, int count)
{
    int saved_rbuf = pvm_setrbuf(0);
    int saved_ctx = pvm_setcontext(GRP_CTX);
    int id = pvm_recv(tid, tag);
    (void)pvm_setcontext(saved_ctx);
    int rc = id;
    if (id > 0)
        rc = pvm_code_from_errno(msg_unpack(pvm_buf(t, id), pack_type(type), out, count, 1));
    (void)pvm_freebuf(pvm_setrbuf(saved_rbuf));
    return rc;
}

/* ------------------------------------------------------------ reduce */

typedef void (*grp_reduce_fn)(int *datatype, void *x, void *y, int *num, int *info);

/* What a reduce needs to know, read before anyone blocks (the group may
 * change or go while the caller waits for messages). */
struct reduce_plan {
    int root;                /* the root's tid */
    struct grp_hostinfo host; /* the caller's host */
};

static int reduce_plan(struct pvm_task *t, const char *group, int rootinst, int type,
                       struct reduce_plan *p)
{
    /* libgpvm3 asks pvm_getinst, pvm_gettid, pvm_grphostinfo in turn */
    struct grp *g = NULL;
    int rc = lookup_inst(t, group, t->tid);
    if (rc >= 0 && (p->root = lookup_tid(t, group, rootinst)) < 0)
        rc = p->root;
    if (rc >= 0 && (rc = item_size(type)) > 0)
        rc = 0;
    if (rc == 0 && (rc = grp_read(t, group, &g)) == 0)
        p->host = host_info(g, host_of(t->tid));
    grp_done(g);
    return rc;
}

/* Receive n contributions (from anyone) and fold each into data. */
static int reduce_fold(struct pvm_task *t, grp_reduce_fn fn, void *data, void *work,
                       int count, int type, int tag, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = grp_recv(t, -1, tag, type, work, count);
        if (rc < 0)
            return rc;
        int dt = type, num = count, info = 0;
        fn(&dt, data, work, &num, &info);
        if (info < 0)
            return info;
    }
    return 0;
}

/*
 * libgpvm3's fan-in: members send to their host's coordinator, which folds
 * them into its own data and sends the host's result to the root; the root
 * folds the hosts' results.  Only the coordinator and the root wait.
 */
static int reduce(struct pvm_task *t, grp_reduce_fn fn, void *data, int count, int type,
                  int tag, const char *group, int rootinst)
{
    if (!data || count <= 0 || !fn)
        return PvmBadParam;
    struct reduce_plan p;
    int rc = reduce_plan(t, group, rootinst, type, &p);
    if (rc)
        return rc;
    /* in the task's memory: it is held across receives, where it may move */
    void *work = pvm_task_alloc(t, (size_t)count * (size_t)item_size(type));
    if (!work)
        return PvmNoMem;
    int me = t->tid, coord = p.host.coord;
    if (me == coord && p.host.nmembers > 1)
        rc = reduce_fold(t, fn, data, work, count, type, tag, p.host.nmembers - 1);
    else if (me != coord)
        rc = grp_send(t, coord, tag, type, data, count);
    if (rc == 0 && me == coord && me != p.root)
        rc = grp_send(t, p.root, tag, type, data, count);
    if (rc == 0 && me == p.root && me != coord)
        rc = grp_recv(t, coord, tag, type, data, count);
    if (rc == 0 && me == p.root && p.host.nhosts > 1)
        rc = reduce_fold(t, fn, data, work, count, type, tag, p.host.nhosts - 1);
    pvm_task_free(t, work);
    return rc;
}

int pvm_reduce(void (*func)(int *datatype, void *x, void *y, int *num, int *info),
               void *data, int count, int datatype, int msgtag, char *group, int rootginst)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_REDUCE, group, TEV_DID_MC, &msgtag);
    int tid = t->tid;
    trace_group(tid, TRC_GROUP_REDUCE, rootginst, count, group);
    int rc = reduce(t, func, data, count, datatype, msgtag, group, rootginst);
    trace_group(tid, TRC_GROUP_REDUCE | TRC_END, rc, count, group);
    rc = rc < 0 ? pvm_fail(t, "pvm_reduce", rc) : 0;
    return grp_leave(t, &a, TEV_DID_CC, rc);
}

/* ------------------------------------------------------------ gather, scatter */

/* The root's tid and the caller's instance, in libgpvm3's order of checks
 * (pvm_gettid, then pvm_getinst), and the group to read the members from. */
static int locate(struct pvm_task *t, const char *group, int rootinst, struct grp **g,
                  int *roottid, int *myinst)
{
    *g = NULL;
    int rc = *roottid = lookup_tid(t, group, rootinst);
    if (rc >= 0)
        rc = *myinst = lookup_inst(t, group, t->tid);
    if (rc >= 0)
        rc = grp_read(t, group, g);
    return rc;
}

static int gather_root(struct pvm_task *t, const int *tids, int n, char *result,
                       const void *data, int count, int type, int tag, int myinst)
{
    int rc = 0;
    size_t chunk = (size_t)count * (size_t)item_size(type);
    for (int i = 0; i < n && rc == 0; i++) {
        if (i == myinst)
            memcpy(result + (size_t)i * chunk, data, chunk);
        else
            rc = grp_recv(t, tids[i], tag, type, result + (size_t)i * chunk, count);
    }
    return rc;
}

static int gather(struct pvm_task *t, void *result, void *data, int count, int type,
                  int tag, const char *group, int rootinst)
{
    if (!data || count <= 0 || item_size(type) < 0)
        return PvmBadParam;
    struct grp *g;
    int roottid, myinst, *tids = NULL, n = 0;
    int rc = locate(t, group, rootinst, &g, &roottid, &myinst);
    if (rc == 0 && myinst == rootinst) /* the list first: g goes now */
        rc = result ? tidlist_no_holes(t, g, &tids, &n) : PvmBadParam;
    grp_done(g);
    if (rc == 0)
        rc = myinst != rootinst
                 ? grp_send(t, roottid, tag, type, data, count)
                 : gather_root(t, tids, n, result, data, count, type, tag, myinst);
    pvm_task_free(t, tids);
    return rc;
}

int pvm_gather(void *result, void *data, int count, int datatype, int msgtag, char *group,
               int rootginst)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_GATHER, group, TEV_DID_MC, &msgtag);
    int tid = t->tid;
    trace_group(tid, TRC_GROUP_GATHER, rootginst, count, group);
    int rc = gather(t, result, data, count, datatype, msgtag, group, rootginst);
    trace_group(tid, TRC_GROUP_GATHER | TRC_END, rc, count, group);
    rc = rc < 0 ? pvm_fail(t, "pvm_gather", rc) : 0;
    return grp_leave(t, &a, TEV_DID_CC, rc);
}

static int scatter_root(struct pvm_task *t, const int *tids, int n, void *result,
                        const char *data, int count, int type, int tag, int myinst)
{
    int rc = 0;
    size_t chunk = (size_t)count * (size_t)item_size(type);
    for (int i = 0; i < n && rc == 0; i++) {
        if (i == myinst)
            memcpy(result, data + (size_t)i * chunk, chunk);
        else
            rc = grp_send(t, tids[i], tag, type, data + (size_t)i * chunk, count);
    }
    return rc;
}

static int scatter(struct pvm_task *t, void *result, void *data, int count, int type,
                   int tag, const char *group, int rootinst)
{
    if (!result || count <= 0 || item_size(type) < 0)
        return PvmBadParam;
    struct grp *g;
    int roottid, myinst, *tids = NULL, n = 0;
    int rc = locate(t, group, rootinst, &g, &roottid, &myinst);
    if (rc == 0 && myinst == rootinst) /* the list first: g goes now */
        rc = data ? tidlist_no_holes(t, g, &tids, &n) : PvmBadParam;
    grp_done(g);
    if (rc == 0)
        rc = myinst != rootinst
                 ? grp_recv(t, roottid, tag, type, result, count)
                 : scatter_root(t, tids, n, result, data, count, type, tag, myinst);
    pvm_task_free(t, tids);
    return rc;
}

int pvm_scatter(void *result, void *data, int count, int datatype, int msgtag, char *group,
                int rootginst)
{
    TASK_OR_SYSERR(t);
    struct pvm_api a;
    grp_enter(t, &a, TEV_SCATTER, group, TEV_DID_MC, &msgtag);
    int tid = t->tid;
    trace_group(tid, TRC_GROUP_SCATTER, rootginst, count, group);
    int rc = scatter(t, result, data, count, datatype, msgtag, group, rootginst);
    trace_group(tid, TRC_GROUP_SCATTER | TRC_END, rc, count, group);
    rc = rc < 0 ? pvm_fail(t, "pvm_scatter", rc) : 0;
    return grp_leave(t, &a, TEV_DID_CC, rc);
}

/* ------------------------------------------------------------ operators */

enum grp_op { OP_MAX, OP_MIN, OP_SUM, OP_PRODUCT };

/*
 * x[i] = x[i] op y[i] for n items of type T.  Integer sums and products
 * are computed in the unsigned type U: they wrap as PVM's do, without the
 * undefined behaviour of a signed overflow.  Max and min are PVM's macros,
 * (a > b ? a : b), NaNs included.
 */
#define FOLD(T, U, op, x, y, n)                                       \
    do {                                                              \
        T *a_ = (T *)(x);                                             \
        const T *b_ = (const T *)(y);                                 \
        for (int i_ = 0; i_ < (n); i_++) {                            \
            T u_ = a_[i_], v_ = b_[i_];                               \
            switch (op) {                                             \
            case OP_MAX: a_[i_] = u_ > v_ ? u_ : v_; break;           \
            case OP_MIN: a_[i_] = u_ < v_ ? u_ : v_; break;           \
            case OP_SUM: a_[i_] = (T)((U)u_ + (U)v_); break;          \
            case OP_PRODUCT: a_[i_] = (T)((U)u_ * (U)v_); break;      \
            }                                                         \
        }                                                             \
    } while (0)

/* Complex items (re, im pairs of T): sum and product as complex numbers,
 * max and min by modulus (the pair with the larger/smaller one). */
#define FOLD_COMPLEX(T, op, x, y, n)                                        \
    do {                                                                    \
        T *a_ = (T *)(x);                                                   \
        const T *b_ = (const T *)(y);                                       \
        for (int i_ = 0; i_ < 2 * (n); i_ += 2) {                           \
            T ar = a_[i_], ai = a_[i_ + 1], br = b_[i_], bi = b_[i_ + 1];   \
            T am = ar * ar + ai * ai, bm = br * br + bi * bi;               \
            switch (op) {                                                   \
            case OP_MAX: if (bm > am) a_[i_] = br, a_[i_ + 1] = bi; break;  \
            case OP_MIN: if (bm < am) a_[i_] = br, a_[i_ + 1] = bi; break;  \
            case OP_SUM: a_[i_] = ar + br, a_[i_ + 1] = ai + bi; break;     \
            case OP_PRODUCT:                                                \
                a_[i_] = ar * br - ai * bi, a_[i_ + 1] = ar * bi + ai * br; \
                break;                                                      \
            }                                                               \
        }                                                                   \
    } while (0)

/* PvmOk, or PvmBadParam for a type the operator does not take (bytes
 * only have max and min; PVM_STR and the unsigned types none). */
static int fold(enum grp_op op, int type, void *x, const void *y, int n)
{
    switch (type) {
    case PVM_BYTE:
        if (op == OP_SUM || op == OP_PRODUCT)
            return PvmBadParam;
        FOLD(char, unsigned, op, x, y, n);
        break;
    case PVM_SHORT: FOLD(short, unsigned, op, x, y, n); break;
    case PVM_INT: FOLD(int, unsigned, op, x, y, n); break;
    case PVM_LONG: FOLD(long, unsigned long, op, x, y, n); break;
    case PVM_FLOAT: FOLD(float, float, op, x, y, n); break;
    case PVM_DOUBLE: FOLD(double, double, op, x, y, n); break;
    case PVM_CPLX: FOLD_COMPLEX(float, op, x, y, n); break;
    case PVM_DCPLX: FOLD_COMPLEX(double, op, x, y, n); break;
    default: return PvmBadParam;
    }
    return PvmOk;
}

void PvmMax(int *datatype, void *x, void *y, int *num, int *info)
{
    *info = fold(OP_MAX, *datatype, x, y, *num);
}

void PvmMin(int *datatype, void *x, void *y, int *num, int *info)
{
    *info = fold(OP_MIN, *datatype, x, y, *num);
}

void PvmSum(int *datatype, void *x, void *y, int *num, int *info)
{
    *info = fold(OP_SUM, *datatype, x, y, *num);
}

void PvmProduct(int *datatype, void *x, void *y, int *num, int *info)
{
    *info = fold(OP_PRODUCT, *datatype, x, y, *num);
}

/* ------------------------------------------------------------ undocumented */

/* Exported by libgpvm3 without a declaration in pvm3.h. */
UPVM_API int pvm_grphostinfo(char *group, int hosttid, int *coord, int *nmem_onhost,
                             int *nhosts);
UPVM_API int pvm_grpvhostinfo(char *group, int **coordv, int **nmem_onhostv, int *nhosts);
UPVM_API void pvm_gsdump(void);

/* The host's coordinator and member count, and the group's host count
 * (0, 0, -1 and PvmNoGroup when none of the members is on hosttid). */
int pvm_grphostinfo(char *group, int hosttid, int *coord, int *nmem_onhost, int *nhosts)
{
    TASK_OR_SYSERR(t);
    struct grp *g = NULL;
    int rc = grp_read(t, group, &g);
    struct grp_hostinfo h = {-1, 0, 0};
    if (rc == 0) {
        h = host_info(g, host_of(hosttid));
        if (h.nmembers == 0)
            h = (struct grp_hostinfo){-1, 0, 0}, rc = PvmNoGroup;
    }
    grp_done(g);
    *coord = h.coord;
    *nmem_onhost = h.nmembers;
    *nhosts = h.nhosts;
    return rc;
}

/* Per host of the group (in host order): coordinator and member count.
 * The vectors stay valid until the task's next call (as in PVM). */
int pvm_grpvhostinfo(char *group, int **coordv, int **nmem_onhostv, int *nhosts)
{
    TASK_OR_SYSERR(t);
    struct grp *g = NULL;
    int rc = grp_read(t, group, &g);
    int n = 0;
    int *vhost_coords = NULL, *vhost_counts = NULL;
    if (rc == 0) {
        vhost_coords = pvm_task_result(t, PVM_RESULT_VHOST_COORDS, (size_t)g->ntids, sizeof(int));
        vhost_counts = pvm_task_result(t, PVM_RESULT_VHOST_COUNTS, (size_t)g->ntids, sizeof(int));
        if (!vhost_coords || !vhost_counts) {
            grp_done(g);
            return PvmOutOfRes;
        }
        /* hosts in increasing host part, as pvmgs sorts them */
        for (int host = 0; host >= 0;) {
            int next = -1;
            for (int i = 0; i < g->cap; i++) {
                int h = g->tids[i] == GRP_FREE ? -1 : host_of(g->tids[i]);
                if (h >= host && (next < 0 || h < next))
                    next = h;
            }
            if (next < 0)
                break;
            struct grp_hostinfo hi = host_info(g, next);
            vhost_coords[n] = hi.coord;
            vhost_counts[n++] = hi.nmembers;
            host = next + (1 << PVM_TID_HOST_SHIFT);
        }
    }
    grp_done(g);
    *coordv = vhost_coords;
    *nmem_onhostv = vhost_counts;
    *nhosts = n;
    return rc;
}

static void dump_group(const struct grp *g)
{
    static const char *const states[] = {"dynamic", "static", "static, dead"};
    fprintf(stderr, "group: %s  size: %d (%s) barrier_count: %d barrier_reached %d\n",
            g->name, g->ntids, states[g->state], g->bar_count, g->bar_reached);
    fprintf(stderr, " sgroup_count: %d sgroup_reached %d\n  Tids:\n", g->frz_count,
            g->frz_reached);
    for (int i = 0; i < g->cap; i++)
        if (g->tids[i] != GRP_FREE)
            fprintf(stderr, "(%d,  0x%x) ", i, (unsigned)g->tids[i]);
    fputc('\n', stderr);
}

/* What pvmgs prints when asked to dump its tables (on stderr). */
static void pvm_gsdump_here(void)
{
    int n = 0;
    list_for_each(l, &grp_list)
        n++;
    fprintf(stderr, "DUMP, %d groups:\n", n);
    list_for_each(l, &grp_list)
        dump_group(list_entry(l, struct grp, link));
}

void pvm_gsdump(void)
{
    if (core_enter() != 0)
        return;
    if (table_here())
        pvm_gsdump_here();
    else
        (void)ask(GRQ_DUMP, 0, "", 0, NULL, NULL);
}

/* ------------------------------------------------------------ task exit */

void pvm_groups_task_leave(struct pvm_task *t)
{
    cache_clear(t);
    if (table_here()) {
        table_task_gone(t->tid);
        return;
    }
    /* Told, not asked: the task is ending (its answer would find no one). */
    int tid = t->tid;
    struct node_frame f = {K_GROUP, GRQ_GONE, 0, 0};
    node_post(0, &f, &tid, sizeof tid, "", 1);
}
