/*
 * fault.c - what the node says when a ULP crashes, overflows its stack or
 * when every ULP is blocked for good.
 *
 * The crash handlers run on an alternate signal stack (a ULP that overran
 * its stack has none left), name the ULP (id, entry function, stack size),
 * say what happened and what to do, print a backtrace of the ULP
 * (backtrace.c), and end the process with status 128 + signal number.  A
 * jump to an address that holds no code (a call through a bad or NULL
 * function pointer) is named as such, with the caller it came from.
 *
 * The reporter must never fault itself: every read of the crashed ULP's
 * stack and code is checked first (probe.c), and a fault inside the
 * report all the same prints one line and exits with the crash's status.
 * The report is formatted with snprintf and names code with dladdr: not
 * async-signal-safe in theory, but the process is going down anyway and
 * a readable report is worth the risk.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/crash.h"

#define ALTSTACK_SIZE ((size_t)256 * 1024)

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* ------------------------------------------------------------ output */

void crash_say(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(STDERR_FILENO, buf + off, (size_t)(n - off));
        if (w <= 0)
            break;
        off += w;
    }
}

static void format_size(char *buf, size_t len, size_t bytes)
{
    if (bytes % (1024 * 1024) == 0)
        snprintf(buf, len, "%zu MiB", bytes >> 20);
    else
        snprintf(buf, len, "%zu KiB", bytes >> 10);
}

/* ------------------------------------------------------------ reports */

static const char *describe(int sig, const siginfo_t *si, char *buf, size_t len)
{
    if (si->si_code == SI_USER || si->si_code == SI_TKILL) {
        if (sig == SIGABRT)
            return "aborted (abort() or a failed assert(); see any message above)";
        snprintf(buf, len, "killed by %s sent by process %d", sigabbrev_np(sig),
                 (int)si->si_pid);
        return buf;
    }
    switch (sig) {
    case SIGSEGV:
        snprintf(buf, len, "invalid memory access at %p (%s)", si->si_addr,
                 si->si_code == SEGV_ACCERR ? "no permission" : "address not mapped");
        return buf;
    case SIGBUS:
        snprintf(buf, len, "bus error at %p (%s)", si->si_addr,
                 si->si_code == BUS_ADRERR
                     ? "no memory behind the address, e.g. past the end of a mapped file"
                     : si->si_code == BUS_ADRALN ? "misaligned access" : "hardware error");
        return buf;
    case SIGFPE:
        return si->si_code == FPE_INTDIV   ? "integer division by zero"
               : si->si_code == FPE_INTOVF ? "integer overflow"
                                           : "floating-point exception";
    case SIGILL:
        snprintf(buf, len, "illegal instruction at %p", si->si_addr);
        return buf;
    case SIGABRT:
        return "aborted (abort() or a failed assert(); see any message above)";
    default:
        return "fatal signal";
    }
}

/* The same size as UPVM_STACK_SIZE wants it: 256K, 4M. */
static void format_size_env(char *buf, size_t len, size_t bytes)
{
    if (bytes % (1024 * 1024) == 0)
        snprintf(buf, len, "%zuM", bytes >> 20);
    else
        snprintf(buf, len, "%zuK", bytes >> 10);
}

static void report_overflow(struct ulp *u, const char *name, const siginfo_t *si,
                            const void *guard)
{
    char size[32], bigger[32];
    format_size(size, sizeof size, u->stack_size);
    format_size_env(bigger, sizeof bigger, u->stack_size * 4);
    crash_say("upvm: ULP %d (%s) overflowed its stack of %s: access at %p hit the guard "
              "page %p-%p below it.\n",
              u->id, name, size, si->si_addr, guard,
              (const void *)((const char *)guard + core_stack_guard_size()));
    if (u->stack_release) {
        /* a stack its creator provided: the main stack of a process-mode
         * task (src/proc), sized as a process's, by the stack limit unless
         * UPVM_STACK_SIZE is set; the program cannot name one itself */
        crash_say("upvm: give it a bigger stack: start the job with UPVM_STACK_SIZE=%s, or "
                  "with a stack limit of that (ulimit -s %zu), as for a process "
                  "(or move big arrays off the stack).\n", bigger, u->stack_size * 4 / 1024);
        return;
    }
    crash_say("upvm: give it a bigger stack: UPVM_STACK_SIZE=%s for every ULP, or "
              "upvm_attr_t.stack_size for this one (or move big arrays off the stack).\n",
              bigger);
}

/* A jump to an address that holds no code (si_addr is the pc itself):
 * the headline says so, and where the call came from. */
static bool is_bad_jump(int sig, const siginfo_t *si, const ucontext_t *uc)
{
    return sig == SIGSEGV && si->si_code > 0 &&
           (uintptr_t)si->si_addr == (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
}

static void report_bad_jump(struct ulp *u, const char *name, const siginfo_t *si,
                            const ucontext_t *uc)
{
    uintptr_t to = (uintptr_t)si->si_addr, ra;
    const char *how = si->si_code == SEGV_ACCERR ? "is not code (no execute permission)"
                                                 : "is not mapped";
    const char *ptr = to < 4096 ? "a NULL function pointer" : "a bad function pointer";
    crash_say("upvm: ULP %d (%s) crashed: jumped to 0x%lx%s, which %s: a call through %s.\n",
              u->id, name, (unsigned long)to, to == 0 ? " (NULL)" : "", how, ptr);
    if (crash_came_from(uc, &ra)) {
        char where[256];
        crash_locate(where, sizeof where, ra, false, false);
        crash_say("upvm: called from %s\n", where);
    } else {
        crash_say("upvm: where it came from is unknown: the top of the stack holds no "
                  "return address (a jump, not a call)\n");
    }
}

static void report_crash(struct ulp *u, int sig, const siginfo_t *si, const ucontext_t *uc)
{
    char namebuf[160], what[160]; /* "program, PVM task t80003" */
    const void *guard = NULL;
    if ((sig == SIGSEGV || sig == SIGBUS) && si->si_code > 0)
        guard = core_stack_guard_of(si->si_addr, u);
    const char *name = core_ulp_name(u, namebuf, sizeof namebuf);
    if (guard) {
        report_overflow(u, name, si, guard);
        return;
    }
    if (is_bad_jump(sig, si, uc))
        report_bad_jump(u, name, si, uc);
    else
        crash_say("upvm: ULP %d (%s) crashed%s%s%s: %s.\n", u->id, name,
                  u->state == ULP_COUPLED ? " on a kernel context, in " : "",
                  u->state == ULP_COUPLED && u->coupled_for ? u->coupled_for : "",
                  u->state == ULP_COUPLED && !u->coupled_for ? "a coupled call" : "",
                  describe(sig, si, what, sizeof what));
    crash_say("upvm: this is a bug in the program (or in UPVM); run it under gdb, or "
              "rebuild with -fsanitize=address, to find it.\n");
}

/* The signal of the crash being reported; 0 while none is. */
static volatile sig_atomic_t reporting;

/*
 * A fault while the report is being written (a bug of the reporter, or
 * memory that changed under it) must not end in a bare "Segmentation
 * fault", nor loop: one line, and the status the first crash gives.
 * SA_NODEFER lets the second fault reach this handler at all (a
 * synchronous signal that is blocked kills the process silently).
 */
static _Noreturn void fault_in_report(int sig)
{
    int status = 128 + reporting;
    char line[160];
    int n = snprintf(line, sizeof line,
                     "\nupvm: the crash report itself failed (%s); the node ends with exit "
                     "status %d.\n", sigabbrev_np(sig) ? sigabbrev_np(sig) : "signal", status);
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nothing more to try */
    }
    _exit(status);
}

static void (*crash_hook)(int sig);

void core_set_crash_hook(void (*hook)(int sig))
{
    crash_hook = hook;
}

static core_fault_filter_t fault_filter;

void core_set_fault_filter(core_fault_filter_t fn)
{
    fault_filter = fn;
}

static void crash_handler(int sig, siginfo_t *si, void *uctx)
{
    if (fault_filter && !reporting && (sig == SIGSEGV || sig == SIGBUS) && si->si_code > 0 &&
        fault_filter(sig, si, uctx))
        return;
    if (reporting)
        fault_in_report(sig);
    reporting = sig;
    if (crash_hook)
        crash_hook(sig);
    const ucontext_t *uc = uctx;
    struct ulp *u = core_self(); /* also a ULP coupled to this thread */
    char what[160];
    if (u) {
        report_crash(u, sig, si, uc);
        crash_say("upvm: backtrace of ULP %d, innermost first:\n", u->id);
    } else {
        crash_say("upvm: a thread that runs no ULP crashed: %s\n",
                  describe(sig, si, what, sizeof what));
        crash_say("upvm: backtrace, innermost first:\n");
    }
    crash_backtrace(uc, u);
    crash_say("upvm: the node ends with exit status %d.\n", 128 + sig);
    _exit(128 + sig);
}

int core_fault_thread_init(void)
{
    stack_t ss = {.ss_size = ALTSTACK_SIZE, .ss_flags = 0};
    ss.ss_sp = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ss.ss_sp == MAP_FAILED)
        return -errno;
    if (sigaltstack(&ss, NULL) != 0) {
        int rc = -errno;
        munmap(ss.ss_sp, ALTSTACK_SIZE);
        return rc;
    }
    return 0;
}

int core_fault_init(void)
{
    int rc = core_fault_thread_init();
    if (rc != 0)
        return rc;

    /* No SA_RESETHAND: a fault inside the report must come back here
     * (fault_in_report), not to the default action. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
        if (sigaction(crash_signals[i], &sa, NULL) != 0)
            return -errno;
    return 0;
}

/* ------------------------------------------------------------ deadlock */

struct deadlock_walk {
    int shown, total;
};

static void describe_blocked(struct ulp *u, void *ctx)
{
    struct deadlock_walk *w = ctx;
    if (u->state == ULP_DEAD)
        return;
    if (++w->total > 20)
        return;
    w->shown++;
    char namebuf[160];
    if (u->state == ULP_COUPLED) {
        crash_say("upvm:     ULP %d (%s) is in %s on a kernel context\n", u->id,
                  core_ulp_name(u, namebuf, sizeof namebuf),
                  u->coupled_for ? u->coupled_for : "a blocking call");
        return;
    }
    crash_say("upvm:     ULP %d (%s) waits on %s\n", u->id,
              core_ulp_name(u, namebuf, sizeof namebuf),
              u->waitq && u->waitq->name ? u->waitq->name : "a wait queue");
}

void core_report_deadlock(void)
{
    crash_say("upvm: deadlock: every ULP of this node is blocked and nothing can wake "
              "one (no timer, no message can arrive):\n");
    struct deadlock_walk w = {0, 0};
    core_for_each_ulp(describe_blocked, &w);
    if (w.total > w.shown)
        crash_say("upvm:     ... and %d more\n", w.total - w.shown);
    crash_say("upvm: check the program's receives, barriers and joins; the node ends with "
              "exit status 70.\n");
    fflush(NULL); /* keep what the program printed */
    _exit(70);
}
