/*
 * bench_core.c - the ULP core against the operating system, in one run.
 *
 *   ULP side: yield among 2 / 64 / 1000 ULPs, yield-to hand-off ping-pong,
 *             wait/wake hand-off ping-pong, creation cost and resident
 *             memory per idle ULP at 1,000 / 100,000 / 1,000,000 ULPs.
 *   OS side:  sched_yield ping-pong of 2 pthreads on one core, pipe
 *             ping-pong of 2 processes (Ousterhout; half the round trip),
 *             futex hand-off of 2 threads on one core, pthread create+join.
 *   Both:     a null procedure call, so costs can be given in null calls
 *             (UPVM 1994: ULP switch = 7.3 null calls, UNIX switch = 300).
 *
 * Every row is the median of REPS timed repetitions (p10 and p90 shown).
 * Run it pinned to one core: bench/run.sh does (taskset, nice).
 *
 * Usage: bench_core [-r reps] [-q] [-m max_ulps]
 *   -q  quick: fewer iterations, creation only up to 100,000 ULPs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#include "arch/arch.h" /* ctx.S is compiled into this benchmark */
#include "bench_stats.h"

static int reps = 7;
static int quick;
static long max_ulps = 1000000;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

_Noreturn static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* ------------------------------------------------------------ statistics */

/* struct stats, summarize(): bench_stats.h */

/* Run fn(arg) reps times; each returns one sample. */
static struct stats measure(double (*fn)(long), long arg)
{
    double v[64];
    int n = reps < 64 ? reps : 64;
    fn(arg); /* warm-up */
    for (int i = 0; i < n; i++)
        v[i] = fn(arg);
    return summarize(v, n);
}

/* ------------------------------------------------------------ null call */

static void __attribute__((noinline)) null_proc(void) { __asm__ volatile(""); }
static void (*volatile null_ptr)(void) = null_proc;

static double null_call_ns(long iters)
{
    void (*f)(void) = null_ptr;
    double t0 = now_ns();
    for (long i = 0; i < iters; i++)
        f();
    return (now_ns() - t0) / (double)iters;
}

/* ------------------------------------------------------------ bare switch */

/* The register switch alone, no scheduler: two contexts running the same
 * function switch to each other (as two ULPs of one program do). */
static struct arch_ctx bare_ctx[2];
static long bare_iters;

static void __attribute__((noinline)) bare_loop(int me)
{
    for (long i = 0; i < bare_iters; i++)
        arch_ctx_switch(&bare_ctx[me], &bare_ctx[1 - me], NULL);
}

static void bare_entry(void *arg)
{
    bare_loop(1);
    /* The caller's last switch came here: resume it; this context is then
     * abandoned (the next measurement starts a fresh one). */
    arch_ctx_switch(&bare_ctx[1], &bare_ctx[0], NULL);
}

static double bare_switch_ns(long iters)
{
    static char *stack;
    if (!stack && !(stack = aligned_alloc(64, 1 << 16)))
        die("aligned_alloc");
    bare_iters = iters;
    /* The caller becomes context 0 and context 1 starts on the fresh stack;
     * both then run bare_loop. */
    double t0 = now_ns();
    arch_ctx_start(&bare_ctx[0], stack + (1 << 16), bare_entry, NULL);
    bare_loop(0);
    double t = now_ns() - t0;
    return t / (2.0 * (double)iters);
}

/* ------------------------------------------------------------ ULP yield */

static long yield_iters;
static void yielder(int ordinal, void *arg)
{
    for (long i = 0; i < yield_iters; i++)
        upvm_yield();
}

static double ulp_yield_ns(long nulps)
{
    yield_iters = (quick ? 200000 : 2000000) / nulps;
    if (yield_iters < 20)
        yield_iters = 20;
    if (upvm_spawn_func(yielder, NULL, (int)nulps, NULL, NULL) != nulps)
        die("upvm_spawn_func");
    upvm_yield(); /* every ULP has started: stacks touched, caches warm */
    double t0 = now_ns();
    upvm_join_all();
    return (now_ns() - t0) / ((double)nulps * (double)yield_iters);
}

/* ------------------------------------------------------------ hand-off */

/* Two instances of one function hand the CPU to each other (SPMD style).
 * They time themselves: a yield_to chain never returns to main until it is
 * over. */
static upvm_id_t pp_ids[2];
static long pp_iters;
static double pp_start, pp_end;

static void handoff_player(int me, void *arg)
{
    if (me == 0)
        pp_start = now_ns();
    upvm_id_t other = pp_ids[1 - me];
    for (long i = 0; i < pp_iters; i++)
        upvm_yield_to(other);
    if (me == 1)
        pp_end = now_ns();
}

static double ulp_yield_to_ns(long iters)
{
    pp_iters = iters;
    if (upvm_spawn_func(handoff_player, NULL, 2, pp_ids, NULL) != 2)
        die("upvm_spawn_func");
    upvm_join_all();
    return (pp_end - pp_start) / (2.0 * (double)iters);
}

/* Wait/wake with hand-off, the way a receive and a send meet: each player
 * waits for its turn, passes the turn on and wakes the other, which runs at
 * once if it was waiting. */
static upvm_waitq_t turnq[2] = {UPVM_WAITQ_INITIALIZER(turnq[0], "turn 0"),
                                UPVM_WAITQ_INITIALIZER(turnq[1], "turn 1")};
static int whose_turn;

static void player(void *arg)
{
    int me = (int)(intptr_t)arg;
    if (me == 0)
        pp_start = now_ns();
    for (long i = 0; i < pp_iters; i++) {
        while (whose_turn != me)
            upvm_wait(&turnq[me], -1);
        whose_turn = 1 - me;
        upvm_wake_one_handoff(&turnq[1 - me]);
    }
    if (me == 1)
        pp_end = now_ns();
}

static double ulp_wait_wake_ns(long iters)
{
    pp_iters = iters;
    whose_turn = 0;
    if (upvm_create(player, (void *)0, NULL) < 0 || upvm_create(player, (void *)1, NULL) < 0)
        die("upvm_create");
    upvm_join_all();
    return (pp_end - pp_start) / (2.0 * (double)iters);
}

/* ------------------------------------------------------------ creation, RSS */

struct create_result {
    double create_ns, total_ns, rss_kib;
};

static long rss_pages(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size, resident = 0;
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
        die("/proc/self/statm");
    fclose(f);
    return resident;
}

static void yield_once(int ordinal, void *arg) { upvm_yield(); }
static void do_nothing(int ordinal, void *arg) {}

/* Steady state: create, run and reclaim 1000 ULPs whose stacks come from
 * the cache (the previous round's). */
static double ulp_create_cached_ns(long n)
{
    upvm_attr_t attr = UPVM_ATTR_INIT;
    attr.flags = UPVM_DETACHED;
    double t0 = now_ns();
    if (upvm_spawn_func(do_nothing, NULL, (int)n, NULL, &attr) != n)
        die("upvm_spawn_func");
    upvm_join_all();
    return (now_ns() - t0) / (double)n;
}

/* Runs in a freshly executed process (bench_core -C n): nothing cached from
 * earlier measurements.  Prints "create_ns total_ns rss_kib" per ULP. */
static int create_child_main(long n)
{
    upvm_attr_t attr = UPVM_ATTR_INIT;
    attr.flags = UPVM_DETACHED;
    (void)upvm_self(); /* start the node before the baseline RSS */
    long before = rss_pages();
    double t0 = now_ns();
    int rc = upvm_spawn_func(yield_once, NULL, (int)n, NULL, &attr);
    double t1 = now_ns();
    if (rc != n) {
        fprintf(stderr, "upvm_spawn_func(%ld): %s\n", n, strerror(-rc));
        return 1;
    }
    upvm_yield(); /* each ULP runs up to its yield: all idle now */
    long idle = rss_pages();
    upvm_join_all();
    double t2 = now_ns();
    printf("%f %f %f\n", (t1 - t0) / (double)n, (t2 - t0) / (double)n,
           (double)(idle - before) * (double)sysconf(_SC_PAGESIZE) / 1024.0 / (double)n);
    return 0;
}

static struct create_result create_in_child(long n)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/proc/%d/exe -C %ld", (int)getpid(), n);
    FILE *p = popen(cmd, "r");
    if (!p)
        die("popen");
    struct create_result r;
    int got = fscanf(p, "%lf %lf %lf", &r.create_ns, &r.total_ns, &r.rss_kib);
    if (pclose(p) != 0 || got != 3) {
        fprintf(stderr, "creation benchmark with %ld ULPs failed\n", n);
        exit(1);
    }
    return r;
}

/* ------------------------------------------------------------ OS peers */

static void pin_to_cpu0(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    if (sched_setaffinity(0, sizeof set, &set))
        die("sched_setaffinity");
}

static long os_iters;
static atomic_int go;

static void *sched_yield_loop(void *arg)
{
    pin_to_cpu0();
    while (!atomic_load(&go))
        sched_yield();
    for (long i = 0; i < os_iters; i++)
        sched_yield();
    return NULL;
}

static double sched_yield_ns(long iters)
{
    pthread_t a, b;
    os_iters = iters;
    atomic_store(&go, 0);
    if (pthread_create(&a, NULL, sched_yield_loop, NULL) ||
        pthread_create(&b, NULL, sched_yield_loop, NULL))
        die("pthread_create");
    usleep(1000);
    double t0 = now_ns();
    atomic_store(&go, 1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return (now_ns() - t0) / (2.0 * (double)iters);
}

static double pipe_pingpong_ns(long iters)
{
    int ab[2], ba[2];
    if (pipe(ab) || pipe(ba))
        die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    char c = 0;
    if (pid == 0) {
        pin_to_cpu0();
        for (long i = 0; i < iters + 1; i++)
            if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
                _exit(1);
        _exit(0);
    }
    pin_to_cpu0();
    if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) /* warm-up */
        die("pipe");
    double t0 = now_ns();
    for (long i = 0; i < iters; i++)
        if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
            die("pipe");
    double t = now_ns() - t0;
    waitpid(pid, NULL, 0);
    close(ab[0]); close(ab[1]); close(ba[0]); close(ba[1]);
    return t / (2.0 * (double)iters); /* half the round trip */
}

static _Atomic int turn;
static void futex_wait(_Atomic int *addr, int val)
{
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}
static void futex_wake(_Atomic int *addr)
{
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *futex_player(void *arg)
{
    int me = (int)(intptr_t)arg;
    pin_to_cpu0();
    for (long i = 0; i < os_iters; i++) {
        int t;
        while ((t = atomic_load(&turn)) != me)
            futex_wait(&turn, t);
        atomic_store(&turn, 1 - me);
        futex_wake(&turn);
    }
    return NULL;
}

static double futex_handoff_ns(long iters)
{
    pthread_t a, b;
    os_iters = iters;
    atomic_store(&turn, 0);
    double t0 = now_ns();
    if (pthread_create(&a, NULL, futex_player, (void *)0) ||
        pthread_create(&b, NULL, futex_player, (void *)1))
        die("pthread_create");
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return (now_ns() - t0) / (2.0 * (double)iters);
}

static void *empty_thread(void *arg) { return arg; }

static double pthread_create_ns(long n)
{
    pthread_t t;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        if (pthread_create(&t, NULL, empty_thread, NULL))
            die("pthread_create");
        pthread_join(t, NULL);
    }
    return (now_ns() - t0) / (double)n;
}

/* ------------------------------------------------------------ report */

static double null_ns;

static void row(const char *name, struct stats s, const char *unit)
{
    printf("| %-44s | %10.1f %-3s | %8.1f | %8.1f | %8.1f |\n", name, s.median, unit, s.p10,
           s.p90, s.median / null_ns);
}

static void ratio(const char *what, double peer, double ulp)
{
    printf("  %-60s %8.1fx\n", what, peer / ulp);
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "r:qm:C:")) != -1) {
        switch (opt) {
        case 'C': return create_child_main(atol(optarg));
        case 'r': reps = atoi(optarg); break;
        case 'q': quick = 1; break;
        case 'm': max_ulps = atol(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-r reps] [-q] [-m max_ulps]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 3)
        reps = 3;
    long sw = quick ? 200000 : 2000000;
    long os = quick ? 20000 : 100000;

    printf("UPVM core benchmark: median of %d runs (p10, p90); cpu %d; pid %d\n\n", reps,
           sched_getcpu(), (int)getpid());
    printf("| %-44s | %14s | %8s | %8s | %8s |\n", "operation", "median", "p10", "p90",
           "null calls");
    printf("|%.46s|%.16s|%.10s|%.10s|%.10s|\n", "----------------------------------------------",
           "----------------", "----------", "----------", "----------");

    struct stats null = measure(null_call_ns, quick ? 10000000 : 100000000);
    null_ns = null.median;
    row("null procedure call", null, "ns");

    struct stats bare = measure(bare_switch_ns, sw);
    row("register switch alone (arch_ctx_switch)", bare, "ns");
    struct stats y2 = measure(ulp_yield_ns, 2);
    row("ULP yield, 2 ULPs (per switch)", y2, "ns");
    struct stats y64 = measure(ulp_yield_ns, 64);
    row("ULP yield, 64 ULPs", y64, "ns");
    struct stats y1000 = measure(ulp_yield_ns, 1000);
    row("ULP yield, 1000 ULPs", y1000, "ns");
    struct stats yto = measure(ulp_yield_to_ns, sw);
    row("ULP hand-off ping-pong, yield_to (per switch)", yto, "ns");
    struct stats ww = measure(ulp_wait_wake_ns, sw / 2);
    row("ULP wait + hand-off wake ping-pong (per hop)", ww, "ns");

    struct stats cc = measure(ulp_create_cached_ns, 1000);
    row("ULP create + run + exit, cached stack", cc, "ns");

    struct stats sy = measure(sched_yield_ns, os);
    row("OS: sched_yield ping-pong, 2 threads, 1 core", sy, "ns");
    struct stats fx = measure(futex_handoff_ns, os / 2);
    row("OS: futex hand-off, 2 threads, 1 core", fx, "ns");
    struct stats pp = measure(pipe_pingpong_ns, os / 2);
    row("OS: pipe ping-pong, 2 processes (half RTT)", pp, "ns");
    struct stats pc = measure(pthread_create_ns, quick ? 200 : 2000);
    row("OS: pthread create + join", pc, "ns");

    printf("\nRatios (OS peer / UPVM, same run):\n");
    ratio("sched_yield ping-pong / ULP yield (2 ULPs)", sy.median, y2.median);
    ratio("futex hand-off / ULP yield_to hand-off", fx.median, yto.median);
    ratio("pipe ping-pong half RTT / ULP yield (2 ULPs)", pp.median, y2.median);
    ratio("pipe ping-pong half RTT / ULP wait+wake hop", pp.median, ww.median);
    ratio("pthread create+join / ULP create+run+exit", pc.median, cc.median);

    printf("\nCreation and memory (thread-mode ULPs, detached, each yields once and "
           "exits;\n%zu KiB stacks; one freshly started process per count, so every stack "
           "is new:\nits guard page and first page fault are paid; median of %d):\n\n",
           upvm_default_stack_size() / 1024, reps > 3 ? 3 : reps);
    printf("| %10s | %16s | %22s | %22s |\n", "ULPs", "create (ns/ULP)",
           "RSS per idle ULP (KiB)", "lifetime total (ns/ULP)");
    printf("|-----------:|-----------------:|-----------------------:|-----------------------:|\n");
    long counts[] = {1000, 100000, 1000000};
    for (int c = 0; c < 3; c++) {
        long n = counts[c];
        if (n > max_ulps || (quick && n > 100000))
            continue;
        int k = reps > 3 ? 3 : reps;
        double cr[3], rs[3], tt[3];
        for (int i = 0; i < k; i++) {
            struct create_result r = create_in_child(n);
            cr[i] = r.create_ns;
            rs[i] = r.rss_kib;
            tt[i] = r.total_ns;
        }
        printf("| %10ld | %16.1f | %22.2f | %22.1f |\n", n, summarize(cr, k).median,
               summarize(rs, k).median, summarize(tt, k).median);
        fflush(stdout);
    }
    return 0;
}
