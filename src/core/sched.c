/*
 * sched.c - the node's non-preemptive scheduler: run queue, switches,
 * hand-off, wait queues, sleeping and the idle wait.
 *
 * There is no scheduler context: a ULP that gives up the CPU switches
 * straight to the next ready ULP (one register switch per hand-over).  When
 * none is ready, the giving-up ULP waits for the earliest timer in the
 * kernel, on its own stack, and then switches.  A dead ULP does the same;
 * its stack is freed by the ULP that runs next (core_ulp_reclaim), once
 * nothing runs on it any more.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/core.h"
#include "util/futex.h"

#if UPVM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if UPVM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* How many switches may pass before due timers are looked at, and the
 * transport polled, while the run queue never empties (a clock read per
 * switch would double its cost). */
#define TIMER_CHECK_INTERVAL 64

struct sched core_sched = {
    .runq = {&core_sched.runq, &core_sched.runq},
};

uint64_t upvm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ run queue */

void core_make_ready(struct ulp *u)
{
    u->state = ULP_READY;
    list_push_back(&core_sched.runq, &u->link);
}

void core_make_ready_front(struct ulp *u)
{
    u->state = ULP_READY;
    list_push_front(&core_sched.runq, &u->link);
}

static struct ulp *runq_pop(void)
{
    list_link_t *l = list_pop_front(&core_sched.runq);
    return l ? list_entry(l, struct ulp, link) : NULL;
}

/* The trace's records of blocking and waking, out of line, as
 * trace_switch below */
static COLD void trace_block(const struct ulp *self, const upvm_waitq_t *q, int64_t timeout_ns)
{
    trc_put(TRC_BLOCK, 0, self->trc_id,
            timeout_ns >= 0 ? (uint32_t)(timeout_ns / 1000000) + 1 : 0, 0, trc_str(q->name));
}

static COLD void trace_wake(const struct ulp *u, uint32_t waker)
{
    trc_put(TRC_WAKE, 0, u->trc_id, waker, 0, 0);
}

/* Move every ULP whose deadline has passed to the run queue. */
static void fire_due_timers(uint64_t now)
{
    struct ulp *u;
    while ((u = core_timer_pop_due(now))) {
        if (u->state == ULP_BLOCKED) {
            list_unlink(&u->link); /* leave the wait queue */
            u->waitq = NULL;
            u->wake_result = -ETIMEDOUT;
            if (unlikely(trc_on))
                trace_wake(u, 0);
        }
        core_make_ready(u);
    }
    core_sched.ticks = 0;
}

/* ------------------------------------------------------------ switching */

/* errno lives in the scheduler thread's TLS and every ULP runs on that
 * thread, so its address never changes: look it up once, not twice per
 * switch through the PLT. */
static int *errno_slot;

/* The layer word (core_set_swapped_word); a dummy until one registers, so
 * the switch never tests for it. */
static int no_word;
static int *word_slot = &no_word;

/* The thread state block (core_set_thread_state): the scheduler thread's
 * copy, NULL until a layer registers one and the core has started, so the
 * switch tests one predictable pointer and C programs pay nothing more.
 * Two words, copied as such (no memcpy call on the switch path). */
static uint64_t *state_slot;
static void *(*state_locate)(void);
static void state_activate(void);

void core_sched_init(void)
{
    errno_slot = &errno;
}

void core_sched_started(void)
{
    if (state_locate && !state_slot)
        state_activate();
}

static inline void state_save(struct ulp *u, const void *block)
{
    const uint64_t *w = block;
    u->saved_state[0] = w[0];
    u->saved_state[1] = w[1];
}

static inline void state_restore(const struct ulp *u, void *block)
{
    uint64_t *w = block;
    w[0] = u->saved_state[0];
    w[1] = u->saved_state[1];
}

bool core_ulp_has_state(const struct ulp *u)
{
    if (!state_slot)
        return false;
    const uint64_t *words = u == core_sched.current ? state_slot : u->saved_state;
    return (words[0] | words[1]) != 0;
}

/* Start saving and restoring the registered block: on the scheduler
 * thread, with its first ULP (main) running. */
static void state_activate(void)
{
    state_slot = state_locate(); /* a 16-byte block, 8-byte aligned (contract) */
    /* the running ULP owns what the block holds now; the others start
     * from zero (their saved_state is, since creation) */
    state_save(core_sched.current, state_slot);
}

void core_set_thread_state(void *(*locate)(void))
{
    if (state_locate)
        return;
    state_locate = locate;
    if (core_on_sched_thread && core_sched.current)
        state_activate();
}

void core_set_swapped_word(int *addr)
{
    core_sched.current->saved_word = *addr;
    word_slot = addr;
}

static void (*migrate_hook)(struct ulp *u);

void core_set_migrate_hook(void (*hook)(struct ulp *u))
{
    migrate_hook = hook;
}

static _Noreturn NOINLINE void die_killed(void)
{
    upvm_exit(core_sched.current->kill_status);
}

/* A ULP about to stop running with something pending: killed, it ends;
 * wanted elsewhere, the migration layer hears of it. */
static NOINLINE void attention(struct ulp *self)
{
    if (self->kill_pending)
        die_killed();
    if (self->migrate_pending && migrate_hook)
        migrate_hook(self);
}

static void ulp_entry(void *from);

/* Everything the resumed side does right after a switch: finish the
 * sanitizer's fiber switch, reclaim the ULP we came from if it died, and
 * give the resumed ULP its errno back. */
static inline __attribute__((always_inline)) void after_switch(struct ulp *from)
{
    struct ulp *self = core_sched.current;
#if UPVM_ASAN
    const void *old_lo;
    size_t old_size;
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, &old_lo, &old_size);
#endif
    if (unlikely(from->state == ULP_DEAD) && from != core_sched.tramp)
        core_ulp_reclaim(from);
    self->state = ULP_RUNNING;
    *errno_slot = self->saved_errno;
    *word_slot = self->saved_word;
    if (unlikely(state_slot != NULL))
        state_restore(self, state_slot);
    if (unlikely(self->kill_pending))
        die_killed();
}

static NOINLINE void start_ulp(struct ulp *self, struct ulp *next)
{
    next->started = true;
    struct ulp *from = arch_ctx_start(&self->ctx, (char *)next->stack_lo + next->stack_size,
                                      ulp_entry, self);
    after_switch(from);
}

/* The trace's record of a switch (util/trace.h), out of line: inlined, its
 * loads were hoisted above the flag's test and took registers the switch
 * then saved, ~3 ns per switch with tracing off (bench/trace-compare.sh). */
static COLD void trace_switch(const struct ulp *self, const struct ulp *next, uint64_t now)
{
    trc_put_tsc(now, TRC_SWITCH, self->state, next->trc_id, self->trc_id, 0, 0);
}

static inline __attribute__((always_inline)) void switch_to(struct ulp *next)
{
    struct ulp *self = core_sched.current;
    uint64_t now = __builtin_ia32_rdtsc();
    self->cpu_tsc += now - core_sched.tsc_mark;
    core_sched.tsc_mark = now;
    self->saved_errno = *errno_slot;
    self->saved_word = *word_slot;
    if (unlikely(state_slot != NULL))
        state_save(self, state_slot);
    core_sched.current = next;
    if (unlikely(trc_on))
        trace_switch(self, next, now);
#if UPVM_ASAN
    /* A dead ULP never comes back: NULL lets ASan free its fake stack. */
    __sanitizer_start_switch_fiber(self->state == ULP_DEAD ? NULL
                                                           : &self->asan_fake_stack,
                                   next->stack_lo, next->stack_size);
#endif
#if UPVM_TSAN
    if (!next->tsan_fiber)
        next->tsan_fiber = __tsan_create_fiber(0);
    __tsan_switch_to_fiber(next->tsan_fiber, 0);
#endif
    if (unlikely(!next->started)) {
        start_ulp(self, next);
        return;
    }
    struct ulp *from = arch_ctx_switch(&self->ctx, &next->ctx, self);
    after_switch(from);
}

void core_switch_to(struct ulp *next)
{
    switch_to(next);
}

/* First code of every ULP but main, on its fresh stack. */
static void ulp_entry(void *from)
{
    after_switch(from);
    struct ulp *self = core_sched.current;
    if (self->ordinal_entry)
        self->entry.ordinal(self->ordinal, self->arg);
    else
        self->entry.plain(self->arg);
    upvm_exit(0);
}

void core_set_idle_ops(const struct core_idle_ops *ops)
{
    core_sched.idle = ops;
}

/* ------------------------------------------------------------ coming back */

/* Put the ULPs that kernel contexts gave back on the run queue, in the
 * order they came back (the list is pushed at its head). */
static NOINLINE void take_returned(void)
{
    struct ulp *u = atomic_exchange_explicit(&core_sched.returned, NULL, memory_order_acquire);
    struct ulp *fifo = NULL;
    while (u) {
        struct ulp *next = u->returned_next;
        u->returned_next = fifo;
        fifo = u;
        u = next;
    }
    while (fifo) {
        struct ulp *next = fifo->returned_next;
        fifo->returned_next = NULL;
        core_sched.ncoupled--;
        if (fifo->kill_pending)
            core_sched.nkilled_coupled--;
        /* A migration waited for it: the migrator is made ready first, so
         * that it moves it before it runs on. */
        if (fifo->migrate_pending && migrate_hook)
            migrate_hook(fifo);
        core_make_ready(fifo);
        fifo = next;
    }
}

static inline bool any_returned(void)
{
    return atomic_load_explicit(&core_sched.returned, memory_order_relaxed) != NULL;
}

/* Any thread: u is back from its kernel context (its registers saved). */
static void push_returned(struct ulp *u)
{
    struct ulp *head = atomic_load_explicit(&core_sched.returned, memory_order_relaxed);
    do
        u->returned_next = head;
    while (!atomic_compare_exchange_weak_explicit(&core_sched.returned, &head, u,
                                                  memory_order_seq_cst, memory_order_relaxed));
    if (core_sched.idle && core_sched.idle->kick) {
        core_sched.idle->kick();
    } else if (atomic_load_explicit(&core_sched.idle_sleeping, memory_order_seq_cst)) {
        atomic_fetch_add_explicit(&core_sched.kick_word, 1, memory_order_seq_cst);
        (void)util_futex(&core_sched.kick_word, FUTEX_WAKE, 1, NULL);
    }
}

static void (*coupled_kill_hook)(struct ulp *u);

#define INTERRUPT_AGAIN_NS 1000000

/* Killed ULPs still coupled: interrupt their calls again (a signal sent
 * just before a call began did not end it). */
static NOINLINE void interrupt_killed(void)
{
    uint64_t now = upvm_now_ns();
    if (now < core_sched.next_interrupt_ns)
        return;
    core_sched.next_interrupt_ns = now + INTERRUPT_AGAIN_NS;
    if (coupled_kill_hook)
        coupled_kill_hook(NULL);
}

/* Idle with ULPs coupled: wait until one comes back or deadline_ns
 * (UINT64_MAX: none).  Spins return_spin_ns first (UPVM_KC_WAIT). */
static void wait_returned(uint64_t deadline_ns)
{
    if (core_sched.nkilled_coupled) {
        interrupt_killed();
        if (deadline_ns > core_sched.next_interrupt_ns)
            deadline_ns = core_sched.next_interrupt_ns;
    }
    if (core_sched.return_spin_ns) {
        uint64_t now = upvm_now_ns(), spin = core_sched.return_spin_ns;
        uint64_t until = spin > UINT64_MAX - now ? UINT64_MAX : now + spin;
        if (until > deadline_ns)
            until = deadline_ns;
        for (unsigned i = 1;; i++) {
            if (any_returned())
                return;
            __builtin_ia32_pause();
            if (i % 64 == 0 && upvm_now_ns() >= until)
                break;
        }
    }
    uint32_t seen = atomic_load_explicit(&core_sched.kick_word, memory_order_seq_cst);
    atomic_store_explicit(&core_sched.idle_sleeping, true, memory_order_seq_cst);
    if (!any_returned()) {
        struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
                              .tv_nsec = (long)(deadline_ns % 1000000000u)};
        (void)util_futex(&core_sched.kick_word, FUTEX_WAIT_BITSET, seen,
                    deadline_ns == UINT64_MAX ? NULL : &ts);
    }
    atomic_store_explicit(&core_sched.idle_sleeping, false, memory_order_relaxed);
}

/* How long an idle node with a transport spins for a coupled ULP's return
 * before it polls the transport again. */
#define TRANSPORT_SPIN_NS 20000

/* Several nodes: poll the transport and sleep in it until a message, a
 * wake-up or the earliest timer.  There is no deadlock to see here. */
static struct ulp *idle_wait_transport(void)
{
    const struct core_idle_ops *ops = core_sched.idle;
    for (;;) {
        ops->poll();
        if (any_returned())
            take_returned();
        struct ulp *u = runq_pop();
        if (u)
            return u;
        uint64_t next = core_timer_next();
        if (next != UINT64_MAX && next <= upvm_now_ns()) {
            fire_due_timers(upvm_now_ns());
            if ((u = runq_pop()))
                return u;
            continue;
        }
        if (core_sched.ncoupled && core_sched.return_spin_ns) {
            /* a short spin only: the transport must be polled too */
            uint64_t spin = core_sched.return_spin_ns < TRANSPORT_SPIN_NS
                                ? core_sched.return_spin_ns : TRANSPORT_SPIN_NS;
            uint64_t until = upvm_now_ns() + spin;
            wait_returned(until < next ? until : next);
            if (any_returned())
                continue;
        }
        ops->wait(next);
        if (core_sched.ntimers) /* a clock read costs ~30 ns: not per message */
            fire_due_timers(upvm_now_ns());
    }
}

/* Nothing is ready: wait in the kernel for the earliest timer.  Returns the
 * ULP to run next (possibly the caller itself). */
static struct ulp *idle_wait(void)
{
    if (core_sched.idle)
        return idle_wait_transport();
    for (;;) {
        uint64_t next = core_timer_next();
        if (core_sched.ncoupled) { /* a ULP on a kernel context will come back */
            wait_returned(next);
            if (any_returned())
                take_returned();
            fire_due_timers(upvm_now_ns());
            struct ulp *u = runq_pop();
            if (u)
                return u;
            continue;
        }
        if (next == UINT64_MAX) {
            struct ulp *d = core_sched.drainer;
            if (!d || d->state != ULP_BLOCKED)
                core_report_deadlock();
            list_unlink(&d->link); /* core_drain's wait: nothing else can run */
            d->waitq = NULL;
            return d;
        }
        struct timespec ts = {.tv_sec = (time_t)(next / 1000000000u),
                              .tv_nsec = (long)(next % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        fire_due_timers(upvm_now_ns());
        struct ulp *u = runq_pop();
        if (u)
            return u;
    }
}

/* The idle wait, its time counted as the node's idle time, not as the
 * CPU time of the ULP it idles on (core_sched.idle_tsc; the balancer's
 * measurements). */
static NOINLINE struct ulp *idle_wait_counted(void)
{
    uint64_t t0 = __builtin_ia32_rdtsc();
    core_sched.current->cpu_tsc += t0 - core_sched.tsc_mark;
    struct ulp *next = idle_wait();
    uint64_t t1 = __builtin_ia32_rdtsc();
    core_sched.idle_tsc += t1 - t0;
    core_sched.tsc_mark = t1;
    return next;
}

/* The part of scheduling that is not a plain run-queue pop: due timers and
 * the idle wait.  Returns the next ULP to run. */
static NOINLINE struct ulp *schedule_slow(void)
{
    if (core_sched.idle) {
        core_sched.ticks = 0;
        core_sched.idle->poll();
    }
    if (core_sched.ntimers)
        fire_due_timers(upvm_now_ns());
    if (any_returned())
        take_returned();
    if (core_sched.nkilled_coupled)
        interrupt_killed();
    struct ulp *next = runq_pop();
    return next ? next : idle_wait_counted();
}

static inline __attribute__((always_inline)) void schedule(void)
{
    struct ulp *next;
    if (likely((!core_sched.ntimers && !core_sched.idle && !core_sched.ncoupled) ||
               ++core_sched.ticks < TIMER_CHECK_INTERVAL) &&
        likely((next = runq_pop()) != NULL))
        ;
    else
        next = schedule_slow();
    if (unlikely(next == core_sched.current)) {
        next->state = ULP_RUNNING; /* woken while idling on its own stack */
        if (unlikely(next->kill_pending))
            die_killed();
        return;
    }
    switch_to(next);
}

void core_schedule(void)
{
    schedule();
}

/* ------------------------------------------------------------ blocking */

/* Put the current ULP on q (and on the timer heap for a timeout); the
 * caller then switches away. */
static inline void enqueue_blocked(upvm_waitq_t *q, int64_t timeout_ns)
{
    struct ulp *self = core_sched.current;
    self->state = ULP_BLOCKED;
    self->waitq = q;
    self->wake_result = 0;
    list_push_back(&q->head, &self->link);
    if (timeout_ns >= 0)
        core_timer_add(self, upvm_now_ns() + (uint64_t)timeout_ns);
    if (unlikely(trc_on))
        trace_block(self, q, timeout_ns);
}

/* A ULP killed while it ran (by a frame handler it polled) ends instead
 * of waiting: nothing would ever resume it to die. */
static inline void die_if_killed(void)
{
    struct ulp *self = core_sched.current;
    if (unlikely(self->kill_pending | self->migrate_pending))
        attention(self);
}

int core_block(upvm_waitq_t *q, int64_t timeout_ns)
{
    die_if_killed();
    enqueue_blocked(q, timeout_ns);
    schedule();
    return core_sched.current->wake_result;
}

/* Two ULPs that hand the CPU to each other (a ping-pong pair sharing a
 * node) would never let the run queue's others run: every HANDOFF_FAIR-th
 * hand-off in a row is an ordinary block instead (the queue's head runs;
 * next keeps its place in the queue). */
#define HANDOFF_FAIR 64

int core_block_to(upvm_waitq_t *q, int64_t timeout_ns, struct ulp *next)
{
    if (!next || next->state != ULP_READY ||
        unlikely(++core_sched.handoffs >= HANDOFF_FAIR)) {
        core_sched.handoffs = 0;
        return core_block(q, timeout_ns);
    }
    die_if_killed();
    enqueue_blocked(q, timeout_ns);
    list_unlink(&next->link);
    switch_to(next);
    return core_sched.current->wake_result;
}

static void wake(struct ulp *u)
{
    if (unlikely(trc_on))
        trace_wake(u, core_sched.current->trc_id);
    list_unlink(&u->link);
    u->waitq = NULL;
    core_timer_cancel(u);
}

struct ulp *core_wake_one(upvm_waitq_t *q)
{
    if (list_empty(&q->head))
        return NULL;
    struct ulp *u = list_entry(q->head.next, struct ulp, link);
    wake(u);
    core_make_ready(u);
    return u;
}

int core_wake_all_front(upvm_waitq_t *q)
{
    int n = 0;
    for (; !list_empty(&q->head); n++) {
        struct ulp *u = list_entry(q->head.prev, struct ulp, link); /* last first: FIFO kept */
        wake(u);
        core_make_ready_front(u);
    }
    return n;
}

void core_set_coupled_kill_hook(void (*hook)(struct ulp *u))
{
    coupled_kill_hook = hook;
}

void core_ulp_kill(struct ulp *u, int status)
{
    if (u->kill_pending || u->state == ULP_DEAD)
        return;
    u->kill_pending = true;
    u->kill_status = status;
    if (u->state == ULP_COUPLED) { /* it ends when it comes back */
        core_sched.nkilled_coupled++;
        core_sched.next_interrupt_ns = upvm_now_ns() + INTERRUPT_AGAIN_NS;
        if (coupled_kill_hook)
            coupled_kill_hook(u);
        return;
    }
    /* The current ULP may also be blocked: the idle loop runs on the
     * stack of the one that blocked last. */
    if (u->state == ULP_BLOCKED || u->state == ULP_SLEEPING) {
        if (u->state == ULP_BLOCKED)
            list_unlink(&u->link);
        u->waitq = NULL;
        core_timer_cancel(u);
        core_make_ready(u);
    }
}

/* ------------------------------------------------------------ leaving the thread */

__thread struct ulp *core_kc_ulp;

bool core_on_sched_thread_now(void) { return core_on_sched_thread; }
struct ulp *core_kc_ulp_now(void) { return core_kc_ulp; }
int *core_errno_now(void) { return &errno; }

static core_handoff_t leave_handoff;
static void *leave_arg;

#define TRAMP_STACK_SIZE ((size_t)64 * 1024)

/* The context a leaving ULP hands itself off from: a stack of its own, so
 * that the scheduler never runs (or idles) on a stack a kernel context
 * is about to run.  It is started afresh each time and left for good. */
static int tramp_create(void)
{
    struct ulp *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    if (core_stack_alloc(t, TRAMP_STACK_SIZE) != 0) {
        free(t);
        return -ENOMEM;
    }
    t->name = "the scheduler's hand-off context";
    t->started = true;
    t->ordinal = -1;
    t->timer_index = ULP_NO_TIMER;
    list_init(&t->link);
    core_sched.tramp = t;
    return 0;
}

static void tramp_entry(void *pass)
{
    struct ulp *u = pass, *self = core_sched.tramp;
#if UPVM_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    self->state = ULP_DEAD; /* never resumed: the next start is a fresh one */
    leave_handoff(u, leave_arg);
    schedule();
    abort(); /* nothing resumes the hand-off context */
}

void core_leave(core_handoff_t handoff, void *arg)
{
    struct ulp *self = core_sched.current;
    if (unlikely(self->kill_pending))
        die_killed();
    if (unlikely(!core_sched.tramp) && tramp_create() != 0) {
        fprintf(stderr, "upvm: no memory for the scheduler's hand-off stack: ULP %d runs "
                        "its blocking call on the scheduler\n", self->id);
        return;
    }
    struct ulp *t = core_sched.tramp;
    leave_handoff = handoff;
    leave_arg = arg;
    self->state = ULP_COUPLED;
    core_sched.ncoupled++;
    self->saved_errno = *errno_slot;
    self->saved_word = *word_slot;
    if (state_slot)
        state_save(self, state_slot);
    core_sched.current = t;
    t->state = ULP_RUNNING;
#if UPVM_ASAN
    __sanitizer_start_switch_fiber(&self->asan_fake_stack, t->stack_lo, t->stack_size);
#endif
#if UPVM_TSAN
    if (!t->tsan_fiber)
        t->tsan_fiber = __tsan_create_fiber(0);
    __tsan_switch_to_fiber(t->tsan_fiber, 0);
#endif
    (void)arch_ctx_start(&self->ctx, (char *)t->stack_lo + t->stack_size, tramp_entry, self);
    /* on the kernel context now (core_kc_resume) */
#if UPVM_ASAN
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, NULL, NULL);
#endif
    *core_errno_now() = self->saved_errno;
    if (state_slot) /* the kernel context's own block (locate looks afresh) */
        state_restore(self, state_locate());
}

void core_kc_init(struct core_kc *kc)
{
    kc->u = NULL;
#if UPVM_ASAN || UPVM_TSAN
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        (void)pthread_attr_getstack(&a, &lo, &size);
        pthread_attr_destroy(&a);
    }
    kc->stack_lo = lo;
    kc->stack_size = size;
#endif
#if UPVM_TSAN
    kc->tsan_fiber = __tsan_get_current_fiber();
#endif
}

void core_kc_resume(struct core_kc *kc, struct ulp *u, void (*released)(struct core_kc *kc))
{
    __atomic_store_n(&kc->u, u, __ATOMIC_RELEASE);
    u->kc = kc;
    core_kc_ulp = u;
#if UPVM_ASAN
    __sanitizer_start_switch_fiber(&kc->asan_fake_stack, u->stack_lo, u->stack_size);
#endif
#if UPVM_TSAN
    __tsan_switch_to_fiber(u->tsan_fiber, 0);
#endif
    (void)arch_ctx_switch(&kc->home, &u->ctx, kc);
    /* u called core_return: its registers are saved */
#if UPVM_ASAN
    __sanitizer_finish_switch_fiber(kc->asan_fake_stack, NULL, NULL);
#endif
    core_kc_ulp = NULL;
    __atomic_store_n(&kc->u, NULL, __ATOMIC_RELEASE);
    u->kc = NULL;
    released(kc); /* before u is back: whoever u wakes there finds the KC free */
    push_returned(u);
}

void core_return(void)
{
    struct ulp *self = core_kc_ulp;
    struct core_kc *kc = self->kc;
    self->saved_errno = *core_errno_now();
    if (state_slot)
        state_save(self, state_locate());
#if UPVM_ASAN
    __sanitizer_start_switch_fiber(&self->asan_fake_stack, kc->stack_lo, kc->stack_size);
#endif
#if UPVM_TSAN
    __tsan_switch_to_fiber(kc->tsan_fiber, 0);
#endif
    struct ulp *from = arch_ctx_switch(&self->ctx, &kc->home, self);
    /* back on the scheduler thread, resumed by switch_to */
    after_switch(from);
}

/* ------------------------------------------------------------ public API */

void upvm_yield(void)
{
    if (unlikely(core_enter() != 0))
        return;
    die_if_killed(); /* also: a migration waiting for this ULP to stop */
    if (core_sched.idle)
        core_sched.idle->poll(); /* a polling loop must see other nodes' messages */
    if (core_sched.ncoupled && any_returned())
        take_returned();
    if (list_empty(&core_sched.runq) && !core_sched.ntimers)
        return;
    core_make_ready(core_sched.current);
    schedule();
}

int upvm_yield_to(upvm_id_t id)
{
    int rc = core_enter();
    if (unlikely(rc != 0))
        return rc;
    struct ulp *target = core_ulp_lookup(id);
    struct ulp *self = core_sched.current;
    if (!target || target->state == ULP_DEAD)
        return -ESRCH;
    if (target == self)
        return 0;
    if (target->state != ULP_READY)
        return -EAGAIN;
    list_unlink(&target->link);
    core_make_ready(self);
    switch_to(target);
    return 0;
}

int upvm_sleep_ns(uint64_t ns)
{
    int rc = core_enter();
    if (unlikely(rc != 0))
        return rc;
    if (ns == 0) {
        upvm_yield();
        return 0;
    }
    die_if_killed();
    struct ulp *self = core_sched.current;
    self->state = ULP_SLEEPING;
    core_timer_add(self, upvm_now_ns() + ns);
    core_schedule();
    return 0;
}

void upvm_waitq_init(upvm_waitq_t *q, const char *name)
{
    list_init(&q->head);
    q->name = name;
}

int upvm_wait(upvm_waitq_t *q, int64_t timeout_ns)
{
    int rc = core_enter();
    if (unlikely(rc != 0))
        return rc;
    return core_block(q, timeout_ns);
}

int upvm_wake_one(upvm_waitq_t *q)
{
    if (unlikely(core_enter() != 0))
        return 0;
    return core_wake_one(q) != NULL;
}

int upvm_wake_all(upvm_waitq_t *q)
{
    if (unlikely(core_enter() != 0))
        return 0;
    int n = 0;
    while (core_wake_one(q))
        n++;
    return n;
}

int upvm_wake_one_handoff(upvm_waitq_t *q)
{
    if (unlikely(core_enter() != 0) || list_empty(&q->head))
        return 0;
    struct ulp *u = list_entry(q->head.next, struct ulp, link);
    wake(u);
    core_make_ready_front(core_sched.current);
    switch_to(u);
    return 1;
}
