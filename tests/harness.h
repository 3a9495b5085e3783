/*
 * harness.h - the one runner of UPVM's C tests.
 *
 *     #include "harness.h"
 *
 *     static void setup(void) { setenv("UPVM_SLOTS", "16", 1); }
 *     HARNESS_BEFORE(setup)              (optional: runs before each case)
 *
 *     TEST(join_returns_exit_status) { CHECK_EQ(upvm_join(id, &st), 0); }
 *     TEST_LIMIT(ten_thousand_ulps, 300) { ... }  (a limit of its own, s)
 *
 *     HARNESS_MAIN()
 *
 * The executable then
 *   (no args)      runs every case in the order of the file, each in a
 *                  child process of its own, forked before anything else
 *                  of the case, with a time limit; prints TAP ("ok 3 -
 *                  name", "not ok 4 - name", "# SKIP" for SKIP()) and a
 *                  line on stderr saying why a case failed;
 *   --list         prints the case names;
 *   NAME...        runs just those (still each in its child);
 *   --inproc NAME  runs in this process, for a debugger (several names run
 *                  one after the other in the same process, sharing state).
 * It exits 0 when no case failed, 1 when one did, 2 for a usage error.
 *
 * Why a child per case: libupvm keeps process-wide state (the scheduler,
 * the PVM task tables, the node transport; a first PVM call may even make
 * the process the launcher of a job).  A case started in a fresh process
 * sees none of the cases before it, and a crash or hang fails it alone.
 * The runner itself never touches the runtime.  A case runs in a process
 * group of its own: at its time limit, and when it has ended, whatever it
 * forked and left behind is killed with it.
 *
 * Suite hooks run in the child, around each case: HARNESS_BEFORE(fn) (the
 * environment a case's runtime must start with, a fixture), and
 * HARNESS_AFTER(fn) (a check every case must pass, such as msgtest.h's
 * leak check); harness_case() names the case running.  Several of each run
 * in the order registered (the after hooks in reverse).  HARNESS_LIMIT(s)
 * sets the file's default time limit (60 s otherwise); under the
 * sanitizers every limit is HARNESS_SANITIZE_FACTOR times longer, and
 * HARNESS_TIMEOUT=seconds in the environment replaces them all (0: none).
 *
 * Assertions (CHECK, CHECK_EQ, ...): check.h.  One test file per
 * executable: the registry is static to the file that includes this.
 */
#ifndef UPVM_TESTS_HARNESS_H
#define UPVM_TESTS_HARNESS_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define HARNESS_MAX_CASES 256
#define HARNESS_MAX_HOOKS 4
#define HARNESS_DEFAULT_LIMIT 60 /* seconds per case */
#ifdef UPVM_SANITIZE
#define HARNESS_SANITIZE_FACTOR 4 /* ASan and UBSan slow a case down 2-4x */
#else
#define HARNESS_SANITIZE_FACTOR 1
#endif

struct harness_case {
    const char *name;
    void (*fn)(void);
    int line;  /* cases run in the order of the file */
    int limit; /* seconds; 0: the suite's */
    int order; /* of registration: the order of two on one line */
};

typedef void (*harness_hook_t)(void);

struct harness {
    struct harness_case cases[HARNESS_MAX_CASES];
    int ncases;
    harness_hook_t before[HARNESS_MAX_HOOKS], after[HARNESS_MAX_HOOKS];
    int nbefore, nafter;
    int limit;
    const char *current;
};
static struct harness harness = {.limit = HARNESS_DEFAULT_LIMIT};

static inline void harness_add_case(const char *name, void (*fn)(void), int line,
                                    int limit)
{
    if (harness.ncases == HARNESS_MAX_CASES) {
        fprintf(stderr, "harness: more than %d cases\n", HARNESS_MAX_CASES);
        exit(2);
    }
    harness.cases[harness.ncases] = (struct harness_case){name, fn, line, limit, harness.ncases};
    harness.ncases++;
}

static inline void harness_add_hook(harness_hook_t *list, int *n, harness_hook_t fn)
{
    if (*n == HARNESS_MAX_HOOKS) {
        fprintf(stderr, "harness: more than %d hooks of a kind\n", HARNESS_MAX_HOOKS);
        exit(2);
    }
    list[(*n)++] = fn;
}

/* The name of the case running (in a hook, the one it runs around). */
static inline const char *harness_case(void) { return harness.current; }

#define HARNESS_CAT_(a, b) a##b
#define HARNESS_CAT(a, b) HARNESS_CAT_(a, b)

#define TEST_LIMIT(name, seconds)                                              \
    static void test_##name(void);                                             \
    __attribute__((constructor)) static void harness_reg_##name(void)          \
    {                                                                          \
        harness_add_case(#name, test_##name, __LINE__, (seconds));            \
    }                                                                          \
    static void test_##name(void)

#define TEST(name) TEST_LIMIT(name, 0)

/* (__COUNTER__: a header's hook and a file's may share a line number) */
#define HARNESS_HOOK_(list, n, fn, id)                                         \
    __attribute__((constructor)) static void id(void)                          \
    {                                                                          \
        harness_add_hook(harness.list, &harness.n, (fn));                      \
    }
#define HARNESS_BEFORE(fn)                                                     \
    HARNESS_HOOK_(before, nbefore, fn, HARNESS_CAT(harness_hook_, __COUNTER__))
#define HARNESS_AFTER(fn)                                                      \
    HARNESS_HOOK_(after, nafter, fn, HARNESS_CAT(harness_hook_, __COUNTER__))

#define HARNESS_LIMIT(seconds)                                                 \
    __attribute__((constructor)) static void harness_set_limit(void)           \
    {                                                                          \
        harness.limit = (seconds);                                             \
    }

/* The case with its hooks, in this process. */
static inline void harness_run_here(const struct harness_case *c)
{
    harness.current = c->name;
    for (int i = 0; i < harness.nbefore; i++)
        harness.before[i]();
    c->fn();
    for (int i = harness.nafter - 1; i >= 0; i--)
        harness.after[i]();
}

/* The time limit of c in seconds; 0 for none. */
static inline int harness_limit(const struct harness_case *c)
{
    const char *env = getenv("HARNESS_TIMEOUT");
    if (env && *env)
        return atoi(env);
    return (c->limit ? c->limit : harness.limit) * HARNESS_SANITIZE_FACTOR;
}

/* The pid of the case running in a child, for the signal handler below. */
static volatile pid_t harness_child;

/* Interrupted or ended by ctest: the case's process group goes too (it is
 * not in ours, so it would not get a terminal's Ctrl-C), then this one. */
static inline void harness_on_signal(int sig)
{
    if (harness_child > 0)
        kill(-harness_child, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Wait up to limit seconds (0: for ever) for the child; SIGCHLD is
 * blocked.  Returns its wait status, or -1 at the limit. */
static inline int harness_wait(pid_t pid, int limit)
{
    struct timespec end, now;
    sigset_t chld;
    int status;

    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += limit;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR) {
            perror("harness: waitpid");
            exit(2);
        }
        if (limit == 0) {
            (void)sigwaitinfo(&chld, NULL);
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long left = (end.tv_sec - now.tv_sec) * 1000000000LL + (end.tv_nsec - now.tv_nsec);
        if (left <= 0)
            return -1;
        struct timespec t = {(time_t)(left / 1000000000LL), (long)(left % 1000000000LL)};
        (void)sigtimedwait(&chld, NULL, &t);
    }
}

/* Run c in a child (a process group of its own); 0 passed, 1 failed,
 * CHECK_SKIP_STATUS skipped. */
static inline int harness_fork(const struct harness_case *c)
{
    sigset_t chld, old;
    int limit = harness_limit(c), status;

    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("harness: fork");
        exit(2);
    }
    if (pid == 0) {
        setpgid(0, 0);
        sigprocmask(SIG_SETMASK, &old, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        harness_run_here(c);
        exit(0);
    }
    setpgid(pid, pid); /* also here: no race with the kill below */
    harness_child = pid;
    status = harness_wait(pid, limit);
    if (status == -1) {
        kill(-pid, SIGKILL);
        (void)waitpid(pid, &status, 0);
        fprintf(stderr, "harness: %s: killed at its time limit (%d s)\n", c->name, limit);
        status = -1;
    }
    kill(-pid, SIGKILL); /* whatever it left behind */
    harness_child = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (status == -1)
        return 1;
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 ||
                              WEXITSTATUS(status) == CHECK_SKIP_STATUS))
        return WEXITSTATUS(status);
    if (WIFEXITED(status))
        fprintf(stderr, "harness: %s: exit status %d\n", c->name, WEXITSTATUS(status));
    else
        fprintf(stderr, "harness: %s: killed by signal %d (%s)\n", c->name,
                WTERMSIG(status), strsignal(WTERMSIG(status)));
    return 1;
}

static inline int harness_by_line(const void *a, const void *b)
{
    const struct harness_case *x = a, *y = b;
    return x->line != y->line ? x->line - y->line : x->order - y->order;
}

static inline int harness_selected(const struct harness_case *c, int argc, char **argv,
                                   int first)
{
    if (argc <= first)
        return 1;
    for (int a = first; a < argc; a++)
        if (!strcmp(argv[a], c->name))
            return 1;
    return 0;
}

/* Every name given must be a case: a typo must not pass as "nothing run". */
static inline int harness_check_names(int argc, char **argv, int first)
{
    for (int a = first; a < argc; a++) {
        int found = 0;
        for (int i = 0; i < harness.ncases && !found; i++)
            found = !strcmp(argv[a], harness.cases[i].name);
        if (!found) {
            fprintf(stderr, "harness: no case '%s' (--list)\n", argv[a]);
            return 0;
        }
    }
    return 1;
}

static inline int harness_main(int argc, char **argv)
{
    int inproc = 0, first = 1, failed = 0, planned = 0;

    qsort(harness.cases, (size_t)harness.ncases, sizeof harness.cases[0], harness_by_line);
    if (argc > 1 && !strcmp(argv[1], "--list")) {
        for (int i = 0; i < harness.ncases; i++)
            printf("%s\n", harness.cases[i].name);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--inproc")) {
        inproc = 1;
        first = 2;
    }
    if (!harness_check_names(argc, argv, first))
        return 2;
    signal(SIGCHLD, SIG_DFL);
    signal(SIGINT, harness_on_signal);
    signal(SIGTERM, harness_on_signal);
    signal(SIGHUP, harness_on_signal);
    for (int i = 0; i < harness.ncases; i++) {
        const struct harness_case *c = &harness.cases[i];
        if (!harness_selected(c, argc, argv, first))
            continue;
        planned++;
        int r;
        if (inproc) {
            harness_run_here(c); /* exits on failure */
            r = 0;
        } else {
            r = harness_fork(c);
        }
        printf("%sok %d - %s%s\n", r == 1 ? "not " : "", planned, c->name,
               r == CHECK_SKIP_STATUS ? " # SKIP" : "");
        fflush(stdout);
        failed += r == 1;
    }
    printf("1..%d\n", planned);
    if (planned == 0) {
        fprintf(stderr, "harness: no cases\n");
        return 2;
    }
    if (failed)
        fprintf(stderr, "harness: %d of %d cases failed\n", failed, planned);
    return failed ? 1 : 0;
}

#define HARNESS_MAIN()                                                         \
    int main(int argc, char **argv) { return harness_main(argc, argv); }

#endif /* UPVM_TESTS_HARNESS_H */
