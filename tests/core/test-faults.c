/*
 * test-faults.c - what a user sees when things go wrong: stack overflow,
 * crashes (SIGSEGV, SIGBUS, SIGFPE, abort), deadlock, bad environment, and
 * the kernel's map-count limit.  Each case runs a child process (this
 * program re-executed as "test-faults --child WHAT", with a clean UPVM_*
 * environment); the case checks its exit status and its report on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <upvm.h>

#include "harness.h"

extern char **environ;

/* ------------------------------------------------------------ child side */

/* Non-static so that the report can name them (the test links -rdynamic). */
void overflowing_ulp(void *arg);
void null_writer(void *arg);
void bus_toucher(void *arg);
void divider(void *arg);
void aborter(void *arg);
void blocked_forever(void *arg);
int recurse(int depth);
void bad_caller(void *arg);
void null_caller(void *arg);
void deep_overflow(void *arg);
int small_recurse(int depth);
void chain_breaker(void *arg);
void chain_middle(void *arg);

#define NOINLINE_TEST __attribute__((noinline))
static volatile int never_stop = -1; /* keeps the compiler from seeing an endless loop */
int recurse(int depth)
{
    volatile char pad[512];
    pad[0] = (char)depth;
    if (depth == never_stop)
        return 0;
    return recurse(depth + 1) + pad[0];
}

void overflowing_ulp(void *arg) { printf("%d\n", recurse(0)); }

/* The report names the faulting line: NULL_WRITE_LINE is the line of
 * the write (keep the two together). */
enum { NULL_WRITE_LINE = __LINE__ + 5 };
void null_writer(void *arg)
{
    volatile int *p = arg;
    __asm__("" : "+r"(p)); /* hide the constant from the optimiser */
    *p = 1;
}

void bus_toucher(void *arg)
{
    int fd = memfd_create("empty", 0); /* zero bytes long */
    CHECK(fd >= 0);
    volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED);
    p[0] = 1; /* past the end of the file */
}

void divider(void *arg)
{
    int zero = (int)(intptr_t)arg, q;
    /* In assembly so that UBSan cannot catch the division first. */
    __asm__ volatile("cltd; idivl %2" : "=a"(q) : "a"(7), "r"(zero) : "rdx");
    printf("%d\n", q);
}

void aborter(void *arg) { abort(); }

/* A call (not a tail jump: something follows it) through a pointer the
 * compiler cannot see: to an address nothing is mapped at, or to NULL. */
static volatile int calls_returned;
NOINLINE_TEST void bad_caller(void *arg)
{
    void (*fn)(void) = (void (*)(void))arg;
    __asm__("" : "+r"(fn));
    fn();
    calls_returned++;
}

void null_caller(void *arg)
{
    bad_caller(NULL);
    calls_returned++;
}

/* Small frames: many more than the 48 that the old unwinder collected. */
int small_recurse(int depth)
{
    volatile char pad[16];
    pad[0] = (char)depth;
    if (depth == never_stop)
        return 0;
    return small_recurse(depth + 1) + pad[0];
}

void deep_overflow(void *arg) { printf("%d\n", small_recurse(0)); }

/* Overwrite the saved frame pointer of this frame (its link to
 * chain_middle's frame) with an unmapped address, then fault. */
NOINLINE_TEST void chain_breaker(void *arg)
{
    uintptr_t *record = __builtin_frame_address(0);
    record[0] = (uintptr_t)0x1fff00000000UL;
    null_writer(arg);
    calls_returned++;
}

void chain_middle(void *arg)
{
    chain_breaker(arg);
    calls_returned++;
}

static upvm_waitq_t lonely = UPVM_WAITQ_INITIALIZER(lonely, "the queue 'lonely'");
void blocked_forever(void *arg) { (void)upvm_wait(&lonely, -1); }

static void sleep_then_say(void *arg)
{
    (void)upvm_sleep_ns(20 * 1000000);
    printf("the sleeper finished before the process ended\n");
}

static int run_in_ulp(upvm_entry_t fn, void *arg, size_t stack)
{
    upvm_attr_t attr = UPVM_ATTR_INIT;
    attr.stack_size = stack;
    CHECK(upvm_create(fn, arg, &attr) > 0);
    upvm_join_all();
    return 0; /* not reached when the ULP crashes */
}

static int map_limit_child(void)
{
    long n = 0;
    upvm_attr_t attr = UPVM_ATTR_INIT;
    attr.stack_size = UPVM_STACK_MIN;
    attr.flags = UPVM_DETACHED;
    for (;;) {
        upvm_id_t id = upvm_create(blocked_forever, NULL, &attr);
        if (id < 0) {
            printf("create failed with %d after %ld ULPs\n", id, n);
            fflush(stdout);
            _exit(id == -ENOMEM ? 0 : 1);
        }
        if (++n > 10 * 1000 * 1000)
            _exit(3);
    }
}

static int child(const char *what)
{
    if (!strcmp(what, "overflow"))
        return run_in_ulp(overflowing_ulp, NULL, 64 * 1024);
    if (!strcmp(what, "segv"))
        return run_in_ulp(null_writer, (void *)16, 0);
    if (!strcmp(what, "bus"))
        return run_in_ulp(bus_toucher, NULL, 0);
    if (!strcmp(what, "fpe"))
        return run_in_ulp(divider, NULL, 0);
    if (!strcmp(what, "abort"))
        return run_in_ulp(aborter, NULL, 0);
    if (!strcmp(what, "bad-call"))
        return run_in_ulp(bad_caller, (void *)0x1fff000010c0UL, 0);
    if (!strcmp(what, "null-call"))
        return run_in_ulp(null_caller, NULL, 0);
    if (!strcmp(what, "data-call")) {
        static char not_code[64] = {1};
        return run_in_ulp(bad_caller, not_code, 0);
    }
    if (!strcmp(what, "bad-call-no-fds")) {
        /* /proc/self/maps cannot be opened: the report does without */
        CHECK(upvm_self() > 0);
        struct rlimit few = {64, 64}; /* a short loop, whatever the limit was */
        CHECK(setrlimit(RLIMIT_NOFILE, &few) == 0);
        while (dup(2) >= 0) {
        }
        return run_in_ulp(bad_caller, (void *)0x1fff000010c0UL, 0);
    }
    if (!strcmp(what, "deep-overflow"))
        return run_in_ulp(deep_overflow, NULL, 64 * 1024);
    if (!strcmp(what, "bad-chain"))
        return run_in_ulp(chain_middle, (void *)16, 0);
    if (!strcmp(what, "main-segv")) {
        (void)upvm_self();
        null_writer((void *)8);
        return 0;
    }
    if (!strcmp(what, "deadlock")) {
        printf("this line must survive the report\n");
        CHECK(upvm_create(blocked_forever, NULL, NULL) > 0);
        CHECK(upvm_create(blocked_forever, NULL, NULL) > 0);
        upvm_join_all();
        return 0;
    }
    if (!strcmp(what, "named-segv")) {
        upvm_attr_t attr = UPVM_ATTR_INIT;
        attr.name = "worker-7";
        CHECK(upvm_create(null_writer, (void *)24, &attr) > 0);
        upvm_join_all();
        return 0;
    }
    if (!strcmp(what, "main-exit")) {
        CHECK(upvm_create(sleep_then_say, NULL, NULL) > 0);
        upvm_exit(7); /* waits for the sleeper, then ends the process */
    }
    if (!strcmp(what, "stack-env")) {
        printf("default stack %zu\n", upvm_default_stack_size());
        return 0;
    }
    if (!strcmp(what, "map-limit"))
        return map_limit_child();
    fprintf(stderr, "unknown case %s\n", what);
    return 99;
}

/* ------------------------------------------------------------ parent side */

struct outcome {
    int status; /* exit code, or 128 + signal if killed */
    char out[16384], err[16384];
};

static void slurp(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, buf + n, cap - 1 - n)) > 0 && n + (size_t)r < cap - 1)
        n += (size_t)r;
    if (r > 0)
        n += (size_t)r;
    buf[n] = '\0';
}

static void run_case(const char *what, const char *env, struct outcome *o)
{
    int out[2], err[2];
    CHECK(pipe(out) == 0 && pipe(err) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addclose(&fa, err[0]);
    char *argv[] = {"test-faults", "--child", (char *)what, NULL};
    char *envp[64];
    int n = 0;
    for (char **e = environ; *e && n < 60; e++)
        if (strncmp(*e, "UPVM_", 5) != 0)
            envp[n++] = *e;
    if (env)
        envp[n++] = (char *)env;
    envp[n] = NULL;
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, envp), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    slurp(err[0], o->err, sizeof o->err);
    slurp(out[0], o->out, sizeof o->out);
    close(out[0]);
    close(err[0]);
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    fprintf(stderr, "---- case %s: status %d, stderr:\n%s", what, o->status, o->err);
}

static struct outcome o;

TEST(stack_overflow_is_reported)
{
    run_case("overflow", NULL, &o);
    CHECK_EQ(o.status, 128 + SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (overflowing_ulp) overflowed its stack of 64 KiB");
    CHECK_STR_CONTAINS(o.err, "guard page");
    CHECK_STR_CONTAINS(o.err, "UPVM_STACK_SIZE=256K");
    CHECK_STR_CONTAINS(o.err, "recurse");
}

TEST(segv_is_reported_with_backtrace)
{
    run_case("segv", NULL, &o);
    CHECK_EQ(o.status, 128 + SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (null_writer) crashed: invalid memory access at 0x10");
    CHECK_STR_CONTAINS(o.err, "backtrace of ULP 2");
    CHECK_STR_CONTAINS(o.err, "#0 ");
    CHECK_STR_CONTAINS(o.err, "null_writer+0x");
    /* the frame's source line, from the executable's debug information */
    char at[64];
    snprintf(at, sizeof at, ") at test-faults.c:%d\n", NULL_WRITE_LINE);
    CHECK_STR_CONTAINS(o.err, at);
    CHECK(!strstr(o.err, "addr2line")); /* no command to run by hand: it was run */
}

TEST(sigbus_is_reported)
{
    run_case("bus", NULL, &o);
    CHECK_EQ(o.status, 128 + SIGBUS);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (bus_toucher) crashed: bus error");
    CHECK_STR_CONTAINS(o.err, "past the end of a mapped file");
}

TEST(sigfpe_is_reported)
{
    run_case("fpe", NULL, &o);
    CHECK_EQ(o.status, 128 + SIGFPE);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (divider) crashed: integer division by zero");
    CHECK_STR_CONTAINS(o.err, "divider+0x");
}

TEST(abort_is_reported)
{
    run_case("abort", NULL, &o);
    CHECK_EQ(o.status, 128 + SIGABRT);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (aborter) crashed: aborted");
    CHECK_STR_CONTAINS(o.err, "aborter+0x");
}

TEST(crash_in_main_names_main)
{
    run_case("main-segv", NULL, &o);
    CHECK_EQ(o.status, 128 + SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "ULP 1 (main) crashed: invalid memory access at 0x8");
}

TEST(report_uses_the_ulp_name)
{
    run_case("named-segv", NULL, &o);
    CHECK_EQ(o.status, 128 + SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (worker-7) crashed: invalid memory access at 0x18");
}

/* The report ends with its own last line: nothing killed the reporter. */
static void check_complete_report(int sig)
{
    char last[64];
    snprintf(last, sizeof last, "upvm: the node ends with exit status %d.\n", 128 + sig);
    CHECK_EQ(o.status, 128 + sig);
    size_t n = strlen(o.err), m = strlen(last);
    CHECK(n >= m && !strcmp(o.err + n - m, last));
    CHECK(!strstr(o.err, "the crash report itself failed"));
}

TEST(call_to_unmapped_address_says_where_from)
{
    run_case("bad-call", NULL, &o);
    check_complete_report(SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (bad_caller) crashed: jumped to 0x1fff000010c0, which is "
                              "not mapped: a call through a bad function pointer.");
    CHECK_STR_CONTAINS(o.err, "upvm: called from bad_caller+0x");
    CHECK_STR_CONTAINS(o.err, "#0  0x1fff000010c0 ?? (no code here)");
    CHECK_STR_CONTAINS(o.err, "#1  0x");
    CHECK_STR_CONTAINS(o.err, "[UPVM: ULP start]");
}

TEST(call_through_null_names_the_caller)
{
    run_case("null-call", NULL, &o);
    check_complete_report(SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (null_caller) crashed: jumped to 0x0 (NULL), which is "
                              "not mapped: a call through a NULL function pointer.");
    CHECK_STR_CONTAINS(o.err, "upvm: called from bad_caller+0x");
    CHECK_STR_CONTAINS(o.err, "null_caller+0x");
    CHECK_STR_CONTAINS(o.err, "#0  0x0 ?? (no code here)");
    CHECK_STR_CONTAINS(o.err, "[UPVM: ULP start]");
}

TEST(report_without_file_descriptors_left)
{
#ifdef UPVM_SANITIZE
    SKIP("under ASan, _exit runs the leak checker, which needs a file descriptor: with none "
         "left it fails its own CHECK in a loop");
#endif
    run_case("bad-call-no-fds", NULL, &o);
    check_complete_report(SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "jumped to 0x1fff000010c0, which is not mapped");
    CHECK_STR_CONTAINS(o.err, "upvm: called from bad_caller+0x");
}

TEST(call_into_data_says_not_code)
{
    run_case("data-call", NULL, &o);
    check_complete_report(SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "which is not code (no execute permission): a call through a bad "
                              "function pointer.");
    CHECK_STR_CONTAINS(o.err, "upvm: called from bad_caller+0x");
}

TEST(deep_stack_overflow_is_reported_to_its_entry)
{
    run_case("deep-overflow", NULL, &o);
    check_complete_report(SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (deep_overflow) overflowed its stack of 64 KiB");
    CHECK_STR_CONTAINS(o.err, "small_recurse+0x");
    CHECK_STR_CONTAINS(o.err, "times)");
    CHECK_STR_CONTAINS(o.err, "deep_overflow+0x");
    CHECK_STR_CONTAINS(o.err, "[UPVM: ULP start]");
}

TEST(corrupt_frame_chain_ends_the_backtrace)
{
    run_case("bad-chain", NULL, &o);
    check_complete_report(SIGSEGV);
    CHECK_STR_CONTAINS(o.err, "ULP 2 (chain_middle) crashed: invalid memory access at 0x10");
    CHECK_STR_CONTAINS(o.err, "chain_breaker+0x");
    CHECK_STR_CONTAINS(o.err, "-- the backtrace ends: the frame at 0x");
    CHECK_STR_CONTAINS(o.err, "links to 0x1fff00000000, which is not a frame further up");
}

TEST(exit_in_main_waits_then_ends_with_status)
{
    run_case("main-exit", NULL, &o);
    CHECK_EQ(o.status, 7);
    CHECK_STR_CONTAINS(o.out, "the sleeper finished before the process ended");
}

TEST(deadlock_is_reported_not_hung)
{
    run_case("deadlock", NULL, &o);
    CHECK_EQ(o.status, 70);
    CHECK_STR_CONTAINS(o.err, "deadlock");
    CHECK_STR_CONTAINS(o.err, "ULP 2 (blocked_forever) waits on the queue 'lonely'");
    CHECK_STR_CONTAINS(o.err, "ULP 3 (blocked_forever) waits on the queue 'lonely'");
    CHECK_STR_CONTAINS(o.err, "ULP 1 (main) waits on upvm_join_all");
    CHECK_STR_CONTAINS(o.out, "this line must survive the report");
}

TEST(stack_size_from_environment)
{
    run_case("stack-env", "UPVM_STACK_SIZE=64K", &o);
    CHECK_EQ(o.status, 0);
    CHECK_STR_CONTAINS(o.out, "default stack 65536");
    run_case("stack-env", "UPVM_STACK_SIZE=2M", &o);
    CHECK_STR_CONTAINS(o.out, "default stack 2097152");
    run_case("stack-env", "UPVM_STACK_SIZE=1k", &o); /* below the minimum */
    CHECK_STR_CONTAINS(o.out, "default stack 16384");
}

TEST(bad_stack_size_is_refused)
{
    run_case("stack-env", "UPVM_STACK_SIZE=lots", &o);
    CHECK_EQ(o.status, 2);
    CHECK_STR_CONTAINS(o.err, "UPVM_STACK_SIZE=lots: not a size");
    CHECK_STR_CONTAINS(o.err, "refusing to start (unset it for the default, 256K)");
    run_case("stack-env", "UPVM_STACK_SIZE=5G", &o);
    CHECK_EQ(o.status, 2);
    run_case("stack-env", "UPVM_STACK_GUARD=paper", &o);
    CHECK_EQ(o.status, 2);
    CHECK_STR_CONTAINS(o.err, "UPVM_STACK_GUARD=paper: not auto or mprotect");
}

TEST(map_limit_gives_the_sysctl)
{
    long limit = 0;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    CHECK(f && fscanf(f, "%ld", &limit) == 1);
    fclose(f);
    if (limit > 500000)
        SKIP("vm.max_map_count=%ld is too high to reach quickly", limit);
    /* Force the mprotect guards (2 mappings per stack) to reach the limit. */
    run_case("map-limit", "UPVM_STACK_GUARD=mprotect", &o);
    CHECK_EQ(o.status, 0);
    CHECK_STR_CONTAINS(o.out, "create failed with -12");
    CHECK_STR_CONTAINS(o.err, "vm.max_map_count");
    CHECK_STR_CONTAINS(o.err, "sudo sysctl -w vm.max_map_count=");
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--child"))
        return child(argv[2]);
    return harness_main(argc, argv);
}
