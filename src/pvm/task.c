/*
 * task.c - PVM tasks as ULPs: enrolment, tids, spawn, exit, kill, task
 * information and notification of task exit.
 *
 * A ULP becomes a task at its first PVM call (pvm_enroll), or at birth when
 * pvm_spawn / upvm_task_spawn_func creates it.  It stops being one at
 * pvm_exit or when the ULP ends (an exit hook of the core); a later PVM call
 * enrolls it again with a new tid, as PVM re-enrolls a process.  Tids are
 * never reused while the local part has not wrapped around (PVM hands them
 * out in the same order: t40001, t40002, ...).
 *
 * Spawn by name looks the name up in the table that upvm_task_register
 * fills (thread mode: tasks are functions of this executable).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc.h"
#include "node/board.h"
#include "node/directory.h"
#include "node/hostname.h"
#include "node/job.h"
#include "net/net.h"
#include "pvm/pvm.h"
#include "pvm/remote.h"
#include "pvm/tev.h"

struct pvm_node pvm_node;

/* ------------------------------------------------------------ registry */

/* Program names of process-mode tasks: kept for the life of the process
 * (task names, like registered ones, never dangle). */
struct interned {
    struct interned *next;
    char s[];
};
static struct interned *interned;

const char *pvm_intern(const char *s)
{
    for (struct interned *i = interned; i; i = i->next)
        if (strcmp(i->s, s) == 0)
            return i->s;
    size_t n = strlen(s) + 1;
    struct interned *i = malloc(sizeof *i + n);
    if (!i)
        return "";
    memcpy(i->s, s, n);
    i->next = interned;
    interned = i;
    return i->s;
}


struct task_entry {
    char *name;
    upvm_task_main_t fn;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct task_entry *registry;
static int nregistry, capregistry;

int upvm_task_register(const char *name, upvm_task_main_t fn)
{
    if (!name || !*name || strlen(name) > 255 || !fn)
        return -EINVAL;
    /* In a process-mode program the function belongs to that copy of it
     * (its own globals): registered with the copy, found by its spawns. */
    struct proc *p = proc_current();
    if (p)
        return proc_task_register(p, name, fn);
    int rc = 0;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < nregistry; i++)
        if (strcmp(registry[i].name, name) == 0) {
            rc = registry[i].fn == fn ? 0 : -EEXIST;
            goto out;
        }
    if (nregistry == capregistry) {
        int cap = capregistry ? 2 * capregistry : 16;
        struct task_entry *r = realloc(registry, (size_t)cap * sizeof *r);
        if (!r) {
            rc = -ENOMEM;
            goto out;
        }
        registry = r;
        capregistry = cap;
    }
    char *copy = strdup(name);
    if (!copy) {
        rc = -ENOMEM;
        goto out;
    }
    registry[nregistry++] = (struct task_entry){copy, fn};
out:
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

/* The entry registered as name, or as its last path component.  Its name
 * string lives as long as the process (tasks and ULPs point to it). */
static bool registry_find(const char *name, struct task_entry *out)
{
    struct proc *p = proc_current();
    if (p) { /* a process-mode program sees its own registrations */
        upvm_task_main_t fn = proc_task_find(p, name);
        if (fn)
            *out = (struct task_entry){(char *)pvm_intern(name), fn};
        return fn != NULL;
    }
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    bool found = false;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < nregistry && !found; i++)
        if (strcmp(registry[i].name, name) == 0 || strcmp(registry[i].name, base) == 0) {
            *out = registry[i];
            found = true;
        }
    pthread_mutex_unlock(&registry_lock);
    return found;
}

/* ------------------------------------------------------------ the node */

static void on_ulp_exit(struct ulp *u);
static void on_process_exit(void);

/* Crash and deadlock reports name the task: "worker, PVM task t40002". */
static size_t describe_task(const struct ulp *u, char *buf, size_t len)
{
    const struct pvm_task *t = u->ext[ULP_EXT_PVM];
    if (!t)
        return 0;
    int n = snprintf(buf, len, "PVM task t%x", (unsigned)t->tid);
    return n > 0 ? (size_t)n : 0;
}

/* Tagged output names a task by its tid: "[t40002] hello". */
static int output_name(const struct ulp *u, char *buf, size_t len)
{
    const struct pvm_task *t = u->ext[ULP_EXT_PVM];
    int n = t ? snprintf(buf, len, "t%x", (unsigned)t->tid) : 0;
    return n > 0 && (size_t)n < len ? n : 0;
}

static pvm_job_starter_fn job_starter;

void pvm_set_job_starter(pvm_job_starter_fn fn)
{
    job_starter = fn;
}

/* PVM_TID_LOCAL_MASK; tests only: UPVM_TEST_TID_MAX, a smaller one (to
 * reach the end of the tid space without 262,143 tasks). */
static int local_max_setting(void)
{
    struct env_num spec = {.min = 2, .max = PVM_TID_LOCAL_MASK, .dflt = PVM_TID_LOCAL_MASK};
    uint64_t v;
    (void)env_uint("UPVM_TEST_TID_MAX", &spec, &v);
    return (int)v;
}

static bool map_limit_first(void)
{
    return net_job_once(NET_ONCE_MAP_LIMIT);
}

/* A program that joined a VM gets a node slot others had before it (node
 * vm.h): its tids start past theirs, 4096 further on for each program the
 * slot has held, so that a tid is not reused until the local part wraps
 * around, as PVM's. */
#define JOIN_TID_STRIDE 4096u

void pvm_tids_after_join(void)
{
    unsigned gen = node_job_generation(), max = (unsigned)pvm_node.local_max;
    if (gen == 0 || max <= 2 * JOIN_TID_STRIDE || pvm_node.next_local != 1)
        return;
    pvm_node.next_local = 1 + (int)((gen * JOIN_TID_STRIDE) % (max - JOIN_TID_STRIDE));
}

static int node_init(void)
{
    pvm_node.host_tid = (node_job_self() + 1) << PVM_TID_HOST_SHIFT;
    pvm_node.next_local = 1;
    pvm_node.local_max = local_max_setting();
    proc_set_once_gate(map_limit_first);
    pvm_node.next_ctx = 1;
    list_init(&pvm_node.tasks);
    list_init(&pvm_node.host_watches);
    list_init(&pvm_node.free_qmsgs);
    pvm_delivery_from_env();
    if (core_add_exit_hook(on_ulp_exit) != 0)
        return -1;
    core_set_swapped_word(&pvm_errno);
    core_set_describer(describe_task);
    proc_output_set_namer(output_name);
    pvm_remote_register();
    pvm_host_init();
    atexit(on_process_exit);
    upvm_waitq_init(&pvm_node.sibsq, "pvm_siblings");
    pvm_node.ready = true;
    if (!pvm_multi() && job_starter)
        (void)job_starter(1); /* UPVM_NODES: thread mode starts them here */
    return 0;
}

void pvm_delivery_from_env(void)
{
    static const char *const strategies[] = {"share", "copy", NULL}; /* UPVM_DELIVER_* */
    int d;
    if (env_choice("UPVM_DELIVERY", strategies, UPVM_DELIVER_SHARE, 0, &d) > 0 &&
        d == UPVM_DELIVER_COPY) /* share leaves an earlier upvm_set_delivery alone */
        pvm_node.delivery = UPVM_DELIVER_COPY;
}

int pvm_node_ensure(void)
{
    return pvm_node.ready ? 0 : node_init();
}

int upvm_set_delivery(int strategy)
{
    if (strategy != UPVM_DELIVER_SHARE && strategy != UPVM_DELIVER_COPY)
        return -EINVAL;
    int old = pvm_node.delivery;
    pvm_node.delivery = strategy;
    return old;
}

/* ------------------------------------------------------------ tids */

/* Whether a local part is left for one more task of this node's; said
 * once per node when none is. */
bool pvm_tid_left(void)
{
    static bool said;
    if (!pvm_node.ready || pvm_node.ntaken < pvm_node.local_max)
        return true; /* (not ready: node_init comes first, with an empty table) */
    if (!said)
        fprintf(stderr, "upvm: node%d has no tid left for another task: the 18 bits of a tid "
                        "that number a node's tasks give %d, all taken by its tasks and by those "
                        "that moved away from it; pvm_spawn there gives PvmOutOfRes until some "
                        "end\n", node_job_self(), pvm_node.local_max);
    said = true;
    return false;
}

static bool is_home_tid(int tid)
{
    return (tid & PVM_TID_HOST_MASK) == pvm_node.host_tid;
}

/* Set the task (or PVM_TASK_AWAY, or NULL) of a local part, counting the
 * taken ones. */
static void tid_set(int local, struct pvm_task *t)
{
    pvm_node.ntaken += (t != NULL) - (pvm_node.tids[local] != NULL);
    pvm_node.tids[local] = t;
}

/* Room in the table for local part `local`: 0, or -1 out of memory. */
static int tids_grow(int local)
{
    if (local < pvm_node.ntids)
        return 0;
    int n = pvm_node.ntids ? 2 * pvm_node.ntids : 1024;
    while (n <= local) /* a table that starts past 1 (pvm_tids_after_join) */
        n *= 2;
    if (n > PVM_TID_LOCAL_MASK + 1)
        n = PVM_TID_LOCAL_MASK + 1;
    struct pvm_task **tab = realloc(pvm_node.tids, (size_t)n * sizeof *tab);
    if (!tab)
        return -1;
    memset(tab + pvm_node.ntids, 0, (size_t)(n - pvm_node.ntids) * sizeof *tab);
    pvm_node.tids = tab;
    pvm_node.ntids = n;
    return 0;
}

/* A free local part, growing the table as needed; 0 when none is left.
 * The count of taken parts answers "none" at once: a full table used to
 * be scanned whole by every spawn past its end (a spawn of many tasks
 * past it took minutes). */
static int tid_alloc(void)
{
    if (!pvm_tid_left())
        return 0;
    for (;;) { /* a free part exists: found within local_max steps */
        int local = pvm_node.next_local;
        pvm_node.next_local = local >= pvm_node.local_max ? 1 : local + 1;
        if (tids_grow(local) != 0)
            return 0;
        if (!pvm_node.tids[local])
            return local;
    }
}

/* The first local part of a run of n free consecutive ones, from
 * next_local on (a run does not wrap past local_max); 0 when there is
 * none.  Bounded by the table: one pass. */
static int tid_find_run(int n)
{
    int start = pvm_node.next_local, len = 0, first = 0;
    for (int k = 0, local = start; k < pvm_node.local_max; k++) {
        if (tids_grow(local) != 0)
            return 0;
        if (!pvm_node.tids[local]) {
            if (len++ == 0)
                first = local;
            if (len == n)
                return first;
        } else {
            len = 0;
        }
        local = local >= pvm_node.local_max ? 1 : local + 1;
        if (local == 1)
            len = 0; /* no run across the end */
    }
    return 0;
}

int pvm_tids_reserve(int n, int *tids)
{
    if (!pvm_node.ready && node_init() != 0)
        return 0;
    int first = n > 1 && pvm_node.local_max - pvm_node.ntaken >= n ? tid_find_run(n) : 0;
    int got = 0;
    for (int i = 0; i < n; i++) {
        int local = first ? first + i : tid_alloc();
        if (first)
            pvm_node.next_local = local >= pvm_node.local_max ? 1 : local + 1;
        tids[i] = local ? pvm_node.host_tid | local : 0;
        if (local) {
            tid_set(local, PVM_TASK_AWAY);
            got++;
        }
    }
    return got;
}

void pvm_tid_release(int tid)
{
    int local = tid & PVM_TID_LOCAL_MASK;
    if (!is_home_tid(tid) || local >= pvm_node.ntids || pvm_node.tids[local] != PVM_TASK_AWAY)
        return;
    tid_set(local, NULL);
    if (pvm_multi())
        node_dir_forget(&pvm_dir, tid);
}

void pvm_tids_node_gone(int node)
{
    for (int local = 1; local < pvm_node.ntids; local++) {
        int tid = pvm_node.host_tid | local;
        if (pvm_node.tids[local] == PVM_TASK_AWAY && node_dir_route(&pvm_dir, tid) == node)
            pvm_tid_release(tid); /* its task ended with that node */
    }
}

/* ------------------------------------------------------------ memory */

void *pvm_task_alloc(struct pvm_task *t, size_t n)
{
    return t->heap ? mem_heap_calloc(t->heap, 1, n) : calloc(1, n);
}

void *pvm_task_realloc(struct pvm_task *t, void *p, size_t n)
{
    return t->heap ? mem_heap_realloc(t->heap, p, n) : realloc(p, n);
}

void pvm_task_free(struct pvm_task *t, void *p)
{
    if (t->heap)
        mem_heap_free(t->heap, p);
    else
        free(p);
}

/* ------------------------------------------------------------ visitors */

/* Tasks that came from other nodes (migrated here), by tid: open
 * addressing, linear probing, tombstones (-1). */
static struct visitor {
    int tid;
    struct pvm_task *t;
} *visitors;
static uint32_t visitors_cap, visitors_used;
int pvm_nvisitors;

static uint32_t tid_hash(int tid)
{
    return (uint32_t)tid * 2654435761u;
}

struct pvm_task *pvm_visitor(int tid)
{
    if (!visitors_cap)
        return NULL;
    for (uint32_t i = tid_hash(tid) & (visitors_cap - 1);; i = (i + 1) & (visitors_cap - 1)) {
        if (visitors[i].tid == tid)
            return visitors[i].t;
        if (visitors[i].tid == 0)
            return NULL;
    }
}

static int visitor_add(struct pvm_task *t)
{
    if ((visitors_used + 1) * 2 > visitors_cap) {
        uint32_t cap = visitors_cap ? visitors_cap * 2 : 64;
        struct visitor *v = calloc(cap, sizeof *v);
        if (!v)
            return PvmNoMem;
        for (uint32_t i = 0; i < visitors_cap; i++)
            if (visitors[i].tid > 0)
                for (uint32_t j = tid_hash(visitors[i].tid) & (cap - 1);; j = (j + 1) & (cap - 1))
                    if (!v[j].tid) {
                        v[j] = visitors[i];
                        break;
                    }
        free(visitors);
        visitors = v;
        visitors_cap = cap;
        visitors_used = (uint32_t)pvm_nvisitors;
    }
    for (uint32_t i = tid_hash(t->tid) & (visitors_cap - 1);; i = (i + 1) & (visitors_cap - 1))
        if (visitors[i].tid <= 0) {
            visitors_used += visitors[i].tid == 0;
            visitors[i] = (struct visitor){t->tid, t};
            pvm_nvisitors++;
            return 0;
        }
}

static void visitor_remove(int tid)
{
    for (uint32_t i = tid_hash(tid) & (visitors_cap - 1); visitors_cap;
         i = (i + 1) & (visitors_cap - 1)) {
        if (visitors[i].tid == tid) {
            visitors[i] = (struct visitor){-1, NULL};
            pvm_nvisitors--;
            return;
        }
        if (visitors[i].tid == 0)
            return;
    }
}

static bool is_home(int tid)
{
    return is_home_tid(tid);
}

/* Out of the node's tables.  away: it lives on elsewhere (its local part
 * stays taken). */
static void task_tables_remove(struct pvm_task *t, bool away)
{
    if (is_home(t->tid))
        tid_set(t->tid & PVM_TID_LOCAL_MASK, away ? PVM_TASK_AWAY : NULL);
    else
        visitor_remove(t->tid);
    list_unlink(&t->node_link);
    pvm_node.ntasks--;
    node_board_remove(t->tid);
}

void pvm_task_unregister(struct pvm_task *t)
{
    task_tables_remove(t, true);
}

int pvm_task_register(struct pvm_task *t, struct ulp *u)
{
    if (!pvm_node.ready && node_init() != 0)
        return PvmNoMem;
    if (is_home(t->tid)) {
        tid_set(t->tid & PVM_TID_LOCAL_MASK, t);
    } else if (visitor_add(t) != 0) {
        return PvmNoMem;
    }
    t->ulp = u;
    list_push_back(&pvm_node.tasks, &t->node_link);
    pvm_node.ntasks++;
    u->ext[ULP_EXT_PVM] = t;
    u->trc_id = (uint32_t)t->tid; /* a task that moved here keeps its name */
    node_board_add(t->tid, u->name);
    return 0;
}

/* ------------------------------------------------------------ tasks */

/* A new task for ULP u with parent ptid, registered under tid `given` (a
 * tid the spawning node reserved for it: of this node's, or of another's,
 * then the task lives here as a visitor and its home knows where), or
 * under a fresh tid of this node's (given 0).  A process-mode ULP's task
 * lives in its own heap. */
static struct pvm_task *task_new(struct ulp *u, int ptid, int ctx, int given)
{
    if (!pvm_node.ready && node_init() != 0)
        return NULL;
    struct proc *p = u->ext[ULP_EXT_PROC];
    struct pvm_task *t = p ? mem_heap_calloc(p->heap, 1, sizeof *t) : calloc(1, sizeof *t);
    int local = t ? (given ? given & PVM_TID_LOCAL_MASK : tid_alloc()) : 0;
    bool visitor = given && !is_home(given);
    if (t && visitor) {
        t->tid = given;
        if (visitor_add(t) != 0 || node_dir_set(&pvm_dir, given, node_job_self()) != 0) {
            visitor_remove(given);
            local = 0;
        }
    }
    if (!local) {
        if (p)
            mem_heap_free(p->heap, t);
        else
            free(t);
        return NULL;
    }
    t->heap = p ? p->heap : NULL;
    t->tid = given ? given : pvm_node.host_tid | local;
    t->ptid = ptid;
    t->ulp = u;
    t->name = "";
    t->ctx = ctx;
    list_init(&t->inq);
    list_init(&t->watchers);
    upvm_waitq_init(&t->recvq, "pvm_recv");
    pvm_opts_init(t);
    if (!visitor)
        tid_set(local, t);
    list_push_back(&pvm_node.tasks, &t->node_link);
    pvm_node.ntasks++;
    u->ext[ULP_EXT_PVM] = t;
    u->trc_id = (uint32_t)t->tid;
    if (unlikely(trc_on))
        trc_put(TRC_TASK_BEGIN, 0, (uint32_t)t->tid, (uint32_t)ptid, (uint32_t)node_job_self(),
                trc_str_copy(u->name ? u->name : ""));
    node_board_add(t->tid, u->name); /* for the report if this node dies */
    return t;
}

struct pvm_task *pvm_enroll(struct ulp *u)
{
    struct pvm_task *t = task_new(u, PvmNoParent, 0, 0);
    if (t && pvm_tev_task_init(t, NULL) != 0) { /* PVMTMASK ... (tev.h) */
        pvm_task_leave(t);
        return NULL;
    }
    return t;
}

static void sibs_unref(struct pvm_sibs *s)
{
    if (s && --s->refs == 0)
        free(s);
}

/* t's siblings list goes (its own copy, or its reference). */
static void sibs_drop(struct pvm_task *t)
{
    if (t->sibs_private)
        pvm_task_free(t, t->sibs);
    else
        sibs_unref(t->sibs);
    t->sibs = NULL;
    t->sibs_private = false;
}

int pvm_task_own_sibs(struct pvm_task *t)
{
    if (t->sibs_private || !t->heap)
        return 0;
    int n = t->sibs ? t->sibs->n : 1;
    struct pvm_sibs *c = pvm_task_alloc(t, sizeof *c + (size_t)n * sizeof(int));
    if (!c)
        return PvmNoMem;
    c->refs = 1;
    c->n = n;
    if (t->sibs)
        memcpy(c->tids, t->sibs->tids, (size_t)n * sizeof(int));
    else
        c->tids[0] = t->tid;
    sibs_unref(t->sibs);
    t->sibs = c;
    t->sibs_private = true;
    return 0;
}

/* A child task of parent for the new ULP u, one of the siblings sibs:
 * spawned with flag (PvmNoSpawnParent), in the parent's context. */
static struct pvm_task *child_new(const struct pvm_spawn_origin *o, struct ulp *u, int flag,
                                  struct pvm_sibs *sibs, int given)
{
    int ptid = (flag & PvmNoSpawnParent) ? PvmParentNotSet : o->ptid;
    struct pvm_task *t = task_new(u, ptid, o->ctx, given);
    if (t && pvm_tev_task_init(t, &o->trc) != 0) { /* the spawner's child tracer */
        pvm_task_leave(t);
        return NULL;
    }
    if (t && sibs) {
        t->sibs = sibs;
        sibs->refs++;
        sibs->tids[sibs->n++] = t->tid;
    } else if (t) {
        t->sibs_pending = true; /* spawned for another node's task */
    }
    if (t && (flag & PVM_SPAWN_REPORT_STATUS) && pvm_report_status(o->node, t) != 0) {
        pvm_task_leave(t);
        return NULL;
    }
    if (t)
        pvm_output_spawned(t, o->out);
    return t;
}

static struct pvm_spawn_origin origin_of(const struct pvm_task *t)
{
    struct pvm_spawn_origin o = {t->tid, t->ctx, node_job_self(), t->opt[PvmOutputTid], {0}};
    pvm_tev_child_tracer(t, &o.trc);
    return o;
}

/* Deliver every PvmTaskExit notification waiting on t. */
static void fire_exit_watches(struct pvm_task *t)
{
    list_link_t *l;
    while ((l = list_pop_front(&t->watchers))) {
        struct pvm_watch *w = list_entry(l, struct pvm_watch, link);
        if (w->watcher != t->tid)
            pvm_remote_fire(w->watcher, t->tid, w->tag, w->ctx);
        free(w);
    }
}

void *pvm_task_result(struct pvm_task *t, enum pvm_result which, size_t n, size_t size)
{
    pvm_task_free(t, t->results[which]);
    t->results[which] = pvm_task_alloc(t, (n ? n : 1) * size);
    return t->results[which];
}

void *pvm_task_binding(size_t size)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return NULL;
    if (!t->results[PVM_RESULT_BINDING])
        t->results[PVM_RESULT_BINDING] = pvm_task_alloc(t, size);
    return t->results[PVM_RESULT_BINDING];
}

void pvm_task_leave(struct pvm_task *t)
{
    if (t->exiting)
        return;
    t->exiting = true;
    pvm_groups_task_leave(t);
    pvm_mbox_task_leave(t);
    pvm_tev_release(t); /* what pvm_exit did not send is lost, as in PVM */
    pvm_bufs_release(t);
    /* Gone from the tables before anyone is told, so a notified task that
     * asks (pvm_pstat) already sees it dead. */
    task_tables_remove(t, false);
    proc_output_keep_name(t->ulp); /* what it writes later: still its tid */
    pvm_output_left(t);
    struct pvm_tracer tr;
    pvm_tev_self_tracer(t, &tr);
    pvm_tev_endtask(&tr, t, 0); /* the pvmd tells its tracer */
    pvm_tracer_task_left(t->tid); /* the registered tracer ends with its task */
    if (pvm_multi() && !is_home(t->tid))
        pvm_remote_task_gone(t->tid); /* its home frees its tid */
    t->ulp->ext[ULP_EXT_PVM] = NULL;
    fire_exit_watches(t);
    sibs_drop(t);
    free(t->argv);
    pvm_task_free(t, t->mhfs);
    pvm_task_free(t, t->tev);
    for (int i = 0; i < PVM_RESULT_COUNT; i++)
        pvm_task_free(t, t->results[i]);
    pvm_task_free(t, t);
}

static void on_ulp_exit(struct ulp *u)
{
    pvm_remote_on_exit(u);
    /* a task that called pvm_exit has left PVM but keeps its tid here */
    if (!(u->trc_id & ULP_TRC_NOTASK))
        trc_put(TRC_TASK_END, 0, u->trc_id, (uint32_t)u->exit_status, 0, 0);
    struct pvm_task *t = u->ext[ULP_EXT_PVM];
    if (t)
        pvm_task_leave(t);
}

/*
 * main returned (or called exit) while other tasks may still have work:
 * a PVM master's children outlive it, so let them run until they end or
 * can never run again; then whatever still waits is ended with the process.
 */
static void on_process_exit(void)
{
    if (!core_on_sched_thread || core_current() != core_sched.main)
        return;
    if (pvm_multi()) { /* the job's end is every node's */
        struct pvm_task *me = core_current()->ext[ULP_EXT_PVM];
        if (me)
            pvm_task_leave(me);
        (void)node_job_finish(0);
        return;
    }
    int stuck = core_drain();
    struct pvm_task *self = core_current()->ext[ULP_EXT_PVM];
    int others = pvm_node.ntasks - (self != NULL);
    if (stuck > 0 && others > 0) {
        fprintf(stderr, "upvm: main exited; %d task(s) still waiting for messages "
                        "were ended with it:", others);
        int listed = 0;
        list_for_each(l, &pvm_node.tasks) {
            struct pvm_task *t = list_entry(l, struct pvm_task, node_link);
            if (t == self)
                continue;
            if (listed++ == 20) {
                fprintf(stderr, " ... and %d more", others - 20);
                break;
            }
            fprintf(stderr, " t%x%s%s", (unsigned)t->tid, *t->name ? "/" : "", t->name);
        }
        fputc('\n', stderr);
    }
}

/* ------------------------------------------------------------ exit */

int pvm_exit(void)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return PvmSysErr;
    struct pvm_api a; /* only its ENTRY event: the task ends */
    if (pvm_api_enter(t, &a, TEV_EXIT))
        pvm_tev_end(t);
    pvm_tev_flush(t); /* what it held back, or its summary, as libpvm */
    pvm_output_wait(t); /* the output it catches, to its end */
    pvm_task_leave(t);
    return 0;
}

int pvm_mytid(void)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_mytid", PvmSysErr);
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_MYTID))
        pvm_tev_end(t);
    if (pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_MT, t->tid);
        pvm_tev_end(t);
    }
    return t->tid;
}

int pvm_parent(void)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_parent", PvmSysErr);
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_PARENT))
        pvm_tev_end(t);
    if (pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_PT, t->ptid);
        pvm_tev_end(t);
    }
    return t->ptid; /* PvmNoParent / PvmParentNotSet: silent, as in PVM */
}

static int siblings_body(int **tids)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_siblings", PvmSysErr);
    while (t->sibs_pending)
        (void)core_block(&pvm_node.sibsq, -1); /* the spawner's node tells us */
    if (t->heap && pvm_task_own_sibs(t) != 0) /* the array moves with it */
        return pvm_fail(t, "pvm_siblings", PvmNoMem);
    if (!t->sibs) {
        t->sibs = malloc(sizeof *t->sibs + sizeof(int));
        if (!t->sibs)
            return pvm_fail(t, "pvm_siblings", PvmNoMem);
        t->sibs->refs = 1;
        t->sibs->n = 1;
        t->sibs->tids[0] = t->tid;
    }
    if (tids)
        *tids = t->sibs->tids;
    return t->sibs->n;
}

int pvm_siblings(int **tids)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t)
        pvm_api_enter_bare(t, &a, TEV_SIBLINGS);
    int *list = NULL, **lp = tids ? tids : &list; /* the caller's, as it was */
    int cc = siblings_body(lp);
    if (t && pvm_api_leave(t, &a)) {
        pvm_tev_ints(t, TEV_DID_SIB, *lp, cc > 0 && *lp ? cc : 0);
        pvm_tev_end(t);
    }
    return cc;
}

/* ------------------------------------------------------------ spawn */

static void named_task_entry(void *arg)
{
    upvm_task_main_t fn;
    memcpy(&fn, &arg, sizeof fn);
    struct pvm_task *t = core_current()->ext[ULP_EXT_PVM];
    int status = fn(t->argc, t->argv);
    upvm_exit(status);
}

/* argv of a spawned task: name, then the caller's argv, in one block. */
static char **argv_build(const char *name, char **argv, int *argc_out)
{
    int n = 1;
    size_t bytes = strlen(name) + 1;
    for (; argv && argv[n - 1]; n++)
        bytes += strlen(argv[n - 1]) + 1;
    char **v = malloc((size_t)(n + 1) * sizeof *v + bytes);
    if (!v)
        return NULL;
    char *p = (char *)(v + n + 1);
    for (int i = 0; i < n; i++) {
        const char *s = i == 0 ? name : argv[i - 1];
        size_t len = strlen(s) + 1;
        v[i] = memcpy(p, s, len);
        p += len;
    }
    v[n] = NULL;
    *argc_out = n;
    return v;
}

/* Does `where` name this host (PvmTaskHost): this machine, or this node
 * ("node<n>")? */
static bool is_this_host(const char *where)
{
    int id, kind = pvm_name_lookup(where, &id);
    if (pvm_multi())
        return kind == PVM_NAME_NODE ? id == node_job_self()
               : kind == PVM_NAME_MACHINE && id == pvm_machine_of(node_job_self());
    return kind == PVM_NAME_MACHINE; /* ".", "localhost", its name, node0 */
}

/* Where a spawn with these flags can run: 0 (here) or PvmNoHost. */
static int spawn_placement(int flag, const char *where)
{
    bool here = true;
    if (flag & PvmTaskHost)
        here = is_this_host(where);
    else if (flag & PvmTaskArch)
        here = where && strcmp(where, "LINUX64") == 0;
    if ((flag & (PvmTaskHost | PvmTaskArch)) && (flag & PvmHostCompl))
        here = !here;
    return here ? 0 : PvmNoHost;
}

/* One spawned task; 0 or a Pvm error for its tids[] slot. */
static int spawn_one(const struct pvm_spawn_origin *parent, int flag, const struct task_entry *e,
                     char **argv, struct pvm_sibs *sibs, int given, int *tid_out)
{
    void *arg;
    memcpy(&arg, &e->fn, sizeof arg);
    int argc;
    char **v = argv_build(e->name, argv, &argc);
    if (!v)
        return PvmOutOfRes;
    upvm_attr_t attr = {0, NULL, UPVM_DETACHED};
    upvm_id_t id = upvm_create(named_task_entry, arg, &attr);
    struct ulp *u = id > 0 ? core_ulp_lookup(id) : NULL;
    if (u)
        u->name = e->name; /* before child_new, which publishes it */
    struct pvm_task *t = u ? child_new(parent, u, flag, sibs, given) : NULL;
    if (!t) {
        free(v);
        if (u)
            core_ulp_kill(u, 0); /* never started: it ends at once */
        return PvmOutOfRes;
    }
    t->name = e->name;
    t->argc = argc;
    t->argv = v;
    *tid_out = t->tid;
    pvm_tev_newtask(&parent->trc, t->tid, parent->ptid, flag & ~PVM_SPAWN_REPORT_STATUS,
                    e->name);
    return 0;
}

/* The directory of the spawning task's program (process mode), for the
 * search; NULL for thread mode. */
static const char *spawner_dir(char *buf, size_t len)
{
    struct proc *p = proc_current();
    if (!p)
        return NULL;
    snprintf(buf, len, "%s", p->path);
    char *slash = strrchr(buf, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    return buf;
}

/* One process-mode task: program at path, argv[0] = file. */
static int spawn_program(const struct pvm_spawn_origin *parent, int flag, const char *file,
                         const char *path, char **argv, struct pvm_sibs *sibs, int given,
                         int *tid_out)
{
    int argc;
    char **v = argv_build(file, argv, &argc);
    if (!v)
        return PvmOutOfRes;
    struct ulp *u;
    struct loader_error err = {0, ""};
    int rc = proc_spawn(path, v, NULL, NULL, &u, &err);
    free(v);
    if (rc != 0) {
        if (err.msg[0]) /* empty: said before (proc_set_once_gate) */
            fprintf(stderr, "upvm: pvm_spawn(\"%s\"): %s\n", file, err.msg);
        return rc == -ENOMEM || rc == -ENOSPC ? PvmOutOfRes : PvmNoFile;
    }
    struct pvm_task *t = child_new(parent, u, flag, sibs, given);
    if (!t) {
        core_ulp_kill(u, 0);
        return PvmOutOfRes;
    }
    const char *slash = strrchr(file, '/');
    t->name = pvm_intern(slash ? slash + 1 : file);
    *tid_out = t->tid;
    pvm_tev_newtask(&parent->trc, t->tid, parent->ptid, flag & ~PVM_SPAWN_REPORT_STATUS, file);
    return 0;
}

/* Start count tasks here, task i under tid given[i] (reserved by the
 * spawning node, see pvm_tids_reserve; 0: a fresh one of this node's);
 * tids[i] gets each tid or error (tids may be given).  A failure is the
 * same for every copy (a program that cannot load, no memory, no tid
 * left): said once, and the rest get the same error at once. */
static int spawn_local(const struct pvm_spawn_origin *o, int flag, const struct task_entry *e,
                       const char *file, const char *path, char **argv, struct pvm_sibs *sibs,
                       int count, const int *given, int *tids)
{
    struct pvm_spawn_origin exec = *o;
    pvm_tev_exec_tracer(&exec.trc); /* no tracer given: the registered one's */
    o = &exec;
    int started = 0;
    for (int i = 0; i < count; i++) {
        int tid = 0, g = given ? given[i] : 0;
        int rc = g < 0                  ? g
                 : !g && !pvm_tid_left() ? PvmOutOfRes /* before a ULP is made for nothing */
                 : path ? spawn_program(o, flag, file, path, argv, sibs, g, &tid)
                        : spawn_one(o, flag, e, argv, sibs, g, &tid);
        started += rc == 0;
        tids[i] = rc ? rc : tid;
        if (rc != 0) {
            for (int k = i + 1; k < count; k++)
                tids[k] = rc;
            break;
        }
    }
    return started;
}

void pvm_spawn_here(const struct pvm_spawn_origin *o, int flag, const char *name,
                    const char *program, char **argv, int count, int *tids,
                    bool pending_sibs)
{
    /* tids holds the tids the spawner reserved for them */
    struct task_entry entry = {NULL, NULL};
    char found[PATH_MAX];
    /* A program named without a '/' is looked for again on the host that
     * runs it when the hostfile gave that host its own path (ep=), as a
     * PVM host's pvmd searches its own. */
    if (program && !strchr(name, '/') && node_host_epath() &&
        proc_find(name, NULL, node_host_epath(), found, sizeof found) == 0)
        program = found;
    if (!program && !registry_find(name, &entry)) {
        for (int i = 0; i < count; i++)
            tids[i] = PvmNoFile;
        return;
    }
    (void)pending_sibs; /* sibs NULL: child_new marks them pending */
    (void)spawn_local(o, flag, &entry, name, program, argv, NULL, count, tids, tids);
}

void pvm_sibs_arrived(struct pvm_sibs *s)
{
    for (int i = 0; i < s->n; i++) {
        struct pvm_task *k = pvm_task_by_tid(s->tids[i]);
        if (!k || !k->sibs_pending)
            continue;
        k->sibs_pending = false;
        /* a task that moved before its list came took a copy of what it
         * had (pvm_move_pack): the list that came replaces it */
        sibs_drop(k);
        k->sibs = s;
        s->refs++;
    }
    (void)upvm_wake_all(&pvm_node.sibsq);
}

/* Spread tasks over the nodes: runs of tasks for the same node are
 * started by one request.  Returns the number started. */
static int spawn_placed(struct pvm_task *t, int flag, const char *where,
                        const struct task_entry *e, const char *file, const char *path,
                        char **argv, struct pvm_sibs *sibs, int ntask, const int *given,
                        int *tids)
{
    struct pvm_spawn_origin o = origin_of(t);
    int started = 0;
    int *nodes = malloc((size_t)ntask * sizeof *nodes);
    if (!nodes)
        return 0;
    for (int i = 0; i < ntask; i++)
        if (pvm_place(flag, where, i, ntask, &nodes[i]) != 0)
            nodes[i] = -1;
    for (int i = 0; i < ntask;) {
        int run = 1;
        while (i + run < ntask && nodes[i + run] == nodes[i])
            run++;
        if (nodes[i] < 0) {
            for (int k = 0; k < run; k++)
                tids[i + k] = PvmNoHost;
        } else {
            /* Local ones too wait for the list: it is complete only when
             * every node has answered (the caller may block meanwhile). */
            started += nodes[i] == node_job_self()
                           ? spawn_local(&o, flag, e, file, path, argv, NULL, run, given + i,
                                         tids + i)
                           : pvm_remote_spawn(t, nodes[i], flag, path ? file : e->name, path,
                                              argv, run, given + i, tids + i);
            for (int k = 0; k < run; k++)
                if (tids[i + k] > 0)
                    sibs->tids[sibs->n++] = tids[i + k];
        }
        i += run;
    }
    free(nodes);
    return started;
}

int pvm_spawn(char *file, char **argv, int flag, char *where, int ntask, int *tids)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_SPAWN)) {
        pvm_tev_str(t, TEV_DID_SE, file);
        pvm_tev_str(t, TEV_DID_SW, where);
        pvm_tev_int(t, TEV_DID_SF, flag);
        pvm_tev_int(t, TEV_DID_SC, ntask);
        pvm_tev_end(t);
    }
    /* traced: the tids are in the EXIT event even if the caller wants none */
    int *own = a.top && !tids && ntask > 0 ? malloc((size_t)ntask * sizeof *own) : NULL;
    int *list = own ? own : tids;
    int cc = pvm_spawn_flagged(file, argv, flag & ~PVM_SPAWN_REPORT_STATUS, where, ntask, list);
    if (t && pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_ints(t, TEV_DID_STL, list, list && cc > 0 ? cc : 0); /* as libpvm: cc of them */
        pvm_tev_end(t);
    }
    free(own);
    return cc;
}

int pvm_spawn_flagged(char *file, char **argv, int flag, char *where, int ntask, int *tids)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_spawn", PvmSysErr);
    if (ntask < 1)
        return pvm_fail(t, "pvm_spawn", PvmBadParam);
    struct task_entry entry = {NULL, NULL};
    char path[PATH_MAX], dir[PATH_MAX];
    bool program = false; /* process mode: a file; else a registered function */
    bool found = file && *file && registry_find(file, &entry);
    if (!found)
        program = file && *file && proc_find(file, spawner_dir(dir, sizeof dir),
                                             node_host_epath(), path,
                                             sizeof path) == 0;
    /* found here, loaded maybe elsewhere: a node with another working
     * directory (a VM's, node/vm.h) must find the same file */
    if (program && path[0] != '/') {
        char abs[PATH_MAX];
        if (realpath(path, abs) && strlen(abs) < sizeof path)
            strcpy(path, abs);
    }
    /* A thread-mode task of a process-mode copy shares that copy's
     * globals: it runs on the copy's node, whatever the job's size; so does
     * one of a program that joined a VM (no other node has its code). */
    bool placed = pvm_multi() && !(found && (proc_current() || node_job_joined()));
    int err = placed ? 0 : spawn_placement(flag, where);
    if (!err && !found && !program)
        err = PvmNoFile;
    struct pvm_sibs *sibs = err ? NULL : malloc(sizeof *sibs + (size_t)ntask * sizeof(int));
    int *result = err ? NULL : malloc((size_t)ntask * sizeof *result);
    if (!err && (!sibs || !result))
        err = PvmOutOfRes;
    if (err) { /* per task, silently: the return value says none started */
        free(sibs);
        free(result);
        for (int i = 0; tids && i < ntask; i++)
            tids[i] = err;
        return 0;
    }
    sibs->refs = 1;
    sibs->n = 0;
    struct pvm_spawn_origin o = origin_of(t);
    /* The copies' tids, consecutive, all of this node's (as PVM's pvmd
     * gives them on one host: programs compute index = tid - tids[0]),
     * wherever each copy runs: its home (here) knows where it is. */
    int *given = malloc((size_t)ntask * sizeof *given);
    if (!given) {
        free(sibs);
        free(result);
        for (int i = 0; tids && i < ntask; i++)
            tids[i] = PvmOutOfRes;
        return 0;
    }
    /* a program that joined a VM: homed on the VM's node 0, they outlive
     * it (remote.h) */
    bool homed_on_0 = placed && node_job_joined() && !node_job_places(node_job_self()) &&
                      pvm_remote_tids(ntask, given) > 0;
    if (!homed_on_0)
        (void)pvm_tids_reserve(ntask, given);
    for (int i = 0; i < ntask; i++)
        if (!given[i])
            given[i] = PvmOutOfRes; /* no tid left here */
    int started = placed
                      ? spawn_placed(t, flag, where, &entry, file, program ? path : NULL, argv,
                                     sibs, ntask, given, result)
                      : spawn_local(&o, flag, &entry, file, program ? path : NULL, argv, sibs,
                                    ntask, given, result);
    for (int i = 0; i < ntask; i++) {
        if (result[i] < 0 && given[i] > 0)
            pvm_tid_release(given[i]); /* that copy did not start */
        if (result[i] > 0) /* the pvmd tells the children's tracer */
            pvm_tev_spntask(&o.trc, result[i], t->tid);
    }
    free(given);
    if (pvm_multi()) {
        pvm_sibs_arrived(sibs);
        pvm_remote_sibs(sibs);
    }
    for (int i = 0; unlikely(trc_on) && i < ntask; i++)
        if (result[i] > 0)
            trc_put(TRC_SPAWN, 0, (uint32_t)t->tid, (uint32_t)result[i],
                    (uint32_t)pvm_tid_node(result[i]), trc_str_copy(file));
    for (int i = 0; tids && i < ntask; i++)
        tids[i] = result[i];
    free(result);
    sibs_unref(sibs);
    return started;
}

int upvm_task_spawn_func(upvm_ordinal_entry_t fn, void *arg, int ntask, int *tids)
{
    struct pvm_task *parent = pvm_current();
    if (!parent)
        return PvmSysErr;
    if (!fn || ntask < 1)
        return PvmBadParam;
    upvm_id_t *ids = malloc((size_t)ntask * sizeof *ids);
    struct pvm_sibs *sibs = malloc(sizeof *sibs + (size_t)ntask * sizeof(int));
    upvm_attr_t attr = {0, NULL, UPVM_DETACHED};
    int n = ids && sibs ? upvm_spawn_func(fn, arg, ntask, ids, &attr) : -ENOMEM;
    if (n < 0) {
        free(ids);
        free(sibs);
        return PvmOutOfRes;
    }
    sibs->refs = 1;
    sibs->n = 0;
    int rc = ntask;
    for (int i = 0; i < ntask; i++) {
        struct ulp *u = core_ulp_lookup(ids[i]);
        struct pvm_spawn_origin o = origin_of(parent);
        struct pvm_task *t = rc > 0 ? child_new(&o, u, 0, sibs, 0) : NULL;
        if (!t) { /* out of memory: none of them may run */
            rc = PvmOutOfRes;
            if (u->ext[ULP_EXT_PVM])
                pvm_task_leave(u->ext[ULP_EXT_PVM]);
            core_ulp_kill(u, 0);
            continue;
        }
        if (tids)
            tids[i] = t->tid;
    }
    sibs_unref(sibs);
    free(ids);
    return rc;
}

/* ------------------------------------------------------------ kill */

/* End task k (not the caller) as SIGTERM ends a PVM task. */
static void task_kill(struct pvm_task *k)
{
    struct ulp *u = k->ulp;
    if (u != core_sched.main)
        core_ulp_kill(u, 128 + SIGTERM); /* first: it may wait on k's queue */
    if (u == core_sched.current && u->state == ULP_RUNNING && u != core_sched.main)
        return; /* killed from a handler it polled: it leaves as it ends */
    if (u->state == ULP_COUPLED)
        return; /* in a blocking call, interrupted now: it leaves as it ends */
    pvm_task_leave(k);
    if (u == core_sched.main) {
        /* The node's main ULP cannot end alone: like a PVM process killed
         * by SIGTERM, the whole node goes. */
        fprintf(stderr, "upvm: main task killed (pvm_kill/pvm_sendsig): ending the node\n");
        exit(128 + SIGTERM);
    }
}

int pvm_sendsig(int tid, int sig)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_sendsig", PvmSysErr);
    if (!pvm_is_task_tid(tid))
        return pvm_fail(t, "pvm_sendsig", PvmBadParam);
    struct pvm_task *k = pvm_task_by_tid(tid);
    if (!k && pvm_multi() && sig != 0 && pvm_tid_node(tid) != node_job_self())
        return pvm_remote_kill(tid, sig);
    if (!k || sig == 0)
        return 0; /* PVM: a signal to a task that is gone is dropped */
    struct sigaction sa;
    if (sig < 1 || sig >= NSIG || sigaction(sig, NULL, &sa) != 0)
        return 0; /* PVM does not validate the number either */
    if (sig != SIGKILL && sa.sa_handler == SIG_IGN)
        return 0;
    switch (sig) {
    case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
        return 0; /* ignored by default */
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return pvm_fail(t, "pvm_sendsig", PvmNotImpl); /* a ULP cannot be stopped */
    }
    if (sig != SIGKILL && sa.sa_handler != SIG_DFL)
        return pvm_fail(t, "pvm_sendsig", PvmNotImpl); /* handlers: see compat.md */
    if (k == t) {
        pvm_task_leave(t);
        if (core_current() == core_sched.main)
            exit(128 + sig);
        upvm_exit(128 + sig);
    }
    task_kill(k);
    return 0;
}

/* A signal from another node for the local task tid (errors are the
 * sender's to see, and it has gone on: dropped). */
void pvm_kill_here(int tid, int sig)
{
    struct pvm_task *k = pvm_task_by_tid(tid);
    struct sigaction sa;
    if (!k || sig < 1 || sig >= NSIG || sigaction(sig, NULL, &sa) != 0)
        return;
    if (sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGQUIT ||
        sig == SIGHUP || sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGALRM) {
        if (sig != SIGKILL && sa.sa_handler != SIG_DFL)
            return;
        task_kill(k);
    }
}

int pvm_kill(int tid)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_kill", PvmSysErr);
    if (!pvm_is_task_tid(tid)) {
        (void)pvm_fail(t, "pvm_sendsig", PvmBadParam);
        return pvm_fail(t, "pvm_kill", PvmBadParam);
    }
    return pvm_sendsig(tid, SIGTERM);
}

/* ------------------------------------------------------------ status */

static int pstat_body(int tid)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_pstat", PvmSysErr);
    if (!pvm_is_task_tid(tid))
        return pvm_fail(t, "pvm_pstat", PvmBadParam);
    pvm_poll_yield(); /* while (pvm_pstat(t) == PvmOk) ... must end */
    if (pvm_task_by_tid(tid))
        return PvmOk;
    if (pvm_multi() && pvm_tid_node(tid) != node_job_self())
        return pvm_remote_pstat(tid);
    return PvmNoTask;
}

int pvm_pstat(int tid)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_PSTAT)) {
        pvm_tev_int(t, TEV_DID_TT, tid);
        pvm_tev_end(t);
    }
    int cc = pstat_body(tid);
    return t ? pvm_api_leave_int(t, &a, TEV_DID_TST, cc) : cc;
}

void pvm_tasks_visit(pvm_task_visit_fn fn, void *ctx)
{
    /* The balancer's first tick may come while the node still waits for
     * the others (node_job_ready), before the PVM layer's first call set
     * the task list up: no task yet. */
    if (!pvm_node.ready)
        return;
    list_for_each(l, &pvm_node.tasks) {
        struct pvm_task *k = list_entry(l, struct pvm_task, node_link);
        fn(ctx, k->tid, k->ulp, k->placed, k->traffic);
        memset(k->traffic, 0, sizeof k->traffic);
    }
}

void pvm_task_waits(const struct pvm_task *k, char *buf, size_t len)
{
    char from[16] = "any", tag[16] = "any";
    const struct ulp *u = k->ulp;
    if (k->waiting) {
        if (k->want_tid != -1)
            snprintf(from, sizeof from, "t%x", (unsigned)k->want_tid);
        if (k->want_tag != -1)
            snprintf(tag, sizeof tag, "%d", k->want_tag);
        snprintf(buf, len, "recv from %s tag %s", from, tag);
    } else if (u && u->state == ULP_BLOCKED && u->waitq && u->waitq->name) {
        snprintf(buf, len, "%s", u->waitq->name);
    } else if (u && u->state == ULP_SLEEPING) {
        snprintf(buf, len, "sleeping");
    } else if (u && u->state == ULP_COUPLED) {
        snprintf(buf, len, "%s on a kernel context", u->coupled_for ? u->coupled_for : "a call");
    } else if (len) {
        buf[0] = '\0';
    }
}

const char *upvm_tasks_waits(int i)
{
    struct pvm_task *t = pvm_current();
    char (*w)[PVM_WAITS_MAX] = t ? t->results[PVM_RESULT_TASK_WAITS] : NULL;
    if (!w || i < 0 || i >= t->nresult_waits)
        return NULL;
    return w[i];
}

static int tasks_body(int where, int *ntaskp, struct pvmtaskinfo **tip)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_tasks", PvmSysErr);
    if (pvm_multi()) {
        int rc = pvm_remote_tasks(t, where, ntaskp, tip);
        if (rc < 0 && ntaskp)
            *ntaskp = 0;
        return rc < 0 ? pvm_fail(t, "pvm_tasks", rc) : rc;
    }
    bool all = where == 0 || where == pvm_node.host_tid;
    if (!all && !(pvm_is_task_tid(where) &&
                  (where & PVM_TID_HOST_MASK) == pvm_node.host_tid)) {
        if (ntaskp)
            *ntaskp = 0;
        return pvm_fail(t, "pvm_tasks", PvmNoHost);
    }
    struct pvmtaskinfo *taskinfo_buf =
        pvm_task_result(t, PVM_RESULT_TASKS, (size_t)pvm_node.ntasks, sizeof *taskinfo_buf);
    char (*waits)[PVM_WAITS_MAX] =
        pvm_task_result(t, PVM_RESULT_TASK_WAITS, (size_t)pvm_node.ntasks, PVM_WAITS_MAX);
    if (!taskinfo_buf || !waits)
        return pvm_fail(t, "pvm_tasks", PvmNoMem);
    int n = 0;
    list_for_each(l, &pvm_node.tasks) {
        struct pvm_task *k = list_entry(l, struct pvm_task, node_link);
        if (!all && k->tid != where)
            continue;
        struct pvmtaskinfo *ti = &taskinfo_buf[n++];
        ti->ti_tid = k->tid;
        ti->ti_ptid = k->ptid;
        ti->ti_host = pvm_node.host_tid;
        ti->ti_flag = 0x4; /* TF_CONN: connected, as PVM shows its tasks */
        ti->ti_a_out = (char *)k->name;
        ti->ti_pid = (int)getpid();
        pvm_task_waits(k, waits[n - 1], PVM_WAITS_MAX);
    }
    t->nresult_waits = n;
    if (ntaskp)
        *ntaskp = n;
    if (tip)
        *tip = taskinfo_buf;
    return 0;
}

int pvm_tasks(int where, int *ntaskp, struct pvmtaskinfo **tip)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_TASKS)) {
        pvm_tev_int(t, TEV_DID_TW, where);
        pvm_tev_end(t);
    }
    int n = 0, *np = ntaskp ? ntaskp : &n; /* the caller's, as it was */
    int cc = tasks_body(where, np, tip);
    if (t && pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_int(t, TEV_DID_TNT, cc < 0 ? 0 : *np);
        pvm_tev_end(t);
    }
    return cc;
}

/* ------------------------------------------------------------ notify */

static int watch_add(list_link_t *list, int watcher, int tag, int ctx, int what)
{
    struct pvm_watch *w = malloc(sizeof *w);
    if (!w)
        return PvmNoMem;
    *w = (struct pvm_watch){.watcher = watcher, .tag = tag, .ctx = ctx, .what = what};
    list_push_back(list, &w->link);
    return 0;
}

/* PvmNotifyCancel: the matching requests complete now (PVM delivers them
 * at once instead of dropping them). */
static void watch_cancel(list_link_t *list, int watcher, int tag, int what, bool deliver)
{
    for (list_link_t *l = list->next, *next; l != list; l = next) {
        next = l->next;
        struct pvm_watch *w = list_entry(l, struct pvm_watch, link);
        if (w->watcher != watcher || w->tag != tag || (what && w->what != what))
            continue;
        list_unlink(l);
        if (deliver)
            pvm_remote_fire(w->watcher, w->what, w->tag, w->ctx);
        free(w);
    }
}

static int notify_task_exit(struct pvm_task *t, bool cancel, int tag, int cnt, int *tids)
{
    for (int i = 0; i < cnt; i++)
        if (!pvm_is_task_tid(tids[i]))
            return PvmBadParam;
    for (int i = 0; i < cnt; i++) {
        struct pvm_task *k = pvm_task_by_tid(tids[i]);
        if (!k && pvm_multi() && pvm_tid_node(tids[i]) != node_job_self()) {
            int rc = pvm_remote_notify_exit(t, tids[i], tag, cancel);
            if (rc)
                return rc;
            continue;
        }
        if (cancel) {
            if (k)
                watch_cancel(&k->watchers, t->tid, tag, 0, true);
        } else if (!k) {
            pvm_send_pvmd_int(t->tid, tag, t->ctx, tids[i]); /* already gone */
        } else if (watch_add(&k->watchers, t->tid, tag, t->ctx, tids[i]) != 0) {
            return PvmNoMem;
        }
    }
    return 0;
}

static int notify_body(int what, int tag, int cnt, int *tids)
{
    struct pvm_task *t = pvm_current();
    if (!t)
        return pvm_fail(NULL, "pvm_notify", PvmSysErr);
    bool cancel = (what & PvmNotifyCancel) != 0;
    int kind = what & ~PvmNotifyCancel;
    if (tag < 0 && !t->opt[PvmResvTids])
        return pvm_fail(t, "pvm_notify", PvmBadParam);
    int rc = PvmBadParam;
    switch (kind) {
    case PvmTaskExit:
        if (cnt >= 1 && tids)
            rc = notify_task_exit(t, cancel, tag, cnt, tids);
        break;
    case PvmHostDelete:
        if (cnt < 1 || !tids)
            break;
        rc = 0;
        for (int i = 0; pvm_multi() && i < cnt && rc == 0; i++)
            rc = pvm_remote_notify_host(t, tids[i], tag, cancel);
        for (int i = 0; !pvm_multi() && i < cnt && !cancel; i++)
            if ((tids[i] & PVM_TID_HOST_MASK) != pvm_node.host_tid && tids[i] > 0 &&
                !(tids[i] & PVM_TID_LOCAL_MASK))
                pvm_send_pvmd_int(t->tid, tag, t->ctx, tids[i]); /* no such host */
        /* This host is never deleted while the task lives: nothing to keep. */
        break;
    case PvmHostAdd:
        if (cancel) {
            watch_cancel(&pvm_node.host_watches, t->tid, tag, 0, false);
            rc = 0;
        } else {
            rc = cnt == 0 ? 0 : watch_add(&pvm_node.host_watches, t->tid, tag, t->ctx, cnt);
        }
        break;
    case PvmRouteAdd: /* local delivery opens no route: accepted, never fires */
        rc = 0;
        break;
    case PvmRouteDelete:
        rc = cnt >= 1 && tids ? 0 : PvmBadParam;
        for (int i = 0; rc == 0 && i < cnt; i++)
            if (!pvm_is_task_tid(tids[i]))
                rc = PvmBadParam;
        break;
    }
    return rc < 0 ? pvm_fail(t, "pvm_notify", rc) : rc;
}

int pvm_notify(int what, int tag, int cnt, int *tids)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_NOTIFY)) {
        pvm_tev_int(t, TEV_DID_NE, what);
        pvm_tev_int(t, TEV_DID_NMC, tag);
        pvm_tev_ints(t, TEV_DID_NTL, tids, what != PvmHostAdd && tids && cnt > 0 ? cnt : 0);
        pvm_tev_end(t);
    }
    int cc = notify_body(what, tag, cnt, tids);
    return t ? pvm_api_leave_int(t, &a, TEV_DID_CC, cc) : cc;
}

bool pvm_watch_exit_here(int watched, int watcher, int tag, int ctx, bool cancel)
{
    struct pvm_task *k = pvm_task_by_tid(watched);
    if (cancel) { /* the watcher's node has delivered it already */
        if (k)
            watch_cancel(&k->watchers, watcher, tag, 0, false);
        return false;
    }
    return k && watch_add(&k->watchers, watcher, tag, ctx, watched) == 0;
}

void pvm_hosts_added(const int *hosts, int n)
{
    for (list_link_t *l = pvm_node.host_watches.next, *next; l != &pvm_node.host_watches;
         l = next) {
        next = l->next;
        struct pvm_watch *w = list_entry(l, struct pvm_watch, link);
        struct pvm_task *dst = pvm_task_by_tid(w->watcher);
        msg_buf_t *b;
        if (dst && msg_buf_new(PvmDataDefault, &b) == 0) {
            if (msg_pack(b, PVM_INT, &n, 1, 1) == 0 && msg_pack(b, PVM_INT, hosts, n, 1) == 0) {
                *msg_buf_hdr(b) = (msg_hdr_t){.tag = w->tag, .ctx = w->ctx,
                                              .src = PVM_TID_PVMD, .dst = w->watcher};
                (void)pvm_deliver(dst, b);
            } else {
                msg_buf_unref(b);
            }
        }
        if (w->what > 0 && --w->what == 0) { /* cnt notifications, then done */
            list_unlink(l);
            free(w);
        }
    }
}
