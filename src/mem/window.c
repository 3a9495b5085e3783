/*
 * window.c - the global virtual-address window and its slots (architecture
 * decision 3).
 *
 * One mmap reserves the whole window: PROT_NONE and MAP_NORESERVE, so it
 * costs no memory and no commit charge, only page-table-free address space
 * and a single VMA.  MAP_FIXED_NOREPLACE puts it at the same address in
 * every node or fails; it never lands elsewhere and never clobbers a
 * mapping (a kernel older than 4.17 ignores the flag and treats the address
 * as a hint: that is detected and refused, since a window somewhere else is
 * useless for migration).
 *
 * Slots are equal power-of-two slices, so the slot of an address is a
 * shift.  A bitmap (one bit per slot, set = in use) hands out the lowest
 * free slot first, which keeps live slots dense at the bottom of the
 * window; a hint remembers the first word that may have a free bit.
 *
 * Giving a slot back is one mmap(MAP_FIXED) of a fresh PROT_NONE,
 * MAP_NORESERVE range over the whole slot: whatever the ULP had there
 * (image, heap, stack, file mappings) is dropped in one call, its memory
 * is returned, and the new range merges back into the neighbouring
 * reservation, so the VMA count goes down again.
 *
 * mem_commit maps anonymous read-write memory with MAP_FIXED: the range
 * reads as zeros whatever was there before, and a commit that extends an
 * earlier one merges with it (one VMA for a growing heap).  When the
 * kernel refuses because the process has hit vm.max_map_count, the error
 * says so and gives the sysctl that raises it.
 *
 * The bitmap lives in ordinary malloc memory of a node on its own.  In a
 * job of several nodes it is shared by all of them (mem_window_share, a
 * MAP_SHARED page range the launcher makes before it forks the nodes), so a
 * slot is handed out once in the whole job: a ULP that migrates finds its
 * slot free on every node.  Shared words change with atomic operations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem/mem.h"
#include "util/env.h"

#if UPVM_ASAN
#include <sanitizer/asan_interface.h>
#endif

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define DEFAULT_BASE ((uintptr_t)0x200000000000ULL) /* 32 TiB */
#define DEFAULT_SPAN ((uint64_t)32 << 40)           /* 32 TiB of slots */
#define DEFAULT_SLOT ((size_t)1 << 30)              /* 1 GiB */
#define SLOT_MIN ((size_t)64 << 20)                 /* 64 MiB */
#define SLOT_MAX ((size_t)1 << 40)                  /* 1 TiB */
#define SLOTS_MAX (1u << 24)                        /* 2 MiB of bitmap */

static struct {
    struct mem_window w;
    bool ready;
    unsigned shift;  /* log2(slot_size) */
    uint64_t *map;   /* bit set = slot in use; bits past nslots are set */
    uint32_t nwords;
    uint32_t hint;   /* no free bit in map[0 .. hint) */
    bool shared;     /* map is the job's (mem_window_share, mem_window_attach) */
    int share_fd;    /* the memfd behind a map mem_window_share made, or -1 */
    /* mem_window_partition: this node's share of the slots, [lo, hi) */
    uint32_t part_lo, part_hi, part_size;
    int nparts;
    mem_slot_released_fn *released;
    uint64_t *empty; /* this process's: bit set = nothing mapped in the
                      * slot but its reservation (NULL: none known) */
} win;

/* ------------------------------------------------------------ settings */

/* Each setting is read through util/env.h, which ends the process on a
 * bad one: a job whose nodes would lay out memory differently from what
 * was asked is worse than one that does not start. */

static int read_base(uintptr_t *base)
{
    uint64_t v;
    int r = env_addr("UPVM_WINDOW_BASE", (uint64_t)sysconf(_SC_PAGESIZE), DEFAULT_BASE, 0,
                     &v);
    *base = (uintptr_t)v;
    return r < 0 ? r : 0;
}

static int read_slot_size(size_t *size)
{
    static const struct env_num spec = {
        .min = SLOT_MIN, .max = SLOT_MAX, .dflt = DEFAULT_SLOT, .flags = ENV_POW2};
    uint64_t v;
    int r = env_size("UPVM_SLOT_SIZE", &spec, &v);
    *size = (size_t)v;
    return r < 0 ? r : 0;
}

/* The default count fills DEFAULT_SPAN, or what is left of the 47-bit user
 * address space above the base when less. */
static uint32_t default_slots(uintptr_t base, size_t slot)
{
    uint64_t top = (uint64_t)1 << 47, span = DEFAULT_SPAN;
    if (base < top && top - base < span)
        span = top - base;
    uint64_t n = span / slot;
    return n > SLOTS_MAX ? SLOTS_MAX : (uint32_t)n;
}

/* At most SLOTS_MAX, and their total size must fit above the base. */
static int read_slots(uintptr_t base, size_t slot, uint32_t *n)
{
    uint64_t fit = (UINTPTR_MAX - base) / slot;
    struct env_num spec = {.min = 1, .max = fit < SLOTS_MAX ? fit : SLOTS_MAX,
                           .dflt = default_slots(base, slot)};
    uint64_t v;
    int r = env_uint("UPVM_SLOTS", &spec, &v);
    *n = (uint32_t)v;
    if (r < 0)
        return r;
    if (r == 0 && *n == 0)
        return env_reject("UPVM_WINDOW_BASE", "no slot fits between it and 128 TiB: "
                                              "choose a lower base, e.g. 0x200000000000");
    return 0;
}

/* ------------------------------------------------------------ window */

/* A base to suggest: right after the window when it fits below 128 TiB,
 * else 16 TiB. */
static uintptr_t other_base(uintptr_t base, size_t len)
{
    uintptr_t tb = (uintptr_t)1 << 40, next = (base + len + tb - 1) & ~(tb - 1);
    return next + len <= ((uintptr_t)1 << 47) ? next : 16 * tb;
}

static COLD int window_taken(uintptr_t base, size_t len, bool ignored_flag)
{
    fprintf(stderr,
            "upvm: cannot reserve the address window [%#lx, %#lx): %s.\n"
            "upvm: every node of a job needs it at the same address; choose "
            "another base for all of them, e.g.\n"
            "upvm:     UPVM_WINDOW_BASE=%#lx\n",
            (unsigned long)base, (unsigned long)(base + len),
            ignored_flag ? "this kernel does not honour MAP_FIXED_NOREPLACE "
                           "(Linux < 4.17) and the range is partly in use"
                         : "part of it is already mapped",
            (unsigned long)other_base(base, len));
    return -EEXIST;
}

static COLD int window_no_room(uintptr_t base, size_t len)
{
    fprintf(stderr,
            "upvm: cannot reserve the address window [%#lx, %#lx) (%s): it does "
            "not fit in the address space (check ulimit -v), or choose fewer "
            "slots (UPVM_SLOTS), smaller ones (UPVM_SLOT_SIZE) or another "
            "UPVM_WINDOW_BASE\n",
            (unsigned long)base, (unsigned long)(base + len), strerror(errno));
    return -ENOMEM;
}

static int reserve(uintptr_t base, size_t len)
{
    void *want = (void *)base;
    void *p = mmap(want, len, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                   -1, 0);
    if (p == MAP_FAILED)
        return errno == EEXIST ? window_taken(base, len, false)
                               : window_no_room(base, len);
    if (p != want) { /* the flag was taken as a mere hint */
        munmap(p, len);
        return window_taken(base, len, true);
    }
    return 0;
}

static int make_bitmap(uint32_t nslots)
{
    uint32_t nwords = (nslots + 63) / 64;
    uint64_t *map = win.shared ? win.map : calloc(nwords, sizeof *map);
    if (!map)
        return -ENOMEM;
    if (win.shared && win.nwords != nwords) /* settings differ from the launcher's */
        return env_reject("UPVM_SLOTS", "every node of a job needs the same window settings");
    if (nslots % 64) /* the tail of the last word is never free */
        __atomic_fetch_or(&map[nwords - 1], ~0ULL << (nslots % 64), __ATOMIC_RELAXED);
    win.map = map;
    win.nwords = nwords;
    win.hint = 0;
    return 0;
}

/* The window's settings, without reserving it. */
static int read_settings(uintptr_t *base, size_t *slot, uint32_t *nslots)
{
    int r;
    if ((r = read_base(base)) || (r = read_slot_size(slot)) ||
        (r = read_slots(*base, *slot, nslots)))
        return r;
    return 0;
}

void mem_window_read_settings(void)
{
    uintptr_t base;
    size_t slot;
    uint32_t nslots;
    (void)read_settings(&base, &slot, &nslots);
}

/* Shared bitmap words for nwords: a memfd, so that a process that joins
 * the job later (a program joining a persistent VM) can map it too; an
 * anonymous shared mapping where memfd_create is refused. */
static uint64_t *shared_map(uint32_t nwords, int *fd)
{
    size_t len = (size_t)nwords * sizeof(uint64_t);
    *fd = memfd_create("upvm-slots", MFD_CLOEXEC);
    if (*fd >= 0 && ftruncate(*fd, (off_t)len) != 0) {
        close(*fd);
        *fd = -1;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   *fd >= 0 ? MAP_SHARED : MAP_SHARED | MAP_ANONYMOUS, *fd, 0);
    if (p == MAP_FAILED && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    return p == MAP_FAILED ? NULL : p;
}

/* The window's slot count: its own once reserved, else the settings'. */
static int window_nslots(uint32_t *nslots)
{
    uintptr_t base;
    size_t slot;
    if (win.ready) {
        *nslots = win.w.nslots;
        return 0;
    }
    return read_settings(&base, &slot, nslots);
}

int mem_window_share(void)
{
    if (win.shared)
        return 0;
    uint32_t nslots;
    int r = window_nslots(&nslots);
    if (r)
        return r;
    uint32_t nwords = (nslots + 63) / 64;
    int fd;
    uint64_t *map = shared_map(nwords, &fd);
    if (!map)
        return -errno;
    if (win.ready) { /* slots already in use (the master's) stay in use */
        memcpy(map, win.map, (size_t)nwords * sizeof *map);
        free(win.map);
    }
    win.map = map;
    win.nwords = nwords;
    win.shared = true;
    win.share_fd = fd;
    return 0;
}

int mem_window_share_fd(void)
{
    return win.shared ? win.share_fd : -1;
}

int mem_window_attach(int fd)
{
    struct stat st;
    if (win.shared || win.nparts)
        return -EBUSY;
    if (fstat(fd, &st) != 0)
        return -errno;
    uint32_t nslots;
    int r = window_nslots(&nslots);
    if (r)
        return r;
    uint32_t nwords = (nslots + 63) / 64;
    if ((size_t)st.st_size != (size_t)nwords * sizeof(uint64_t))
        return env_reject("UPVM_SLOTS", "every node of a job needs the same window settings");
    uint64_t *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return -errno;
    if (win.ready) { /* slots in use here must be free there, and become taken */
        for (uint32_t w = 0; w < nwords; w++) {
            uint64_t mine = win.map[w];
            if (w == nwords - 1 && nslots % 64)
                mine &= ~(~0ULL << (nslots % 64));
            if (mine && (__atomic_fetch_or(&map[w], mine, __ATOMIC_ACQ_REL) & mine)) {
                munmap(map, (size_t)st.st_size);
                return -EBUSY;
            }
        }
        free(win.map);
    }
    win.map = map;
    win.nwords = nwords;
    win.shared = true;
    win.share_fd = -1;
    return 0;
}

int mem_window_partition(int part, int nparts, mem_slot_released_fn *released)
{
    if (win.shared || win.nparts || nparts < 1 || part < 0 || part >= nparts || !released)
        return -EINVAL;
    int r = mem_window_init();
    if (r)
        return r;
    uint32_t size = win.w.nslots / (uint32_t)nparts;
    if (size == 0)
        return -EINVAL;
    win.part_size = size;
    win.part_lo = (uint32_t)part * size;
    win.part_hi = part == nparts - 1 ? win.w.nslots : win.part_lo + size;
    win.nparts = nparts;
    win.released = released;
    for (uint32_t i = 0; i < win.w.nslots; i++) /* the others' slots: in use here */
        if (i < win.part_lo || i >= win.part_hi)
            win.map[i / 64] |= 1ull << (i % 64);
    win.hint = win.part_lo / 64;
    return 0;
}

/* The node whose share slot i is in (mem_window_partition), -1 if this
 * one's or the window is not partitioned. */
static int foreign_owner(int i)
{
    if (!win.nparts || ((uint32_t)i >= win.part_lo && (uint32_t)i < win.part_hi))
        return -1;
    uint32_t owner = (uint32_t)i / win.part_size;
    return (int)(owner < (uint32_t)win.nparts ? owner : (uint32_t)win.nparts - 1);
}

int mem_window_init(void)
{
    if (win.ready)
        return 0;
    uintptr_t base;
    size_t slot;
    uint32_t nslots;
    int r;
    if ((r = read_settings(&base, &slot, &nslots)))
        return r;
    size_t len = (size_t)nslots * slot;
    if ((r = make_bitmap(nslots)))
        return r;
    if ((r = reserve(base, len))) {
        if (!win.shared) {
            free(win.map);
            win.map = NULL;
        }
        return r;
    }
    win.w = (struct mem_window){base, slot, nslots};
    win.shift = (unsigned)__builtin_ctzl(slot);
    win.ready = true;
    return 0;
}

const struct mem_window *mem_window(void)
{
    return &win.w;
}

/* ------------------------------------------------------------ slots */

int mem_slot_alloc(void)
{
    if (!win.ready) {
        int r = mem_window_init();
        if (r)
            return r;
    }
    for (uint32_t i = win.hint; i < win.nwords; i++) {
        uint64_t word = __atomic_load_n(&win.map[i], __ATOMIC_RELAXED);
        while (word != ~0ULL) {
            unsigned bit = (unsigned)__builtin_ctzll(~word);
            /* another node may take a bit of the same word meanwhile */
            if (__atomic_compare_exchange_n(&win.map[i], &word, word | 1ULL << bit, false,
                                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
                win.hint = i;
                return (int)(i * 64 + bit);
            }
        }
    }
    win.hint = win.nwords;
    return -ENOSPC;
}

static bool slot_in_use(int i)
{
    return win.ready && i >= 0 && (uint32_t)i < win.w.nslots &&
           (__atomic_load_n(&win.map[i / 64], __ATOMIC_RELAXED) >> (i % 64) & 1);
}

/* Give slot i's address range back to the reservation (PROT_NONE, no
 * memory): false when the kernel refuses. */
static bool slot_unmap(int i)
{
    void *lo = mem_slot_base(&win.w, i);
    /* Unmap first: that only removes mappings, so it works even at the
     * kernel's mapping limit, where replacing them in one call (which may
     * split a neighbour first) can fail.  The single thread of the node
     * keeps anyone from taking the hole before it is reserved again. */
    (void)munmap(lo, win.w.slot_size);
    void *p = mmap(lo, win.w.slot_size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    if (!win.empty)
        win.empty = calloc(win.nwords, sizeof *win.empty);
    if (win.empty)
        win.empty[i / 64] |= 1ull << (i % 64);
#if UPVM_ASAN
    /* A heap in the slot poisoned its free blocks; the next owner starts
     * clean (ASan releases the shadow pages of big ranges, so this is cheap). */
    ASAN_UNPOISON_MEMORY_REGION(lo, win.w.slot_size);
#endif
    return true;
}

void mem_slot_evict(int i)
{
    if (!slot_in_use(i)) {
        fprintf(stderr, "upvm: mem_slot_evict(%d): not a slot in use (a bug in "
                        "the caller)\n", i);
        abort();
    }
    if (!slot_unmap(i))
        fprintf(stderr, "upvm: cannot unmap slot %d after its ULP left: %s\n", i,
                strerror(errno));
}

bool mem_slot_empty(int i)
{
    return win.empty && (win.empty[i / 64] >> (i % 64) & 1);
}

void mem_slot_filling(int i)
{
    if (win.empty)
        win.empty[i / 64] &= ~(1ull << (i % 64));
}

bool mem_slot_taken(int i)
{
    return slot_in_use(i);
}

void mem_slot_free(int i)
{
    if (!slot_in_use(i)) {
        fprintf(stderr, "upvm: mem_slot_free(%d): not a slot in use (a bug in "
                        "the caller)\n", i);
        abort();
    }
    if (!slot_unmap(i)) {
        /* Replacing the slot's mappings may need a VMA more than the limit
         * allows.  Keep the slot marked in use: it is never handed out
         * with stale contents. */
        fprintf(stderr, "upvm: cannot release slot %d: %s; it stays reserved\n",
                i, strerror(errno));
        return;
    }
    int owner = foreign_owner(i);
    if (owner >= 0) { /* another node's to hand out: in use here for good */
        win.released(i, owner);
        return;
    }
    __atomic_fetch_and(&win.map[i / 64], ~(1ULL << (i % 64)), __ATOMIC_RELEASE);
    if ((uint32_t)i / 64 < win.hint)
        win.hint = (uint32_t)i / 64;
}

int mem_slot_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (!win.ready || a < win.w.base)
        return -1;
    uintptr_t i = (a - win.w.base) >> win.shift;
    return i < win.w.nslots ? (int)i : -1;
}

/* ------------------------------------------------------------ commit */

static unsigned long read_ulong(const char *path)
{
    unsigned long v = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lu", &v) != 1)
            v = 0;
        fclose(f);
    }
    return v;
}

static unsigned long count_mappings(void)
{
    unsigned long n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    for (int c; (c = getc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

/* ENOMEM from mmap is either memory (commit charge) or the per-process map
 * limit; say which, and what to do about the second. */
static COLD void report_commit_failure(size_t len)
{
    unsigned long limit = read_ulong("/proc/sys/vm/max_map_count");
    unsigned long used = count_mappings();
    if (limit && used + 16 >= limit) {
        fprintf(stderr,
                "upvm: cannot commit ULP memory: the kernel's limit on memory "
                "mappings per process (vm.max_map_count = %lu) is reached "
                "(%lu in use).\n"
                "upvm: raise the limit, e.g.:\n"
                "upvm:     sudo sysctl -w vm.max_map_count=%lu\n",
                limit, used, limit * 4);
        return;
    }
    static bool told;
    if (!told) {
        told = true;
        fprintf(stderr, "upvm: cannot commit %zu bytes of ULP memory: out of "
                        "memory (see vm.overcommit_memory and ulimit -v)\n", len);
    }
}

int mem_commit(void *p, size_t len)
{
    if (len == 0)
        return 0;
    void *q = mmap(p, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (q == MAP_FAILED) {
        int e = errno;
        if (e == ENOMEM)
            report_commit_failure(len);
        return e == ENOMEM ? -ENOMEM : -e;
    }
    return 0;
}
