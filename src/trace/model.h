/*
 * model.h - what the converters and the summary share, built once from the
 * reader's time line (design notes §14.7):
 *   - residencies: a task's stay on one node (a migration ends one on the
 *     old node at FROZEN and starts one on the new node at ARRIVED or
 *     RESTARTED); every task event belongs to one;
 *   - messages: each SEND matched to its RECV, FIFO per (source tid,
 *     destination tid, context, tag), which is exact for PVM (delivery is
 *     in order per pair and a receive takes the oldest match);
 *   - migrations: each FROZEN matched to the task's next RESTARTED;
 *   - slices: properly nested intervals per residency (task, API call,
 *     wait, coupled, group operation, migrating), as both the JSON and
 *     OTF2 show them.  A slice open at a FROZEN is cut there and continues
 *     on the new residency at RESTARTED ("continued").
 */
#ifndef UPVM_TRACE_MODEL_H
#define UPVM_TRACE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/reader.h"

#define TRACE_NONE ((size_t)-1)

struct trace_res {
    uint32_t tid;
    int file;        /* the node's file (trace.files index) */
    int node;
    int from_node;   /* the node it migrated from, -1 when it started here */
    int64_t first_ns, last_ns; /* of its events */
    bool frozen;     /* its FROZEN seen (a move away is under way or done) */
    uint64_t events;
};

enum trace_slice_kind {
    SL_TASK,      /* TASK_BEGIN .. TASK_END; str: program */
    SL_API,       /* API_ENTER .. API_LEAVE; str: the function */
    SL_WAIT,      /* BLOCK .. WAKE; str: the wait queue */
    SL_COUPLED,   /* COUPLE .. DECOUPLE; str: what for */
    SL_GROUP,     /* GROUP begin .. end; op, str: the group */
    SL_MIGRATING, /* FROZEN (old node) .. RESTARTED, on the new residency */
};

struct trace_slice {
    int res;
    enum trace_slice_kind kind;
    unsigned op;       /* SL_GROUP: enum trc_group_op; SL_API: the TEV code */
    const char *str;   /* may be NULL */
    int64_t begin, end;
    size_t begin_ev, end_ev; /* event indices, TRACE_NONE where made up */
    bool continued;    /* the rest of a slice cut by a migration */
    bool unfinished;   /* no end in the trace: ends at its track's last event */
    int64_t result;    /* SL_API: API_LEAVE's b */
};

struct trace_msg {
    size_t send, recv; /* event indices */
};

struct trace_model {
    struct trace *t;
    struct trace_res *res;
    size_t nres;
    int *res_of;       /* per event: its residency, -1 for node-level ones */
    int *res_prev;     /* per SWITCH event: the residency of `a` (-1) */
    size_t *peer;      /* per SEND/RECV event: the matched one, TRACE_NONE */
    size_t *peer_mig;  /* per FROZEN/RESTARTED: the matched one */
    struct trace_msg *msgs; /* in SEND order */
    size_t nmsgs;
    struct trace_msg *migs; /* (FROZEN, RESTARTED) pairs */
    size_t nmigs;
    struct trace_slice *slices; /* per residency nested, in no set order */
    size_t nslices;
    uint64_t unmatched_sends, unmatched_recvs;
    uint64_t violations;      /* RECV earlier than its SEND */
    int64_t max_violation_ns;
};

/* 0, or -1 (out of memory: said). */
int trace_model_build(struct trace *t, struct trace_model *m);
void trace_model_free(struct trace_model *m);

/* Whether an id is a PVM task (not 0, not a ULP without a task). */
static inline bool trace_is_task(uint32_t id)
{
    return id && !(id & ULP_TRC_NOTASK);
}

/* A small hash map, (k1, k2) -> (v1, v2), for the converters: zero it to
 * start; trace_map_find returns the slot (made with v1 = v2 = TRACE_NONE
 * when add), or NULL; a slot is valid until the next add. */
struct trace_map_slot {
    uint64_t k1, k2;
    size_t v1, v2;
    bool used;
};
struct trace_map {
    struct trace_map_slot *s;
    size_t cap, n;
};
struct trace_map_slot *trace_map_find(struct trace_map *m, uint64_t k1, uint64_t k2, bool add);
void trace_map_free(struct trace_map *m);
/* A string's 64-bit hash (FNV-1a), for keys of text. */
uint64_t trace_str_hash(const char *s);

/* Whether a wait queue is one a task waits on for a message. */
bool trace_waitq_is_recv(const char *name);

/* A slice's display name ("pvm_recv", "wait: pvm_recv", "barrier g",
 * "pvm_recv (continued)") into buf. */
void trace_slice_name(const struct trace_slice *s, char *buf, size_t len);

/* A residency's name: "t40003", "t40003 (from node 0)". */
void trace_res_name(const struct trace_res *r, char *buf, size_t len);

#endif /* UPVM_TRACE_MODEL_H */
