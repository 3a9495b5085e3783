/*
 * kc.c - the node's pool of kernel contexts, and coupling a ULP to one.
 *
 *   couple (scheduler thread, from ULP u)
 *     take an idle KC, or create one (under UPVM_KC_MAX), or wait for one;
 *     core_leave: u's registers are saved, and from the scheduler's
 *     hand-off context kc->next = u is published (and the KC woken if it
 *     sleeps); the scheduler runs the next ULP.  The KC resumes u.
 *   decouple (on the KC, from u)
 *     core_return: u's registers are saved, the KC puts itself back on the
 *     idle list and gives u to the scheduler's returned list (waking the
 *     scheduler if it idles); u runs on the scheduler again when its turn
 *     comes, and wakes one ULP waiting for a KC.
 *
 * The idle list is a stack pushed by KCs (any thread) and popped by the
 * scheduler only: one consumer, so no ABA.  A KC waits for its next ULP
 * on its own futex word (ULP-PiP's blocking idle KCs) or spins on it
 * (busy-waiting), as UPVM_KC_WAIT says; the paper's race conditions
 * (Table I: a UC resumed before its registers are saved, a KC woken before
 * it sleeps) are closed by saving before publishing (core_leave,
 * core_kc_resume) and by the futex's compare-and-sleep.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blt/blt.h"
#include "util/cpus.h"
#include "util/env.h"
#include "util/futex.h"

/* The signal that interrupts a killed coupled ULP's blocking call. */
#define KC_SIG_INTERRUPT (SIGRTMIN + 4)
#define KC_STACK_SIZE ((size_t)128 * 1024)
#define KC_MAX_DEFAULT 256

enum kc_wait { KC_WAIT_ADAPTIVE, KC_WAIT_SPIN, KC_WAIT_BLOCK };

struct kc {
    struct core_kc core;        /* first: core_kc_resume's released() gets it */
    pthread_t thread;
    struct ulp *_Atomic next;   /* the ULP handed to it, until it takes it */
    _Atomic uint32_t word;      /* futex: bumped when next is set */
    _Atomic bool sleeping;
    struct kc *idle_next;
    int depth;                  /* upvm_couple nesting of its ULP */
    int index;
};

static struct {
    bool ready;
    int max;
    enum kc_wait wait;
    uint64_t spin_ns;           /* adaptive: how long an idle KC spins */
    struct kc *_Atomic idle;
    int nkcs;
    struct kc **all;            /* for the kill hook and statistics */
    upvm_waitq_t waitq;         /* ULPs waiting for a free KC */
    int nwaiting;
    unsigned long couples, waits;
    bool said_nokc;
} pool;

/* ------------------------------------------------------------ settings */

/* A process forked after it made KCs (a job's launcher forks its first
 * node from the process that ran main) has none of their threads: it
 * starts a pool of its own.  The old KCs' memory is the parent's to free. */
static void forget_kcs_after_fork(void)
{
    atomic_store_explicit(&pool.idle, NULL, memory_order_relaxed);
    pool.nkcs = 0;
    pool.all = NULL;
}

void blt_read_settings(void)
{
    if (pool.ready)
        return;
    (void)pthread_atfork(NULL, NULL, forget_kcs_after_fork);
    static const struct env_num max_spec = {1, 65536, KC_MAX_DEFAULT, 0, NULL, NULL};
    uint64_t max;
    (void)env_uint("UPVM_KC_MAX", &max_spec, &max);
    pool.max = (int)max;
    static const char *const words[] = {"adaptive", "spin", "block", NULL};
    int w;
    (void)env_choice("UPVM_KC_WAIT", words, KC_WAIT_ADAPTIVE, 0, &w);
    pool.wait = (enum kc_wait)w;
    /* Spinning on one CPU only takes turns away from the scheduler. */
    bool one_cpu = util_cpus_usable() <= 1; /* affinity and cgroup quota */
    pool.spin_ns = pool.wait == KC_WAIT_BLOCK || (pool.wait == KC_WAIT_ADAPTIVE && one_cpu)
                       ? 0
                       : pool.wait == KC_WAIT_SPIN ? UINT64_MAX : 50000;
    static const struct env_num io_spec = {0, (uint64_t)1 << 40, 64 * 1024, 0, NULL, NULL};
    uint64_t io_min;
    (void)env_size("UPVM_KC_IO_MIN", &io_spec, &io_min);
    blt_offload_bytes = one_cpu || io_min == 0 ? SIZE_MAX : (size_t)io_min;
    /* the scheduler, idle with ULPs coupled, spins as long before it sleeps
     * (wait_returned saturates the sum with the clock) */
    core_sched.return_spin_ns = pool.spin_ns;
    upvm_waitq_init(&pool.waitq, "a free kernel context (UPVM_KC_MAX)");
    pool.ready = true;
}

/* ------------------------------------------------------------ idle list */

static void idle_push(struct kc *kc)
{
    struct kc *head = atomic_load_explicit(&pool.idle, memory_order_relaxed);
    do
        kc->idle_next = head;
    while (!atomic_compare_exchange_weak_explicit(&pool.idle, &head, kc, memory_order_release,
                                                  memory_order_relaxed));
}

/* Scheduler thread only (the one consumer). */
static struct kc *idle_pop(void)
{
    struct kc *head = atomic_load_explicit(&pool.idle, memory_order_acquire);
    while (head && !atomic_compare_exchange_weak_explicit(&pool.idle, &head, head->idle_next,
                                                         memory_order_acquire,
                                                         memory_order_acquire))
        ;
    return head;
}

/* ------------------------------------------------------------ the KC thread */

/* Wait until the scheduler hands this KC a ULP. */
static struct ulp *wait_for_ulp(struct kc *kc)
{
    struct ulp *u;
    if (pool.spin_ns) {
        uint64_t until = pool.spin_ns == UINT64_MAX ? UINT64_MAX : upvm_now_ns() + pool.spin_ns;
        for (unsigned i = 1;; i++) {
            if ((u = atomic_exchange_explicit(&kc->next, NULL, memory_order_acquire)))
                return u;
            __builtin_ia32_pause();
            if (i % 256 == 0 && until != UINT64_MAX && upvm_now_ns() >= until)
                break;
        }
    }
    for (;;) {
        uint32_t seen = atomic_load_explicit(&kc->word, memory_order_seq_cst);
        atomic_store_explicit(&kc->sleeping, true, memory_order_seq_cst);
        if ((u = atomic_exchange_explicit(&kc->next, NULL, memory_order_acquire))) {
            atomic_store_explicit(&kc->sleeping, false, memory_order_relaxed);
            return u;
        }
        (void)util_futex(&kc->word, FUTEX_WAIT, seen, NULL);
        atomic_store_explicit(&kc->sleeping, false, memory_order_relaxed);
        if ((u = atomic_exchange_explicit(&kc->next, NULL, memory_order_acquire)))
            return u;
    }
}

static void kc_released(struct core_kc *c)
{
    struct kc *kc = (struct kc *)c;
    kc->depth = 0;
    idle_push(kc);
}

static void on_interrupt(int sig)
{
    (void)sig; /* only to end the blocking call with EINTR */
}

static void *kc_main(void *arg)
{
    struct kc *kc = arg;
    /* Signals for the process go to the scheduler thread as before; a KC
     * takes only the crash signals (its ULP's faults) and the interrupt. */
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    sigdelset(&all, SIGABRT);
    sigdelset(&all, KC_SIG_INTERRUPT);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    if (core_fault_thread_init() != 0) {
        /* a stack overflow on this KC is then a plain SIGSEGV: go on */
    }
    core_kc_init(&kc->core);
    for (;;)
        core_kc_resume(&kc->core, wait_for_ulp(kc), kc_released);
    return NULL;
}

static struct kc *kc_create(void)
{
    static bool handler_set;
    if (!handler_set) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_interrupt; /* no SA_RESTART: the call ends with EINTR */
        sigemptyset(&sa.sa_mask);
        if (sigaction(KC_SIG_INTERRUPT, &sa, NULL) != 0)
            return NULL;
        handler_set = true;
    }
    struct kc **all = realloc(pool.all, (size_t)(pool.nkcs + 1) * sizeof *all);
    if (!all)
        return NULL;
    pool.all = all;
    struct kc *kc = calloc(1, sizeof *kc);
    if (!kc)
        return NULL;
    kc->index = pool.nkcs;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, KC_STACK_SIZE);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* the KC starts with every signal blocked until it sets its own mask */
    sigset_t all_sigs, old;
    sigfillset(&all_sigs);
    pthread_sigmask(SIG_SETMASK, &all_sigs, &old);
    int rc = pthread_create(&kc->thread, &a, kc_main, kc);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        free(kc);
        return NULL;
    }
    pool.all[pool.nkcs++] = kc;
    return kc;
}

/* ------------------------------------------------------------ couple */

/* On the scheduler's hand-off context: u's registers are saved. */
static void hand_to_kc(struct ulp *u, void *arg)
{
    struct kc *kc = arg;
    atomic_store_explicit(&kc->next, u, memory_order_release);
    atomic_fetch_add_explicit(&kc->word, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&kc->sleeping, memory_order_seq_cst))
        (void)util_futex(&kc->word, FUTEX_WAKE, 1, NULL);
}

/* A free KC for the current ULP: idle, new, or waited for.  NULL when
 * none can be had at all (the first KC could not be created). */
static struct kc *get_kc(void)
{
    for (;;) {
        struct kc *kc = idle_pop();
        if (kc)
            return kc;
        if (pool.nkcs < pool.max && (kc = kc_create()))
            return kc;
        if (pool.nkcs == 0)
            return NULL;
        pool.waits++;
        pool.nwaiting++;
        (void)core_block(&pool.waitq, -1);
        pool.nwaiting--;
    }
}

static void say_no_kc(void)
{
    if (pool.said_nokc)
        return;
    pool.said_nokc = true;
    fprintf(stderr, "upvm: no kernel context could be created (%s): blocking calls run on the "
                    "node's scheduler and stall its other ULPs\n", strerror(errno));
}

/* Interrupt the call of killed ULP u, or (u NULL) of every killed ULP
 * still on a KC. */
static void kill_hook(struct ulp *u)
{
    for (int i = 0; i < pool.nkcs; i++) {
        struct kc *kc = pool.all[i];
        struct ulp *on = __atomic_load_n(&kc->core.u, __ATOMIC_ACQUIRE);
        if (on && (u ? on == u : on->kill_pending))
            pthread_kill(kc->thread, KC_SIG_INTERRUPT);
    }
}

static int couple(const char *what)
{
    if (blt_coupled()) {
        ((struct kc *)core_kc_ulp->kc)->depth++;
        return 0;
    }
    if (core_enter() != 0)
        return -EPERM;
    blt_read_settings();
    static bool hooked;
    if (!hooked) {
        core_set_coupled_kill_hook(kill_hook);
        hooked = true;
    }
    struct kc *kc = get_kc();
    if (!kc) {
        say_no_kc();
        return -EAGAIN;
    }
    pool.couples++;
    core_current()->coupled_for = what;
    if (unlikely(trc_on))
        trc_put(TRC_COUPLE, 0, core_current()->trc_id, 0, 0, trc_str_copy(what));
    core_leave(hand_to_kc, kc);
    struct ulp *self = core_kc_ulp_now(); /* on the KC now (thread-locals anew) */
    if (!self) { /* core_leave could not hand it off */
        idle_push(kc);
        return -ENOMEM;
    }
    ((struct kc *)self->kc)->depth = 1;
    return 0;
}

/* On the KC: back to the scheduler; there, a ULP waiting for a KC may go. */
static void decouple(void)
{
    /* recorded by the KC's thread, into a chunk of its own */
    trc_put(TRC_DECOUPLE, 0, core_kc_ulp->trc_id, 0, 0, 0);
    core_return();
    if (pool.nwaiting)
        (void)core_wake_one(&pool.waitq);
}

bool blt_enter(const char *what)
{
    if (!core_on_sched_thread)
        return false;
    int saved = errno;
    bool ok = couple(what) == 0;
    *core_errno_now() = saved; /* on the KC, when it coupled */
    return ok;
}

void blt_leave(bool coupled)
{
    if (!coupled)
        return;
    struct kc *kc = core_kc_ulp->kc;
    if (--kc->depth == 0)
        decouple(); /* errno: saved by core_return, given back on the scheduler */
}

size_t blt_offload_bytes;

size_t blt_offload_min_slow(void)
{
    blt_read_settings();
    return blt_offload_bytes;
}

int blt_depth(void)
{
    return blt_coupled() ? ((struct kc *)core_kc_ulp->kc)->depth : 0;
}

void blt_stats(struct blt_stats *out)
{
    out->kcs = pool.nkcs;
    out->idle = 0;
    for (struct kc *k = atomic_load(&pool.idle); k; k = k->idle_next)
        out->idle++;
    out->couples = pool.couples;
    out->waits = pool.waits;
}

/* ------------------------------------------------------------ public API */

int upvm_couple(void)
{
    return couple("upvm_couple()");
}

int upvm_decouple(void)
{
    if (!blt_coupled())
        return core_on_sched_thread ? -EINVAL : -EPERM;
    blt_leave(true);
    return 0;
}

int upvm_coupled(void)
{
    return blt_coupled();
}

long upvm_blocking(long (*fn)(void *arg), void *arg)
{
    bool c = blt_enter("upvm_blocking()");
    long r = fn(arg);
    blt_leave(c);
    return r;
}
