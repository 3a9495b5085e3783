/*
 * core.h - the ULP core: ULP objects, stacks, the run queue, wait queues,
 * timers and crash reports.  The one header other layers include.
 *
 * Threading: one scheduler thread per node runs every ULP of the node, so
 * nothing here takes a lock.  Every function below must be called on that
 * thread (from a ULP) unless it says otherwise.
 *
 * Hot path (no syscall, no malloc, no lock): yield, yield-to, block, wake,
 * hand-off.  Creation from a cached stack makes no syscall either; a fresh
 * stack costs one madvise (the guard page).
 */
#ifndef UPVM_CORE_H
#define UPVM_CORE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <upvm.h>

#include "arch/arch.h"
#include "util/compiler.h"
#include "util/list.h"
#include "util/trace.h"

enum ulp_state {
    ULP_READY,    /* on the run queue */
    ULP_RUNNING,  /* core_sched.current */
    ULP_BLOCKED,  /* on a wait queue (maybe also on the timer heap) */
    ULP_SLEEPING, /* on the timer heap only */
    ULP_DEAD,     /* exited; a zombie until joined (unless detached) */
    ULP_COUPLED,  /* off the scheduler, on a kernel context of its own (core_leave) */
};

/* Per-ULP pointers owned by the layers above the core (they are the only
 * per-ULP state the core does not know the shape of).  A fixed index per
 * layer keeps the lookup one load on hot paths; a new layer (blt, svm)
 * adds its entry here when it lands. */
enum ulp_ext {
    ULP_EXT_PVM,     /* src/pvm: the task */
    ULP_EXT_PROC,    /* src/proc: the process state of a process-mode ULP */
    ULP_EXT_MIGRATE, /* src/migrate */
    ULP_EXT_COUNT
};

#define ULP_NO_TIMER UINT32_MAX

struct ulp {
    /* hot: touched on every switch */
    struct arch_ctx ctx;
    list_link_t link;        /* run queue or a wait queue (never both) */
    int saved_errno;
    int saved_word;          /* the layer word's value (core_set_swapped_word) */
    /* its copy of the thread state block (core_set_thread_state: C++'s
     * exception globals), all zero for a ULP that never had any */
    uint64_t saved_state[2];
    uint64_t cpu_tsc;        /* TSC ticks it ran on the scheduler thread, counted
                              * at switches (~3 ns each: the balancer's load) */
    uint64_t cpu_tsc_reported; /* cpu_tsc at the balancer's last report (src/gs) */
    uint8_t state;           /* enum ulp_state */
    bool started;            /* has run at least once */
    bool detached;
    bool joining;            /* someone waits in upvm_join for it */
    bool owns_stack;         /* false for main (the thread's own stack) */
    bool kill_pending;       /* core_ulp_kill: exit when next resumed */
    bool migrate_pending;    /* a migration waits for it to stop running */
    upvm_id_t id;
    uint32_t trc_id;         /* who its trace records name (util/trace.h): a PVM
                              * task's tid (set by pvm), else ULP_TRC_NOTASK | id */
    uint16_t pinned;         /* > 0: it holds its node's memory across a wait
                              * (core_ulp_pin): a migration waits for 0 */
    bool in_join_all;        /* waiting in upvm_join_all for its family */
    bool join_all_done;      /* ... and its family has ended: it returns */
    /* The program copy it belongs to (a process-mode ULP's proc, set by
     * src/proc; a ULP it creates inherits it), or NULL for the node's own:
     * upvm_join_all in a ULP of a family waits for that family only. */
    const void *family;

    /* blocking and timers */
    upvm_waitq_t *waitq;     /* what it is blocked on (ULP_BLOCKED) */
    int wake_result;         /* 0, or -ETIMEDOUT */
    uint32_t timer_index;    /* in the timer heap, or ULP_NO_TIMER */
    uint64_t deadline_ns;
    uint64_t timer_seq;      /* FIFO order among equal deadlines */

    /* stack: [guard][stack_lo .. stack_lo + stack_size) */
    void *stack_lo;
    size_t stack_size;

    /* identity */
    int ordinal;             /* upvm_spawn_func ordinal, or -1 */
    bool ordinal_entry;      /* entry is upvm_ordinal_entry_t */
    union {
        upvm_entry_t plain;
        upvm_ordinal_entry_t ordinal;
    } entry;
    void *arg;
    const char *name;        /* attr name, or NULL: use the entry symbol */

    /* exit */
    int exit_status;
    int kill_status;         /* exit status for kill_pending */
    upvm_waitq_t exitq;      /* its joiner waits here */

    /* A stack the ULP's creator provided (core_ulp_create_on): given back
     * through this call once the ULP is dead and off it, instead of to the
     * stack cache.  NULL for the core's own stacks. */
    void (*stack_release)(struct ulp *u);

    void *ext[ULP_EXT_COUNT];
    /* Coupled (src/blt): the kernel context it runs on, and its link in
     * the scheduler's list of ULPs coming back from one (core_return). */
    void *kc;
    struct ulp *returned_next;
    const char *coupled_for; /* what it does there, for reports ("read()") */
#if UPVM_ASAN
    void *asan_fake_stack;
#endif
#if UPVM_TSAN
    void *tsan_fiber;        /* ThreadSanitizer's fiber for this ULP (NULL: none yet) */
#endif
};

/* The scheduler of this node. */
struct sched {
    struct ulp *current;
    list_link_t runq;
    struct ulp *main;
    int nlive;               /* ULPs not yet exited, main included */
    int njoinall;            /* ULPs blocked in upvm_join_all */
    upvm_waitq_t joinallq;
    int nfamilyjoin;         /* ULPs of a family blocked in upvm_join_all */
    upvm_waitq_t familyq;    /* ... they wait here */
    unsigned ticks;          /* switches since the timers were checked */
    unsigned handoffs;       /* core_block_to hand-offs since the queue's head last ran */
    uint32_t ntimers;        /* mirrors the heap's size for a cheap test */
    struct ulp *drainer;     /* in core_drain: woken instead of a deadlock report */
    const struct core_idle_ops *idle; /* the node's transport, or NULL (one node) */
    uint64_t tsc_mark;       /* TSC at the last switch */
    uint64_t idle_tsc;       /* TSC ticks spent idle (nothing to run) */
    int ncoupled;            /* ULPs on a kernel context (ULP_COUPLED) */
    struct ulp *tramp;       /* the context core_leave hands a ULP off from */
    /* ULPs a kernel context gave back (core_return), pushed from any
     * thread, taken by the scheduler; kick_word wakes its idle wait. */
    struct ulp *_Atomic returned;
    _Atomic uint32_t kick_word;
    _Atomic bool idle_sleeping;
    uint64_t return_spin_ns; /* idle with ULPs coupled: spin this long before sleeping */
    int nkilled_coupled;     /* killed while coupled, not back yet */
    uint64_t next_interrupt_ns; /* when to interrupt them again */
};

/*
 * The scheduler's view of the node's transport (several nodes per job,
 * src/node): set once, by the node layer, on the scheduler thread.
 *   poll: deliver what has arrived from other nodes; may make ULPs ready or
 *         create ULPs, never blocks.  Called when nothing is ready, every
 *         CORE_POLL_INTERVAL switches while something always is, and by
 *         upvm_yield.
 *   wait: nothing is ready: sleep until something may have arrived, or
 *         until deadline_ns (upvm_now_ns clock; UINT64_MAX: none).
 * With a transport, a node whose ULPs are all blocked is not in deadlock
 * (a message may still come): the node layer detects a job-wide one.
 */
struct core_idle_ops {
    void (*poll)(void);
    void (*wait)(uint64_t deadline_ns);
    void (*kick)(void); /* any thread: make wait return (a coupled ULP came back) */
};

extern struct sched core_sched HIDDEN;

void core_set_idle_ops(const struct core_idle_ops *ops) HIDDEN;

/* ------------------------------------------------------------ init */

/* True on this node's scheduler thread, after initialisation. */
extern __thread bool core_on_sched_thread
    __attribute__((tls_model("initial-exec"))) HIDDEN;

/* Make the calling thread the node's scheduler (its code becomes ULP 1).
 * Returns 0, -EPERM if another thread already is. */
int core_init(void) HIDDEN NODISCARD;

/* The guard for every API entry: 0 when on the scheduler thread (after
 * initialising on first use), -EPERM otherwise. */
static inline int core_enter(void)
{
    if (likely(core_on_sched_thread))
        return 0;
    return core_init();
}

/* Scheduler set-up on the scheduler thread (called by core_init), before
 * and after main's ULP exists. */
void core_sched_init(void) HIDDEN;
void core_sched_started(void) HIDDEN;

/* ------------------------------------------------------------ ULPs */

/* The running ULP of the scheduler thread.  Only there. */
static inline struct ulp *core_current(void) { return core_sched.current; }

/* On a kernel context (src/blt): the ULP coupled to it; NULL elsewhere. */
extern __thread struct ulp *core_kc_ulp __attribute__((tls_model("initial-exec"))) HIDDEN;

/*
 * The compiler takes the thread pointer for a constant within a function,
 * so code that runs on one thread before a call and on another after it
 * (core_leave, core_return) must not read a thread-local variable, errno
 * included, on both sides: it reads these instead, which look afresh.
 */
bool core_on_sched_thread_now(void) HIDDEN NOIPA;
struct ulp *core_kc_ulp_now(void) HIDDEN NOIPA;
int *core_errno_now(void) HIDDEN NOIPA;

/* The ULP whose code calls this, on the scheduler thread or on a kernel
 * context; NULL on any other thread. */
static inline struct ulp *core_self(void)
{
    return core_on_sched_thread ? core_sched.current : core_kc_ulp;
}

/* Ids index a table of 4096-entry chunks (ulp.c owns it). */
#define ID_CHUNK_BITS 12
#define ID_CHUNK (1u << ID_CHUNK_BITS)
struct core_id_table {
    struct ulp ***chunks; /* chunks[i][j] is id i * ID_CHUNK + j + 1 */
    uint32_t *used;       /* live entries per chunk */
    size_t nchunks;
    upvm_id_t next_id;
};
extern struct core_id_table core_ids HIDDEN;

/* The ULP with this id, or NULL (never existed, or reclaimed).  Inline:
 * every hand-off by id starts here. */
static inline struct ulp *core_ulp_lookup(upvm_id_t id)
{
    if (id <= 0 || id >= core_ids.next_id)
        return NULL;
    size_t index = (size_t)(id - 1);
    struct ulp **chunk = core_ids.chunks[index >> ID_CHUNK_BITS];
    return chunk ? chunk[index & (ID_CHUNK - 1)] : NULL;
}

/*
 * Create a ULP (ready, tail of the run queue) running fn(arg) on the stack
 * [stack_lo, stack_lo + stack_size) that the caller provides (a process-
 * mode ULP's stack lives in its slot).  The page below stack_lo must be
 * inaccessible (it is reported as the guard on overflow).  When the ULP is
 * dead and nothing runs on its stack any more, release(u) is called (on
 * another ULP) and the core forgets the stack.  Returns 0 and *out, or
 * -ENOMEM / -EINVAL as upvm_create.
 */
int core_ulp_create_on(upvm_entry_t fn, void *arg, const upvm_attr_t *attr, void *stack_lo,
                       size_t stack_size, void (*release)(struct ulp *u),
                       struct ulp **out) HIDDEN NODISCARD;

/* Name for reports: attr name, else the entry's symbol, else "?", followed
 * by what the describer (if any) adds: "worker, PVM task t40002". */
const char *core_ulp_name(const struct ulp *u, char *buf, size_t len) HIDDEN;

/* A layer's addition to a ULP's name in reports: writes at most len bytes
 * (NUL included) to buf and returns how many it wrote before the NUL, 0 for
 * nothing to add.  Called from crash handlers: no allocation, no locks. */
typedef size_t (*core_describer_t)(const struct ulp *u, char *buf, size_t len);
void core_set_describer(core_describer_t fn) HIDDEN;

/* Called (on the dying ULP, before it is marked dead, its exit_status
 * set) for every ULP exit.
 * Layers register at initialisation; at most 8 hooks. */
typedef void (*core_exit_hook_t)(struct ulp *u);
int core_add_exit_hook(core_exit_hook_t hook) HIDDEN NODISCARD;

/* Free a dead ULP's stack, and the ULP itself if nobody will join it.
 * Called by the scheduler after switching away from it. */
void core_ulp_reclaim(struct ulp *u) HIDDEN;

/* ------------------------------------------------------------ scheduling */

/* Put u (READY, not queued) at the tail / head of the run queue. */
void core_make_ready(struct ulp *u) HIDDEN;
void core_make_ready_front(struct ulp *u) HIDDEN;

/* Give the CPU away: the current ULP has already been put where it waits
 * (run queue, wait queue, timer heap) or is dead.  Runs the next ready ULP,
 * waiting in the kernel for a timer when none is ready, and returns when the
 * current ULP is resumed (never, if it is dead). */
void core_schedule(void) HIDDEN;

/* Switch straight to `next` (READY and already off the run queue); the
 * current ULP must already be queued somewhere. */
void core_switch_to(struct ulp *next) HIDDEN;

/* Block the current ULP on q (timeout_ns < 0: forever).  Returns 0 when
 * woken, -ETIMEDOUT when the time ran out. */
int core_block(upvm_waitq_t *q, int64_t timeout_ns) HIDDEN;

/* core_block, handing the CPU to `next` when it is ready (on the run
 * queue): a receiver blocking on a message from a runnable sender runs
 * that sender at once instead of the run queue's head.  next may be NULL. */
int core_block_to(upvm_waitq_t *q, int64_t timeout_ns, struct ulp *next) HIDDEN;

/* Wake one waiter (FIFO) to the run queue; returns it or NULL. */
struct ulp *core_wake_one(upvm_waitq_t *q) HIDDEN;
/* Wake every ULP of q to the front of the run queue, in their order on q:
 * they run before those already ready (src/svm: a page that arrived is
 * used before a request can take it away again).  How many. */
int core_wake_all_front(upvm_waitq_t *q) HIDDEN;

/*
 * A per-ULP copy of one more thread-global int, next to errno: the layer
 * above registers the int's address (pvm_errno) and every switch saves it
 * for the ULP going out and restores it for the one coming in, so each ULP
 * sees its own value.  Call once, at the layer's initialisation.
 */
void core_set_swapped_word(int *addr) HIDDEN;

/*
 * A per-thread block of two words (16 bytes, 8-byte aligned) that each ULP
 * must have its own copy of, as if it were a thread: C++'s exception globals
 * (the caught-exception stack and the uncaught count, which libstdc++
 * keeps per kernel thread: a ULP may switch inside a catch block or
 * while it unwinds).  locate() returns the calling thread's block; it is
 * called on the scheduler thread now, and on a kernel context each time
 * a ULP is coupled to it (src/blt), so the ULP finds its copy there too.
 * From then on every switch saves the block for the ULP going out and
 * restores it for the one coming in; before, switches cost nothing more
 * (a C program never registers one).  A ULP starts with the block zero.
 * The layer that knows the block's owner registers it (src/proc/cxx.c),
 * once: on the scheduler thread, or before the core starts (a library
 * constructor: it takes effect when core_init makes the scheduler); a
 * second registration is ignored.
 */
void core_set_thread_state(void *(*locate)(void)) HIDDEN;

/* True when u's thread state block (its copy, or the thread's own for
 * the running ULP) is not all zero: a C++ exception is being handled, in a
 * catch block or while unwinding; its objects are in the node's memory,
 * so the ULP must not migrate then. */
bool core_ulp_has_state(const struct ulp *u) HIDDEN;

/*
 * End ULP u as if it called upvm_exit(status) the next time it runs: a
 * blocked or sleeping u is woken for that (from its wait queue and timer),
 * a ready one just runs its exit; the running one (a frame handler it
 * polled killed it) ends at its next block, sleep or switch.  Killing a
 * ULP twice keeps the first status.  Code that u would have run is skipped:
 * what it holds (memory, locks of its own) is not released.
 */
void core_ulp_kill(struct ulp *u, int status) HIDDEN;

/*
 * Let every other ULP run until each has exited or is blocked with nothing
 * that could wake it (no ready ULP, no timer): the end of a node whose main
 * is about to exit.  Returns the number of ULPs still alive besides the
 * caller.  No deadlock is reported.
 */
int core_drain(void) HIDDEN;

/* ------------------------------------------------------------ leaving the thread */

/*
 * Bi-level threads (src/blt): a ULP's user context runs for a while on a
 * kernel context (a thread of its own) while the scheduler runs the
 * others, then comes back.
 *
 * core_leave - on the scheduler thread, from the current ULP u: u becomes
 *   ULP_COUPLED, its registers are saved, and handoff(u, arg) is called
 *   on the scheduler thread, off u's stack, once they are: it gives u to a
 *   kernel context (core_kc_resume).  The scheduler then runs the next
 *   ULP.  core_leave returns on that kernel context.  A ULP killed before
 *   it leaves ends instead.
 * core_kc_resume - on a kernel context's thread (kc set up there with
 *   core_kc_init): run u there until it calls core_return; then
 *   released(kc) is called (the KC may be handed a ULP again from then
 *   on), u is given back to its scheduler, and this returns.
 * core_return - on a kernel context, from its coupled ULP: back to the
 *   scheduler, which runs u again when it comes to it; returns there.
 */
struct core_kc {
    struct arch_ctx home;      /* the thread's own context while u runs */
    struct ulp *u;             /* the ULP it runs, or NULL */
    const void *stack_lo;      /* the thread's own stack (sanitizers) */
    size_t stack_size;
    void *asan_fake_stack;
    void *tsan_fiber;
};
typedef void (*core_handoff_t)(struct ulp *u, void *arg);
void core_leave(core_handoff_t handoff, void *arg) HIDDEN;
void core_kc_init(struct core_kc *kc) HIDDEN;
void core_kc_resume(struct core_kc *kc, struct ulp *u, void (*released)(struct core_kc *kc)) HIDDEN;
void core_return(void) HIDDEN;

/* Called, on the scheduler thread, when a coupled ULP is killed: the
 * layer that coupled it interrupts what it waits for (src/blt).  A signal
 * can land just before the call it should interrupt: while killed ULPs
 * are still coupled, the hook is called again every millisecond with
 * NULL, meaning "each of them". */
void core_set_coupled_kill_hook(void (*hook)(struct ulp *u)) HIDDEN;

/* ------------------------------------------------------------ migration */

/*
 * A ULP taken off this node for migration (src/migrate): everything the
 * core knew of it, so that another node can put it back exactly as it
 * was: ready, blocked on a wait queue that lies in its own memory (a
 * task's receive queue), or sleeping, with the same timer deadline (the
 * monotonic clock is the host's).  The register context is on the ULP's
 * stack; ctx.sp says where.
 */
struct core_frozen {
    struct ulp u;          /* a copy; node-local links are not meaningful */
    uint8_t state;         /* READY, BLOCKED or SLEEPING */
    bool timed;            /* a deadline was armed */
    upvm_waitq_t *waitq;   /* BLOCKED: where (inside the ULP's own memory) */
};

/*
 * Why u cannot be frozen now, or NULL when it can.  It must not be
 * running (nor idling on its own stack), be ready, sleeping, or blocked on
 * a queue inside [lo, hi) (its own memory), and not be killed or joined.
 */
const char *core_ulp_why_not_freezable(const struct ulp *u, const void *lo, const void *hi) HIDDEN;

/* Take u off this node (core_ulp_why_not_freezable gave NULL): out of the
 * run queue, timers and id table; its object is freed; nothing runs its exit.
 * Its stack and memory are the caller's to move. */
void core_ulp_freeze(struct ulp *u, struct core_frozen *out) HIDDEN;

/* The other end: a new ULP object (a new id) for f, put where f was
 * (run queue, its wait queue, timers).  0 or -ENOMEM. */
int core_ulp_thaw(const struct core_frozen *f, struct ulp **out) HIDDEN NODISCARD;
/* The same in two steps, for a restart that may block before the ULP is
 * whole (a lazy move: its memory arrives as it is touched, and the ULP
 * must not run on half of its state meanwhile): the ULP exists but
 * neither runs nor waits on anything until core_ulp_unpark, which makes it
 * sleep on if f froze it sleeping, else ready -- a ULP frozen blocked looks
 * again at what it waited for (a wake-up while it was parked found it on
 * no queue; the runtime's waits loop on their conditions). */
int core_ulp_thaw_parked(const struct core_frozen *f, struct ulp **out) HIDDEN NODISCARD;
void core_ulp_unpark(struct ulp *u, const struct core_frozen *f) HIDDEN;

/* u may not leave its node until the matching core_ulp_unpin: it holds
 * node memory (a request buffer, a library temporary) across a wait.
 * Nests. */
static inline void core_ulp_pin(struct ulp *u) { u->pinned++; }
static inline void core_ulp_unpin(struct ulp *u) { u->pinned--; }

/* Called on a ULP with migrate_pending that is about to stop running
 * (block, sleep, yield): the migration layer's moment to act.  The ULP
 * goes on to stop as it meant to. */
void core_set_migrate_hook(void (*hook)(struct ulp *u)) HIDDEN;

/* ------------------------------------------------------------ timers */

/* Make room for n armed timers (one per live ULP).  0 or -ENOMEM. */
int core_timer_reserve(uint32_t n) HIDDEN NODISCARD;
void core_timer_add(struct ulp *u, uint64_t deadline_ns) HIDDEN;
void core_timer_cancel(struct ulp *u) HIDDEN;
/* Earliest deadline, or UINT64_MAX when no timer is armed. */
uint64_t core_timer_next(void) HIDDEN;
/* Remove and return the earliest ULP whose deadline is <= now, or NULL. */
struct ulp *core_timer_pop_due(uint64_t now_ns) HIDDEN;

/* ------------------------------------------------------------ stacks */

/* Read UPVM_STACK_GUARD; 0 or -EINVAL (reported on stderr). */
int core_stack_init(void) HIDDEN NODISCARD;

/* Default size (UPVM_STACK_SIZE, validated at init), page rounded. */
extern size_t core_default_stack_size HIDDEN;
/* UPVM_STACK_SIZE was set: process mode takes it for a task's main stack
 * instead of the stack limit (src/proc). */
extern bool core_stack_size_set HIDDEN;

/* Give u a stack of `size` bytes (page rounded, >= UPVM_STACK_MIN) with an
 * inaccessible guard page below it.  Returns 0 or -ENOMEM. */
int core_stack_alloc(struct ulp *u, size_t size) HIDDEN NODISCARD;
void core_stack_free(struct ulp *u) HIDDEN;
/* If addr lies in the guard page of some ULP stack, return the guard's base. */
void *core_stack_guard_of(const void *addr, const struct ulp *u) HIDDEN;
size_t core_stack_guard_size(void) HIDDEN;

/* ------------------------------------------------------------ faults */

/* Install the crash handlers (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) on
 * an alternate signal stack of the scheduler thread. */
int core_fault_init(void) HIDDEN NODISCARD;

/* An alternate signal stack for the calling thread (a kernel context), so
 * that a ULP that overruns its stack there is reported too.  0 or -errno. */
int core_fault_thread_init(void) HIDDEN NODISCARD;

/* Copy len bytes at addr into out, or return false when any of them is
 * not readable; never faults (for crash handlers: src/core/probe.c). */
bool core_peek(uintptr_t addr, void *out, size_t len) HIDDEN;

/* Code that dladdr does not know (a process-mode program in its slot),
 * named for crash reports by the layer that loaded it: the function
 * around an address (NULL when no symbol covers it) and its first byte,
 * the file, and the address's offset in the file's address space. */
struct core_symbol {
    const char *name;
    uintptr_t start;
    const char *file;
    uintptr_t file_off;
};

/* The symboliser answers false for addresses it does not know.  Called in
 * crash handlers: no allocation, no lock, and memory that the crashing
 * program could have written is read with core_peek only. */
typedef bool (*core_symboliser_t)(uintptr_t addr, struct core_symbol *out);
void core_set_symboliser(core_symboliser_t fn) HIDDEN;

/* Called first in the crash handler (the trace closes its file, noting the
 * signal): async-signal-safe, no allocation, no lock.  One; NULL: none. */
void core_set_crash_hook(void (*hook)(int sig)) HIDDEN;

/* Called by the crash handler before anything else for a SIGSEGV or SIGBUS
 * the kernel raised (a fault, not a kill), on the faulting thread's
 * alternate signal stack, with the handler's arguments.  True: the filter
 * dealt with the fault (shared virtual memory: src/svm), the handler
 * returns and the access repeats; false: it is a crash, reported as one.
 * One; NULL: none. */
typedef bool (*core_fault_filter_t)(int sig, siginfo_t *si, void *uctx);
void core_set_fault_filter(core_fault_filter_t fn) HIDDEN;

/* Report that every ULP is blocked with nothing that could wake one, and
 * end the process with status 70 (EX_SOFTWARE). */
_Noreturn void core_report_deadlock(void) HIDDEN;

/* Iterate over every ULP that has not been reclaimed (for reports). */
void core_for_each_ulp(void (*fn)(struct ulp *u, void *ctx), void *ctx) HIDDEN;

#endif /* UPVM_CORE_H */
