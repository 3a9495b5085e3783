/*
 * fault.c - what the node says when a ULP crashes, overflows its stack or
 * when every ULP is blocked for good.
 *
 * The crash handlers run on an alternate signal stack (a ULP that overran
 * its stack has none left), name the ULP (id, entry function, stack size),
 * say what happened and what to do, print a backtrace of the ULP, and end
 * the process with status 128 + signal number.  The report is formatted
 * with snprintf: not async-signal-safe in theory, but the process is going
 * down anyway and a readable report is worth the risk.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/core.h"

#define ALTSTACK_SIZE ((size_t)256 * 1024)
#define MAX_FRAMES 48

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* ------------------------------------------------------------ output */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
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

/* ------------------------------------------------------------ backtrace */

/* Frames inside libupvm have hidden names: say what they are instead. */
static bool in_runtime(const Dl_info *info)
{
    Dl_info self;
    return dladdr((void *)core_fault_init, &self) && self.dli_fbase == info->dli_fbase;
}

/* pc is where frame i resumes; for every frame but the innermost that is
 * just past a call, which may be past the end of the calling function (a
 * call to a noreturn function is often its last instruction): look up
 * pc - 1 instead, as debuggers do. */
static void print_frame(int i, void *pc, int repeats)
{
    char rep[48] = "";
    if (repeats > 1)
        snprintf(rep, sizeof rep, "  (this frame %d times)", repeats);
    Dl_info info;
    void *lookup = i == 0 ? pc : (char *)pc - 1;
    if (!dladdr(lookup, &info) || !info.dli_fname) {
        say("    #%-2d %p ??%s\n", i, pc, rep);
        return;
    }
    const char *file = strrchr(info.dli_fname, '/');
    file = file ? file + 1 : info.dli_fname;
    unsigned long off = (unsigned long)((uintptr_t)pc - (uintptr_t)info.dli_fbase);
    if (info.dli_sname)
        say("    #%-2d %p %s+0x%lx (%s+0x%lx)%s\n", i, pc, info.dli_sname,
            (unsigned long)((uintptr_t)pc - (uintptr_t)info.dli_saddr), file, off, rep);
    else if (in_runtime(&info))
        say("    #%-2d %p [UPVM: ULP start] (%s+0x%lx)%s\n", i, pc, file, off, rep);
    else
        say("    #%-2d %p ?? (%s+0x%lx)%s\n", i, pc, file, off, rep);
}

/* Print the frames from the interrupted instruction outwards: the frames of
 * this handler and the kernel's signal trampoline are skipped, and a run of
 * identical frames (deep recursion) is printed once with its count. */
static void print_backtrace(const ucontext_t *uc)
{
    void *frames[MAX_FRAMES];
    int n = backtrace(frames, MAX_FRAMES);
    void *fault_pc = uc ? (void *)uc->uc_mcontext.gregs[REG_RIP] : NULL;
    int first = 0;
    for (int i = 0; i < n; i++)
        if (frames[i] == fault_pc) {
            first = i;
            break;
        }
    for (int i = first; i < n;) {
        int same = 1;
        while (i + same < n && frames[i + same] == frames[i])
            same++;
        print_frame(i - first, frames[i], same);
        i += same;
    }
    if (n == MAX_FRAMES)
        say("    ... (outer frames not shown)\n");
    say("    (addr2line -f -e <file> <offset> gives the source line of a frame)\n");
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
    say("upvm: ULP %d (%s) overflowed its stack of %s: access at %p hit the guard "
        "page %p-%p below it.\n",
        u->id, name, size, si->si_addr, guard,
        (const void *)((const char *)guard + core_stack_guard_size()));
    if (u->stack_release) {
        /* a stack its creator provided: the main stack of a process-mode
         * task (src/proc), sized as a process's, by the stack limit unless
         * UPVM_STACK_SIZE is set; the program cannot name one itself */
        say("upvm: give it a bigger stack: start the job with UPVM_STACK_SIZE=%s, or "
            "with a stack limit of that (ulimit -s %zu), as for a process "
            "(or move big arrays off the stack).\n", bigger, u->stack_size * 4 / 1024);
        return;
    }
    say("upvm: give it a bigger stack: UPVM_STACK_SIZE=%s for every ULP, or "
        "upvm_attr_t.stack_size for this one (or move big arrays off the stack).\n",
        bigger);
}

static void crash_handler(int sig, siginfo_t *si, void *uctx)
{
    char namebuf[160], what[160]; /* "program, PVM task t80003" */
    struct ulp *u = core_on_sched_thread ? core_sched.current : NULL;
    const void *guard = NULL;
    if (u && (sig == SIGSEGV || sig == SIGBUS) && si->si_code > 0)
        guard = core_stack_guard_of(si->si_addr, u);

    if (!u) {
        say("upvm: a thread that runs no ULP crashed: %s\n", describe(sig, si, what, sizeof what));
    } else if (guard) {
        report_overflow(u, core_ulp_name(u, namebuf, sizeof namebuf), si, guard);
    } else {
        const char *name = core_ulp_name(u, namebuf, sizeof namebuf);
        say("upvm: ULP %d (%s) crashed: %s.\n", u->id, name,
            describe(sig, si, what, sizeof what));
        say("upvm: this is a bug in the program (or in UPVM); run it under gdb, or "
            "rebuild with -fsanitize=address, to find it.\n");
    }
    if (u)
        say("upvm: backtrace of ULP %d, innermost first:\n", u->id);
    else
        say("upvm: backtrace, innermost first:\n");
    print_backtrace(uctx);
    say("upvm: the node ends with exit status %d.\n", 128 + sig);
    _exit(128 + sig);
}

int core_fault_init(void)
{
    stack_t ss = {.ss_size = ALTSTACK_SIZE, .ss_flags = 0};
    ss.ss_sp = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ss.ss_sp == MAP_FAILED)
        return -errno;
    if (sigaltstack(&ss, NULL) != 0)
        return -errno;
    /* backtrace() loads libgcc's unwinder on first use: do it now, not in
     * the middle of a crash. */
    void *warm[2];
    (void)backtrace(warm, 2);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
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
    say("upvm:     ULP %d (%s) waits on %s\n", u->id, core_ulp_name(u, namebuf, sizeof namebuf),
        u->waitq && u->waitq->name ? u->waitq->name : "a wait queue");
}

void core_report_deadlock(void)
{
    say("upvm: deadlock: every ULP of this node is blocked and nothing can wake "
        "one (no timer, no message can arrive):\n");
    struct deadlock_walk w = {0, 0};
    core_for_each_ulp(describe_blocked, &w);
    if (w.total > w.shown)
        say("upvm:     ... and %d more\n", w.total - w.shown);
    say("upvm: check the program's receives, barriers and joins; the node ends with "
        "exit status 70.\n");
    fflush(NULL); /* keep what the program printed */
    _exit(70);
}
