/*
 * pvm.h - the PVM layer's internal contract: tasks, their buffer tables and
 * message queues, error reporting.  The files of src/pvm implement the PVM 3
 * API of <pvm3.h> on top of the core (ULPs) and msg (buffers) layers:
 *
 *   task.c      enrolment, tids, spawn (by name and by function), exit,
 *               kill, parent/siblings, pstat/tasks, notify on task exit
 *   buffers.c   buffer ids (LBIDs), pvm_mkbuf ... pvm_setminfo, pk/upk
 *   messages.c  send, mcast, psend, the receive family, recvf, handlers,
 *               contexts
 *   host.c      the one-host virtual machine: config, options, hosts,
 *               export, halt and the pvmd-only functions
 *   catchout.c  pvm_catchout: caught output carried to the catcher
 *   errors.c    pvm_errno, the error texts, PvmAutoErr reports
 *   mailbox.c   pvm_putinfo/recvinfo/delinfo/getmboxinfo, insert/lookup
 *   groups.c    the libgpvm3 group functions
 *
 * Model (UPVM paper section 3, M-PVM sections 4-5).  A task is a ULP plus
 * a struct pvm_task (ulp->ext[ULP_EXT_PVM]).  Everything runs on the node's
 * scheduler thread, so nothing here locks.  A message is a msg_buf_t: each
 * holder (a task's buffer id, a queued message) has its own handle over
 * shared, copy-on-write data, so a local send is one msg_buf_ref (the GBID
 * shared, a new LBID for the receiver).
 */
#ifndef UPVM_PVM_H
#define UPVM_PVM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <pvm3.h>
#include <pvmtev.h>

#include "core/core.h"
#include "mem/mem.h"
#include "msg/msg.h"
#include "util/env.h"
#include "util/list.h"

/* ------------------------------------------------------------ tids */

/* A tid is host part | local part, as in PVM: node n (1-based) has host
 * part n << 18; local parts 1 .. 0x3ffff number its tasks. */
#define PVM_TID_HOST_SHIFT 18
#define PVM_TID_HOST_MASK  0x3ffc0000
#define PVM_TID_LOCAL_MASK 0x0003ffff
/* The source of messages the "pvmd" generates (notify). */
#define PVM_TID_PVMD       ((int)0x80000000)

/* ------------------------------------------------------------ options */

#define PVM_NOPTS 26 /* option numbers 1 .. 25 of pvm3.h */

/* ------------------------------------------------------------ tasks */

/* A queued incoming message.  lbid != 0 once pvm_probe or a recvf
 * matcher has given it a buffer id (it keeps that id when received). */
struct pvm_qmsg {
    list_link_t link;
    msg_buf_t *buf;
    int lbid;
};

/* One buffer id of a task.  queued: the message is still in the task's
 * incoming queue (the id came from pvm_probe). */
struct pvm_bufslot {
    msg_buf_t *buf;
    struct pvm_qmsg *queued;
    bool ctx_set; /* pvm_setminfo gave it a context: sends use that one */
    bool trace;   /* PvmDataTrace: a user-defined trace event (tev.h) */
};

/* The tasks started by one pvm_spawn: shared, freed with the last. */
struct pvm_sibs {
    int refs;
    int n;
    int tids[];
};

/* A pvm_addmhf handler.  by_ref: fn is really int (*)(int *bufid), a
 * Fortran function (pvm_addmhf_byref), called with the id's address. */
struct pvm_mhf {
    int src, tag, ctx;
    int (*fn)(int mid);
    bool used;
    bool by_ref;
};

/* A notification a task asked for (pvm_notify). */
struct pvm_watch {
    list_link_t link;
    int watcher; /* tid to notify */
    int tag, ctx;
    int what;    /* the watched tid (PvmTaskExit) or host tid */
};

/* Arrays a call returns that stay valid until the same task's next such
 * call (PVM's convention), kept per task so that one task's call never
 * frees what another still reads.  See pvm_task_result. */
enum pvm_result {
    PVM_RESULT_TASKS,        /* pvm_tasks */
    PVM_RESULT_TASK_WAITS,   /* pvm_tasks: what each waits for (upvm_tasks_waits) */
    PVM_RESULT_NORESETS,     /* pvm_getnoresets */
    PVM_RESULT_VHOST_COORDS, /* pvm_grpvhostinfo */
    PVM_RESULT_VHOST_COUNTS,
    PVM_RESULT_BINDING,      /* a language binding's state: pvm_task_binding */
    PVM_RESULT_COUNT
};

/* ------------------------------------------------------------ tracing */

/* One tracer's settings (pvmtev.h's struct Pvmtracer less the output
 * fields): where a task's trace events go and which.  Plain data: it
 * travels in spawn frames as it is. */
struct pvm_tracer {
    int32_t tid, ctx, tag;  /* trace messages go to tid, in ctx, with tag */
    int32_t buf;            /* buffer events up to this many bytes; 0: none */
    int32_t opt;            /* PvmTraceFull, PvmTraceTime, PvmTraceCount */
    char mask[TEV_MASK_LENGTH];
};

/* A task's PVM tracing (tev.c), made the first time it is asked for. */
struct pvm_tev;

/* ------------------------------------------------------------ traffic */

/* What a task sent to one partner since the balancer last looked
 * (src/gs): its heaviest partners, kept by pvm_count_send. */
#define PVM_TRAFFIC_PEERS 4
struct pvm_traffic {
    int tid;                   /* 0: unused */
    uint32_t msgs;
    uint64_t bytes;
};

struct pvm_task {
    int tid;
    mem_heap_t *heap;          /* a process-mode task's own heap: the task
                                * and what it owns live there (they move
                                * with it); NULL: libc's */
    int ptid;                  /* parent, PvmNoParent or PvmParentNotSet */
    struct ulp *ulp;
    const char *name;          /* program name (lives forever); "" for a shell task */
    char **argv;               /* spawned by name: NULL-terminated, owned */
    int argc;
    struct pvm_sibs *sibs;     /* NULL: only itself */
    list_link_t node_link;     /* pvm_node.tasks, in tid order */

    /* buffers (LBIDs): bufs[id], id 1 .. nbufs - 1 */
    struct pvm_bufslot *bufs;
    int nbufs;
    int free_hint;             /* no free id below this */
    int sbuf, rbuf;            /* active buffers, 0 = none */

    int ctx;                   /* current context */
    int opt[PVM_NOPTS];        /* pvm_setopt values */

    /* receiving */
    list_link_t inq;           /* struct pvm_qmsg, arrival order */
    upvm_waitq_t recvq;        /* the task itself, blocked in a receive */
    bool waiting;              /* blocked in a receive for want_* */
    int want_tid, want_tag, want_ctx;
    int (*recvf)(int bufid, int tid, int tag); /* NULL: default matching */

    struct pvm_mhf *mhfs;      /* pvm_addmhf, index = id - PVM_MHF_FIRST */
    int nmhfs;
    int active_mhfs;

    void *results[PVM_RESULT_COUNT]; /* see enum pvm_result */
    int nresult_waits;          /* entries of results[PVM_RESULT_TASK_WAITS] */
    void *grp_cache;           /* groups.c: the static groups it knows
                                * (libgpvm3's cache), in its memory */
    list_link_t watchers;      /* struct pvm_watch on this task's exit */
    bool sibs_pending;         /* spawned for another node: its list comes */
    bool sibs_private;         /* sibs is its own copy, in its heap */
    bool moving;               /* a migration has it (src/migrate) */
    bool placed;               /* moved by the program or a user: the
                                * balancer leaves it there (src/gs) */
    bool hold_local;           /* just arrived: this node's own sends to it
                                * wait for the flush (pvm/move.h) */
    bool exiting;              /* pvm_exit in progress */
    bool tev_on;               /* its calls send trace events (tev.h) */
    uint16_t trc_depth;        /* UPVM trace: timeline calls in progress (tev.h) */
    struct pvm_tev *tev;       /* its tracers, NULL: none set (tev.c) */

    /* its heaviest partners (pvm_count_send) */
    struct pvm_traffic traffic[PVM_TRAFFIC_PEERS];

    /* output (catchout.c) */
    int out_to;                /* the task that catches its output, 0: none */
    FILE *catch_file;          /* pvm_catchout's file, NULL: none; */
    int catch_which;           /* or its program's stdout (1), stderr (2) */
};

/* Handler ids start here (0..8 are libpvm's own system handlers). */

#define PVM_MHF_FIRST 9

/* The node's PVM state. */
struct pvm_node {
    bool ready;
    int host_tid;              /* 1 << 18 for this (only) node */
    char hostname[256];
    struct pvm_task **tids;    /* by local tid part */
    int ntids;                 /* slots in tids */
    int ntaken;                /* local parts taken in tids (tasks, PVM_TASK_AWAY) */
    int local_max;             /* the largest local part handed out */
    int next_local;            /* next local part to hand out */
    list_link_t tasks;         /* live tasks, oldest first */
    int ntasks;
    int next_ctx;              /* newcontext: host_tid | next_ctx */
    int *ctxs;                 /* contexts handed out and not freed */
    int nctxs, capctxs;
    int delivery;              /* UPVM_DELIVER_SHARE / COPY */
    list_link_t host_watches;  /* PvmHostAdd registrations */
    list_link_t free_qmsgs;    /* pool of struct pvm_qmsg */
    upvm_waitq_t sibsq;        /* tasks waiting for their siblings list */
    int placement;             /* PVM_PLACE_*: where pvm_spawn puts tasks */
};

enum { PVM_PLACE_CYCLIC, PVM_PLACE_BLOCK };

/* The one copy of the string s that lives as long as the node. */
const char *pvm_intern(const char *s) HIDDEN;

/* Initialise the node's PVM state if not done yet: 0 or -1. */
int pvm_node_ensure(void) HIDDEN;

/* Who starts a job's nodes when a thread-mode program makes its first PVM
 * call (UPVM_NODES): src/run registers it when the library loads, as the
 * PVM layer cannot start the layers above it.  It returns this node. */
typedef int (*pvm_job_starter_fn)(int dflt_nodes);
void pvm_set_job_starter(pvm_job_starter_fn fn) HIDDEN;

/* pvm_start_pvmd's work, registered by src/run: start this user's VM
 * (node/vm.h) when none is up.  0: started; 1: one was up; -errno. */
typedef int (*pvm_vm_starter_fn)(void);

/* This node is a program that joined a VM: where its tids start. */
void pvm_tids_after_join(void) HIDDEN;
void pvm_set_vm_starter(pvm_vm_starter_fn fn) HIDDEN;
/* UPVM_DELIVERY=copy sets pvm_node.delivery (share, or unset, leaves it);
 * read at the node's start and by the launcher before the fork, so that a
 * bad value is said once per job. */
void pvm_delivery_from_env(void) HIDDEN;

extern struct pvm_node pvm_node HIDDEN;

/* t sent a message of `bytes` to dst: counted among its partners (a
 * partner not listed replaces the lightest, which it inherits the count
 * of plus one: the heavy hitters stay).  A few nanoseconds. */
static inline void pvm_count_send(struct pvm_task *t, int dst, size_t bytes)
{
    struct pvm_traffic *tr = t->traffic, *least = tr;
    for (int i = 0; i < PVM_TRAFFIC_PEERS; i++) {
        if (tr[i].tid == dst) {
            tr[i].msgs++;
            tr[i].bytes += bytes;
            return;
        }
        if (tr[i].msgs < least->msgs)
            least = &tr[i];
    }
    least->tid = dst;
    least->msgs++;
    least->bytes = bytes;
}

/* Each live task of this node with its partners since the last call
 * (reset then): for the balancer's reports (src/gs). */
typedef void (*pvm_task_visit_fn)(void *ctx, int tid, struct ulp *u, bool placed,
                                  const struct pvm_traffic peers[PVM_TRAFFIC_PEERS]);
void pvm_tasks_visit(pvm_task_visit_fn fn, void *ctx) HIDDEN;

/*
 * The calling task, enrolling the calling ULP if it is not one yet.  NULL
 * when called off the node's scheduler thread or when enrolment fails (no
 * memory): callers return PvmSysErr then.
 */
struct pvm_task *pvm_enroll(struct ulp *u) HIDDEN;

static inline struct pvm_task *pvm_current(void)
{
    if (unlikely(core_enter() != 0))
        return NULL;
    struct pvm_task *t = core_current()->ext[ULP_EXT_PVM];
    return likely(t != NULL) ? t : pvm_enroll(core_current());
}

/* The opening of every API function: the calling task in t, or the
 * PvmSysErr report for a call made off the node's scheduler thread. */
#define TASK_OR_FAIL(t, fn)                                     \
    struct pvm_task *t = pvm_current();                         \
    if (unlikely(!t))                                           \
        return pvm_fail(NULL, fn, PvmSysErr)

/* In pvm_node.tids: a task of this node's that lives on another node now
 * (migrated): its local part is not handed out again. */
#define PVM_TASK_AWAY ((struct pvm_task *)1)

/* Whether a tid is left for one more task of this node's (18 bits of
 * local part: 262,143 tids, taken by its tasks and by those that moved
 * away); when none is, says so once per node. */
bool pvm_tid_left(void) HIDDEN;

/* A task that came from another node (its tid's host part is not this
 * node's), or NULL (task.c). */
struct pvm_task *pvm_visitor(int tid) HIDDEN;
extern int pvm_nvisitors HIDDEN;

/* The live task with this tid, or NULL. */
static inline struct pvm_task *pvm_task_by_tid(int tid)
{
    if ((tid & PVM_TID_HOST_MASK) != pvm_node.host_tid || tid < 0)
        return unlikely(pvm_nvisitors > 0) && tid > 0 ? pvm_visitor(tid) : NULL;
    int local = tid & PVM_TID_LOCAL_MASK;
    struct pvm_task *t = local < pvm_node.ntids ? pvm_node.tids[local] : NULL;
    return likely(t != PVM_TASK_AWAY) ? t : NULL;
}

/* Memory that belongs to task t: in a process-mode task's own heap, so
 * that it moves with the task, else libc's.  pvm_task_alloc zeroes. */
void *pvm_task_alloc(struct pvm_task *t, size_t n) HIDDEN;
void *pvm_task_realloc(struct pvm_task *t, void *p, size_t n) HIDDEN;
void pvm_task_free(struct pvm_task *t, void *p) HIDDEN;

/* Migration (task.c): take t out of this node's tables (it leaves) / put
 * it in (it arrived, for ULP u).  0 or PvmNoMem. */
void pvm_task_unregister(struct pvm_task *t) HIDDEN;
int pvm_task_register(struct pvm_task *t, struct ulp *u) HIDDEN NODISCARD;
/* Give t its own copy of its siblings list (in its heap): 0 or PvmNoMem. */
int pvm_task_own_sibs(struct pvm_task *t) HIDDEN;

/* True for a value that can name a task (host and local parts both
 * non-zero, no bit outside them), whether or not it exists.  PVM's
 * TIDISTASK also refuses bit 30 (its group-tid flag): 0x40040001 is
 * PvmBadParam there, not a task that is gone. */
static inline bool pvm_is_task_tid(int tid)
{
    return !(tid & ~(PVM_TID_HOST_MASK | PVM_TID_LOCAL_MASK)) && (tid & PVM_TID_HOST_MASK) &&
           (tid & PVM_TID_LOCAL_MASK);
}

/* A zeroed array of n elements of size bytes for result slot `which` of t,
 * replacing (freeing) the one the previous call returned; NULL if out of
 * memory.  Freed when t leaves. */
void *pvm_task_result(struct pvm_task *t, enum pvm_result which, size_t n, size_t size) HIDDEN;

/* What task k waits for, in a few words ("recv from t40001 tag 5",
 * "pvm_barrier", "sleeping"), or "" when it runs or may run. */
#define PVM_WAITS_MAX 48
void pvm_task_waits(const struct pvm_task *k, char *buf, size_t len) HIDDEN;

/*
 * The calling task's state of a language binding (src/fpvm): a zeroed
 * block of `size` bytes in the task's memory, made by the first call and
 * the same block afterwards (a binding keeps one size), so that it moves
 * with the task; freed when the task leaves PVM.  NULL when the caller is
 * no task and cannot become one, or out of memory.
 */
void *pvm_task_binding(size_t size) HIDDEN;

/* pvm_addmhf for a handler that takes the buffer id by reference (a
 * Fortran function: pvmfaddmhf): the same checks, ids and errors. */
int pvm_addmhf_byref(int src, int tag, int ctx, int (*fn)(int *bufid)) HIDDEN;

/* Leave PVM (pvm_exit, or the task's ULP ended): notifications, groups,
 * mailbox, buffers, queue; the ULP stops being a task. */
void pvm_task_leave(struct pvm_task *t) HIDDEN;

/*
 * A call that programs poll in a loop (pvm_nrecv, pvm_probe, pvm_pstat,
 * pvm_gsize, pvm_lookup, ...) lets the other ready ULPs run first: under
 * PVM such a call is a round trip to a daemon, during which the others
 * progress; with cooperative ULPs a loop of calls that never give the CPU
 * away would wait forever for a task that cannot run.  Costs nothing when
 * no other ULP is ready.
 */
static inline void pvm_poll_yield(void)
{
    upvm_yield();
}

/* ------------------------------------------------------------ errors */

/*
 * Record error code in the task's pvm_errno and, per PvmAutoErr, report it
 * as PVM does ("libpvm [t40001]: pvm_send(): Bad parameter"); level 2 then
 * ends the task, level 3 aborts.  Returns code.  t may be NULL (off-thread).
 */
int pvm_fail(struct pvm_task *t, const char *fn, int code) HIDDEN;

/* Record code in pvm_errno without a report (the silent errors of PVM).
 * Returns code. */
static inline int pvm_fail_silent(int code)
{
    pvm_errno = code;
    return code;
}

/* The text of a code (pvm_errlist, "Unknown Error" outside). */
const char *pvm_errtext(int code) HIDDEN;
/*
 * pvm_code_from_errno - the PVM code for an internal result (docs/
 * architecture.md, "One error model"): rc >= 0 is returned unchanged; a
 * negative errno becomes the PVM code it stands for, one errno per code:
 *   -EINVAL PvmBadParam   -EOVERFLOW PvmOverflow   -ENODATA PvmNoData
 *   -ENOMEM PvmNoMem      -EBADMSG   PvmBadMsg     -EBADF   PvmNoBuf
 *   -ENOSYS PvmNotImpl    -ESRCH     PvmNoTask     -EHOSTDOWN PvmHostFail
 *   -ENOSPC PvmOutOfRes
 * and any other errno PvmSysErr.  Apply it once, where the errno result is
 * taken (a msg_* call): PVM codes and errno values overlap (-ENOMEM is
 * PvmBadMsg's -12), so a PVM code must never be passed through it.
 */
int pvm_code_from_errno(int rc) HIDDEN;

/* "t40001", or "pid123" for a ULP that is not a task, into buf. */
const char *pvm_whoami(char *buf, size_t len) HIDDEN;

/* ------------------------------------------------------------ buffers */

/* The buffer with this id, or NULL. */
static inline msg_buf_t *pvm_buf(struct pvm_task *t, int id)
{
    return id > 0 && id < t->nbufs ? t->bufs[id].buf : NULL;
}

/* Give b a new id in t (lowest free).  Returns the id or PvmNoMem (b is
 * then still the caller's). */
int pvm_buf_install(struct pvm_task *t, msg_buf_t *b) HIDDEN;

/* Drop id (and its message; a queued one leaves the queue). */
void pvm_buf_drop(struct pvm_task *t, int id) HIDDEN;

/* Free every buffer and queued message of t. */
void pvm_bufs_release(struct pvm_task *t) HIDDEN;

/* New empty buffer in enc, installed; returns id or error (not reported). */
int pvm_buf_make(struct pvm_task *t, int enc) HIDDEN;

/* Make id the active receive buffer, freeing the previous one. */
void pvm_set_rbuf_replacing(struct pvm_task *t, int id) HIDDEN;

/* Free the receive buffer, then install b as the new one.  Returns its id
 * or PvmNoMem (b is then still the caller's). */
int pvm_buf_install_as_rbuf(struct pvm_task *t, msg_buf_t *b) HIDDEN;

/* ------------------------------------------------------------ messages */

/*
 * Deliver message b (its header filled in: src, dst, tag, ctx) to task
 * dst: b is consumed (queued or freed).  Wakes dst if it waits for such a
 * message.  Returns 0 or PvmNoMem.
 */
int pvm_deliver(struct pvm_task *dst, msg_buf_t *b) HIDDEN;

/*
 * A holder of src's message for one more receiver, following the node's
 * delivery strategy (a reference, or a private copy).  0 or PvmNoMem.
 */
int pvm_buf_for_receiver(msg_buf_t *src, msg_buf_t **out) HIDDEN;

/* Send b, a message t made (consumed), to dst_tid with tag and ctx, as
 * t's ordinary messages go: the trace messages (tev.c); t NULL: from the
 * "pvmd" (PVM_TID_PVMD).  0 or a PVM error; nothing is sent, silently,
 * to a task that is gone. */
int pvm_send_msg(struct pvm_task *t, msg_buf_t *b, int dst_tid, int tag, int ctx) HIDDEN;

/* Send the int `value` from the pvmd (source PVM_TID_PVMD) to tid with
 * tag and ctx: notify messages.  Silently nothing if tid is gone. */
void pvm_send_pvmd_int(int tid, int tag, int ctx, int value) HIDDEN;

/* Remove the incoming-queue entry q (and its buffer unless keep_buf). */
void pvm_qmsg_free(struct pvm_qmsg *q) HIDDEN;

/* Exported, not declared in pvm3.h (nor in PVM's): the va_list forms. */
UPVM_API int pvm_vpackf(const char *fmt, va_list ap);
UPVM_API int pvm_vunpackf(const char *fmt, va_list ap);
/* Declared by pvm3.h only under NOTMPNAM, exported always (as by PVM). */
UPVM_API char *pvmtmpnam(char *buf);

/* ------------------------------------------------------------ other layers */

/* mailbox.c / groups.c: the task is leaving; drop what it owns. */
void pvm_mbox_task_leave(struct pvm_task *t) HIDDEN;
void pvm_groups_task_leave(struct pvm_task *t) HIDDEN;

/* host.c: option defaults for a new task; the node's host name. */
void pvm_opts_init(struct pvm_task *t) HIDDEN;

/* catchout.c: the output of caught tasks (pvm_catchout).  The child t,
 * just spawned by a task whose PvmOutputTid is out (0: none), writes to
 * it; its BEGIN goes there now. */
void pvm_output_spawned(struct pvm_task *t, int out) HIDDEN;
/* pvm_exit of t: while tasks it catches still write, it waits (PVM's
 * "child task(s) still running.  waiting..."). */
void pvm_output_wait(struct pvm_task *t) HIDDEN;
/* t leaves PVM: its catcher learns it (before its exit is told). */
void pvm_output_left(struct pvm_task *t) HIDDEN;
/* The frames and the proc layer's router; node n died (its tasks' output
 * ends). */
void pvm_output_register(void) HIDDEN;
void pvm_output_node_gone(int n) HIDDEN;
void pvm_host_init(void) HIDDEN;

#endif /* UPVM_PVM_H */
