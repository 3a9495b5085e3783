/*
 * test-mem-window.c - the address window and its slots: the UPVM_*
 * settings and their errors (each in a child process, before this process
 * reserves its own window), a range already taken, slot allocation lowest
 * first, exhaustion and reuse, commit, and that giving a slot back really
 * returns its memory and its mappings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "memtest.h"

/* ------------------------------------------------------------ settings */

struct env_case {
    const char *base, *slot_size, *slots; /* NULL: unset */
    int want;                             /* mem_window_init's result, or */
#define REFUSED 1000                      /* the process ended: status 2 */
    const char *says;                     /* in its message */
};

static void set_or_unset(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

/* Run mem_window_init in a child with the case's settings (and, when
 * squat is set, a page already mapped at the window's base); check its
 * result and what it printed. */
static void run_env_case(const struct env_case *c, bool squat)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        set_or_unset("UPVM_WINDOW_BASE", c->base);
        set_or_unset("UPVM_SLOT_SIZE", c->slot_size);
        set_or_unset("UPVM_SLOTS", c->slots);
        if (squat) {
            void *want = (void *)strtoull(c->base, NULL, 0);
            void *p = mmap(want, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
                           MAP_FIXED_NOREPLACE, -1, 0);
            if (p != want)
                _exit(100);
        }
        _exit(-mem_window_init());
    }
    close(fds[1]);
    char out[2048] = "";
    size_t n = 0;
    ssize_t r;
    while ((r = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    if (c->want == REFUSED) /* a bad setting: its line, then exit status 2 */
        CHECK_EQ(WEXITSTATUS(status), 2);
    else
        CHECK_EQ(-WEXITSTATUS(status), c->want);
    if (c->says)
        CHECK_STR_CONTAINS(out, c->says);
    else
        CHECK_EQ(n, 0);
}

TEST(settings)
{
    static const struct env_case cases[] = {
        {NULL, NULL, NULL, 0, NULL},
        {NULL, "64M", "16", 0, NULL},
        {"0x400000000000", "256MiB", "4", 0, NULL},
        {NULL, "100M", NULL, REFUSED, "UPVM_SLOT_SIZE=100M: not a size (a power-of-two"},
        {NULL, "32M", NULL, REFUSED, "UPVM_SLOT_SIZE=32M:"},
        {NULL, "lots", NULL, REFUSED, "UPVM_SLOT_SIZE=lots:"},
        {NULL, "2T", NULL, REFUSED, "from 64M to 1T"},
        {NULL, NULL, "0", REFUSED, "UPVM_SLOTS=0: not a number from 1 to"},
        {NULL, NULL, "-3", REFUSED, "UPVM_SLOTS=-3:"},
        {NULL, NULL, "12x", REFUSED, "UPVM_SLOTS=12x:"},
        {NULL, NULL, "99999999999", REFUSED, "UPVM_SLOTS="},
        {"0x1234", NULL, NULL, REFUSED, "UPVM_WINDOW_BASE=0x1234: not an address (non-zero, a multiple of"},
        {"banana", NULL, NULL, REFUSED, "UPVM_WINDOW_BASE=banana:"},
        {"0x7fffe0000000", "1G", NULL, REFUSED, "no slot fits"},
        {"0x400000000000", "1T", "200000", -ENOMEM, "does not fit in the address space"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
        run_env_case(&cases[i], false);
}

TEST(range_taken)
{
    struct env_case c = {"0x300000000000", "64M", "4", -EEXIST,
                         "part of it is already mapped"};
    run_env_case(&c, true);
    c.says = "UPVM_WINDOW_BASE=0x";
    run_env_case(&c, true);
}

/* ------------------------------------------------------------ slots */

static const struct mem_window *w;

/* The window of the cases below: 8 slots of 64 MiB at the default base. */
static void slots_window(void) { w = memtest_window("64M", "8"); }

TEST(window)
{
    slots_window();
    CHECK_EQ(w->base, 0x200000000000ULL);
    CHECK_EQ(w->slot_size, 64 << 20);
    CHECK_EQ(w->nslots, 8);
    CHECK_EQ(mem_window_init(), 0); /* once */
    struct memtest_map m[4];
    uintptr_t end = w->base + w->nslots * w->slot_size;
    CHECK_EQ(memtest_maps(w->base, end, m, 4), 1);
    CHECK_EQ(m[0].lo, w->base);
    CHECK_EQ(m[0].hi, end);
    CHECK(!strcmp(m[0].perms, "---p"));
}

TEST(alloc_order_and_reuse)
{
    slots_window();
    for (int i = 0; i < 8; i++)
        CHECK_EQ(mem_slot_alloc(), i);
    CHECK_EQ(mem_slot_alloc(), -ENOSPC);
    mem_slot_free(5);
    mem_slot_free(3);
    CHECK_EQ(mem_slot_alloc(), 3); /* lowest first */
    CHECK_EQ(mem_slot_alloc(), 5);
    CHECK_EQ(mem_slot_alloc(), -ENOSPC);
    for (int i = 0; i < 8; i++)
        mem_slot_free(i);
    CHECK_EQ(mem_slot_alloc(), 0);
    mem_slot_free(0);
}

TEST(slot_of)
{
    slots_window();
    CHECK_EQ(mem_slot_of((void *)w->base), 0);
    CHECK_EQ(mem_slot_of((char *)mem_slot_base(w, 3) + 12345), 3);
    CHECK_EQ(mem_slot_of((char *)mem_slot_base(w, 7) + w->slot_size - 1), 7);
    CHECK_EQ(mem_slot_of((void *)(w->base - 1)), -1);
    CHECK_EQ(mem_slot_of((void *)(w->base + 8 * w->slot_size)), -1);
    CHECK_EQ(mem_slot_of(NULL), -1);
}

/* Commit, touch, give back: resident memory drops, the mappings merge back
 * into one PROT_NONE reservation, and the next owner sees zeros. */
TEST(free_releases)
{
    slots_window();
    /* Under ASan the first free of a slot leaves some of its shadow pages
     * resident (a few MiB): paid here, before the measurement, as the
     * cases before this one did when they shared its process. */
    mem_slot_free(mem_slot_alloc());
    const size_t len = 48 << 20;
    int s = mem_slot_alloc();
    CHECK(s >= 0);
    char *p = mem_slot_base(w, s);
    CHECK_EQ(mem_commit(p, len), 0);
    CHECK_EQ(p[0] | p[len - 1], 0);
    size_t before = memtest_rss();
    memset(p, 0xa5, len);
    size_t touched = memtest_rss();
    CHECK(touched >= before + len - (4 << 20));
    mem_slot_free(s);
    size_t after = memtest_rss();
    CHECK(after + len - (4 << 20) <= touched);

    struct memtest_map m[4];
    uintptr_t end = w->base + w->nslots * w->slot_size;
    CHECK_EQ(memtest_maps(w->base, end, m, 4), 1);

    CHECK_EQ(mem_slot_alloc(), s);
    CHECK_EQ(mem_commit(p, len), 0);
    for (size_t i = 0; i < len; i += 4096)
        CHECK_EQ(p[i], 0);
    mem_slot_free(s);
}

/* Commits that extend each other stay one mapping. */
TEST(commit_merges)
{
    slots_window();
    int s = mem_slot_alloc();
    char *p = mem_slot_base(w, s);
    for (size_t off = 0; off < (8 << 20); off += 256 << 10) {
        CHECK_EQ(mem_commit(p + off, 256 << 10), 0);
        p[off] = 1;
    }
    struct memtest_map m[4];
    CHECK_EQ(memtest_maps((uintptr_t)p, (uintptr_t)p + w->slot_size, m, 4), 2);
    CHECK_EQ(m[0].lo, (uintptr_t)p);
    CHECK_EQ(m[0].hi, (uintptr_t)p + (8 << 20));
    CHECK(!strcmp(m[0].perms, "rw-p"));
    mem_slot_free(s);
}

/* At the kernel's map limit, mem_commit fails with -ENOMEM and says
 * which sysctl to raise (in a child: the limit is spent for good there). */
TEST(commit_at_map_limit)
{
    unsigned long limit = 0;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (!f || fscanf(f, "%lu", &limit) != 1 || limit > 300000) {
        if (f)
            fclose(f);
        SKIP("vm.max_map_count is too high to reach quickly");
    }
    fclose(f);
    slots_window();
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        const size_t page = 4096, n = 2 * limit + 1000;
        char *r = mmap(NULL, n * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
                       MAP_NORESERVE, -1, 0);
        if (r == MAP_FAILED)
            _exit(100);
        for (size_t i = 1; i < n; i += 2) /* each call splits off 2 VMAs */
            if (mprotect(r + i * page, page, PROT_READ) != 0)
                break;
        int s = mem_slot_alloc();
        char *p = (char *)mem_slot_base(w, s) + w->slot_size / 2;
        _exit(-mem_commit(p, page));
    }
    close(fds[1]);
    char out[2048] = "";
    size_t n = 0;
    ssize_t r;
    while ((r = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)r;
    close(fds[0]);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), ENOMEM);
    CHECK_STR_CONTAINS(out, "vm.max_map_count");
    CHECK_STR_CONTAINS(out, "sudo sysctl -w vm.max_map_count=");
}

HARNESS_MAIN()
