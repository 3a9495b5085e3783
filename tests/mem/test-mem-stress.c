/*
 * test-mem-stress.c - a seeded random mix of malloc, calloc, realloc,
 * memalign and free on one heap.  Every live block is filled with a
 * pattern derived from its key and checked before it is resized or freed,
 * so a block that overlaps another, or that the allocator scribbles on, is
 * caught; mem_heap_check runs every CHECK_EVERY operations.  Sizes: mostly
 * small (the quick lists), some of a few KiB to 64 KiB (the bins), a few
 * up to 1 MiB (the top and trimming).
 *
 * One case; MEM_STRESS_SEED=n and MEM_STRESS_OPS=n in the environment
 * change its seed (0x5eed) and length (300000 operations).
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "memtest.h"

#define LIVE 3000
#define CHECK_EVERY 2000

struct block {
    unsigned char *p;
    size_t n;
    uint64_t key;
};

static struct block live[LIVE];
static mem_heap_t *heap;
static uint64_t rng;

static size_t random_size(void)
{
    uint64_t r = memtest_rand(&rng) % 1000;
    if (r < 800)
        return memtest_rand(&rng) % 520;
    if (r < 990)
        return 520 + memtest_rand(&rng) % 65000;
    return memtest_rand(&rng) % (1 << 20);
}

/* The pattern: the key's low byte everywhere, the whole key at each end. */
static void paint(struct block *b)
{
    memset(b->p, (int)(b->key & 0xff), b->n);
    if (b->n >= 16) {
        memcpy(b->p, &b->key, 8);
        memcpy(b->p + b->n - 8, &b->key, 8);
    }
}

/* The byte at i of block b's pattern. */
static unsigned char expected(const struct block *b, size_t i)
{
    if (b->n >= 16 && i < 8)
        return (unsigned char)(b->key >> (8 * i));
    if (b->n >= 16 && i >= b->n - 8)
        return (unsigned char)(b->key >> (8 * (i - (b->n - 8))));
    return (unsigned char)(b->key & 0xff);
}

static COLD void report_difference(const struct block *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b->p[i] != expected(b, i)) {
            fprintf(stderr, "block %p (%zu bytes): byte %zu is %#x, not %#x\n",
                    (void *)b->p, b->n, i, b->p[i], expected(b, i));
            exit(1);
        }
}

/* The first n bytes of b still hold its pattern (the ends byte by byte,
 * the middle with memcmp). */
static void verify(const struct block *b, size_t n)
{
    size_t lo = b->n >= 16 ? 8 : 0, hi = b->n >= 16 ? b->n - 8 : b->n;
    unsigned char c = (unsigned char)(b->key & 0xff), diff = 0;
    if (hi > n)
        hi = n;
    static unsigned char pattern[4096];
    memset(pattern, c, sizeof pattern);
    for (size_t i = lo; i < hi; i += sizeof pattern) {
        size_t len = hi - i < sizeof pattern ? hi - i : sizeof pattern;
        diff |= memcmp(b->p + i, pattern, len) != 0;
    }
    for (size_t i = 0; i < lo && i < n; i++)
        diff |= b->p[i] ^ expected(b, i);
    for (size_t i = hi > lo ? hi : lo; i < n; i++)
        diff |= b->p[i] ^ expected(b, i);
    if (diff)
        report_difference(b, n);
}

static void do_alloc(struct block *b)
{
    size_t n = random_size();
    unsigned op = (unsigned)(memtest_rand(&rng) % 10);
    if (op == 0) {
        b->p = mem_heap_calloc(heap, 1, n);
        CHECK(b->p);
        for (size_t i = 0; i < n; i += 61)
            CHECK_EQ(b->p[i], 0);
    } else if (op == 1) {
        size_t align = (size_t)16 << (memtest_rand(&rng) % 10);
        b->p = mem_heap_memalign(heap, align, n);
        CHECK(b->p);
        CHECK_EQ((uintptr_t)b->p % align, 0);
    } else {
        b->p = mem_heap_malloc(heap, n);
        CHECK(b->p);
    }
    CHECK(mem_heap_usable_size(heap, b->p) >= n);
    b->n = n;
    b->key = memtest_rand(&rng);
    paint(b);
}

static void do_realloc(struct block *b)
{
    size_t n = random_size();
    verify(b, b->n);
    unsigned char *q = mem_heap_realloc(heap, b->p, n ? n : 1);
    CHECK(q);
    b->p = q;
    /* the first min(old, new) bytes survived */
    verify(b, b->n < n ? b->n : n);
    b->n = n ? n : 1;
    b->key = memtest_rand(&rng);
    paint(b);
}

static void one_op(void)
{
    struct block *b = &live[memtest_rand(&rng) % LIVE];
    if (!b->p) {
        do_alloc(b);
    } else if (memtest_rand(&rng) % 4 == 0) {
        do_realloc(b);
    } else {
        verify(b, b->n);
        mem_heap_free(heap, b->p);
        b->p = NULL;
    }
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

TEST(random_operations_on_one_heap)
{
    rng = strtoull(env_or("MEM_STRESS_SEED", "0x5eed"), NULL, 0);
    long ops = strtol(env_or("MEM_STRESS_OPS", "300000"), NULL, 0);
    const struct mem_window *w = memtest_window("1G", "4");
    int s = mem_slot_alloc();
    CHECK(s >= 0);
    heap = mem_heap_create(mem_slot_base(w, s), w->slot_size);
    CHECK(heap);
    for (long i = 0; i < ops; i++) {
        one_op();
        if (i % CHECK_EVERY == 0)
            CHECK_EQ(mem_heap_check(heap), 0);
    }
    for (int i = 0; i < LIVE; i++)
        if (live[i].p) {
            verify(&live[i], live[i].n);
            mem_heap_free(heap, live[i].p);
        }
    CHECK_EQ(mem_heap_check(heap), 0);
    struct mem_heap_stats st;
    mem_heap_stats(heap, &st);
    CHECK_EQ(st.allocations, 0);
    CHECK_EQ(st.in_use, 0);
    fprintf(stderr, "%ld operations, %zu MiB committed at most\n", ops,
            st.committed >> 20);
    mem_slot_free(s);
}

HARNESS_MAIN()
