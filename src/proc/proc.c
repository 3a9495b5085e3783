/*
 * proc.c - the life of a process-mode ULP: slot, image, heap, stack,
 * arguments and environment, start, exit, and release.
 *
 * Slot layout (addresses grow to the right):
 *
 *   base                                                        base + slot size
 *   | program image | guard | stack         | heap (grows right) ...   |
 *     (loader)        page                    (mem_heap)
 *
 * Memory mappings are what limits how many ULPs a node can hold
 * (vm.max_map_count), so the layout is chosen to need few: the image's
 * writable segment (anonymous, see loader/instance.c), the stack and the
 * heap are adjacent anonymous read-write memory, which the kernel keeps as
 * one mapping; the guard page below the stack is a guard marker inside it
 * (MADV_GUARD_INSTALL), not a mapping of its own.  A typical ULP then costs
 * five mappings: three read-only segments, one read-write, and the rest of
 * the slot's reservation.  struct proc, argv and the environment come from
 * the ULP's own heap, so everything the ULP owns is in its slot.
 *
 * The stack is sized as a process's main stack: the stack limit (ulimit -s)
 * of the node, unless UPVM_STACK_SIZE says otherwise (proc_stack_size).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/debug.h"
#include "proc/proc.h"
#include "util/env.h"

#if UPVM_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* A stack limit of "unlimited" lets a process's stack grow until it meets
 * other mappings; a slot has to set a bound: this fraction of the slot
 * (256 MiB of the default 1 GiB), the rest for the image and the heap. */
#define PROC_STACK_UNLIMITED_SHARE 4

/* Slots kept loaded after their ULP ended, for the next ULP of the same
 * program: reloading one copies the data segment and relocates, where a
 * fresh slot costs five mappings now and their teardown later (the bulk of
 * a spawn).  The memory of a kept slot is dropped (MADV_DONTNEED); only its
 * mappings and page tables stay. */
#define WARM_MAX 1024
struct warm_slot {
    struct loader_image *img; /* holds a reference */
    int slot;
    size_t stack_size;
};
static struct warm_slot warm[WARM_MAX];
static int nwarm;

/* The kernel's limit on mappings (vm.max_map_count) is what bounds the
 * number of process-mode ULPs: rather than fail deep inside a mapping call
 * (or leave running ULPs unable to allocate), a spawn that would bring the
 * node within MAP_HEADROOM mappings of the limit is refused, with the
 * sysctl that lifts it.  Mappings per slot: five (see the top), counted
 * as six to leave room for programs with more segments. */
#define MAPS_PER_SLOT 6
#define MAP_HEADROOM 2000
static int slots_in_use;   /* live process-mode ULPs and kept slots */
static long map_limit = -1; /* vm.max_map_count; 0 if unknown */
static long maps_at_start = -1; /* the node's own mappings */

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    long n = 0;
    int c;
    while (f && (c = getc_unlocked(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

void proc_read_settings(void)
{
    if (map_limit >= 0)
        return;
    /* UPVM_MAP_LIMIT stands in for the kernel's value (tests use a small
     * one to reach the limit quickly) */
    long kernel = 0;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f && fscanf(f, "%ld", &kernel) != 1)
        kernel = 0;
    if (f)
        fclose(f);
    struct env_num spec = {.max = LONG_MAX, .dflt = kernel > 0 ? (uint64_t)kernel : 0};
    uint64_t limit;
    (void)env_uint("UPVM_MAP_LIMIT", &spec, &limit);
    map_limit = (long)limit;
}

static bool (*once_gate)(void);

void proc_set_once_gate(bool (*first)(void))
{
    once_gate = first;
}

/* The mappings the node would need with one more slot. */
static long maps_needed(void)
{
    proc_read_settings();
    if (maps_at_start < 0)
        maps_at_start = count_lines("/proc/self/maps");
    return maps_at_start + (long)(slots_in_use + 1) * MAPS_PER_SLOT + MAP_HEADROOM;
}

/* Whether one more slot keeps the node clear of the limit.  The limit,
 * for the docs: (vm.max_map_count - MAP_HEADROOM - the node's own
 * mappings) / MAPS_PER_SLOT ULPs, 10,582 under the default 65530. */
static bool map_budget_ok(void)
{
    return map_limit == 0 || maps_needed() <= map_limit;
}

/* -ENOMEM, with the message (an empty one when it was said before: see
 * proc_set_once_gate). */
static int map_limit_refusal(struct loader_error *err)
{
    static bool said;
    long need = maps_needed();
    err->code = -ENOMEM;
    err->msg[0] = '\0';
    if (!said && (!once_gate || once_gate()))
        snprintf(err->msg, sizeof err->msg,
                 "the node holds %d process-mode ULPs, the most the kernel's limit of %ld "
                 "memory mappings per process allows (vm.max_map_count; UPVM counts %d per "
                 "ULP and keeps %d in reserve); every node refuses more with PvmOutOfRes "
                 "(said once per job); raise it, e.g. sudo sysctl -w vm.max_map_count=%ld",
                 slots_in_use, map_limit, MAPS_PER_SLOT, MAP_HEADROOM, 2 * need);
    said = true;
    return err->code;
}

static size_t page_size(void)
{
    static size_t page;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) & ~(to - 1);
}

/* ------------------------------------------------------------ copies */

static char *heap_strdup(mem_heap_t *h, const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = mem_heap_malloc(h, n);
    return c ? memcpy(c, s, n) : NULL;
}

/* A NULL-terminated copy of v in the heap; *count gets its length. */
static char **heap_strv(mem_heap_t *h, char *const v[], int extra, int *count)
{
    int n = 0;
    while (v && v[n])
        n++;
    char **c = mem_heap_malloc(h, (size_t)(n + 1 + extra) * sizeof *c);
    if (!c)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!(c[i] = heap_strdup(h, v[i])))
            return NULL;
    c[n] = NULL;
    *count = n;
    return c;
}

/* ------------------------------------------------------------ start */

/* Every ULP's end, also one killed (pvm_kill) that never ran proc_exit:
 * its own streams are closed (what they hold is written out). */
static void proc_on_exit(struct ulp *u)
{
    struct proc *p = u->ext[ULP_EXT_PROC];
    if (p) {
        proc_shell_end(p);
        proc_input_close(p);
        proc_output_close(p);
    }
}

/* Crash reports: code in the crashing ULP's slot is its program's, which
 * dladdr does not know.  Its proc lives in the slot the program may have
 * scribbled on: read only through core_peek. */
static bool proc_symbolise(uintptr_t addr, struct core_symbol *out)
{
    struct ulp *self = core_self();
    struct proc *p = self ? self->ext[ULP_EXT_PROC] : NULL;
    struct loader_instance inst;
    if (!p || !core_peek((uintptr_t)&p->inst, &inst, sizeof inst) || !inst.img ||
        addr < inst.base || addr - inst.base >= loader_image_span(inst.img))
        return false;
    uint64_t vaddr = addr - inst.base, value = 0;
    out->name = loader_image_symbol_at(inst.img, vaddr, &value);
    out->start = inst.base + (uintptr_t)value;
    out->file = loader_image_abspath(inst.img);
    out->file_off = (uintptr_t)vaddr;
    return true;
}

static void proc_entry(void *arg)
{
    struct proc *p = arg;
    core_current()->ext[ULP_EXT_PROC] = p;
    proc_output_open(p, core_current());
    loader_run_init(&p->inst, p->argc, p->argv, p->environ);
    int status = p->inst.main(p->argc, p->argv, p->environ);
    proc_exit(p, status, false);
}

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102 /* Linux 6.13 */
#endif

/* Make the page at p (committed) a stack guard: a marker inside the
 * mapping where the kernel has them, else a PROT_NONE page. */
static int install_guard(void *p)
{
    if (madvise(p, page_size(), MADV_GUARD_INSTALL) == 0)
        return 0;
    return mprotect(p, page_size(), PROT_NONE) == 0 ? 0 : -errno;
}

/* Where things go in a slot (see the top of this file). */
struct slot_layout {
    char *base, *guard, *stack_lo, *heap_lo, *end;
};

static struct slot_layout layout_of(const struct loader_image *img, int slot, size_t stack_size)
{
    const struct mem_window *w = mem_window();
    struct slot_layout l;
    l.base = mem_slot_base(w, slot);
    l.guard = l.base + round_up(loader_image_span(img), page_size());
    l.stack_lo = l.guard + page_size();
    l.heap_lo = l.stack_lo + stack_size;
    l.end = l.base + w->slot_size;
    return l;
}

/* Keep p's slot loaded for the next ULP of the same program: drop its
 * memory, keep its mappings.  False when the cache is full. */
static bool keep_warm(struct proc *p)
{
    if (nwarm == WARM_MAX)
        return false;
    struct loader_image *img = p->inst.img;
    struct slot_layout l = layout_of(img, p->slot, p->stack_size);
    struct mem_heap_stats hs;
    mem_heap_stats(p->heap, &hs);
    size_t woff, wlen = loader_image_writable(img, &woff);
    warm[nwarm++] = (struct warm_slot){img, p->slot, p->stack_size};
    /* p lives in the heap: nothing of it is read after this */
    if (wlen)
        (void)madvise(l.base + woff, wlen, MADV_DONTNEED);
    (void)madvise(l.stack_lo, (size_t)(l.heap_lo - l.stack_lo) + hs.committed, MADV_DONTNEED);
#if UPVM_ASAN
    /* The next ULP here starts with clean shadow: the dead one's frames
     * leave their redzones poisoned on its stack, where the next one's
     * frames may fall elsewhere (a false report, or ASan's own CHECK). */
    ASAN_UNPOISON_MEMORY_REGION(l.stack_lo, (size_t)(l.heap_lo - l.stack_lo));
    ASAN_UNPOISON_MEMORY_REGION(l.heap_lo, hs.committed);
    /* Its globals too: a ULP killed before its finalisers ran (pvm_kill)
     * leaves their redzones poisoned, and the next instance's data is
     * copied over them (loader_reinstantiate). */
    if (wlen)
        ASAN_UNPOISON_MEMORY_REGION(l.base + woff, wlen);
#endif
    return true;
}

/* Give every kept slot back (the node needs the slots or the mappings). */
static void warm_flush(void)
{
    while (nwarm > 0) {
        struct warm_slot w = warm[--nwarm];
        mem_slot_free(w.slot);
        slots_in_use--; /* its mappings go with the slot */
        loader_image_put(w.img);
    }
}

/* A kept slot of img with that stack size, taken from the cache (its
 * image reference goes to the caller), or -1. */
static int take_warm(struct loader_image *img, size_t stack_size)
{
    for (int i = nwarm - 1; i >= 0; i--)
        if (warm[i].img == img && warm[i].stack_size == stack_size) {
            int slot = warm[i].slot;
            warm[i] = warm[--nwarm];
            return slot;
        }
    return -1;
}

/* After the ULP died and nothing runs on its stack: keep or free the slot. */
static void proc_release(struct ulp *u)
{
    struct proc *p = u->ext[ULP_EXT_PROC];
    if (!p) /* killed before it ever ran: the entry never set it */
        p = u->arg;
    u->ext[ULP_EXT_PROC] = NULL;
    u->name = NULL; /* it pointed into the slot */
    proc_debug_remove(p->slot);
    if (keep_warm(p))
        return;
    struct loader_instance inst = p->inst;
    int slot = p->slot;
    loader_unmap(&inst);
    loader_image_put(inst.img);
    mem_slot_free(slot);
    slots_in_use--;
}

/* Fill p's process state: argv, environment, progname, getopt. */
static int proc_setup(struct proc *p, const char *path, char *const argv[],
                      char *const envp[])
{
    extern char **environ;
    snprintf(p->path, sizeof p->path, "%s", path);
    p->argv = heap_strv(p->heap, argv, 0, &p->argc);
    if (!p->argv)
        return -ENOMEM;
    if (envp) {
        if (!(p->environ = heap_strv(p->heap, envp, 0, &p->nenv)))
            return -ENOMEM;
        p->capenv = p->nenv + 1;
    } else {
        /* The node's environment, shared until the ULP changes its own
         * (interpose.c copies the array first: capenv 0 = not owned). */
        p->environ = environ;
        while (environ[p->nenv])
            p->nenv++;
        p->capenv = 0;
    }
    const char *name = p->argc > 0 ? p->argv[0] : path;
    const char *slash = strrchr(name, '/');
    p->progname_full = p->argc > 0 ? p->argv[0] : p->path;
    p->progname = (char *)(slash ? slash + 1 : name);
    p->optind = 1;
    p->opt_left = 1; /* getopt has not been called: no parse yet */
    p->opterr = 1;
    p->optopt = '?';
    return 0;
}

/* The heap of a slot (its first `committed` bytes already mapped, or 0)
 * and the struct proc in it. */
static struct proc *proc_new(const struct slot_layout *l, int slot, size_t stack_size,
                             size_t committed)
{
    mem_heap_t *heap = mem_heap_create_on(l->heap_lo, (size_t)(l->end - l->heap_lo), committed);
    struct proc *p = heap ? mem_heap_calloc(heap, 1, sizeof *p) : NULL;
    if (p) {
        p->heap = heap;
        p->slot = slot;
        p->stack_size = stack_size;
    }
    return p;
}

/* A kept slot: the image, guard and stack are mapped; a new heap, then
 * the data segment again. */
static int proc_map_warm(struct loader_image *img, int slot, size_t stack_size,
                         struct proc **out, struct loader_error *err)
{
    struct slot_layout l = layout_of(img, slot, stack_size);
    /* the last heap's first part is still mapped (its pages were dropped) */
    struct proc *p = proc_new(&l, slot, stack_size, MEM_HEAP_FIRST_COMMIT);
    if (!p) {
        err->code = -ENOMEM;
        snprintf(err->msg, sizeof err->msg, "no memory for the heap of slot %d", slot);
        return err->code;
    }
    *out = p;
    return loader_reinstantiate(img, l.base, proc_resolve, p, &p->inst, err);
}

/* Map the image at the slot's base, then the guard, stack and heap. */
static int proc_map(struct loader_image *img, int slot, size_t stack_size, struct proc **out,
                    struct loader_error *err)
{
    mem_slot_filling(slot);
    struct slot_layout l = layout_of(img, slot, stack_size); /* it fits: proc_spawn checked */
    char *base = l.base, *heap_lo = l.heap_lo;
    size_t image = (size_t)(l.guard - l.base);
    /* One mapping for everything writable: the image's writable segments,
     * the guard, the stack and the heap's first part (the loader and the
     * heap are told it is there); then the guard marker. */
    size_t woff, wlen = loader_image_writable(img, &woff);
    char *rw_lo = wlen && woff + wlen == image ? base + woff : l.guard;
    int rc = mem_commit(rw_lo, (size_t)(heap_lo - rw_lo) + MEM_HEAP_FIRST_COMMIT);
    if (rc == 0)
        rc = install_guard(l.guard);
    struct proc *p = rc == 0 ? proc_new(&l, slot, stack_size, MEM_HEAP_FIRST_COMMIT) : NULL;
    if (!p) {
        err->code = rc ? rc : -ENOMEM;
        snprintf(err->msg, sizeof err->msg, "no memory for the stack and heap of slot %d",
                 slot);
        return err->code;
    }
    rc = loader_instantiate_flags(img, base, proc_resolve, p,
                                  rw_lo == l.guard ? 0 : LOADER_RW_MAPPED, &p->inst, err);
    *out = p;
    return rc;
}

/* Where a task's stack size comes from, for the messages that name it. */
static const char *stack_source(const upvm_attr_t *attr)
{
    if (attr && attr->stack_size)
        return "upvm_attr_t.stack_size";
    return core_stack_size_set ? "UPVM_STACK_SIZE" : "ulimit -s";
}

/*
 * The main stack of a new process-mode ULP, as a process started here
 * would have it: the stack limit's soft value (RLIMIT_STACK, what
 * `ulimit -s` sets; read at each spawn, so a limit a task sets is its
 * children's, as a process's), unless UPVM_STACK_SIZE is set (it is then
 * the size of every ULP's stack, this one's included) or attr names one.
 */
static size_t proc_stack_size(const upvm_attr_t *attr)
{
    size_t size;
    struct rlimit rl;
    if (attr && attr->stack_size)
        size = attr->stack_size;
    else if (core_stack_size_set)
        size = core_default_stack_size;
    else if (getrlimit(RLIMIT_STACK, &rl) != 0)
        size = (size_t)8 << 20; /* cannot happen: the common default */
    else if (rl.rlim_cur == RLIM_INFINITY)
        size = mem_window()->slot_size / PROC_STACK_UNLIMITED_SHARE;
    else
        size = rl.rlim_cur > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)rl.rlim_cur;
    return round_up(size < UPVM_STACK_MIN ? UPVM_STACK_MIN : size, page_size());
}

/* "12 MiB", "300 KiB" */
static const char *size_text(char *buf, size_t len, size_t bytes)
{
    if (bytes % (1024 * 1024 * 1024) == 0)
        snprintf(buf, len, "%zu GiB", bytes >> 30);
    else if (bytes % (1024 * 1024) == 0)
        snprintf(buf, len, "%zu MiB", bytes >> 20);
    else
        snprintf(buf, len, "%zu KiB", (bytes + 1023) >> 10);
    return buf;
}

/* The smallest heap a slot must leave room for. */
#define PROC_HEAP_MIN_PAGES 16

/* 0, or -ENOMEM and the message when a stack of stack_size leaves no room
 * in a slot for img's image, the guard page and a heap: refused at the
 * spawn, naming the limit and the knobs. */
static int check_stack_fits(const struct loader_image *img, size_t stack_size,
                            const upvm_attr_t *attr, struct loader_error *err)
{
    size_t slot = mem_window()->slot_size, page = page_size();
    size_t image = round_up(loader_image_span(img), page);
    size_t rest = image + page + PROC_HEAP_MIN_PAGES * page;
    if (rest >= slot) { /* the program alone: no stack would do */
        char sz[32];
        err->code = -ENOMEM;
        snprintf(err->msg, sizeof err->msg,
                 "%s needs %zu bytes of image, more than a slot of %s (UPVM_SLOT_SIZE) holds "
                 "beside a heap: raise UPVM_SLOT_SIZE", loader_image_path(img), image,
                 size_text(sz, sizeof sz, slot));
        return err->code;
    }
    size_t room = slot > rest ? slot - rest : 0;
    if (stack_size <= room)
        return 0;
    char want[32], most[32], ss[32];
    const char *from = stack_source(attr);
    /* what fits, in whole MiB when it is that big: "at most" stays true */
    size_t fits = room >= ((size_t)1 << 20) ? room & ~(((size_t)1 << 20) - 1) : room & ~(page - 1);
    err->code = -ENOMEM;
    snprintf(err->msg, sizeof err->msg,
             "a stack of %s (%s) does not fit a slot of %s (UPVM_SLOT_SIZE): beside the "
             "program's image and a heap it holds at most %s of stack; ask for less with %s, "
             "or raise UPVM_SLOT_SIZE", size_text(want, sizeof want, stack_size), from,
             size_text(ss, sizeof ss, slot), size_text(most, sizeof most, fits), from);
    return err->code;
}

int proc_spawn(const char *path, char *const argv[], char *const envp[],
               const upvm_attr_t *attr, struct ulp **out, struct loader_error *err)
{
    static bool hooked;
    if (!hooked && core_add_exit_hook(proc_on_exit) == 0)
        hooked = true;
    core_set_symboliser(proc_symbolise);
    int rc = mem_window_init();
    if (rc != 0) {
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "the node's address window is not available");
        return rc;
    }
    size_t stack_size = proc_stack_size(attr);
    struct loader_image *img = loader_image_open(path, err);
    if (!img)
        return err->code;
    proc_cxx_init(); /* its libraries are in the node now */
    if (check_stack_fits(img, stack_size, attr, err) != 0) {
        loader_image_put(img);
        return err->code;
    }
    struct proc *p = NULL;
    int slot = take_warm(img, stack_size);
    if (slot >= 0) {
        loader_image_put(img); /* the kept slot's reference serves */
        rc = proc_map_warm(img, slot, stack_size, &p, err);
        if (rc != 0) { /* its mappings are gone (reserved again): start over */
            loader_image_put(img);
            mem_slot_free(slot);
            slots_in_use--;
            return rc;
        }
    } else {
        if (!map_budget_ok() && nwarm > 0)
            warm_flush(); /* kept slots are a cache: the spawn comes first */
        if (!map_budget_ok()) {
            loader_image_put(img);
            return map_limit_refusal(err);
        }
        if ((slot = mem_slot_alloc()) < 0 && nwarm > 0) {
            warm_flush();
            slot = mem_slot_alloc();
        }
        if (slot >= 0)
            slots_in_use++;
    }
    if (slot < 0) {
        loader_image_put(img);
        err->code = slot;
        snprintf(err->msg, sizeof err->msg,
                 "every slot of the node's window is in use (%u): raise UPVM_SLOTS or "
                 "lower UPVM_SLOT_SIZE", mem_window()->nslots);
        return slot;
    }
    if (!p) {
        rc = proc_map(img, slot, stack_size, &p, err);
        if (rc == -ENOMEM && nwarm > 0) { /* at the mapping limit: free some */
            warm_flush();
            rc = proc_map(img, slot, stack_size, &p, err);
        }
    }
    if (rc == 0 && (rc = proc_setup(p, path, argv, envp)) != 0) {
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "no memory for the arguments of %s", path);
        loader_unmap(&p->inst);
    }
    if (rc == 0) {
        upvm_attr_t a = attr ? *attr : (upvm_attr_t)UPVM_ATTR_INIT;
        a.name = p->progname;
        struct slot_layout l = layout_of(img, slot, stack_size);
        rc = core_ulp_create_on(proc_entry, p, &a, l.stack_lo, stack_size, proc_release, out);
        if (rc == 0) {
            (*out)->ext[ULP_EXT_PROC] = p; /* the PVM layer puts its task in p's heap */
            (*out)->family = p; /* its ULPs' upvm_join_all waits for the copy's own */
            proc_debug_add(img, p->inst.base, slot, *out);
        }
        if (rc != 0) {
            err->code = rc;
            snprintf(err->msg, sizeof err->msg, "cannot create a ULP for %s", path);
            loader_unmap(&p->inst);
        }
    }
    if (rc != 0) {
        loader_image_put(img);
        mem_slot_free(slot);
        slots_in_use--;
    }
    return rc;
}

void proc_slots_adjust(int delta)
{
    slots_in_use += delta;
}

/* ------------------------------------------------------------ exit */

void proc_exit(struct proc *p, int status, bool quick)
{
    if (!quick && !p->exiting) {
        p->exiting = true; /* a handler that calls exit() does not loop */
        while (p->natexits > 0) {
            struct proc_atexit a = p->atexits[--p->natexits];
            if (a.with_arg)
                a.fn(a.arg);
            else
                ((void (*)(void))a.fn)();
        }
        loader_run_fini(&p->inst);
    }
    fflush(NULL); /* stdio is the node's: what this ULP wrote goes out now */
    proc_fortran_flush(); /* and so are Fortran's units */
    proc_output_close(p);
    upvm_exit(status & 0xff);
}

/* ------------------------------------------------------------ tasks */

int proc_task_register(struct proc *p, const char *name, int (*fn)(int, char **))
{
    if (proc_task_find(p, name))
        return 0; /* a copy registers once; later calls are no-ops */
    struct proc_task *t =
        mem_heap_realloc(p->heap, p->tasks, (size_t)(p->ntasks + 1) * sizeof *t);
    char *copy = t ? heap_strdup(p->heap, name) : NULL;
    if (!copy)
        return -ENOMEM;
    p->tasks = t;
    p->tasks[p->ntasks++] = (struct proc_task){copy, fn};
    return 0;
}

int (*proc_task_find(struct proc *p, const char *name))(int, char **)
{
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    for (int i = 0; i < p->ntasks; i++)
        if (strcmp(p->tasks[i].name, name) == 0 || strcmp(p->tasks[i].name, base) == 0)
            return p->tasks[i].fn;
    return NULL;
}

/* ------------------------------------------------------------ search */

/* A regular file we may execute: PVM's pvmd looks for an executable file,
 * so a program without x permission is PvmNoFile there (and here), not a
 * program that runs. */
static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static bool try_dir(const char *dir, size_t dlen, const char *name, char *out, size_t len)
{
    if (dlen == 0)
        return false;
    int n = snprintf(out, len, "%.*s/%s", (int)dlen, dir, name);
    return n > 0 && (size_t)n < len && is_file(out);
}

/* One entry of a search path with its $VAR and ${VAR} replaced by their
 * values (an unset one by nothing, $PVM_ARCH by LINUX64), as PVM's pvmd
 * does (varsub): 0, or -1 when it does not fit. */
static int expand(const char *p, size_t n, char *out, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        bool brace = p[i] == '$' && i + 1 < n && p[i + 1] == '{';
        size_t b = i + 1 + brace, e = b;
        while (p[i] == '$' && e < n &&
               (p[e] == '_' || (p[e] >= 'A' && p[e] <= 'Z') || (p[e] >= 'a' && p[e] <= 'z') ||
                (p[e] >= '0' && p[e] <= '9')))
            e++;
        if (p[i] != '$' || e == b || (brace && (e >= n || p[e] != '}'))) {
            if (o + 1 >= len) /* not a variable: as written */
                return -1;
            out[o++] = p[i++];
            continue;
        }
        char var[256];
        snprintf(var, sizeof var, "%.*s", (int)(e - b), p + b);
        const char *v = getenv(var);
        if ((!v || !*v) && strcmp(var, "PVM_ARCH") == 0)
            v = "LINUX64"; /* the architecture UPVM reports */
        size_t vl = v ? strlen(v) : 0;
        if (o + vl >= len)
            return -1;
        if (vl)
            memcpy(out + o, v, vl);
        o += vl;
        i = e + brace;
    }
    out[o] = '\0';
    return 0;
}

int proc_find(const char *name, const char *spawner_dir, const char *epath, char *out,
              size_t len)
{
    if (!name || !*name)
        return -ENOENT;
    if (strchr(name, '/')) {
        int n = snprintf(out, len, "%s", name);
        return n > 0 && (size_t)n < len && is_file(out) ? 0 : -ENOENT;
    }
    if (spawner_dir && try_dir(spawner_dir, strlen(spawner_dir), name, out, len))
        return 0;
    if (try_dir(".", 1, name, out, len))
        return 0;
    /* PVM's search path: the host's ep=, else $PVM_PATH, else its default */
    const char *path = epath && *epath ? epath : getenv("PVM_PATH");
    if (!path || !*path)
        path = PROC_DEFAULT_PATH;
    for (const char *d = path; *d;) {
        const char *end = strchr(d, ':');
        size_t dlen = end ? (size_t)(end - d) : strlen(d);
        char dir[PATH_MAX];
        if (expand(d, dlen, dir, sizeof dir) == 0 && try_dir(dir, strlen(dir), name, out, len))
            return 0;
        d = end ? end + 1 : d + dlen;
    }
    return -ENOENT;
}
