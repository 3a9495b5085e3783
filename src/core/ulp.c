/*
 * ulp.c - ULP objects: initialisation of the node, creation, ids, exit,
 * join and reclaim.
 *
 * Ids are handed out in increasing order and never reused while the node
 * runs, so a stale id can never name a newer ULP.  They index a table of
 * 4096-entry chunks; a chunk is freed once all of its ULPs are reclaimed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#if UPVM_TSAN
#include <sanitizer/tsan_interface.h>
#endif
#include "util/env.h"

#define ULP_POOL_MAX 4096          /* freed ULP objects kept for reuse */
#define STACK_SIZE_MAX ((size_t)1 << 30)
#define DEFAULT_STACK_SIZE ((size_t)256 * 1024)
#define MAX_EXIT_HOOKS 8

__thread bool core_on_sched_thread;

struct core_id_table core_ids = {.next_id = 1};
#define ids core_ids

static struct ulp main_ulp;
static struct ulp *ulp_pool; /* freed objects, linked through ->arg */
static unsigned ulp_pool_len;
static core_exit_hook_t exit_hooks[MAX_EXIT_HOOKS];
static int nexit_hooks;

/* ------------------------------------------------------------ id table */

static int id_register(struct ulp *u)
{
    if (ids.next_id == INT32_MAX)
        return -ENOMEM;
    size_t index = (size_t)(ids.next_id - 1);
    size_t c = index >> ID_CHUNK_BITS;
    if (c >= ids.nchunks) {
        size_t n = ids.nchunks ? ids.nchunks * 2 : 16;
        struct ulp ***chunks = realloc(ids.chunks, n * sizeof *chunks);
        if (!chunks)
            return -ENOMEM;
        ids.chunks = chunks;
        uint32_t *used = realloc(ids.used, n * sizeof *used);
        if (!used)
            return -ENOMEM;
        ids.used = used;
        memset(ids.chunks + ids.nchunks, 0, (n - ids.nchunks) * sizeof *chunks);
        memset(ids.used + ids.nchunks, 0, (n - ids.nchunks) * sizeof *used);
        ids.nchunks = n;
    }
    if (!ids.chunks[c] && !(ids.chunks[c] = calloc(ID_CHUNK, sizeof **ids.chunks)))
        return -ENOMEM;
    ids.chunks[c][index & (ID_CHUNK - 1)] = u;
    ids.used[c]++;
    u->id = ids.next_id++;
    u->trc_id = ULP_TRC_NOTASK | u->id;
    return 0;
}

static void id_unregister(struct ulp *u)
{
    size_t index = (size_t)(u->id - 1);
    size_t c = index >> ID_CHUNK_BITS;
    ids.chunks[c][index & (ID_CHUNK - 1)] = NULL;
    /* The chunk that will receive the next ids stays. */
    if (--ids.used[c] == 0 && c != (size_t)(ids.next_id - 1) >> ID_CHUNK_BITS) {
        free(ids.chunks[c]);
        ids.chunks[c] = NULL;
    }
}

void core_for_each_ulp(void (*fn)(struct ulp *u, void *ctx), void *ctx)
{
    for (size_t c = 0; c < ids.nchunks; c++) {
        if (!ids.chunks[c])
            continue;
        for (size_t j = 0; j < ID_CHUNK; j++) {
            struct ulp *u = ids.chunks[c][j];
            if (u)
                fn(u, ctx);
        }
    }
}

/* ------------------------------------------------------------ objects */

static struct ulp *ulp_obj_alloc(void)
{
    struct ulp *u = ulp_pool;
    if (u) {
        ulp_pool = u->arg;
        ulp_pool_len--;
    } else if (!(u = malloc(sizeof *u))) {
        return NULL;
    }
    memset(u, 0, sizeof *u);
    return u;
}

static void ulp_obj_free(struct ulp *u)
{
    if (u == &main_ulp)
        return;
    if (ulp_pool_len < ULP_POOL_MAX) {
        u->arg = ulp_pool;
        ulp_pool = u;
        ulp_pool_len++;
    } else {
        free(u);
    }
}

/* Forget a dead ULP completely: its id and its object. */
static void ulp_destroy(struct ulp *u)
{
    id_unregister(u);
    ulp_obj_free(u);
}

void core_ulp_reclaim(struct ulp *u)
{
#if UPVM_TSAN
    if (u->tsan_fiber && u != core_sched.main) {
        __tsan_destroy_fiber(u->tsan_fiber);
        u->tsan_fiber = NULL;
    }
#endif
    core_stack_free(u);
    if (u->detached)
        ulp_destroy(u);
    /* else: a zombie holding the exit status until upvm_join */
}

static core_describer_t describer;

void core_set_describer(core_describer_t fn)
{
    describer = fn;
}

static const char *base_name(const struct ulp *u, char *buf, size_t len)
{
    if (u->name)
        return u->name;
    Dl_info info;
    void *fn = u->ordinal_entry ? (void *)u->entry.ordinal : (void *)u->entry.plain;
    if (fn && dladdr(fn, &info) && info.dli_sname && info.dli_saddr == fn)
        return info.dli_sname;
    if (fn) {
        snprintf(buf, len, "%p", fn);
        return buf;
    }
    return "?";
}

const char *core_ulp_name(const struct ulp *u, char *buf, size_t len)
{
    const char *name = base_name(u, buf, len); /* may be buf itself */
    char extra[64], copy[128];
    if (!describer || describer(u, extra, sizeof extra) == 0)
        return name;
    snprintf(copy, sizeof copy, "%s", name);
    snprintf(buf, len, "%s, %s", copy, extra);
    return buf;
}

int core_add_exit_hook(core_exit_hook_t hook)
{
    if (nexit_hooks == MAX_EXIT_HOOKS)
        return -ENOMEM;
    exit_hooks[nexit_hooks++] = hook;
    return 0;
}

/* ------------------------------------------------------------ init */

/* UPVM_STACK_SIZE; a bad value stops the program (exit status 2): every
 * ULP would get a stack the user did not ask for. */
static COLD void read_stack_size_env(void)
{
    static const struct env_num spec = {
        .min = 0, .max = STACK_SIZE_MAX, .dflt = DEFAULT_STACK_SIZE};
    uint64_t size;
    int rc = env_size("UPVM_STACK_SIZE", &spec, &size);
    if (rc < 0)
        exit(2);
    core_stack_size_set = rc > 0;
    core_default_stack_size = size < UPVM_STACK_MIN ? UPVM_STACK_MIN : (size_t)size;
}

static void init_main_ulp(void)
{
    struct ulp *m = &main_ulp;
    m->state = ULP_RUNNING;
    m->started = true;
    m->ordinal = -1;
    m->name = "main";
    m->trc_id = ULP_TRC_NOTASK;
    m->timer_index = ULP_NO_TIMER;
    list_init(&m->link);
    upvm_waitq_init(&m->exitq, "exit of main");
    /* For reports and the sanitizer: the thread's own stack. */
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        (void)pthread_attr_getstack(&attr, &m->stack_lo, &m->stack_size);
        pthread_attr_destroy(&attr);
    }
    if (id_register(m) != 0) {
        fprintf(stderr, "upvm: out of memory while starting the node\n");
        exit(2);
    }
    core_sched.main = m;
    core_sched.current = m;
    core_sched.nlive = 1;
#if UPVM_TSAN
    m->tsan_fiber = __tsan_get_current_fiber(); /* the thread's own */
#endif
}

int core_init(void)
{
    static atomic_int owner; /* 0: nobody yet, 1: taken */
    int expected = 0;
    if (!atomic_compare_exchange_strong(&owner, &expected, 1))
        return -EPERM; /* the node already has its scheduler thread */
    read_stack_size_env();
    if (core_stack_init() != 0)
        exit(2);
    upvm_waitq_init(&core_sched.joinallq, "upvm_join_all");
    upvm_waitq_init(&core_sched.familyq, "upvm_join_all");
    core_sched_init();
    init_main_ulp();
    if (core_timer_reserve(1) != 0) /* main's own timed waits */
        exit(2);
    if (core_fault_init() != 0) {
        fprintf(stderr, "upvm: cannot install the crash handlers: %m\n");
        exit(2);
    }
    core_on_sched_thread = true;
    core_sched_started();
    return 0;
}

size_t upvm_default_stack_size(void)
{
    if (core_enter() != 0)
        return 0;
    return core_default_stack_size;
}

/* ------------------------------------------------------------ creation */

/* A new ULP object with a stack: the core's (stack_lo NULL) or the given
 * one. */
static int ulp_new_on(const upvm_attr_t *attr, void *stack_lo, size_t stack_size,
                      void (*release)(struct ulp *), struct ulp **out)
{
    size_t size = attr && attr->stack_size ? attr->stack_size : core_default_stack_size;
    if (size > STACK_SIZE_MAX)
        return -EINVAL;
    struct ulp *u = ulp_obj_alloc();
    if (!u)
        return -ENOMEM;
    int rc = core_timer_reserve((uint32_t)core_sched.nlive + 1);
    if (rc == 0 && stack_lo) {
        u->stack_lo = stack_lo;
        u->stack_size = stack_size;
        u->owns_stack = true;
        u->stack_release = release;
    } else if (rc == 0) {
        rc = core_stack_alloc(u, size);
    }
    if (rc == 0 && (rc = id_register(u)) != 0)
        core_stack_free(u);
    if (rc != 0) {
        ulp_obj_free(u);
        return rc;
    }
    u->timer_index = ULP_NO_TIMER;
    u->ordinal = -1;
    u->name = attr ? attr->name : NULL;
    u->detached = attr && (attr->flags & UPVM_DETACHED);
    u->family = core_sched.current ? core_sched.current->family : NULL; /* its creator's */
    list_init(&u->link);
    upvm_waitq_init(&u->exitq, "upvm_join");
    core_sched.nlive++;
    core_make_ready(u);
    *out = u;
    return 0;
}

static int ulp_new(const upvm_attr_t *attr, struct ulp **out)
{
    return ulp_new_on(attr, NULL, 0, NULL, out);
}

int core_ulp_create_on(upvm_entry_t fn, void *arg, const upvm_attr_t *attr, void *stack_lo,
                       size_t stack_size, void (*release)(struct ulp *u), struct ulp **out)
{
    if (!fn || !stack_lo || stack_size < UPVM_STACK_MIN || !release)
        return -EINVAL;
    struct ulp *u;
    int rc = ulp_new_on(attr, stack_lo, stack_size, release, &u);
    if (rc != 0)
        return rc;
    u->entry.plain = fn;
    u->arg = arg;
    *out = u;
    return 0;
}

/* Undo ulp_new for a ULP that never ran. */
static void ulp_unmake(struct ulp *u)
{
    list_unlink(&u->link);
    core_sched.nlive--;
    core_stack_free(u);
    ulp_destroy(u);
}

upvm_id_t upvm_create(upvm_entry_t fn, void *arg, const upvm_attr_t *attr)
{
    int rc = core_enter();
    if (rc != 0)
        return rc;
    if (!fn)
        return -EINVAL;
    struct ulp *u;
    if ((rc = ulp_new(attr, &u)) != 0)
        return rc;
    u->entry.plain = fn;
    u->arg = arg;
    return u->id;
}

int upvm_spawn_func(upvm_ordinal_entry_t fn, void *arg, int count, upvm_id_t *ids_out,
                    const upvm_attr_t *attr)
{
    int rc = core_enter();
    if (rc != 0)
        return rc;
    if (!fn || count < 1)
        return -EINVAL;
    struct ulp *first = NULL;
    for (int i = 0; i < count; i++) {
        struct ulp *u;
        if ((rc = ulp_new(attr, &u)) != 0) {
            /* Roll back: the ones made so far are the last i on the queue. */
            for (int k = 0; k < i; k++) {
                struct ulp *last = list_entry(core_sched.runq.prev, struct ulp, link);
                ulp_unmake(last);
            }
            return rc;
        }
        if (!first)
            first = u;
        u->entry.ordinal = fn;
        u->ordinal_entry = true;
        u->ordinal = i;
        u->arg = arg;
        if (ids_out)
            ids_out[i] = u->id;
    }
    return count;
}

/* ------------------------------------------------------------ queries */

upvm_id_t upvm_self(void)
{
    if (core_enter() != 0)
        return -EPERM;
    return core_sched.current->id;
}

int upvm_ordinal(void)
{
    if (core_enter() != 0)
        return -EPERM;
    return core_sched.current->ordinal;
}

int upvm_count(void)
{
    if (core_enter() != 0)
        return -EPERM;
    return core_sched.nlive;
}

/* ------------------------------------------------------------ exit, join */

static void wake_joinall_if_done(void)
{
    if (core_sched.njoinall && core_sched.nlive == core_sched.njoinall)
        while (core_wake_one(&core_sched.joinallq))
            ;
}

/* A family's join: does a live ULP of family f other than `self` not wait
 * in upvm_join_all? */
struct family_scan {
    const void *f;
    const struct ulp *self;
    bool busy;
};

static void family_busy(struct ulp *u, void *ctx)
{
    struct family_scan *s = ctx;
    if (u != s->self && u->family == s->f && u->state != ULP_DEAD && !u->in_join_all)
        s->busy = true;
}

static void family_release(struct ulp *u, void *ctx)
{
    if (u->family == ctx && u->in_join_all)
        u->join_all_done = true;
}

/* Family f may be done (one of it exited, or began waiting): when every
 * live ULP of it but `self` waits in upvm_join_all, they all return (none
 * counts again: the others it waited with are alive, but done waiting). */
static bool family_check(const void *f, const struct ulp *self)
{
    struct family_scan s = {f, self, false};
    core_for_each_ulp(family_busy, &s);
    if (s.busy)
        return false;
    if (core_sched.nfamilyjoin) {
        core_for_each_ulp(family_release, (void *)f);
        while (core_wake_one(&core_sched.familyq))
            ;
    }
    return true;
}

void upvm_exit(int status)
{
    if (!core_on_sched_thread && core_kc_ulp)
        core_return(); /* a coupled ULP ends on its scheduler */
    if (!core_on_sched_thread_now() && core_enter() != 0) {
        fprintf(stderr, "upvm: upvm_exit called on a thread that is not the node's "
                        "scheduler: ending that thread instead\n");
        pthread_exit(NULL);
    }
    struct ulp *self = core_sched.current;
    if (self == core_sched.main) {
        (void)upvm_join_all();
        exit(status);
    }
    self->exit_status = status; /* the hooks may report it */
    for (int i = 0; i < nexit_hooks; i++)
        exit_hooks[i](self);
    self->state = ULP_DEAD;
    core_sched.nlive--;
    if (self->joining)
        (void)core_wake_one(&self->exitq);
    wake_joinall_if_done();
    if (self->family && core_sched.nfamilyjoin)
        (void)family_check(self->family, self);
    core_schedule(); /* the next ULP frees our stack (core_ulp_reclaim) */
    __builtin_unreachable();
}

int upvm_join(upvm_id_t id, int *status)
{
    int rc = core_enter();
    if (rc != 0)
        return rc;
    struct ulp *u = core_ulp_lookup(id);
    if (!u)
        return -ESRCH;
    if (u == core_sched.current)
        return -EDEADLK;
    if (u->detached || u->joining)
        return -EINVAL;
    if (u->state != ULP_DEAD) {
        u->joining = true;
        while (u->state != ULP_DEAD)
            (void)core_block(&u->exitq, -1);
    }
    if (status)
        *status = u->exit_status;
    ulp_destroy(u);
    return 0;
}

static void reap_zombie(struct ulp *u, void *unused)
{
    if (u->state == ULP_DEAD && !u->joining && !u->owns_stack && !u->detached)
        ulp_destroy(u);
}

static void reap_family_zombie(struct ulp *u, void *family)
{
    if (u->family == family)
        reap_zombie(u, NULL);
}

int upvm_join_all(void)
{
    int rc = core_enter();
    if (rc != 0)
        return rc;
    struct ulp *self = core_sched.current;
    if (self->family && self != core_sched.main) {
        /* A ULP of a program copy waits for its copy's ULPs only (not for
         * the runtime's, nor other programs'): family_check wakes it. */
        if (!family_check(self->family, self)) {
            self->in_join_all = true;
            self->join_all_done = false;
            core_sched.nfamilyjoin++;
            while (!self->join_all_done)
                (void)core_block(&core_sched.familyq, -1);
            core_sched.nfamilyjoin--;
            self->in_join_all = false;
        }
        core_for_each_ulp(reap_family_zombie, (void *)self->family);
        return 0;
    }
    /* Only wake_joinall_if_done wakes this queue, once every live ULP is
     * waiting here: then each waiter returns, without counting again (the
     * others it was waiting with are still alive, but done waiting). */
    if (core_sched.nlive > core_sched.njoinall + 1) {
        core_sched.njoinall++;
        (void)core_block(&core_sched.joinallq, -1);
        core_sched.njoinall--;
    }
    core_for_each_ulp(reap_zombie, NULL);
    return 0;
}

int core_drain(void)
{
    struct ulp *self = core_sched.current;
    /* Wait on the join-all queue: it wakes us when everyone else exited;
     * idle_wait wakes us (the drainer) when the rest can never run again. */
    core_sched.drainer = self;
    while (core_sched.nlive > core_sched.njoinall + 1) {
        core_sched.njoinall++;
        (void)core_block(&core_sched.joinallq, -1);
        core_sched.njoinall--;
        if (list_empty(&core_sched.runq) && core_timer_next() == UINT64_MAX)
            break; /* woken as drainer: all others are stuck */
    }
    core_sched.drainer = NULL;
    core_for_each_ulp(reap_zombie, NULL);
    return core_sched.nlive - 1;
}

int upvm_run(upvm_entry_t fn, void *arg, const upvm_attr_t *attr)
{
    upvm_id_t id = upvm_create(fn, arg, attr);
    if (id < 0)
        return id;
    return upvm_join_all();
}

/* ------------------------------------------------------------ migration */

const char *core_ulp_why_not_freezable(const struct ulp *u, const void *lo, const void *hi)
{
    if (u == core_sched.current || u == core_sched.main)
        return "it is running";
    if (u->kill_pending || u->state == ULP_DEAD)
        return "it is ending";
    if (u->pinned)
        return "it is inside a call that holds its node's memory (it moves once that returns)";
    if (u->joining)
        return "another ULP of its node waits for its end (upvm_join)";
    if (!u->started)
        return "it has not started yet";
    if (u->state == ULP_BLOCKED &&
        ((const char *)u->waitq < (const char *)lo || (const char *)u->waitq >= (const char *)hi))
        return "it waits for something only its node has (an exit status, its siblings, a migration)";
    if (u->state == ULP_COUPLED)
        return "it is in a blocking call on a kernel context (it moves once that returns)";
    if (core_ulp_has_state(u))
        return "it is handling a C++ exception, whose objects are its node's memory (it moves "
               "once that ends)";
    if (u->state != ULP_READY && u->state != ULP_BLOCKED && u->state != ULP_SLEEPING)
        return "it is running";
    return NULL;
}

void core_ulp_freeze(struct ulp *u, struct core_frozen *out)
{
    out->state = u->state;
    out->timed = u->timer_index != ULP_NO_TIMER;
    out->waitq = u->state == ULP_BLOCKED ? u->waitq : NULL;
    if (u->state != ULP_SLEEPING)
        list_unlink(&u->link); /* the run queue, or its wait queue */
    core_timer_cancel(u);
    out->u = *u;
    core_sched.nlive--;
    id_unregister(u);
    ulp_obj_free(u);
}

static int thaw(const struct core_frozen *f, struct ulp **out, bool parked)
{
    struct ulp *u = ulp_obj_alloc();
    if (!u)
        return -ENOMEM;
    int rc = core_timer_reserve((uint32_t)core_sched.nlive + 1);
    if (rc == 0)
        rc = id_register(u);
    if (rc != 0) {
        ulp_obj_free(u);
        return rc;
    }
    upvm_id_t id = u->id;
    *u = f->u;
    u->id = id;
    if (u->trc_id & ULP_TRC_NOTASK) /* a task keeps its tid */
        u->trc_id = ULP_TRC_NOTASK | id;
    u->timer_index = ULP_NO_TIMER;
    u->migrate_pending = false;
    u->kill_pending = false;
    u->joining = false;
    list_init(&u->link);
    upvm_waitq_init(&u->exitq, "upvm_join");
#if UPVM_ASAN
    u->asan_fake_stack = NULL; /* the sanitizer's, on the other node */
#endif
#if UPVM_TSAN
    u->tsan_fiber = NULL; /* a fiber of this process's, at its first switch */
#endif
    core_sched.nlive++;
    if (parked) { /* on no queue: nothing wakes it but core_ulp_unpark */
        u->state = ULP_BLOCKED;
        u->waitq = NULL;
    } else if (f->state == ULP_READY) {
        core_make_ready(u);
    } else {
        u->state = f->state;
        if (f->state == ULP_BLOCKED) {
            u->waitq = f->waitq;
            list_push_back(&f->waitq->head, &u->link);
        }
        if (f->timed)
            core_timer_add(u, f->u.deadline_ns);
    }
    *out = u;
    return 0;
}

int core_ulp_thaw(const struct core_frozen *f, struct ulp **out)
{
    return thaw(f, out, false);
}

int core_ulp_thaw_parked(const struct core_frozen *f, struct ulp **out)
{
    return thaw(f, out, true);
}

void core_ulp_unpark(struct ulp *u, const struct core_frozen *f)
{
    if (f->state == ULP_SLEEPING) {
        u->state = ULP_SLEEPING;
        core_timer_add(u, f->u.deadline_ns);
        return;
    }
    /* ready, or blocked: what it waited for may have come while it was
     * parked, off its queue -- it looks again (every wait loops on its
     * condition) */
    u->wake_result = 0;
    core_make_ready(u);
}
