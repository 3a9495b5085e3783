/*
 * lazy.c - lazy migration (IVY's "Process migration"; design notes §15.10):
 * a task moves with its registers and the page its stack pointer is in,
 * and runs at once on the destination; the rest of its memory follows.
 *
 * The migration protocol is src/migrate's; this file serves its
 * migrate_lazy_ops.  Both ends enumerate the pages still owed the same
 * way (the page-aligned ranges the source named, in order), so a page is
 * named by its index:
 *
 *   destination  the owed ranges are registered for missing-page faults
 *                (userfaultfd, SIGBUS mode: fault.c).  A ULP touching an
 *                owed page blocks on it (only that ULP) and asks the source
 *                for it (K_SVM_PUSH with LAZY_PULL); pages that arrive are
 *                put in with UFFDIO_COPY (one that came another way first
 *                is kept).  When every page is here the ranges are
 *                unregistered and the record goes.
 *   source       keeps the task's slot mapped and answers each pull with the
 *                page and up to LAZY_AHEAD - 1 following ones not sent yet;
 *                a pusher ULP sends the rest in the background
 *                (UPVM_MIGRATE_PUSH=on, the default), a run of pages per
 *                frame, yielding between frames.  When every page has left,
 *                the slot goes (proc_move_gone).
 *
 * A source that dies with pages not sent: the ULPs that touch them end
 * with a report (fault.c).  A destination that dies: the source lets the
 * slot go.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem/mem.h"
#include "migrate/migrate.h"
#include "proc/proc.h"
#include "svm/svm_impl.h"
#include "util/env.h"

#if UPVM_ASAN
#include <sanitizer/asan_interface.h>
#endif

#define LAZY_AHEAD 16 /* pages per frame: 64 KiB */
#define LAZY_PULL (1 << 30)
#define LAZY_STOP (1 << 29) /* the task ended at the destination: send no more */
#define LAZY_ALL (1 << 28)  /* the task must move on: send the rest now */

enum { PAGE_SENT = 1, PAGE_HERE = 1, PAGE_ASKED = 2 };

struct svm_lazy {
    struct svm_lazy *next;
    bool source;          /* this node serves the pages (else it receives them) */
    bool dead;            /* the other end died */
    bool pusher;          /* source: a pusher ULP runs for it (and frees it) */
    bool done;            /* source: every page left; unlinked, the slot let go */
    bool asked_all;       /* destination: the rest was asked for (lazy_busy) */
    int tid, slot, peer;  /* peer: the destination (source) or the source */
    struct loader_image *img;
    struct iovec v[PROC_MOVE_RANGES + 1];
    int n;
    uint32_t npages, left; /* pages owed; not yet sent (source) or here (destination) */
    uint8_t *state;        /* per page: PAGE_SENT, or PAGE_HERE | PAGE_ASKED */
    uint32_t cursor;       /* source: the next page the pusher looks at */
};

static struct svm_lazy *lazies;
static int push_setting = 1;

static struct svm_lazy *find(int slot, bool source)
{
    for (struct svm_lazy *l = lazies; l; l = l->next)
        if (l->slot == slot && l->source == source)
            return l;
    return NULL;
}

static void take_out(struct svm_lazy *l)
{
    for (struct svm_lazy **p = &lazies; *p; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            break;
        }
    if (!l->source)
        __atomic_sub_fetch(&svm.lazy_pending, 1, __ATOMIC_RELAXED);
}

static void unlink_lazy(struct svm_lazy *l)
{
    take_out(l);
    free(l->state);
    free(l);
}

/* Page index -> address, and back (-1: not owed). */
static uintptr_t page_addr(const struct svm_lazy *l, uint32_t idx)
{
    for (int i = 0; i < l->n; i++) {
        uint32_t np = (uint32_t)(l->v[i].iov_len / SVM_PAGE_SIZE);
        if (idx < np)
            return (uintptr_t)l->v[i].iov_base + (uintptr_t)idx * SVM_PAGE_SIZE;
        idx -= np;
    }
    return 0;
}

static long page_index(const struct svm_lazy *l, uintptr_t addr)
{
    uint32_t base = 0;
    for (int i = 0; i < l->n; i++) {
        uintptr_t lo = (uintptr_t)l->v[i].iov_base;
        uint32_t np = (uint32_t)(l->v[i].iov_len / SVM_PAGE_SIZE);
        if (addr >= lo && addr < lo + l->v[i].iov_len)
            return base + (uint32_t)((addr - lo) / SVM_PAGE_SIZE);
        base += np;
    }
    return -1;
}

/* How many pages from idx on lie contiguously in memory (one range). */
static uint32_t run_left(const struct svm_lazy *l, uint32_t idx)
{
    for (int i = 0; i < l->n; i++) {
        uint32_t np = (uint32_t)(l->v[i].iov_len / SVM_PAGE_SIZE);
        if (idx < np)
            return np - idx;
        idx -= np;
    }
    return 0;
}

static struct svm_lazy *lazy_new(bool source, int tid, int slot, int peer, const struct iovec *v,
                                 int n)
{
    struct svm_lazy *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    *l = (struct svm_lazy){.source = source, .tid = tid, .slot = slot, .peer = peer, .n = n};
    memcpy(l->v, v, (size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        l->npages += (uint32_t)(v[i].iov_len / SVM_PAGE_SIZE);
    l->left = l->npages;
    l->state = calloc(l->npages ? l->npages : 1, 1);
    if (!l->state) {
        free(l);
        return NULL;
    }
    l->next = lazies;
    lazies = l;
    if (!source)
        __atomic_add_fetch(&svm.lazy_pending, 1, __ATOMIC_RELAXED);
    return l;
}

static upvm_waitq_t *lazy_queue(const struct svm_lazy *l, uint32_t idx)
{
    return &svm.page_q[(idx ^ (uint32_t)l->slot * 13u) % 64u];
}

/* ------------------------------------------------------------ source */

/* Send up to `most` unsent pages from idx on, contiguous in memory. */
static uint32_t send_run(struct svm_lazy *l, uint32_t idx, uint32_t most)
{
    uint32_t run = run_left(l, idx), n = 0;
    if (run > most)
        run = most;
    while (n < run && !(l->state[idx + n] & PAGE_SENT))
        n++;
    if (!n)
        return 0;
    for (uint32_t k = 0; k < n; k++)
        l->state[idx + k] |= PAGE_SENT;
    l->left -= n;
    svm.stats.pages_out += n;
    svm_send(l->peer, K_SVM_PUSH, l->slot, (int32_t)idx, (int32_t)n,
             (const void *)page_addr(l, idx), (size_t)n * SVM_PAGE_SIZE);
    return n;
}

/* send_run, and the end of the record when that was the last page. */
static void send_and_check(struct svm_lazy *l, uint32_t idx, uint32_t most);

/* Every page has left (or its destination died): the slot goes at once
 * (the task may come back here soon), and the record with it -- or, while
 * its pusher runs, when the pusher sees it done. */
static void source_done(struct svm_lazy *l)
{
    if (l->done)
        return;
    l->done = true;
    proc_move_gone(l->slot, l->img);
    take_out(l);
    if (!l->pusher) {
        free(l->state);
        free(l);
    }
}

static void pusher_main(void *arg)
{
    struct svm_lazy *l = arg;
    while (!l->done && !l->dead) {
        while (l->cursor < l->npages && (l->state[l->cursor] & PAGE_SENT))
            l->cursor++;
        if (l->cursor >= l->npages)
            break;
        send_and_check(l, l->cursor, LAZY_AHEAD); /* the loop above steps past what went */
        upvm_yield(); /* the node's other ULPs, and the transport, between frames */
    }
    l->pusher = false;
    if (l->done) {
        free(l->state);
        free(l);
    } else {
        source_done(l);
    }
}

static void start_pusher(struct svm_lazy *l)
{
    upvm_attr_t attr = {.name = "upvm-lazy-pusher", .flags = UPVM_DETACHED};
    l->pusher = upvm_create(pusher_main, l, &attr) > 0;
}

static void lazy_serve(int tid, int slot, struct loader_image *img, int to, const struct iovec *v,
                       int n)
{
#if UPVM_ASAN
    for (int i = 0; i < n; i++) /* free heap blocks and globals' redzones travel too */
        ASAN_UNPOISON_MEMORY_REGION(v[i].iov_base, v[i].iov_len);
#endif
    struct svm_lazy *l = lazy_new(true, tid, slot, to, v, n);
    if (!l) { /* as the node does when a frame finds no memory (node/job.h) */
        fprintf(stderr, "upvm: node %d: out of memory serving t%x's pages (a lazy move)\n",
                svm.self, (unsigned)tid);
        _exit(71);
    }
    l->img = img;
    if (!l->left) {
        source_done(l);
        return;
    }
    if (push_setting)
        start_pusher(l);
}

static void send_and_check(struct svm_lazy *l, uint32_t idx, uint32_t most)
{
    send_run(l, idx, most);
    if (!l->left)
        source_done(l);
}

/* ------------------------------------------------------------ destination */

static int lazy_expect(int tid, int slot, int from, const struct iovec *v, int n)
{
    int rc = svm_start();
    if (rc != 0)
        return rc;
    struct svm_lazy *l = lazy_new(false, tid, slot, from, v, n);
    if (!l)
        return -ENOMEM;
    for (int i = 0; i < n && rc == 0; i++)
        rc = svm_uffd_register_missing((uintptr_t)v[i].iov_base, v[i].iov_len);
    if (rc != 0) {
        for (int i = 0; i < n; i++)
            svm_uffd_unregister((uintptr_t)v[i].iov_base, v[i].iov_len);
        unlink_lazy(l);
    }
    return rc;
}

static void dest_done(struct svm_lazy *l)
{
    for (int i = 0; i < l->n; i++)
        svm_uffd_unregister((uintptr_t)l->v[i].iov_base, l->v[i].iov_len);
    unlink_lazy(l);
}

struct svm_lazy *svm_lazy_of(uintptr_t addr, uint32_t *page)
{
    int slot = mem_slot_of((const void *)addr);
    struct svm_lazy *l = slot >= 0 ? find(slot, false) : NULL;
    long idx = l ? page_index(l, addr) : -1;
    if (idx < 0)
        return NULL;
    *page = (uint32_t)idx;
    return l;
}

int svm_lazy_acquire(struct svm_lazy *l, uint32_t idx)
{
    int slot = l->slot;
    struct ulp *u = core_current();
    core_ulp_pin(u);
    int rc = 0;
    for (;;) { /* l goes once every page is here: look it up again after a wait */
        l = find(slot, false);
        if (!l || (l->state[idx] & PAGE_HERE))
            break;
        if (l->dead) {
            rc = -EHOSTDOWN;
            break;
        }
        if (!(l->state[idx] & PAGE_ASKED)) {
            l->state[idx] |= PAGE_ASKED;
            svm_send(l->peer, K_SVM_PUSH, slot, (int32_t)idx, LAZY_PULL | 1, NULL, 0);
        }
        (void)core_block(lazy_queue(l, idx), -1);
    }
    core_ulp_unpin(u);
    return rc;
}

bool svm_lazy_bounce(uintptr_t lo, uintptr_t hi)
{
    for (struct svm_lazy *l = lazies; l; l = l->next) {
        if (l->source)
            continue;
        for (int i = 0; i < l->n; i++) {
            uintptr_t a = (uintptr_t)l->v[i].iov_base, b = a + l->v[i].iov_len;
            if (lo < b && hi > a)
                return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------ frames */

static void push_arrived(int src, const struct node_frame *f, const void *payload, size_t len)
{
    uint32_t idx = (uint32_t)f->b, n = (uint32_t)f->c & 0xffff;
    if (f->c & LAZY_STOP) {
        struct svm_lazy *l = find(f->a, true);
        if (l) {
            l->dead = true;
            source_done(l);
        }
        return;
    }
    if (f->c & LAZY_ALL) { /* at the source: everything, now (UPVM_MIGRATE_PUSH=off) */
        struct svm_lazy *l = find(f->a, true);
        if (l && !l->pusher)
            start_pusher(l);
        return;
    }
    if (f->c & LAZY_PULL) { /* at the source: a page wanted now */
        struct svm_lazy *l = find(f->a, true);
        if (l && idx < l->npages)
            send_and_check(l, idx, LAZY_AHEAD);
        return;
    }
    struct svm_lazy *l = find(f->a, false);
    if (!l || idx + n > l->npages || len < (size_t)n * SVM_PAGE_SIZE || src != l->peer)
        return;
    svm.stats.pages_in += n;
    svm_uffd_fill(page_addr(l, idx), payload, (size_t)n * SVM_PAGE_SIZE);
    for (uint32_t k = 0; k < n; k++) {
        if (!(l->state[idx + k] & PAGE_HERE)) {
            l->state[idx + k] |= PAGE_HERE;
            l->left--;
        }
        if (l->state[idx + k] & PAGE_ASKED)
            upvm_wake_all(lazy_queue(l, idx + k));
    }
    if (!l->left)
        dest_done(l);
}

void svm_lazy_node_gone(int n)
{
    for (struct svm_lazy *l = lazies, *next; l; l = next) {
        next = l->next;
        if (l->peer != n)
            continue;
        l->dead = true;
        if (l->source) {
            source_done(l); /* the task died with its node: the slot goes */
        } else {
            for (int q = 0; q < 64; q++) /* its waiters end (fault.c) */
                upvm_wake_all(&svm.page_q[q]);
        }
    }
}

/* A task that ends here before all its memory came: the rest is not
 * wanted any more. */
static void on_ulp_exit(struct ulp *u)
{
    if (!svm.lazy_pending || !u->stack_lo)
        return;
    int slot = mem_slot_of(u->stack_lo);
    struct svm_lazy *l = slot >= 0 ? find(slot, false) : NULL;
    if (!l)
        return;
    if (!l->dead)
        svm_send(l->peer, K_SVM_PUSH, l->slot, 0, LAZY_STOP, NULL, 0);
    dest_done(l);
}

/* ------------------------------------------------------------ ops */

static int lazy_possible(char *why, size_t len)
{
    int rc = svm_start();
    if (rc != 0) {
        snprintf(why, len, "this node cannot catch page faults (%s)", strerror(-rc));
        return rc;
    }
    if (svm.ops->signal != SIGBUS) {
        snprintf(why, len, "it needs userfaultfd, which this node does not use "
                           "(UPVM_SVM_FAULT=mprotect, or the kernel refuses it)");
        return -ENOSYS;
    }
    return 0;
}

static void lazy_forget(int slot)
{
    struct svm_lazy *l = find(slot, false);
    if (l)
        dest_done(l);
}

/* A task whose memory is still on its way cannot move again yet; if it
 * comes only when touched (UPVM_MIGRATE_PUSH=off), the rest is asked for
 * now, so that it can move soon. */
static bool lazy_busy(int slot)
{
    struct svm_lazy *l = find(slot, false);
    if (l && !l->dead && !l->asked_all) {
        l->asked_all = true;
        svm_send(l->peer, K_SVM_PUSH, l->slot, 0, LAZY_ALL, NULL, 0);
    }
    return l || find(slot, true);
}

static const struct migrate_lazy_ops lazy_ops = {
    .possible = lazy_possible,
    .busy = lazy_busy,
    .expect = lazy_expect,
    .forget = lazy_forget,
    .serve = lazy_serve,
};

void svm_lazy_register(void)
{
    static const char *const onoff[] = {"off", "on", NULL};
    int v;
    if (env_choice("UPVM_MIGRATE_PUSH", onoff, 1, 0, &v) >= 0)
        push_setting = v;
    node_on_frame(K_SVM_PUSH, push_arrived);
    if (core_add_exit_hook(on_ulp_exit) != 0) /* without it a task's end could not stop the pages */
        return;
    migrate_set_lazy_ops(&lazy_ops);
}
