/*
 * tev.h - PVM 3.4.6's own tracing (pvmtev.h), per task: the entry and exit
 * points every API call passes, and the events they send to the task's
 * tracer in libpvm's message format (docs/pvm-tracing.md; the format:
 * docs/design-notes.md §14.2).
 *
 * Every traced API function has this shape, and these two points are the
 * only place where an API call is entered and left (UPVM's binary trace
 * hooks in here too):
 *
 *     struct pvm_api a;
 *     if (pvm_api_enter(t, &a, TEV_SEND)) {   // an ENTRY event is open
 *         pvm_tev_int(t, TEV_DID_DST, tid);   // its values, in PVM's order
 *         pvm_tev_end(t);                     // closed: sent or buffered
 *     }
 *     ... the call ...
 *     if (pvm_api_leave(t, &a)) {             // an EXIT event is open
 *         pvm_tev_int(t, TEV_DID_CC, cc);
 *         pvm_tev_end(t);
 *     }
 *
 * When the task is not traced (t->tev_on false) each point is one load
 * and a branch.  A call made inside another traced call is not traced
 * (PVM's TEV_EXCLUSIVE: pvm_exit's receives, a group call's sends); an
 * event kind off in the task's mask opens no event.  Trace messages are
 * sent with the task's ordinary send path, never traced themselves, and
 * never to tid <= 0 or to the task itself.
 */
#ifndef UPVM_PVM_TEV_H
#define UPVM_PVM_TEV_H

#include <stdbool.h>

#include "pvm/pvm.h"

/* One API call in progress: a local of the API function.  The flags are
 * one word, cleared with one store on entry and tested with one load on
 * the way out, so that a call traced by neither tracing costs that. */
struct pvm_api {
    int kind; /* TEV_SEND ... */
    union {
        struct {
            bool top;     /* entered while traced, outermost: its exit is traced too */
            bool counted; /* UPVM trace: a timeline call, counted in t->trc_depth */
            bool shown;   /* ... and the outermost one: API_ENTER recorded */
        };
        uint32_t any; /* any of them */
    };
};

bool pvm_tev_enter(struct pvm_task *t, struct pvm_api *a) HIDDEN;
bool pvm_tev_leave(struct pvm_task *t, struct pvm_api *a) HIDDEN;
/* The UPVM trace's API_ENTER / API_LEAVE (util/trace.h): the calls the
 * timeline shows (messages, groups, spawn, exit: not the packing), the
 * outermost only. */
void pvm_trc_enter(struct pvm_task *t, struct pvm_api *a) HIDDEN;
void pvm_trc_leave(struct pvm_task *t, struct pvm_api *a) HIDDEN;

/* The call starts: true when t's ENTRY event of kind is open (pack its
 * values, then pvm_tev_end). */
static inline bool pvm_api_enter(struct pvm_task *t, struct pvm_api *a, int kind)
{
    a->kind = kind;
    a->any = 0;
    if (likely(!(trc_on | t->tev_on)))
        return false;
    if (trc_on)
        pvm_trc_enter(t, a);
    return t->tev_on && pvm_tev_enter(t, a);
}

/* The call returns: true when its EXIT event is open.  Not called on the
 * paths that end the task (pvm_exit). */
static inline bool pvm_api_leave(struct pvm_task *t, struct pvm_api *a)
{
    if (likely(!a->any))
        return false;
    if (a->counted)
        pvm_trc_leave(t, a);
    return a->top && pvm_tev_leave(t, a);
}

/* The common shapes: an ENTRY event without values; an EXIT event of one
 * int (did: TEV_DID_CC, the call's result, in most calls).  Return v. */
void pvm_tev_end(struct pvm_task *t) HIDDEN;
void pvm_tev_int(struct pvm_task *t, int did, int v) HIDDEN;

static inline void pvm_api_enter_bare(struct pvm_task *t, struct pvm_api *a, int kind)
{
    if (pvm_api_enter(t, a, kind))
        pvm_tev_end(t);
}

static inline int pvm_api_leave_int(struct pvm_task *t, struct pvm_api *a, int did, int v)
{
    if (pvm_api_leave(t, a)) {
        pvm_tev_int(t, did, v);
        pvm_tev_end(t);
    }
    return v;
}

/* The open event's values, each with its data id (TEV_DID_*): an int, an
 * int array of n, a long, a string (NULL: ""), a string array of n.
 * Nothing when the task counts or times events (PvmTraceCount/Time). */
void pvm_tev_int(struct pvm_task *t, int did, int v) HIDDEN;
void pvm_tev_ints(struct pvm_task *t, int did, const int *v, int n) HIDDEN;
void pvm_tev_long(struct pvm_task *t, int did, long v) HIDDEN;
void pvm_tev_str(struct pvm_task *t, int did, const char *s) HIDDEN;
void pvm_tev_strs(struct pvm_task *t, int did, char *const *s, int n) HIDDEN;
/* Close the open event: sent now, or when the buffer is full (PvmTrace
 * Buffer), or counted (Time/Count). */
void pvm_tev_end(struct pvm_task *t) HIDDEN;

/* Send what t holds back: the open buffer (with its end marker), or the
 * one "timing"/"profiling" message of PvmTraceTime/Count (pvm_exit, and
 * when t changes its own buffering or options, as libpvm does). */
void pvm_tev_flush(struct pvm_task *t) HIDDEN;

/* A new task: spawned (tr: its spawner's child tracer, which becomes its
 * own and its children's), or not (tr NULL: PVMTMASK, PVMTRCBUF and
 * PVMTRCOPT from the environment, as libpvm reads them).  0 or PvmNoMem. */
int pvm_tev_task_init(struct pvm_task *t, const struct pvm_tracer *tr) HIDDEN;
/* What t's children start with (its child tracer; no tracer: none), and
 * its own tracer. */
void pvm_tev_child_tracer(const struct pvm_task *t, struct pvm_tracer *out) HIDDEN;
/* The node that starts a spawned task, as the pvmd's exec: a spawn whose
 * spawner gave no tracer (tid 0) gets the registered tracer's settings
 * (pvm_tracer_registered), mask, buffering and option included; trc
 * unchanged otherwise.  The spawner's node still sends spntask to the
 * spawner's own (none), as PVM's does. */
void pvm_tev_exec_tracer(struct pvm_tracer *trc) HIDDEN;
void pvm_tev_self_tracer(const struct pvm_task *t, struct pvm_tracer *out) HIDDEN;
/* t leaves PVM: the events it holds back are dropped (pvm_exit sent
 * them).  t moves to another node: its open buffer (node memory) is sent
 * first; its counts move with it. */
void pvm_tev_release(struct pvm_task *t) HIDDEN;
void pvm_tev_moving(struct pvm_task *t) HIDDEN;

/* pvm_getopt/pvm_setopt of the trace options (PvmTraceTid ... Options,
 * PvmSelfTrace*, the contexts), with PVM's checks.  getopt: the value,
 * *handled false for what is not a trace option.  setopt: 0 (*old: the
 * old value), a PVM error (not reported), or 1: not a trace option. */
int pvm_tev_getopt(struct pvm_task *t, int what, bool *handled) HIDDEN;
int pvm_tev_setopt(struct pvm_task *t, int what, int val, int *old) HIDDEN;

/* pvm_send to (PVM_TRACE_TID, PVM_TRACE_CODE): t's send buffer, a
 * PvmDataTrace one, is a user-defined event: its end marker appended, it
 * goes to t's tracer if the mask has TEV_USER_DEFINED.  0 or a PVM error. */
int pvm_tev_user_event(struct pvm_task *t) HIDDEN;

/* A PvmDataTrace buffer (pvm_mkbuf, pvm_initsend): b starts with the
 * user event's head (its marker, TEV_USER_DEFINED, "user_defined", the
 * time); each pk packs the values' type (and count when more than one)
 * before them, a string its characters only (type PVM_STR, n = its
 * length); pk of no int but a negative one packs that one (a marker).
 * 0 or a negative errno (msg_pack's). */
int pvm_tev_user_header(msg_buf_t *b) HIDDEN;
int pvm_tev_user_pack(msg_buf_t *b, int type, const void *p, int n, int stride) HIDDEN;

/* The pvmd's events to tracer tr (none when tr->tid <= 0), sent from
 * PVM_TID_PVMD as PVM's pvmd sends them (the data-id table before the
 * first, once per tracer): newtask (the node where task tid starts), spntask (the
 * spawner's node, for each task its spawn started), endtask (t ends; its
 * status and CPU time). */
void pvm_tev_newtask(const struct pvm_tracer *tr, int tid, int ptid, int flags,
                     const char *name) HIDDEN;
void pvm_tev_spntask(const struct pvm_tracer *tr, int tid, int ptid) HIDDEN;
void pvm_tev_endtask(const struct pvm_tracer *tr, const struct pvm_task *t, int status) HIDDEN;

/* pvm_reg_tracer (tracer.c): the job's registered tracer, kept by node 0,
 * a copy on every node.  Register t with these settings (for the tasks
 * that start with no tracer of their own), or, when t is the tracer,
 * unregister (libpvm's toggle: the arguments are then not looked at).
 * 0, PvmAlready (another task is the tracer), PvmNoTask, PvmSysErr (node
 * 0 is gone); not reported. */
int pvm_tracer_register(struct pvm_task *t, int tctx, int ttag, int octx, int otag,
                        const char *tmask, int tbuf, int topt) HIDDEN;
/* This node's copy: true, and what a task that starts without a tracer of
 * its own gets in *out (its tid the tracer's), when a tracer is registered
 * with a tag other than 0 (the pvmd's test). */
bool pvm_tracer_registered(struct pvm_tracer *out) HIDDEN;
/* Task tid ended: if it is the tracer, the registration ends (job-wide). */
void pvm_tracer_task_left(int tid) HIDDEN;
/* Node n came up (node 0 sends it its copy) / is gone (with the tracer?). */
void pvm_tracer_peer_up(int n) HIDDEN;
void pvm_tracer_peer_gone(int n) HIDDEN;
void pvm_tracer_register_frames(void) HIDDEN;

/* The events' and data ids' names and descriptions (PVM's global.c). */
const char *pvm_tev_name(int kind) HIDDEN;
const char *pvm_tev_did_name(int did) HIDDEN;
const char *pvm_tev_did_desc(int did) HIDDEN;

#endif /* UPVM_PVM_TEV_H */
