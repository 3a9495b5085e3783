/*
 * test-mem-heap.c - the per-ULP heap's C contracts: malloc(0), alignment,
 * usable size, realloc in every direction, calloc (overflow, zeroing of
 * reused and trimmed memory), memalign, exhaustion (NULL and ENOMEM, and
 * the heap still works after), a heap that stays one mapping, and that
 * every byte of its state lives inside its region.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "memtest.h"

#if UPVM_ASAN
#include <sanitizer/asan_interface.h>
#endif

static const struct mem_window *w;

/* Every case's window: 16 slots of 1 GiB. */
static void heap_window(void) { w = memtest_window("1G", "16"); }
HARNESS_BEFORE(heap_window)

/* A fresh heap over a fresh slot (the last one is given back). */
static mem_heap_t *new_heap(size_t size)
{
    static int slot = -1;
    if (slot >= 0)
        mem_slot_free(slot);
    slot = mem_slot_alloc();
    CHECK(slot >= 0);
    mem_heap_t *h = mem_heap_create(mem_slot_base(w, slot), size);
    CHECK(h);
    CHECK_EQ(mem_heap_check(h), 0);
    return h;
}

static void check_empty(mem_heap_t *h)
{
    struct mem_heap_stats st;
    mem_heap_stats(h, &st);
    CHECK_EQ(st.allocations, 0);
    CHECK_EQ(st.in_use, 0);
    CHECK_EQ(mem_heap_check(h), 0);
}

TEST(create_errors)
{
    int s = mem_slot_alloc();
    char *lo = mem_slot_base(w, s);
    errno = 0;
    CHECK(!mem_heap_create(lo, 4096)); /* too small */
    CHECK_EQ(errno, EINVAL);
    CHECK(!mem_heap_create(lo + 16, 1 << 20)); /* not page-aligned */
    CHECK(!mem_heap_create(lo, (1 << 20) + 100));
    mem_slot_free(s);
}

TEST(malloc_zero)
{
    mem_heap_t *h = new_heap(w->slot_size);
    void *a = mem_heap_malloc(h, 0), *b = mem_heap_malloc(h, 0);
    CHECK(a && b && a != b);
    CHECK(mem_heap_usable_size(h, a) >= 1);
    mem_heap_free(h, a);
    mem_heap_free(h, b);
    mem_heap_free(h, NULL);
    CHECK_EQ(mem_heap_usable_size(h, NULL), 0);
    check_empty(h);
}

TEST(alignment_and_usable)
{
    mem_heap_t *h = new_heap(w->slot_size);
    void *p[600];
    for (size_t n = 0; n < 600; n++) {
        size_t size = n < 300 ? n : (n - 300) * 251;
        p[n] = mem_heap_malloc(h, size);
        CHECK(p[n]);
        CHECK_EQ((uintptr_t)p[n] % 16, 0);
        CHECK(mem_heap_usable_size(h, p[n]) >= size);
        CHECK(mem_heap_owns(h, p[n]));
        memset(p[n], (int)n, mem_heap_usable_size(h, p[n]));
    }
    CHECK_EQ(mem_heap_check(h), 0);
    for (size_t n = 0; n < 600; n++) {
        unsigned char *b = p[n];
        size_t u = mem_heap_usable_size(h, b);
        CHECK(b[0] == (unsigned char)n && b[u - 1] == (unsigned char)n);
        mem_heap_free(h, p[n]);
    }
    check_empty(h);
    int local;
    CHECK(!mem_heap_owns(h, &local));
}

static void fill(unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7);
}

static void expect(const unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i * 7)) {
            fprintf(stderr, "byte %zu of %zu differs\n", i, n);
            CHECK(0);
        }
}

TEST(realloc)
{
    mem_heap_t *h = new_heap(w->slot_size);
    unsigned char *p = mem_heap_realloc(h, NULL, 40); /* = malloc */
    CHECK(p);
    fill(p, 40, 1);
    size_t sizes[] = {100, 1000, 5000, 20, 70000, 300, 1 << 20, 9, 3000, 0};
    size_t have = 40;
    void *blocker = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(sizes) - 1; i++) {
        unsigned char *q = mem_heap_realloc(h, p, sizes[i]);
        CHECK(q);
        size_t keep = have < sizes[i] ? have : sizes[i];
        expect(q, keep, 1);
        fill(q, sizes[i], 1);
        p = q;
        have = sizes[i];
        CHECK_EQ(mem_heap_check(h), 0);
        if (i == 3) /* from here on p cannot simply grow into the top */
            blocker = mem_heap_malloc(h, 10);
    }
    /* Shrinking keeps the block where it is. */
    unsigned char *q = mem_heap_realloc(h, p, 1);
    CHECK(q == p);
    /* realloc(p, 0) frees p (as glibc does) and returns NULL. */
    CHECK(mem_heap_realloc(h, q, 0) == NULL);
    mem_heap_free(h, blocker);
    check_empty(h);
}

/* Growing a block followed by a free neighbour or by the top happens in
 * place. */
TEST(realloc_in_place)
{
    mem_heap_t *h = new_heap(w->slot_size);
    void *a = mem_heap_malloc(h, 4000);
    CHECK(mem_heap_realloc(h, a, 100000) == a); /* into the top */
    void *b = mem_heap_malloc(h, 5000), *c = mem_heap_malloc(h, 5000);
    void *d = mem_heap_malloc(h, 10);
    mem_heap_free(h, c);
    CHECK(mem_heap_realloc(h, b, 9000) == b); /* into the free neighbour */
    CHECK_EQ(mem_heap_check(h), 0);
    mem_heap_free(h, a);
    mem_heap_free(h, b);
    mem_heap_free(h, d);
    check_empty(h);
}

TEST(calloc)
{
    mem_heap_t *h = new_heap(w->slot_size);
    errno = 0;
    CHECK(!mem_heap_calloc(h, SIZE_MAX / 2, 3));
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(!mem_heap_calloc(h, (size_t)1 << 40, (size_t)1 << 30));
    CHECK_EQ(errno, ENOMEM);
    /* Dirty memory handed out again is cleared. */
    size_t sizes[] = {1, 24, 100, 1000, 3000, 50000, 300000};
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        void *keep = mem_heap_malloc(h, 8);
        unsigned char *p = mem_heap_malloc(h, sizes[i]);
        memset(p, 0xee, mem_heap_usable_size(h, p));
        mem_heap_free(h, p);
        unsigned char *z = mem_heap_calloc(h, 1, sizes[i]);
        for (size_t j = 0; j < sizes[i]; j++)
            CHECK_EQ(z[j], 0);
        mem_heap_free(h, z);
        mem_heap_free(h, keep);
    }
    void *z = mem_heap_calloc(h, 0, 5);
    CHECK(z);
    mem_heap_free(h, z);
    check_empty(h);
}

/* A big block freed into the top is trimmed; calloc over the trimmed and
 * the kept-resident parts still returns zeros, and the memory left. */
TEST(trim)
{
    mem_heap_t *h = new_heap(w->slot_size);
    const size_t big = 40 << 20;
    unsigned char *p = mem_heap_malloc(h, big);
    CHECK(p);
    memset(p, 0xff, big);
    size_t touched = memtest_rss();
    mem_heap_free(h, p);
    CHECK(memtest_rss() + big - (4 << 20) <= touched);
    unsigned char *z = mem_heap_calloc(h, big, 1);
    CHECK(z);
    for (size_t j = 0; j < big; j += 512)
        CHECK_EQ(z[j], 0);
    mem_heap_free(h, z);
}

TEST(memalign)
{
    mem_heap_t *h = new_heap(w->slot_size);
    errno = 0;
    CHECK(!mem_heap_memalign(h, 24, 10));
    CHECK_EQ(errno, EINVAL);
    CHECK(!mem_heap_memalign(h, 0, 10));
    void *filler[64];
    for (int round = 0; round < 3; round++) {
        size_t k = 0;
        for (size_t a = 1; a <= (1 << 20); a <<= 1, k++) {
            size_t n = (k * 37 + (size_t)round * 1000) % 5000;
            void *p = mem_heap_memalign(h, a, n);
            CHECK(p);
            CHECK_EQ((uintptr_t)p % a, 0);
            CHECK(mem_heap_usable_size(h, p) >= n);
            memset(p, 0x5a, n);
            filler[k] = mem_heap_malloc(h, k * 16);
            CHECK_EQ(mem_heap_check(h), 0);
            mem_heap_free(h, p);
        }
        while (k)
            mem_heap_free(h, filler[--k]);
    }
    check_empty(h);
}

/* A 2 MiB region runs full: NULL and ENOMEM, never a crash, and the heap
 * is whole and usable again once blocks are freed. */
TEST(exhaustion)
{
    mem_heap_t *h = new_heap(2 << 20);
    void *p[1024];
    int n = 0;
    errno = 0;
    while ((p[n] = mem_heap_malloc(h, 60000)) != NULL) {
        memset(p[n], n, 60000);
        n++;
        CHECK(n < 1024);
    }
    CHECK_EQ(errno, ENOMEM);
    CHECK(n >= 30);
    errno = 0;
    CHECK(!mem_heap_malloc(h, 3 << 20));
    CHECK_EQ(errno, ENOMEM);
    CHECK(!mem_heap_malloc(h, SIZE_MAX - 100));
    CHECK(!mem_heap_memalign(h, 4096, 1 << 20));
    CHECK(!mem_heap_realloc(h, p[0], 1 << 20)); /* p[0] stays valid */
    CHECK_EQ(mem_heap_check(h), 0);
    for (int i = 0; i < n; i++)
        mem_heap_free(h, p[i]);
    CHECK_EQ(mem_heap_check(h), 0);
    void *big = mem_heap_malloc(h, 1 << 20);
    CHECK(big);
    mem_heap_free(h, big);
    check_empty(h);
}

/* Quick-listed small blocks are folded back when the region is full. */
TEST(exhaustion_small)
{
    mem_heap_t *h = new_heap(1 << 20);
    static void *p[40000];
    int n = 0;
    while ((p[n] = mem_heap_malloc(h, 24 + (n % 5) * 16)) != NULL)
        n++;
    CHECK_EQ(errno, ENOMEM);
    for (int i = 0; i < n; i++)
        mem_heap_free(h, p[i]);
    void *big = mem_heap_malloc(h, 900 << 10);
    CHECK(big);
    CHECK_EQ(mem_heap_check(h), 0);
    mem_heap_free(h, big);
    check_empty(h);
}

/* However much it grows, the heap is one read-write mapping from its
 * start, followed by the slot's untouched reservation. */
TEST(one_mapping)
{
    mem_heap_t *h = new_heap(w->slot_size);
    void *p[200];
    for (int i = 0; i < 200; i++)
        CHECK((p[i] = mem_heap_malloc(h, (size_t)(i % 7 + 1) * 20000)));
    struct mem_heap_stats st;
    mem_heap_stats(h, &st);
    CHECK(st.committed >= 12 << 20);
    struct memtest_map m[4];
    uintptr_t lo = (uintptr_t)h;
    CHECK_EQ(memtest_maps(lo, lo + w->slot_size, m, 4), 2);
    CHECK_EQ(m[0].lo, lo);
    CHECK_EQ(m[0].hi, lo + st.committed);
    CHECK(!strcmp(m[0].perms, "rw-p"));
    CHECK(!strcmp(m[1].perms, "---p"));
    for (int i = 0; i < 200; i++)
        mem_heap_free(h, p[i]);
}

/* All of the heap's state is inside its region: snapshot the committed
 * bytes, run a sequence of operations, put the bytes back, run the same
 * sequence again: the same addresses come out.  glibc's malloc is not
 * used meanwhile, and no mapping appears outside the region. */
static uintptr_t run_sequence(mem_heap_t *h, uintptr_t *out, int n)
{
    uint64_t seed = 42;
    void *live[64] = {0};
    uintptr_t sum = 0;
    for (int i = 0; i < n; i++) {
        int k = (int)(memtest_rand(&seed) % 64);
        if (live[k]) {
            mem_heap_free(h, live[k]);
            live[k] = NULL;
        }
        size_t size = memtest_rand(&seed) % 3 ? memtest_rand(&seed) % 600
                                              : memtest_rand(&seed) % 70000;
        live[k] = mem_heap_malloc(h, size);
        CHECK(live[k]);
        out[i] = (uintptr_t)live[k];
        sum += out[i];
    }
    return sum;
}

TEST(state_inside_region)
{
    mem_heap_t *h = new_heap(w->slot_size);
    uintptr_t first[3000], second[3000];
    (void)run_sequence(h, first, 500); /* some history */
    struct mem_heap_stats st;
    mem_heap_stats(h, &st);
    size_t len = st.committed;
#if UPVM_ASAN
    ASAN_UNPOISON_MEMORY_REGION(h, len);
#endif
    char *snap = malloc(len);
    CHECK(snap);
    memcpy(snap, h, len);
    int nmaps = memtest_maps(0, UINTPTR_MAX, NULL, 0);
    struct mallinfo2 before = mallinfo2();
    (void)run_sequence(h, first, 3000);
    struct mallinfo2 after = mallinfo2();
    CHECK_EQ(before.uordblks, after.uordblks);
    CHECK_EQ(before.hblks, after.hblks);
    CHECK_EQ(memtest_maps(0, UINTPTR_MAX, NULL, 0), nmaps);
    for (int i = 0; i < 3000; i++)
        CHECK(mem_heap_owns(h, (void *)first[i]));
#if UPVM_ASAN
    ASAN_UNPOISON_MEMORY_REGION(h, len);
#endif
    memcpy((void *)h, snap, len);
    CHECK_EQ(mem_heap_check(h), 0);
    (void)run_sequence(h, second, 3000);
    CHECK(!memcmp(first, second, sizeof first));
    free(snap);
}

/* Under ASan, touching a freed block (small or large) is reported. */
TEST(use_after_free_caught)
{
#if UPVM_ASAN
    size_t sizes[] = {100, 20000};
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        mem_heap_t *h = new_heap(w->slot_size);
        void *keep = mem_heap_malloc(h, 10);
        char *p = mem_heap_malloc(h, sizes[i]);
        void *keep2 = mem_heap_malloc(h, 10);
        mem_heap_free(h, p);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 2);
            ((volatile char *)p)[40] = 1;
            _exit(0);
        }
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
        mem_heap_free(h, keep);
        mem_heap_free(h, keep2);
    }
#else
    SKIP("not an ASan build");
#endif
}

HARNESS_MAIN()
