/*
 * stack.c - ULP stacks: lazily committed, each with an inaccessible guard
 * page below it, cached for reuse.
 *
 * Stacks are carved from large arenas reserved with MAP_NORESERVE, so their
 * pages are committed only when touched.  The guard page is installed with
 * MADV_GUARD_INSTALL (Linux >= 6.13), which marks page-table entries and
 * does NOT split the arena's mapping: a million stacks still use a handful
 * of VMAs, far below vm.max_map_count.  On older kernels the guard falls
 * back to mprotect(PROT_NONE), which costs two VMAs per stack; when the
 * kernel's map limit is reached the error names the sysctl that raises it.
 *
 *   arena:  | guard | stack 0 ...... | guard | stack 1 ...... | guard | ...
 *           ^ lowest address                        stack tops grow down ^
 *
 * Freed stacks keep their guard and go to a per-size cache: the first
 * HOT_MAX stay resident (the next ULP reuses them with no syscall and no page
 * fault), the rest are given back to the kernel with MADV_DONTNEED, in
 * batches: neighbours in the arena are released with one call (guard
 * markers survive MADV_DONTNEED), so a million exiting ULPs cost thousands
 * of system calls, not a million.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core.h"
#include "util/env.h"

#if UPVM_ASAN
#include <sanitizer/asan_interface.h>
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define ARENA_SIZE ((size_t)64 << 30) /* 64 GiB of address space per arena */
#define HOT_MAX 1024                  /* resident cached stacks per size */
#define RELEASE_BATCH 256             /* stacks given back per batch */
#define MAX_CLASSES 16

struct ptr_stack {
    void **items;
    size_t n, cap;
};

struct stack_class {
    size_t size;            /* usable bytes, page multiple */
    struct ptr_stack hot;     /* cached, pages still resident */
    struct ptr_stack pending; /* cached, resident, to be given back */
    struct ptr_stack cold;    /* cached, pages given back */
};

static struct {
    size_t page;
    char *arena_next, *arena_end;
    bool guard_by_mprotect; /* kernel without MADV_GUARD_INSTALL */
    struct stack_class classes[MAX_CLASSES];
    int nclasses;
} st;

size_t core_default_stack_size;
bool core_stack_size_set;

static bool ptr_push(struct ptr_stack *s, void *p)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        void **grown = realloc(s->items, cap * sizeof *grown);
        if (!grown)
            return false;
        s->items = grown;
        s->cap = cap;
    }
    s->items[s->n++] = p;
    return true;
}

static void *ptr_pop(struct ptr_stack *s)
{
    return s->n ? s->items[--s->n] : NULL;
}

size_t core_stack_guard_size(void)
{
    return st.page;
}

static size_t round_stack_size(size_t size)
{
    if (size < UPVM_STACK_MIN)
        size = UPVM_STACK_MIN;
    return (size + st.page - 1) & ~(st.page - 1);
}

static struct stack_class *class_for(size_t size)
{
    for (int i = 0; i < st.nclasses; i++)
        if (st.classes[i].size == size)
            return &st.classes[i];
    if (st.nclasses == MAX_CLASSES)
        return NULL; /* odd sizes beyond 16 classes are simply not cached */
    struct stack_class *c = &st.classes[st.nclasses++];
    c->size = size;
    return c;
}

static bool new_arena(size_t need)
{
    size_t len = need > ARENA_SIZE ? need : ARENA_SIZE;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    /* Transparent huge pages would turn every touched stack into 2 MiB of
     * resident memory. */
    (void)madvise(p, len, MADV_NOHUGEPAGE);
    st.arena_next = p;
    st.arena_end = (char *)p + len;
    return true;
}

static COLD void report_map_limit(void)
{
    static bool told;
    if (told)
        return;
    told = true;
    unsigned long limit = 0;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%lu", &limit) != 1)
            limit = 0;
        fclose(f);
    }
    fprintf(stderr,
            "upvm: cannot add a stack guard page: the kernel's limit on memory "
            "mappings per process (vm.max_map_count = %lu) is reached.\n"
            "upvm: guard pages are made with mprotect here (a kernel older than 6.13, "
            "or UPVM_STACK_GUARD=mprotect), so each ULP stack costs 2 mappings.\n"
            "upvm: raise the limit, e.g. for 1,000,000 ULPs:\n"
            "upvm:     sudo sysctl -w vm.max_map_count=2100000\n",
            limit);
}

/* Make the page at `guard` inaccessible.  Returns 0 or -ENOMEM. */
static int install_guard(char *guard)
{
    if (!st.guard_by_mprotect) {
        if (madvise(guard, st.page, MADV_GUARD_INSTALL) == 0)
            return 0;
        if (errno != EINVAL)
            return -ENOMEM;
        st.guard_by_mprotect = true; /* kernel < 6.13 */
    }
    if (mprotect(guard, st.page, PROT_NONE) == 0)
        return 0;
    if (errno == ENOMEM)
        report_map_limit();
    return -ENOMEM;
}

/* Carve a new [guard | stack] from the arena. */
static void *carve(size_t size)
{
    size_t span = st.page + size;
    if ((size_t)(st.arena_end - st.arena_next) < span && !new_arena(span))
        return NULL;
    char *guard = st.arena_next;
    if (install_guard(guard) != 0)
        return NULL;
    st.arena_next += span;
    return guard + st.page;
}

int core_stack_init(void)
{
    st.page = (size_t)sysconf(_SC_PAGESIZE);
    static const char *const methods[] = {"auto", "mprotect", NULL};
    int m;
    int rc = env_choice("UPVM_STACK_GUARD", methods, 0, 0, &m);
    st.guard_by_mprotect = m == 1;
    return rc < 0 ? rc : 0;
}

int core_stack_alloc(struct ulp *u, size_t size)
{
    size = round_stack_size(size);
    struct stack_class *c = class_for(size);
    void *lo = NULL;
    if (c && !(lo = ptr_pop(&c->hot)) && !(lo = ptr_pop(&c->pending)))
        lo = ptr_pop(&c->cold);
    if (lo) {
#if UPVM_ASAN
        /* A reused stack still carries the poison of its last owner's
         * frames (a fresh one has clean shadow memory already). */
        ASAN_UNPOISON_MEMORY_REGION(lo, size);
#endif
    } else if (!(lo = carve(size))) {
        return -ENOMEM;
    }
    u->stack_lo = lo;
    u->stack_size = size;
    u->owns_stack = true;
    return 0;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return (x > y) - (x < y);
}

/* Give the pages of every pending stack back, one madvise per run of
 * neighbouring stacks, and move them to the cold list. */
static void release_pending(struct stack_class *c)
{
    struct ptr_stack *p = &c->pending;
    size_t span = st.page + c->size; /* guard + stack */
    qsort(p->items, p->n, sizeof *p->items, cmp_ptr);
    for (size_t i = 0; i < p->n;) {
        size_t j = i + 1;
        while (j < p->n && (char *)p->items[j] == (char *)p->items[j - 1] + span)
            j++;
        /* From the first stack to the end of the last: the guards in
         * between keep their markers. */
        (void)madvise(p->items[i], (j - i - 1) * span + c->size, MADV_DONTNEED);
        i = j;
    }
    for (size_t i = 0; i < p->n; i++)
        if (!ptr_push(&c->cold, p->items[i]))
            break; /* out of memory for the list: the rest is just not reused */
    p->n = 0;
}

void core_stack_free(struct ulp *u)
{
    if (!u->owns_stack)
        return; /* main runs on the thread's own stack */
    if (u->stack_release) { /* the creator's stack (core_ulp_create_on) */
        void (*release)(struct ulp *) = u->stack_release;
        u->stack_release = NULL;
        u->owns_stack = false;
        release(u);
        u->stack_lo = NULL;
        return;
    }
    struct stack_class *c = class_for(u->stack_size);
    void *lo = u->stack_lo;
    u->stack_lo = NULL;
    u->owns_stack = false;
    if (c && c->hot.n < HOT_MAX && ptr_push(&c->hot, lo))
        return;
    if (c && ptr_push(&c->pending, lo)) {
        if (c->pending.n >= RELEASE_BATCH)
            release_pending(c);
        return;
    }
    /* Not cacheable: give the pages back now; its address space is never
     * reused (leaked), its memory is. */
    (void)madvise(lo, u->stack_size, MADV_DONTNEED);
}

void *core_stack_guard_of(const void *addr, const struct ulp *u)
{
    if (!u || !u->owns_stack)
        return NULL;
    const char *guard = (const char *)u->stack_lo - st.page;
    const char *a = addr;
    return (a >= guard && a < (const char *)u->stack_lo) ? (void *)guard : NULL;
}
