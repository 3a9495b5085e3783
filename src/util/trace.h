/*
 * trace.h - the UPVM trace's record and its hot path (docs/tracing.md,
 * design notes §14.4).
 *
 * Any layer records an event with one call, trc_put(kind, flags, id, a, b,
 * c): when tracing is off that is one load of a read-mostly flag and a
 * branch never taken; when on, a 32-byte record stored into this thread's
 * chunk of the node's memory-mapped trace file, with no lock.  The trace
 * layer (src/trace) maps the file, registers trc_refill_fn (a new chunk
 * when this thread's is full) and sets trc_on before any ULP runs; util
 * calls nothing above it.  Why not a hook list in core and node
 * (architecture decision 14): an indirect call per event would cost more
 * than the record.
 *
 * A record is stored field by field with `kind` last, after a compiler
 * fence: x86 makes stores visible in program order, so a reader of the
 * file of a node that was killed stops at the first record of a chunk
 * whose kind is still 0.
 */
#ifndef UPVM_UTIL_TRACE_H
#define UPVM_UTIL_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "util/compiler.h"

/* One event, 32 bytes, little-endian as stored.  `ts` is in TSC ticks or
 * CLOCK_MONOTONIC ns, as the file's header says (src/trace/rawfile.h). */
struct trc_rec {
    uint16_t kind;  /* enum trc_kind; 0 = not written */
    uint16_t flags; /* per kind */
    uint32_t id;    /* whose event: a task's tid, or ULP_TRC_NOTASK | ULP id */
    uint64_t ts;
    uint32_t a, b;
    uint64_t c;
};
_Static_assert(sizeof(struct trc_rec) == 32, "two records per cache line");

/* The record kinds and what their fields mean.  `str` is a string key
 * (trc_str, trc_str_copy): the converter finds its text in an earlier
 * TRC_STR of the same file. */
enum trc_kind {
    TRC_NONE = 0,
    /* the trace layer's own */
    TRC_CHUNK = 1,    /* first record of a chunk: id = writer (a number per
                       * thread of this process), a = the writer's chunk
                       * sequence (0, 1, ...), b = the thread's Linux tid */
    TRC_STR = 2,      /* a string's definition: c = its key, a = length in
                       * bytes, b = the TRC_TEXT records that follow */
    TRC_TEXT = 3,     /* 24 bytes of the string (struct trc_text), flags =
                       * piece index; the last piece is NUL-padded */
    TRC_CLOCK = 4,    /* ts = TSC, c = CLOCK_MONOTONIC ns at the same moment
                       * (a calibration pair; a = its uncertainty in ticks) */
    TRC_OFFSET = 5,   /* this host's clock to node 0's: c = offset ns as
                       * int64 (node 0's = local + offset), a = the round
                       * trip ns, b = 0 at start, 1 at the end */
    /* core */
    TRC_SWITCH = 16,  /* id = the ULP now running, a = the one before,
                       * flags = the one before's enum ulp_state */
    TRC_BLOCK = 17,   /* id = the ULP blocking, c = str: the wait queue's
                       * name, a = timeout ms (0 = none) */
    TRC_WAKE = 18,    /* id = the ULP woken, a = its waker (0: a timer, a
                       * frame, the node) */
    /* blt */
    TRC_COUPLE = 19,  /* id = the ULP, c = str: what it is coupled for */
    TRC_DECOUPLE = 20,/* id = the ULP */
    /* pvm */
    TRC_API_ENTER = 21, /* id = tid, a = TEV code (pvmtev.h), c = str: the
                         * function's name */
    TRC_API_LEAVE = 22, /* id = tid, a = TEV code, b = its result */
    TRC_SEND = 23,    /* id = sender tid, a = destination tid, b = tag,
                       * c = ctx << 32 | bytes */
    TRC_RECV = 24,    /* id = receiver tid, a = source tid, b = tag,
                       * c = ctx << 32 | bytes */
    TRC_SPAWN = 25,   /* id = the parent, a = the child's tid, b = the node
                       * it starts on, c = str: program name */
    TRC_TASK_BEGIN = 26, /* id = tid, a = parent tid, b = this node, c = str:
                          * program name */
    TRC_TASK_END = 27,   /* id = tid, a = exit status */
    TRC_GROUP = 28,   /* id = tid, flags = enum trc_group_op (| TRC_END for
                       * its end), c = str: group name; begin: a = the
                       * barrier's count, bcast's tag, the root instance
                       * (reduce, gather, scatter), b = items; end: a = the
                       * result (join: the instance) */
    /* migrate */
    TRC_MIGRATE = 29, /* id = tid, flags = enum trc_migrate_stage, a = the
                       * other node, c = bytes moved so far */
    /* gs */
    TRC_BALANCE = 30, /* id = task, a = from node, b = to node, c = str:
                       * the policy */
    TRC_LOAD = 31,    /* id = 0, a = node, b = its load in per mille */
    /* node */
    TRC_NODE = 32,    /* flags = enum trc_node_event, a = node, b = code */
    TRC_KIND_MAX
};

/* What a string piece looks like: the bytes after kind, flags and id. */
struct trc_text {
    uint16_t kind, flags;
    uint32_t id; /* the string's key, low 32 bits */
    char text[24];
};
_Static_assert(sizeof(struct trc_text) == sizeof(struct trc_rec), "a record");

enum trc_group_op {
    TRC_GROUP_JOIN = 1,
    TRC_GROUP_LEAVE,
    TRC_GROUP_BARRIER,
    TRC_GROUP_BCAST,
    TRC_GROUP_REDUCE,
    TRC_GROUP_GATHER,
    TRC_GROUP_SCATTER,
};
#define TRC_END 0x100 /* in flags: the end of a collective (else its begin) */

enum trc_migrate_stage {
    TRC_MIG_REQUEST = 1,
    TRC_MIG_PREPARE_ASKED,
    TRC_MIG_SLOT_READY,
    TRC_MIG_PREPARED,
    TRC_MIG_FROZEN,
    TRC_MIG_STATE_SENT,
    TRC_MIG_DATA_SENT,
    TRC_MIG_ARRIVED,
    TRC_MIG_RESTARTED,
    TRC_MIG_ANSWERED,
    TRC_MIG_FAILED,
};

enum trc_node_event {
    TRC_NODE_UP = 1,   /* a = the node that came up */
    TRC_NODE_GONE,     /* a = the peer that went away */
    TRC_NODE_ENDING,   /* a = this node, b = its exit code */
};

/* A ULP that is not a PVM task has this bit in its trace id. */
#define ULP_TRC_NOTASK 0x80000000u

/* ---------------------------------------------------------------- state */

extern bool trc_on HIDDEN;          /* written before any ULP runs */
extern bool trc_clock_tsc HIDDEN;   /* ts is TSC ticks (else monotonic ns) */
extern __thread struct trc_rec *trc_cur
    __attribute__((tls_model("initial-exec"))) HIDDEN;
extern __thread struct trc_rec *trc_end
    __attribute__((tls_model("initial-exec"))) HIDDEN;
/* This thread's next free record once its chunk is full (or it has none
 * yet), NULL when the file is full (the record is counted as lost).
 * Registered by src/trace. */
extern struct trc_rec *(*trc_refill_fn)(void) HIDDEN;
/* The key of a string whose text a string key stands for, written to the
 * file (TRC_STR) the first time it is seen.  Registered by src/trace. */
extern uint64_t (*trc_str_fn)(const char *s, bool copy) HIDDEN;

/* ----------------------------------------------------------- recording */

static inline uint64_t trc_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Now, in the file's unit. */
static inline uint64_t trc_now(void)
{
    return likely(trc_clock_tsc) ? __builtin_ia32_rdtsc() : trc_mono_ns();
}

static inline void trc_store(uint64_t ts, uint16_t kind, uint16_t flags, uint32_t id,
                             uint32_t a, uint32_t b, uint64_t c)
{
    struct trc_rec *r = trc_cur;
    if (unlikely(r == trc_end)) {
        r = trc_refill_fn();
        if (!r)
            return;
    }
    r->ts = ts;
    r->flags = flags;
    r->id = id;
    r->a = a;
    r->b = b;
    r->c = c;
    atomic_signal_fence(memory_order_release); /* kind last: see the top */
    r->kind = kind;
    trc_cur = r + 1;
}

/* Record an event now. */
static inline void trc_put(uint16_t kind, uint16_t flags, uint32_t id, uint32_t a,
                           uint32_t b, uint64_t c)
{
    if (unlikely(trc_on))
        trc_store(trc_now(), kind, flags, id, a, b, c);
}

/* Record an event at a TSC value the caller has just read (the scheduler's
 * switch reads one anyway). */
static inline void trc_put_tsc(uint64_t tsc, uint16_t kind, uint16_t flags, uint32_t id,
                               uint32_t a, uint32_t b, uint64_t c)
{
    if (unlikely(trc_on))
        trc_store(likely(trc_clock_tsc) ? tsc : trc_mono_ns(), kind, flags, id, a, b, c);
}

/* The key of a string that lives as long as the process (a literal, a wait
 * queue's name): its address.  Only when trc_on. */
static inline uint64_t trc_str(const char *s)
{
    return s ? trc_str_fn(s, false) : 0;
}

/* The key of a string that may change or be freed (a group's or a
 * program's name): a hash of its text, with the top bit set (no user
 * address has it).  Only when trc_on. */
static inline uint64_t trc_str_copy(const char *s)
{
    return s ? trc_str_fn(s, true) : 0;
}

#endif /* UPVM_UTIL_TRACE_H */
