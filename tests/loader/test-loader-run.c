/*
 * test-loader-run.c - loading programs that work: two instances of one
 * program with private globals and shared text, init and fini per
 * instance, the resolver's place in symbol resolution (it interposes
 * imports, the program's own definitions beat it), per-instance libc
 * variables through the resolver, ifuncs, needed libraries (RUNPATH,
 * libupvm itself), the image cache, and the time to instantiate.
 *
 * main is called directly on this thread: running instances on ULPs is
 * the integration's job, not the loader's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
#include <upvm.h>

#include "harness.h"
#include "elftest.h"

extern char **environ;

static char *args[] = {"prog", NULL};

static struct loader_image *open_ok(const char *path)
{
    struct loader_error err = {0};
    struct loader_image *img = loader_image_open(path, &err);
    if (!img)
        fprintf(stderr, "loader_image_open(%s): %s\n", path, err.msg);
    CHECK(img);
    return img;
}

static void instantiate_ok(struct loader_image *img, void *base, loader_resolver_t r,
                           void *ctx, struct loader_instance *in)
{
    struct loader_error err = {0};
    int rc = loader_instantiate(img, base, r, ctx, in, &err);
    if (rc)
        fprintf(stderr, "loader_instantiate: %s\n", err.msg);
    CHECK_EQ(rc, 0);
}

#define SYM(in, name) loader_instance_sym((in), (name))
#define INT_AT(in, name) (*(int *)SYM((in), (name)))

/* The free that matches the program's malloc: the instance's heap is not
 * the loader's business, but a sanitizer build checks for leaks. */
static void free_last_alloc(const struct loader_instance *in)
{
    void **p = SYM(in, "last_alloc");
    free(*p);
    *p = NULL;
}

/* ---------------------------------------------------------------- two instances */

static unsigned long long smaps_field(uintptr_t start, const char *field)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f);
    char line[512];
    int in = 0;
    unsigned long long v = ~0ULL;
    while (fgets(line, sizeof line, f)) {
        size_t h = strspn(line, "0123456789abcdef");
        if (h > 0 && line[h] == '-') /* a mapping's header line */
            in = strtoull(line, NULL, 16) == start;
        else if (in && strncmp(line, field, strlen(field)) == 0)
            sscanf(line + strlen(field), " %llu", &v);
    }
    fclose(f);
    CHECK(v != ~0ULL);
    return v;
}

static void check_text_shared(const char *path, const struct loader_instance *a,
                              const struct loader_instance *b)
{
    struct stat st;
    CHECK(stat(path, &st) == 0);
    struct map_line ma, mb;
    CHECK(map_of((void *)a->main, &ma) && map_of((void *)b->main, &mb));
    CHECK(ma.start != mb.start);
    CHECK_STR_CONTAINS(ma.perms, "r-xp");
    CHECK_EQ(ma.inode, st.st_ino); /* file-backed: the program's own pages */
    CHECK_EQ(mb.inode, st.st_ino);
    CHECK_EQ(ma.offset, mb.offset);
    /* both ran main: the page holding it is mapped twice, never copied */
    /* (Shared_Dirty: a freshly linked file's page-cache pages may not be
     * written back yet; they are still the file's pages, not copies) */
    CHECK(smaps_field(mb.start, "Shared_Clean:") + smaps_field(mb.start, "Shared_Dirty:") > 0);
    CHECK_EQ(smaps_field(mb.start, "Private_Dirty:"), 0);
    CHECK_EQ(smaps_field(mb.start, "Anonymous:"), 0);
}

static void two_instances_of(const char *path)
{
    struct loader_image *img = open_ok(path);
    CHECK(loader_image_span(img) > 32768 && loader_image_span(img) < SLOT_SIZE);
    CHECK_STR_CONTAINS(loader_image_path(img), path);
    char *slots = slot_reserve(2 * SLOT_SIZE);
    struct loader_instance a, b;
    instantiate_ok(img, slots, NULL, NULL, &a);
    instantiate_ok(img, slots + SLOT_SIZE, NULL, NULL, &b);
    CHECK_EQ(a.base, (uintptr_t)slots);
    loader_run_init(&a, 1, args, environ);
    loader_run_init(&b, 1, args, environ);
    CHECK_EQ(INT_AT(&a, "init_runs"), 1); /* constructors ran once per instance */
    CHECK_EQ(INT_AT(&b, "init_runs"), 1);

    CHECK_EQ(a.main(1, args, environ), 6);
    CHECK_EQ(INT_AT(&b, "counter"), 5); /* b's counter is b's own */
    CHECK_EQ(b.main(1, args, environ), 6);
    CHECK_EQ(a.main(1, args, environ), 7);
    CHECK_EQ(INT_AT(&a, "hook_result"), -1); /* weak, nobody has it: 0 */

    int *big_a = SYM(&a, "big"), *big_b = SYM(&b, "big");
    for (int i = 0; i < 8192; i++)
        CHECK(big_a[i] == 0 && big_b[i] == 0);
    big_a[8191] = 9;
    CHECK_EQ(big_b[8191], 0);
    check_text_shared(path, &a, &b);

    loader_run_fini(&a);
    CHECK_EQ(INT_AT(&a, "fini_runs"), 1);
    CHECK_EQ(INT_AT(&a, "atexit_runs"), 1); /* __cxa_finalize(a's __dso_handle) */
    CHECK_EQ(INT_AT(&b, "fini_runs"), 0);
    CHECK_EQ(INT_AT(&b, "atexit_runs"), 0);
    loader_run_fini(&b);
    CHECK_EQ(INT_AT(&b, "fini_runs"), 1);
    CHECK_EQ(INT_AT(&b, "atexit_runs"), 1);
    free_last_alloc(&a);
    free_last_alloc(&b);
    loader_unmap(&a);
    loader_unmap(&b);
    check_reserved(slots);
    check_reserved(slots + SLOT_SIZE);
    loader_image_put(img);
    munmap(slots, 2 * SLOT_SIZE);
}

TEST(two_instances) { two_instances_of(PROG_COUNTER); }

/* The same program linked with -z pack-relative-relocs: DT_RELR. */
TEST(two_instances_relr) { two_instances_of(PROG_RELR); }

/* ---------------------------------------------------------------- resolver */

struct ulp_ctx {
    int optind;       /* this instance's own copy of a libc variable */
    int mallocs;
    char asked[1024]; /* names the resolver was asked, space-separated */
};

static struct ulp_ctx *malloc_ctx;

static void *counting_malloc(size_t n)
{
    malloc_ctx->mallocs++;
    return malloc(n);
}

static int hook_plus_100(int x) { return x + 100; }

static void *test_resolver(const char *name, void *ctx)
{
    struct ulp_ctx *c = ctx;
    size_t len = strlen(c->asked);
    snprintf(c->asked + len, sizeof c->asked - len, " %s ", name);
    if (strcmp(name, "malloc") == 0)
        return (void *)counting_malloc;
    if (strcmp(name, "loader_test_hook") == 0)
        return (void *)hook_plus_100;
    if (strcmp(name, "optind") == 0)
        return &c->optind;
    return NULL;
}

TEST(resolver_interposes)
{
    struct loader_image *img = open_ok(PROG_COUNTER);
    char *slots = slot_reserve(2 * SLOT_SIZE);
    struct ulp_ctx c1 = {.optind = 11}, c2 = {.optind = 22};
    struct loader_instance a, b;
    instantiate_ok(img, slots, test_resolver, &c1, &a);
    instantiate_ok(img, slots + SLOT_SIZE, test_resolver, &c2, &b);
    /* imports reach the resolver, each with its instance's context */
    CHECK_STR_CONTAINS(c1.asked, " malloc ");
    CHECK_STR_CONTAINS(c1.asked, " stdout ");
    CHECK_STR_CONTAINS(c1.asked, " environ ");
    CHECK_STR_CONTAINS(c2.asked, " optind ");
    /* own definitions are never offered to it */
    CHECK(!strstr(c1.asked, " counter ") && !strstr(c1.asked, " prog_own "));

    malloc_ctx = &c1;
    CHECK_EQ(a.main(1, args, environ), 6);
    CHECK_EQ(c1.mallocs, 1);
    CHECK_EQ(INT_AT(&a, "hook_result"), 106);
    /* libc variables: each instance sees the copy its resolver gave it */
    CHECK_EQ(((int (*)(void))SYM(&a, "get_optind"))(), 11);
    CHECK_EQ(((int (*)(void))SYM(&b, "get_optind"))(), 22);
    /* the rest comes from the node */
    CHECK(((FILE * (*)(void)) SYM(&a, "get_stdout"))() == stdout);
    CHECK(((char **(*)(void))SYM(&b, "get_environ"))() == environ);

    free_last_alloc(&a);
    loader_unmap(&a);
    loader_unmap(&b);
    loader_image_put(img);
    munmap(slots, 2 * SLOT_SIZE);
}

/* A copy of prog-counter whose import loader_test_hook is made a definition
 * of the program (the value of prog_own): the program's own definition
 * must win over the resolver's loader_test_hook. */
TEST(own_definition_beats_resolver)
{
    struct blob b = blob_read(PROG_COUNTER);
    Elf64_Sym *hook = blob_dynsym(b, "loader_test_hook"), *own = blob_dynsym(b, "prog_own");
    CHECK(hook && own && hook->st_shndx == SHN_UNDEF);
    hook->st_value = own->st_value;
    hook->st_shndx = own->st_shndx;
    hook->st_info = own->st_info;
    char path[512];
    snprintf(path, sizeof path, "%s/own-def", test_tmpdir());
    blob_write(path, b.p, b.n);
    free(b.p);

    struct loader_image *img = open_ok(path);
    char *slot = slot_reserve(SLOT_SIZE);
    struct ulp_ctx c = {0};
    struct loader_instance in;
    instantiate_ok(img, slot, test_resolver, &c, &in);
    CHECK(!strstr(c.asked, " loader_test_hook "));
    malloc_ctx = &c;
    CHECK_EQ(in.main(1, args, environ), 6);
    CHECK_EQ(INT_AT(&in, "hook_result"), 1006); /* prog_own, not hook_plus_100 */
    free_last_alloc(&in);
    loader_unmap(&in);
    loader_image_put(img);
    munmap(slot, SLOT_SIZE);
    unlink(path);
}

/* ---------------------------------------------------------------- ifunc */

TEST(ifunc)
{
    struct loader_image *img = open_ok(PROG_IFUNC);
    char *slots = slot_reserve(2 * SLOT_SIZE);
    struct loader_instance a, b;
    instantiate_ok(img, slots, NULL, NULL, &a);
    instantiate_ok(img, slots + SLOT_SIZE, NULL, NULL, &b);
    CHECK(INT_AT(&a, "resolver_calls") >= 1); /* it ran in each instance, */
    CHECK(INT_AT(&b, "resolver_calls") >= 1); /* on each instance's data */
    CHECK_EQ(a.main(0, args, environ), 42);
    CHECK_EQ(b.main(0, args, environ), 42);
    int (*pick)(void) = (int (*)(void))SYM(&b, "pick");
    CHECK((uintptr_t)pick >= b.base && (uintptr_t)pick < b.base + loader_image_span(img));
    CHECK_EQ(pick(), 42);
    loader_unmap(&a);
    loader_unmap(&b);
    loader_image_put(img);
    munmap(slots, 2 * SLOT_SIZE);
}

/* ---------------------------------------------------------------- libraries */

TEST(needed_library_through_runpath)
{
    struct loader_image *img = open_ok(PROG_NEEDS);
    char *slot = slot_reserve(SLOT_SIZE);
    struct loader_instance in;
    instantiate_ok(img, slot, NULL, NULL, &in);
    CHECK_EQ(in.main(0, args, environ), 77);
    loader_unmap(&in);
    loader_image_put(img);
    munmap(slot, SLOT_SIZE);
}

TEST(needs_libupvm_binds_to_the_node_copy)
{
    struct loader_image *img = open_ok(PROG_NEEDS_UPVM);
    char *slot = slot_reserve(SLOT_SIZE);
    struct loader_instance in;
    instantiate_ok(img, slot, NULL, NULL, &in);
    void *(*get)(void) = (void *(*)(void))SYM(&in, "get_upvm_self");
    CHECK(get() == (void *)upvm_self);
    loader_unmap(&in);
    loader_image_put(img);
    munmap(slot, SLOT_SIZE);
}

/* ---------------------------------------------------------------- cache */

TEST(image_cache)
{
    struct loader_image *a = open_ok(PROG_COUNTER), *b = open_ok(PROG_COUNTER);
    CHECK(a == b);
    loader_image_put(b);

    /* a copy is another file: another image; rewritten, another again */
    struct blob f = blob_read(PROG_COUNTER);
    char path[512];
    snprintf(path, sizeof path, "%s/copy", test_tmpdir());
    blob_write(path, f.p, f.n);
    struct loader_image *c = open_ok(path);
    CHECK(c != a);
    struct timespec ts[2] = {{0, 0}, {12345, 0}};
    CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0); /* "rewritten in place" */
    struct loader_image *d = open_ok(path);
    CHECK(d != c);
    loader_image_put(c);
    loader_image_put(d);
    loader_image_put(a);
    unlink(path);
    free(f.p);
}

/* ---------------------------------------------------------------- timing */

static int cmp_ll(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;
    return (a > b) - (a < b);
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

TEST(instantiate_time)
{
    enum { N = 2000 };
    static long long inst[N], unmap[N];
    struct loader_image *img = open_ok(PROG_COUNTER);
    char *slots = slot_reserve(2 * SLOT_SIZE);
    struct ulp_ctx c = {0};
    for (int i = 0; i < N; i++) {
        struct loader_instance in;
        c.asked[0] = 0;
        long long t0 = now_ns();
        instantiate_ok(img, slots + (i % 2) * SLOT_SIZE, test_resolver, &c, &in);
        long long t1 = now_ns();
        loader_unmap(&in);
        inst[i] = t1 - t0;
        unmap[i] = now_ns() - t1;
    }
    qsort(inst, N, sizeof inst[0], cmp_ll);
    qsort(unmap, N, sizeof unmap[0], cmp_ll);
    fprintf(stderr, "   prog-counter (%zu KiB span): instantiate (map + relocate) median %.1f us "
            "(p10 %.1f, p90 %.1f), unmap median %.1f us, over %d\n",
            loader_image_span(img) / 1024, inst[N / 2] / 1e3, inst[N / 10] / 1e3,
            inst[N * 9 / 10] / 1e3, unmap[N / 2] / 1e3, N);
    CHECK(inst[N / 2] < 5000000); /* a sanity bound only: machines are noisy */
    loader_image_put(img);
    munmap(slots, 2 * SLOT_SIZE);
}

HARNESS_AFTER(test_tmpdir_remove)

HARNESS_MAIN()
