/*
 * move.c - a process-mode ULP's part of a migration (src/migrate): which
 * bytes of its slot must move, and how the slot is set up on the node it
 * moves to.
 *
 * Everything a process-mode ULP owns is in its slot, at the same address
 * on every node (the job shares one slot bitmap: mem_window_share), so a
 * migration copies bytes and fixes no pointer.  What is copied is what is
 * used: the image's writable pages (data, .bss, GOT: already relocated,
 * and bound to libraries at the same addresses on every node), the stack
 * from the saved stack pointer up, and the heap from its start to its top
 * (the highest byte it ever handed out).  The text is mapped from the
 * program's file again, as at a spawn.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proc/debug.h"
#include "proc/proc.h"

#if UPVM_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Heaps from this size arrive in huge pages. */
#define PROC_MOVE_HUGE_MIN (2u << 20)

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102 /* Linux 6.13 */
#endif

/* Bytes below the saved stack pointer that are still live: the x86-64
 * red zone, rounded to a cache line. */
#define STACK_RED_ZONE 128

static size_t page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static uintptr_t down(uintptr_t a, size_t to) { return a & ~(uintptr_t)(to - 1); }
static uintptr_t up(uintptr_t a, size_t to) { return (a + to - 1) & ~(uintptr_t)(to - 1); }

/* Where the guard, stack and heap of p's slot are (proc.c's layout). */
static void slot_parts(const struct proc *p, char **guard, char **stack_lo, char **heap_lo)
{
    char *base = mem_slot_base(mem_window(), p->slot);
    *guard = base + up(loader_image_span(p->inst.img), page());
    *stack_lo = *guard + page();
    *heap_lo = *stack_lo + p->stack_size;
}

void proc_move_info(const struct proc *p, struct proc_move *out)
{
    struct mem_heap_stats hs;
    mem_heap_stats(p->heap, &hs);
    *out = (struct proc_move){.slot = p->slot, .stack_size = p->stack_size,
                              .heap_committed = hs.committed,
                              .image_id = loader_image_id(p->inst.img)};
    snprintf(out->path, sizeof out->path, "%s", loader_image_path(p->inst.img));
}

int proc_move_ranges(const struct proc *p, const struct ulp *u, struct iovec *v)
{
    char *guard, *stack_lo, *heap_lo;
    slot_parts(p, &guard, &stack_lo, &heap_lo);
    size_t woff = 0, wlen = loader_image_writable(p->inst.img, &woff);
    struct mem_heap_stats hs;
    mem_heap_stats(p->heap, &hs);
    v[PROC_MOVE_IMAGE] = (struct iovec){mem_slot_base(mem_window(), p->slot) + woff, wlen};
    uintptr_t sp = down((uintptr_t)u->ctx.sp - STACK_RED_ZONE, 64);
    if (sp < (uintptr_t)stack_lo)
        sp = (uintptr_t)stack_lo;
    v[PROC_MOVE_STACK] = (struct iovec){(void *)sp, (size_t)(heap_lo - (char *)sp)};
    v[PROC_MOVE_HEAP] = (struct iovec){heap_lo, up(hs.extent, 64)};
    return PROC_MOVE_RANGES;
}

void proc_move_out(struct proc *p)
{
    /* Its streams are libc objects of this node: what they hold is written
     * out here (an unfinished tagged line goes with it), and the other node
     * opens new ones. */
    proc_output_suspend(p);
    proc_input_suspend(p);
}

void proc_move_gone(int slot, struct loader_image *img)
{
    proc_debug_remove(slot);
    mem_slot_evict(slot);
    loader_image_put(img);
    proc_slots_adjust(-1);
}

int proc_move_prepare(const struct proc_move *m, struct loader_image **imgp,
                      struct loader_error *err)
{
    int rc = mem_window_init();
    if (rc != 0) {
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "the node's address window is not available");
        return rc;
    }
    if (m->slot < 0 || (uint32_t)m->slot >= mem_window()->nslots || !mem_slot_taken(m->slot)) {
        err->code = -EINVAL;
        snprintf(err->msg, sizeof err->msg, "slot %d is not the job's", m->slot);
        return err->code;
    }
    struct loader_image *img = loader_image_open(m->path, err);
    if (!img)
        return err->code;
    proc_cxx_init(); /* a C++ task arriving where none ran before */
    if (loader_image_id(img) != m->image_id) {
        err->code = -ESTALE;
        snprintf(err->msg, sizeof err->msg, "%.300s here is not the program the task runs (its "
                 "build id differs): every host needs the same build of it at the same path",
                 m->path);
        loader_image_put(img);
        return err->code;
    }
    char *base = mem_slot_base(mem_window(), m->slot);
    char *guard = base + up(loader_image_span(img), page());
    char *heap_lo = guard + page() + m->stack_size;
    size_t woff, wlen = loader_image_writable(img, &woff);
    size_t image = (size_t)(guard - base);
    char *rw_lo = wlen && woff + wlen == image ? base + woff : guard;
    /* What was in the slot here (a copy inherited at fork, an old visit)
     * goes: every page the ULP does not bring must read as zero.  Most
     * often it went when the ULP left (an eviction is ~10 µs). */
    if (!mem_slot_empty(m->slot))
        mem_slot_evict(m->slot);
    mem_slot_filling(m->slot);
    rc = loader_map_readonly(img, base, err);
    if (rc == 0 && wlen && rw_lo == guard)
        rc = mem_commit(base + woff, wlen);
    if (rc == 0)
        rc = mem_commit(rw_lo, (size_t)(heap_lo - rw_lo) + m->heap_committed);
    /* The heap arrives whole, up to its top: in 2 MiB pages the kernel
     * takes one fault per 2 MiB instead of 512, and page faults are most
     * of a large move's time (bench/migrate-compare.sh).  Only a hint. */
    if (rc == 0 && m->heap_committed >= PROC_MOVE_HUGE_MIN)
        (void)madvise(heap_lo, m->heap_committed, MADV_HUGEPAGE);
    if (rc == 0 && madvise(guard, page(), MADV_GUARD_INSTALL) != 0 &&
        mprotect(guard, page(), PROT_NONE) != 0)
        rc = -errno;
    if (rc != 0) {
        if (!err->msg[0])
            snprintf(err->msg, sizeof err->msg, "no memory for slot %d: %s", m->slot,
                     strerror(-rc));
        err->code = rc;
        mem_slot_evict(m->slot);
        loader_image_put(img);
        return rc;
    }
    *imgp = img;
    return 0;
}

void proc_move_cancel(int slot, struct loader_image *img)
{
    mem_slot_evict(slot);
    loader_image_put(img);
}

void proc_move_in(struct proc *p, struct ulp *u, struct loader_image *img)
{
    p->inst.img = img;
    proc_slots_adjust(+1);
    u->ext[ULP_EXT_PROC] = p;
    proc_debug_add(img, p->inst.base, p->slot, u);
    proc_output_open(p, u);
    proc_input_open(p);
}
