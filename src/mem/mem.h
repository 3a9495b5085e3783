/*
 * mem.h - the global virtual-address window, its slots, and the per-ULP
 * heap (architecture decision 3, docs/architecture.md).
 *
 * The window.  At start-up a node reserves one large range of virtual
 * address space (PROT_NONE, MAP_NORESERVE, MAP_FIXED_NOREPLACE) at the same
 * address in every node of a job, so that a ULP keeps its addresses when it
 * migrates.  The window is cut into equal slots; each process-mode ULP owns
 * one: its program image (text mapped from the file, private writable
 * data), its heap and its stack.  A slot is never handed out again while
 * its ULP lives.  Nothing but slots is ever mapped inside the window.
 *
 *   UPVM_WINDOW_BASE  address of the window (default 0x200000000000, 32 TiB)
 *   UPVM_SLOT_SIZE    bytes per slot, a power of two >= 64 MiB (default 1G)
 *   UPVM_SLOTS        number of slots (default: as many as fit in 32 TiB,
 *                     or below 128 TiB when the base is high; at most 2^24)
 *
 * The heap.  A single-threaded allocator whose every byte of metadata
 * lives inside the region it manages (inside the ULP's slot), so that the
 * heap can be moved to another node as plain memory.  Pages are committed
 * (made readable and writable) as the heap grows.
 *
 * Threading: everything here runs on the node's scheduler thread, except
 * mem_window_init, which may run before it exists.  Nothing locks.
 */
#ifndef UPVM_MEM_H
#define UPVM_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/compiler.h"

/* ------------------------------------------------------------ window */

struct mem_window {
    uintptr_t base;     /* first byte */
    size_t slot_size;   /* bytes per slot */
    uint32_t nslots;
};

/* Reserve the window (once; later calls return 0).  Errors, each printed
 * on stderr with what to do: -EINVAL (bad UPVM_* value), -EEXIST (the
 * range is already mapped: another base is needed), -ENOMEM. */
int mem_window_init(void) HIDDEN NODISCARD;

/* Read the window's settings (UPVM_WINDOW_BASE, UPVM_SLOT_SIZE,
 * UPVM_SLOTS) without reserving anything: a bad one ends the process as
 * util/env.h says.  For the start of a job, before anything runs. */
void mem_window_read_settings(void) HIDDEN;

/* The window (valid after mem_window_init). */
const struct mem_window *mem_window(void) HIDDEN;

/* A free slot, lowest index first: its index, or -ENOSPC when all are in
 * use.  The slot's memory is PROT_NONE until its user maps or commits it.
 * Reserves the window first when mem_window_init has not run (and returns
 * its error when that fails). */
int mem_slot_alloc(void) HIDDEN NODISCARD;

/* Give slot i back: everything in it is unmapped (back to the PROT_NONE,
 * no-memory reservation, one mmap) and the slot may be handed out again.
 * A slot that is not in use is a caller's bug: reported, then abort().  If
 * the kernel refuses the mmap (map limit), the slot stays reserved and is
 * never handed out again. */
void mem_slot_free(int i) HIDDEN;

/* Make the slot bitmap the job's: a shared mapping that the nodes forked
 * after this call inherit, so that each slot is handed out once in the
 * whole job and a migrating ULP finds its slot free everywhere (slots
 * already in use stay in use).  The launcher, before it forks.  0 or a
 * negative errno. */
int mem_window_share(void) HIDDEN NODISCARD;

/* The memfd behind the bitmap mem_window_share made (close-on-exec), for a
 * process that joins the job later; -1: none (not shared, or an anonymous
 * mapping). */
int mem_window_share_fd(void) HIDDEN;

/* A process joining a job whose nodes share the bitmap behind fd (a
 * program joining a persistent VM): hand out slots from it from now on.
 * Slots this process uses already become taken there.  0; -EBUSY (shared
 * or partitioned already, or a slot in use here is taken there), -EINVAL
 * (other window settings than the job's: said on stderr), -errno. */
int mem_window_attach(int fd) HIDDEN NODISCARD;

/*
 * A job whose nodes share no memory (several hosts): each node hands out
 * the slots of its own share of the window, node `part` of `nparts` the
 * nslots / nparts from part * (nslots / nparts) (the last one the rest), so
 * that a slot is handed out once in the whole job without a shared bitmap.
 * The other nodes' slots count as in use here.  When one of them is given
 * back here (its ULP migrated here and ended: mem_slot_free), its mappings
 * go and released(slot, owner) is called, for the owner to give it back in
 * turn (mem_slot_free there).  Once, instead of mem_window_share; slots
 * already in use stay in use.  0, -EINVAL, or the window's errors.
 */
typedef void mem_slot_released_fn(int slot, int owner);
int mem_window_partition(int part, int nparts, mem_slot_released_fn *released) HIDDEN NODISCARD;

/* Slot i's ULP left this node (it migrated): its mappings here go (back to
 * the PROT_NONE reservation), but the slot stays in use: the ULP still
 * owns it, on another node, which frees it when the ULP ends there. */
void mem_slot_evict(int i) HIDDEN;

/* Does this process have nothing in slot i but its reservation (its
 * mappings went with mem_slot_evict or mem_slot_free, and nothing was
 * mapped since)?  Then a ULP arriving needs no eviction first.
 * mem_slot_filling: the caller maps something in slot i now. */
bool mem_slot_empty(int i) HIDDEN;
void mem_slot_filling(int i) HIDDEN;

/* Is slot i handed out (on any node of the job)? */
bool mem_slot_taken(int i) HIDDEN;

/* The first byte of slot i. */
static inline void *mem_slot_base(const struct mem_window *w, int i)
{
    return (void *)(w->base + (uintptr_t)i * w->slot_size);
}

/* The slot that contains p, or -1 when p is outside the window. */
int mem_slot_of(const void *p) HIDDEN;

/* Make [p, p + len) of a slot readable and writable, zero-filled, private
 * (p and len page-aligned): whatever was mapped there is replaced.  The
 * memory is accounted (no MAP_NORESERVE), and a commit right after an
 * earlier one extends the same mapping.  0, or -ENOMEM (with the
 * vm.max_map_count advice when that is the cause). */
int mem_commit(void *p, size_t len) HIDDEN NODISCARD;

/* ------------------------------------------------------------ heap */

typedef struct mem_heap mem_heap_t;

/*
 * Create a heap managing [lo, lo + size) (page-aligned, inside a slot,
 * PROT_NONE or uncommitted); its metadata is at lo.  Returns the heap or
 * NULL with errno EINVAL (not page-aligned, or size < 64 KiB) or ENOMEM
 * (the first commit failed).  The heap has no destructor: giving its slot
 * back (mem_slot_free) drops it.
 */
mem_heap_t *mem_heap_create(void *lo, size_t size) HIDDEN;

/* The same, when the caller already committed the first `committed` bytes
 * at lo (read-write, zero): at least MEM_HEAP_FIRST_COMMIT of them saves
 * the heap its own first commit.  committed page-aligned, <= size. */
#define MEM_HEAP_FIRST_COMMIT ((size_t)256 << 10)
mem_heap_t *mem_heap_create_on(void *lo, size_t size, size_t committed) HIDDEN;

/* The C allocation functions on heap h, with the C/POSIX contracts
 * (malloc(0) returns a unique pointer; realloc(NULL, n) = malloc;
 * realloc(p, 0) frees p and returns NULL, as glibc does; ...).
 * Out of memory: NULL and errno = ENOMEM (realloc leaves p valid).
 * Alignment: 16 bytes.  free/realloc/usable_size of a pointer that is not
 * a live block of h (double free, foreign pointer) is reported and aborts:
 * callers that may see foreign pointers check mem_heap_owns first. */
void *mem_heap_malloc(mem_heap_t *h, size_t n) HIDDEN;
void *mem_heap_calloc(mem_heap_t *h, size_t count, size_t n) HIDDEN;
void *mem_heap_realloc(mem_heap_t *h, void *p, size_t n) HIDDEN;
void mem_heap_free(mem_heap_t *h, void *p) HIDDEN;
/* align: a power of two (else EINVAL, NULL). */
void *mem_heap_memalign(mem_heap_t *h, size_t align, size_t n) HIDDEN;
size_t mem_heap_usable_size(mem_heap_t *h, const void *p) HIDDEN;

/* Does p point into memory h manages (whether allocated or not)? */
bool mem_heap_owns(const mem_heap_t *h, const void *p) HIDDEN;

/* Bytes in use / committed, for reports and tests. */
struct mem_heap_stats {
    size_t in_use;      /* live blocks, with their 8-byte headers */
    size_t committed;
    size_t extent;      /* from the region's start to the top of what was
                         * ever carved: the part a migration copies */
    size_t allocations; /* live blocks */
    size_t size;        /* the region: the most it can ever hold */
    bool reached_end;   /* a request failed for want of room before the
                         * region's end (not of memory): sticky */
};
void mem_heap_stats(const mem_heap_t *h, struct mem_heap_stats *out) HIDDEN;

/* Check the heap's metadata; returns 0 or a negative number and writes
 * what is wrong to stderr (tests and debugging). */
int mem_heap_check(const mem_heap_t *h) HIDDEN;

#endif /* UPVM_MEM_H */
