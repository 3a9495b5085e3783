/*
 * heap.c - the per-ULP heap: a single-threaded boundary-tag allocator whose
 * every byte of metadata lives inside the region it manages.
 *
 * Why this design.  A ULP's heap must move to another node as plain bytes
 * (same addresses there), so nothing may live outside the region: no side
 * tables, no libc malloc, no thread caches.  One scheduler thread runs all
 * ULPs of a node, so nothing locks.  Boundary tags keep metadata next to
 * the blocks, cost 8 bytes per block, and give O(1) coalescing.
 *
 * Layout of the region [lo, end):
 *
 *   lo: struct mem_heap (bins, quick lists, counters) | chunks ... | top ... | uncommitted
 *                                                       ^first     ^top      ^commit_end
 *
 * A chunk is a header word (size | flags) followed by the payload; the
 * payload is 16-byte aligned, so chunk sizes are multiples of 16 and a
 * chunk starts 8 bytes below a 16-byte boundary.  A free chunk also keeps
 * two links (in its payload) and a copy of its size in its last word (the
 * footer), so the chunk after it can find its start.  Flags:
 *   INUSE       the chunk is allocated (or parked in a quick list)
 *   PREV_INUSE  the chunk before is not a coalescable free chunk
 *   QUICK       the chunk is parked in a quick list
 *
 * Three places hold free memory:
 *  - quick lists: one LIFO singly-linked list per 16-byte size class for
 *    chunks up to QUICK_MAX, at most QUICK_CAP chunks each.  free and
 *    malloc of a small block are a push and a pop.  Parked chunks keep
 *    INUSE, so nobody coalesces with them: the cap keeps them from
 *    peppering the heap and splitting what would coalesce (unbounded lists
 *    cost 3-6x the live size on a random mix; capped, about 2x).  They are
 *    also folded back into the bins ("consolidated") before the heap grows
 *    and before it reports ENOMEM.
 *  - bins: coalesced free chunks in doubly-linked FIFO lists, exact 16-byte
 *    classes below 1 KiB, then 4 bins per power of two; a bitmap finds the
 *    first non-empty bin.  Search: nearly best fit (the smallest fitting
 *    chunk among the first BIN_SCAN of the request's bin, else of the next
 *    non-empty bin), which keeps big holes whole for big requests.
 *  - top: the untouched space up to commit_end, carved by bumping a
 *    pointer.  A free chunk next to top merges into it, so the chunk below
 *    top is always in use.
 *
 * Committing: the region starts PROT_NONE; mem_commit maps read-write
 * memory at commit_end in growing steps (256 KiB doubling to 64 MiB).  Each
 * step extends the previous mapping, so the heap stays one VMA.  When more
 * than TRIM_THRESHOLD is free at the top, its pages beyond TRIM_KEEP are
 * given back with MADV_DONTNEED (still committed, no longer resident).
 *
 * Zeroing: everything at or above `fresh` has never been handed out since
 * it was committed or trimmed, so it is still zero; calloc clears only the
 * part of a block below `fresh`.
 *
 * Sanitizers: under ASan the payload of free chunks is poisoned except the
 * words the allocator itself uses (links, footer), so a test that touches
 * freed memory fails at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem/mem.h"

#if UPVM_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define HEAP_MAGIC 0x75706d68656170ULL /* "upmheap" */
#define HDR 8                          /* header bytes before a payload */
#define MIN_CHUNK 32                   /* header, two links, footer */
#define QUICK_MAX 1024                 /* largest chunk kept in quick lists */
#define NQUICK (QUICK_MAX / 16 + 1)
#define NBINS 256
#define SMALL_BIN_LIMIT 1024 /* exact-size bins below this chunk size */
#define BIN_SCAN 16          /* chunks looked at per bin for the best fit */
#define QUICK_CAP 32         /* chunks parked per quick list at most */
#define HEAP_MIN ((size_t)64 << 10)
#define GROW_MIN ((size_t)256 << 10)
#define GROW_MAX ((size_t)64 << 20)
#define TRIM_THRESHOLD ((size_t)4 << 20)
#define TRIM_KEEP ((size_t)1 << 20)

#define INUSE ((size_t)1)
#define PREV_INUSE ((size_t)2)
#define QUICK ((size_t)4)
#define FLAGS ((size_t)15)

struct link {
    struct link *fd, *bk;
};

struct mem_heap {
    uint64_t magic;
    char *lo, *end;       /* the region */
    char *commit_end;     /* [lo, commit_end) is read-write */
    char *first;          /* the first chunk */
    char *top;            /* [top, commit_end) is free and unsplit */
    char *fresh;          /* [fresh, commit_end) reads as zeros */
    size_t grow;          /* the next commit step */
    bool reached_end;     /* a request found no room before end (stats) */
    size_t in_use;        /* bytes of live chunks */
    size_t nlive;         /* live blocks */
    size_t quick_bytes;   /* bytes parked in quick lists */
    uint64_t binmap[NBINS / 64];
    void *quick[NQUICK];
    uint32_t nquick[NQUICK];  /* chunks on each quick list */
    struct link bins[NBINS];
};

/* ------------------------------------------------------------ chunks */

static inline size_t *hdr(char *c) { return (size_t *)c; }
static inline size_t csize(const char *c) { return *(const size_t *)c & ~FLAGS; }
static inline char *chunk_of(const void *p) { return (char *)p - HDR; }
static inline void *payload(char *c) { return c + HDR; }
static inline struct link *link_of(char *c) { return (struct link *)(c + HDR); }
static inline char *chunk_of_link(struct link *l) { return (char *)l - HDR; }
static inline void set_footer(char *c, size_t s) { *(size_t *)(c + s - 8) = s; }

static inline size_t round16(size_t n) { return (n + 15) & ~(size_t)15; }

/* The chunk size that holds n bytes, or 0 when n is absurd. */
static inline size_t request_size(size_t n)
{
    if (unlikely(n > ((size_t)1 << 47)))
        return 0;
    return n < MIN_CHUNK - HDR ? MIN_CHUNK : round16(n + HDR);
}

static inline void *fail_enomem(void)
{
    errno = ENOMEM;
    return NULL;
}

/* Free chunks are poisoned past their links, up to their footer. */
static inline void poison_free(char *c, size_t s)
{
    POISON(c + HDR + sizeof(struct link), s - HDR - sizeof(struct link) - 8);
}

/* ------------------------------------------------------------ bins */

static inline unsigned bin_index(size_t s)
{
    if (s < SMALL_BIN_LIMIT)
        return (unsigned)(s >> 4);
    unsigned b = 63u - (unsigned)__builtin_clzl(s); /* >= 10 */
    return 64 + (b - 10) * 4 + (unsigned)((s >> (b - 2)) & 3);
}

static void bin_insert(mem_heap_t *h, char *c, size_t s)
{
    unsigned i = bin_index(s);
    struct link *head = &h->bins[i], *l = link_of(c);
    l->fd = head; /* at the tail: first in, first out */
    l->bk = head->bk;
    head->bk->fd = l;
    head->bk = l;
    h->binmap[i / 64] |= 1ULL << (i % 64);
}

static void bin_unlink(mem_heap_t *h, char *c)
{
    struct link *l = link_of(c);
    l->bk->fd = l->fd;
    l->fd->bk = l->bk;
    if (l->fd == l->bk) { /* only the bin's head is left */
        unsigned i = bin_index(csize(c));
        if (h->bins[i].fd == &h->bins[i])
            h->binmap[i / 64] &= ~(1ULL << (i % 64));
    }
}

/* The lowest non-empty bin >= i, or NBINS. */
static unsigned next_bin(const mem_heap_t *h, unsigned i)
{
    for (unsigned w = i / 64; w < NBINS / 64; w++) {
        uint64_t m = h->binmap[w];
        if (w == i / 64)
            m &= ~0ULL << (i % 64);
        if (m)
            return w * 64 + (unsigned)__builtin_ctzll(m);
    }
    return NBINS;
}

/* The smallest chunk of at least s bytes among the first `scan` of bin i,
 * or NULL. */
static char *best_in_bin(mem_heap_t *h, unsigned i, size_t s, int scan)
{
    struct link *head = &h->bins[i];
    char *best = NULL;
    size_t best_size = ~(size_t)0;
    int n = 0;
    for (struct link *l = head->fd; l != head && n < scan; l = l->fd, n++) {
        size_t cs = csize(chunk_of_link(l));
        if (cs >= s && cs < best_size) {
            best = chunk_of_link(l);
            best_size = cs;
            if (cs == s)
                break;
        }
    }
    return best;
}

/* A free chunk of at least s bytes, out of its bin (payload unpoisoned),
 * or NULL.  Nearly best fit: the request's own bin may hold chunks too
 * small, any chunk of a later bin fits; within a bin the smallest of the
 * first `scan` wins.  Best fit keeps big holes whole for big requests; a
 * block that realloc moves asks for scan 1 (first fit), which tends to
 * leave free space after it to grow into next time. */
static char *bin_take(mem_heap_t *h, size_t s, int scan)
{
    unsigned i = bin_index(s);
    char *c = NULL;
    if (i >= SMALL_BIN_LIMIT / 16 && (h->binmap[i / 64] >> (i % 64) & 1))
        c = best_in_bin(h, i, s, scan);
    if (!c) {
        i = next_bin(h, i + (i >= SMALL_BIN_LIMIT / 16));
        if (i == NBINS)
            return NULL;
        c = i < SMALL_BIN_LIMIT / 16 ? chunk_of_link(h->bins[i].fd)
                                     : best_in_bin(h, i, s, scan);
    }
    bin_unlink(h, c);
    UNPOISON(c, csize(c));
    return c;
}

/* ------------------------------------------------------------ free */

static void maybe_trim(mem_heap_t *h)
{
    if ((size_t)(h->commit_end - h->top) <= TRIM_THRESHOLD)
        return;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)h->top + TRIM_KEEP + (uintptr_t)page - 1) &
                      ~((uintptr_t)page - 1);
    if ((char *)start >= h->fresh)
        return; /* already given back */
    (void)madvise((void *)start, (size_t)(h->fresh - (char *)start), MADV_DONTNEED);
    h->fresh = (char *)start;
}

/* Return chunk c of s bytes (header says INUSE) to the bins or the top,
 * coalescing with free neighbours. */
static void free_chunk(mem_heap_t *h, char *c, size_t s)
{
    if (!(*hdr(c) & PREV_INUSE)) {
        size_t ps = *(size_t *)(c - 8);
        c -= ps;
        bin_unlink(h, c);
        s += ps;
    }
    char *next = c + s;
    if (next == h->top) {
        h->top = c;
        POISON(c, s);
        maybe_trim(h);
        return;
    }
    size_t nh = *hdr(next);
    if (!(nh & INUSE)) {
        bin_unlink(h, next);
        s += nh & ~FLAGS;
    } else {
        *hdr(next) = nh & ~PREV_INUSE;
    }
    *hdr(c) = s | PREV_INUSE; /* the chunk before a free one is in use */
    set_footer(c, s);
    bin_insert(h, c, s);
    poison_free(c, s);
}

/* Move every parked quick chunk to the bins, coalescing. */
static void consolidate(mem_heap_t *h)
{
    for (unsigned i = 0; i < NQUICK; i++) {
        void *p = h->quick[i];
        h->quick[i] = NULL;
        h->nquick[i] = 0;
        while (p) {
            char *c = chunk_of(p);
            void *nextp = *(void **)p;
            UNPOISON(c, csize(c));
            *hdr(c) &= ~QUICK;
            free_chunk(h, c, csize(c));
            p = nextp;
        }
    }
    h->quick_bytes = 0;
}

static COLD NOINLINE void bad_pointer(const char *fn, const void *p)
{
    fprintf(stderr, "upvm: %s(%p): not a block in use in this ULP's heap "
                    "(double free, or a pointer not from malloc)\n", fn, p);
    abort();
}

/* The chunk of live block p, checked cheaply. */
static inline char *live_chunk(const mem_heap_t *h, const void *p, const char *fn)
{
    char *c = chunk_of(p);
    if (unlikely((uintptr_t)p & 15) ||
        unlikely((uintptr_t)(c - h->first) >= (uintptr_t)(h->top - h->first)) ||
        unlikely((*hdr(c) & (INUSE | QUICK)) != INUSE))
        bad_pointer(fn, p);
    return c;
}

void mem_heap_free(mem_heap_t *h, void *p)
{
    if (!p)
        return;
    char *c = live_chunk(h, p, "free");
    size_t s = csize(c);
    h->in_use -= s;
    h->nlive--;
    if (likely(s <= QUICK_MAX) && likely(h->nquick[s >> 4] < QUICK_CAP)) {
        *(void **)p = h->quick[s >> 4];
        h->quick[s >> 4] = p;
        h->nquick[s >> 4]++;
        *hdr(c) |= QUICK;
        h->quick_bytes += s;
        POISON((char *)p + sizeof(void *), s - HDR - sizeof(void *));
        return;
    }
    free_chunk(h, c, s);
}

/* ------------------------------------------------------------ allocation */

/* Commit more so that at least `need` bytes are free above top. */
static bool grow(mem_heap_t *h, size_t need)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t pm = (uintptr_t)page - 1;
    char *want = (char *)(((uintptr_t)h->top + need + pm) & ~pm);
    if (want > h->end || want < h->top) {
        h->reached_end = true; /* the region's end, not the system's memory */
        return false;
    }
    char *end = h->commit_end + h->grow;
    if (end < want || end > h->end)
        end = want > h->commit_end + h->grow ? want : h->end;
    if (mem_commit(h->commit_end, (size_t)(end - h->commit_end)) != 0) {
        if (end == want || mem_commit(h->commit_end, (size_t)(want - h->commit_end)))
            return false;
        end = want;
    }
    h->commit_end = end;
    if (h->grow < GROW_MAX)
        h->grow *= 2;
    return true;
}

/* s bytes from the top (committing more when needed), or NULL. */
static char *top_take(mem_heap_t *h, size_t s)
{
    if ((size_t)(h->commit_end - h->top) < s && !grow(h, s))
        return NULL;
    char *c = h->top;
    h->top += s;
    if (h->top > h->fresh)
        h->fresh = h->top;
    UNPOISON(c, s);
    *hdr(c) = s | INUSE | PREV_INUSE; /* the chunk below top is in use */
    return c;
}

/* Cut chunk c (in use, `have` bytes) down to s bytes; the rest is freed. */
static void split_tail(mem_heap_t *h, char *c, size_t have, size_t s)
{
    if (have - s < MIN_CHUNK)
        return;
    *hdr(c) = s | (*hdr(c) & FLAGS);
    char *r = c + s;
    *hdr(r) = (have - s) | INUSE | PREV_INUSE;
    free_chunk(h, r, have - s);
}

/* A chunk taken from a bin becomes live: mark it and its neighbour. */
static void take_from_bin(mem_heap_t *h, char *c, size_t s)
{
    size_t have = csize(c);
    *hdr(c) = have | INUSE | PREV_INUSE;
    char *next = c + have; /* never top: free chunks are not next to top */
    *hdr(next) |= PREV_INUSE;
    split_tail(h, c, have, s);
}

static char *alloc_chunk(mem_heap_t *h, size_t s, int scan)
{
    char *c = bin_take(h, s, scan);
    if (c) {
        take_from_bin(h, c, s);
    } else if ((size_t)(h->commit_end - h->top) >= s || !h->quick_bytes) {
        c = top_take(h, s);
    }
    if (!c && h->quick_bytes) {
        /* Parked small chunks may coalesce into what is needed, and must
         * be used before the heap grows. */
        consolidate(h);
        return alloc_chunk(h, s, scan);
    }
    if (c) {
        h->in_use += csize(c);
        h->nlive++;
    }
    return c;
}

static NOINLINE void *malloc_slow(mem_heap_t *h, size_t s)
{
    char *c = alloc_chunk(h, s, BIN_SCAN);
    return c ? payload(c) : fail_enomem();
}

void *mem_heap_malloc(mem_heap_t *h, size_t n)
{
    if (likely(n <= QUICK_MAX - HDR)) {
        size_t s = n < MIN_CHUNK - HDR ? MIN_CHUNK : round16(n + HDR);
        void **q = h->quick[s >> 4];
        if (likely(q != NULL)) {
            UNPOISON(q, s - HDR);
            h->quick[s >> 4] = *q;
            h->nquick[s >> 4]--;
            *hdr(chunk_of(q)) &= ~QUICK;
            h->quick_bytes -= s;
            h->in_use += s;
            h->nlive++;
            return q;
        }
        return malloc_slow(h, s);
    }
    size_t s = request_size(n);
    return s ? malloc_slow(h, s) : fail_enomem();
}

void *mem_heap_calloc(mem_heap_t *h, size_t count, size_t n)
{
    size_t total;
    if (__builtin_mul_overflow(count, n, &total))
        return fail_enomem();
    char *fresh = h->fresh;
    char *p = mem_heap_malloc(h, total);
    if (p && p < fresh)
        memset(p, 0, (size_t)(fresh - p) < total ? (size_t)(fresh - p) : total);
    return p;
}

void *mem_heap_memalign(mem_heap_t *h, size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    if (align <= 16)
        return mem_heap_malloc(h, n);
    size_t s = request_size(n);
    if (!s || align > ((size_t)1 << 40))
        return fail_enomem();
    char *c = alloc_chunk(h, s + align + MIN_CHUNK, BIN_SCAN);
    if (!c)
        return fail_enomem();
    uintptr_t p = (uintptr_t)payload(c);
    uintptr_t ap = (p + align - 1) & ~(uintptr_t)(align - 1);
    if (ap != p && ap - p < MIN_CHUNK)
        ap += align;
    if (ap != p) { /* free the lead [c, ap - HDR) */
        size_t have = csize(c), lead = ap - p;
        char *nc = chunk_of((void *)ap);
        *hdr(c) = lead | (*hdr(c) & FLAGS);
        *hdr(nc) = (have - lead) | INUSE | PREV_INUSE;
        h->in_use -= lead;
        free_chunk(h, c, lead); /* clears nc's PREV_INUSE */
        c = nc;
    }
    size_t have = csize(c);
    split_tail(h, c, have, s);
    h->in_use -= have - csize(c);
    return payload(c);
}

/* ------------------------------------------------------------ realloc */

/* Grow chunk c (s bytes, live) in place to `want` bytes, or return false. */
static bool grow_in_place(mem_heap_t *h, char *c, size_t s, size_t want)
{
    char *next = c + s;
    if (next == h->top) {
        size_t more = want - s;
        if ((size_t)(h->commit_end - h->top) < more && !grow(h, more))
            return false;
        UNPOISON(h->top, more);
        h->top += more;
        if (h->top > h->fresh)
            h->fresh = h->top;
        *hdr(c) = want | (*hdr(c) & FLAGS);
        h->in_use += more;
        return true;
    }
    size_t nh = *hdr(next), ns = nh & ~FLAGS;
    if ((nh & INUSE) || s + ns < want)
        return false;
    bin_unlink(h, next);
    UNPOISON(next, ns);
    *hdr(c) = (s + ns) | (*hdr(c) & FLAGS);
    *hdr(c + s + ns) |= PREV_INUSE;
    split_tail(h, c, s + ns, want);
    h->in_use += csize(c) - s;
    return true;
}

void *mem_heap_realloc(mem_heap_t *h, void *p, size_t n)
{
    if (!p)
        return mem_heap_malloc(h, n);
    if (n == 0) { /* glibc's behaviour, which programs were written for */
        mem_heap_free(h, p);
        return NULL;
    }
    char *c = live_chunk(h, p, "realloc");
    size_t s = csize(c), want = request_size(n);
    if (!want)
        return fail_enomem();
    if (want <= s) {
        split_tail(h, c, s, want);
        h->in_use -= s - csize(c);
        return p;
    }
    if (grow_in_place(h, c, s, want))
        return p;
    void *q = want <= QUICK_MAX ? mem_heap_malloc(h, n) : NULL;
    if (!q) {
        char *nc = alloc_chunk(h, want, 1);
        if (!nc)
            return fail_enomem(); /* p stays valid */
        q = payload(nc);
    }
    memcpy(q, p, s - HDR);
    mem_heap_free(h, p);
    return q;
}

/* ------------------------------------------------------------ queries */

size_t mem_heap_usable_size(mem_heap_t *h, const void *p)
{
    return p ? csize(live_chunk(h, p, "malloc_usable_size")) - HDR : 0;
}

bool mem_heap_owns(const mem_heap_t *h, const void *p)
{
    return (uintptr_t)((const char *)p - h->lo) < (uintptr_t)(h->end - h->lo);
}

void mem_heap_stats(const mem_heap_t *h, struct mem_heap_stats *out)
{
    out->in_use = h->in_use;
    out->committed = (size_t)(h->commit_end - h->lo);
    out->extent = (size_t)(h->top - h->lo);
    out->allocations = h->nlive;
    out->size = (size_t)(h->end - h->lo);
    out->reached_end = h->reached_end;
}

/* ------------------------------------------------------------ create */

mem_heap_t *mem_heap_create(void *lo, size_t size)
{
    return mem_heap_create_on(lo, size, 0);
}

mem_heap_t *mem_heap_create_on(void *lo, size_t size, size_t committed)
{
    long page = sysconf(_SC_PAGESIZE);
    if (((uintptr_t)lo | size | committed) & ((uintptr_t)page - 1) || size < HEAP_MIN ||
        committed > size) {
        errno = EINVAL;
        return NULL;
    }
    size_t first = size < GROW_MIN ? size : GROW_MIN;
    if (committed >= first)
        first = committed; /* the caller mapped it (with its neighbours) */
    else if (mem_commit(lo, first) != 0)
        return fail_enomem();
    mem_heap_t *h = lo;
    h->magic = HEAP_MAGIC;
    h->lo = lo;
    h->end = (char *)lo + size;
    h->commit_end = (char *)lo + first;
    h->first = (char *)round16((uintptr_t)lo + sizeof *h + HDR) - HDR;
    h->top = h->fresh = h->first;
    h->grow = GROW_MIN;
    for (unsigned i = 0; i < NBINS; i++)
        h->bins[i].fd = h->bins[i].bk = &h->bins[i];
    return h;
}

/* ------------------------------------------------------------ check */

struct walk_counts {
    size_t live, live_bytes, quick, quick_bytes, free_chunks;
};

#define BAD(...) (fprintf(stderr, "upvm: heap check: " __VA_ARGS__), -1)

static int check_chunk(const mem_heap_t *h, char *c, bool prev_inuse,
                       struct walk_counts *w)
{
    size_t hd = *hdr(c), s = hd & ~FLAGS;
    if (s < MIN_CHUNK || s % 16 || c + s > h->top)
        return BAD("chunk %p: bad size %zu\n", (void *)c, s);
    if (!(hd & PREV_INUSE) != !prev_inuse)
        return BAD("chunk %p: PREV_INUSE is %d, the chunk before disagrees\n",
                   (void *)c, !!(hd & PREV_INUSE));
    if ((hd & QUICK) && !(hd & INUSE))
        return BAD("chunk %p: QUICK without INUSE\n", (void *)c);
    if (hd & QUICK) {
        w->quick++;
        w->quick_bytes += s;
    } else if (hd & INUSE) {
        w->live++;
        w->live_bytes += s;
    } else {
        if (!prev_inuse)
            return BAD("chunk %p: two free chunks side by side\n", (void *)c);
        if (*(size_t *)(c + s - 8) != s)
            return BAD("chunk %p: footer %zu != size %zu\n", (void *)c,
                       *(size_t *)(c + s - 8), s);
        if (c + s == h->top)
            return BAD("chunk %p: free chunk next to top\n", (void *)c);
        w->free_chunks++;
    }
    return 0;
}

static int walk_chunks(const mem_heap_t *h, struct walk_counts *w)
{
    bool prev_inuse = true;
    char *c = h->first;
    while (c < h->top) {
        if (check_chunk(h, c, prev_inuse, w))
            return -1;
        prev_inuse = (*hdr(c) & INUSE) != 0;
        c += csize(c);
    }
    if (c != h->top)
        return BAD("chunks end at %p, top is %p\n", (void *)c, (void *)h->top);
    if (!prev_inuse)
        return BAD("the chunk below top is free\n");
    return 0;
}

static bool in_chunks(const mem_heap_t *h, const void *p)
{
    return (const char *)p > h->first && (const char *)p < h->top;
}

static int check_bins(const mem_heap_t *h, size_t *nfree)
{
    size_t n = 0, limit = (size_t)(h->top - h->first) / MIN_CHUNK + 1;
    for (unsigned i = 0; i < NBINS; i++) {
        const struct link *head = &h->bins[i];
        bool nonempty = head->fd != head;
        if (nonempty != (bool)(h->binmap[i / 64] >> (i % 64) & 1))
            return BAD("bin %u: bitmap bit disagrees with the list\n", i);
        for (struct link *l = head->fd; l != head; l = l->fd) {
            char *c = chunk_of_link(l);
            if (!in_chunks(h, l) || ++n > limit ||
                (l->fd != head && !in_chunks(h, l->fd)) || l->fd->bk != l)
                return BAD("bin %u: broken list at %p\n", i, (void *)l);
            if ((*hdr(c) & INUSE) || bin_index(csize(c)) != i)
                return BAD("bin %u: chunk %p (header %#zx) does not belong\n", i,
                           (void *)c, *hdr(c));
        }
    }
    *nfree = n;
    return 0;
}

static int check_quick(const mem_heap_t *h, size_t *count, size_t *bytes)
{
    size_t n = 0, b = 0, limit = (size_t)(h->top - h->first) / MIN_CHUNK + 1;
    for (unsigned i = 0; i < NQUICK; i++) {
        size_t in_list = 0;
        for (void *p = h->quick[i]; p; p = *(void **)p, in_list++) {
            if (!in_chunks(h, p) || (uintptr_t)p % 16 || ++n > limit)
                return BAD("quick list %u: bad entry %p\n", i, p);
            char *c = chunk_of(p);
            if ((*hdr(c) & (QUICK | INUSE)) != (QUICK | INUSE) ||
                csize(c) >> 4 != i)
                return BAD("quick list %u: chunk %p has header %#zx\n", i,
                           (void *)c, *hdr(c));
            b += csize(c);
        }
        if (in_list != h->nquick[i] || in_list > QUICK_CAP)
            return BAD("quick list %u: %zu chunks, counted %u\n", i, in_list,
                       h->nquick[i]);
    }
    *count = n;
    *bytes = b;
    return 0;
}

static int check_bounds(const mem_heap_t *h)
{
    if (h->magic != HEAP_MAGIC || h->lo != (const char *)h)
        return BAD("%p is not a heap\n", (const void *)h);
    if (!(h->first <= h->top && h->top <= h->fresh && h->fresh <= h->commit_end &&
          h->commit_end <= h->end) || ((uintptr_t)h->first + HDR) % 16)
        return BAD("bounds out of order: first %p top %p fresh %p commit %p end %p\n",
                   (void *)h->first, (void *)h->top, (void *)h->fresh,
                   (void *)h->commit_end, (void *)h->end);
    return 0;
}

int mem_heap_check(const mem_heap_t *h)
{
    struct walk_counts w = {0};
    size_t nfree, nquick, quick_bytes;
    if (check_bounds(h) || walk_chunks(h, &w) || check_bins(h, &nfree) ||
        check_quick(h, &nquick, &quick_bytes))
        return -1;
    if (nfree != w.free_chunks)
        return BAD("%zu free chunks in the heap, %zu in bins\n", w.free_chunks, nfree);
    if (nquick != w.quick || quick_bytes != w.quick_bytes ||
        quick_bytes != h->quick_bytes)
        return BAD("quick lists: %zu chunks / %zu bytes listed, %zu / %zu marked, "
                   "%zu counted\n", nquick, quick_bytes, w.quick, w.quick_bytes,
                   h->quick_bytes);
    if (w.live != h->nlive || w.live_bytes != h->in_use)
        return BAD("%zu live blocks of %zu bytes found, counters say %zu / %zu\n",
                   w.live, w.live_bytes, h->nlive, h->in_use);
    return 0;
}
