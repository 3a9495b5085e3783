/*
 * interpose.c - what a process-mode program gets instead of libc's
 * process-wide functions and variables (the loader binds these names here
 * before looking in the node's libraries; proc_resolve is the table).
 *
 *   malloc family        the ULP's own heap (inside its slot).  A pointer
 *                        that libc allocated (strdup, getline with NULL,
 *                        ...) is freed by libc's free.
 *   exit family          the ULP ends (atexit handlers, finalisers); the
 *                        node goes on.  abort() ends the ULP with a report.
 *   sleep family         the ULP sleeps; the others run.
 *   getopt, environ,     per-ULP copies of libc's per-process state: the
 *   __progname, ...      program's GOT entries point into struct proc.
 *   system, popen,       a child of the node, waited for coupled (shell.c)
 *   posix_spawn
 *   fork, exec,          refused with a message naming the call and the ULP
 *   daemon, clone,       (a ULP is not an OS process); signal dispositions
 *   syscall(SYS_fork..)  SIG_IGN/SIG_DFL are passed on (they act on the
 *   threads, handlers    whole node, as documented).  What gets past these
 *                        (a fork made by raw instructions) is contained:
 *                        the job ends it (src/node/launch.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>

#include "proc/proc.h"
#include "proc/proc_libc.h"

/* ------------------------------------------------------------ reports */

void proc_refuse(const char *call, const char *why)
{
    struct ulp *u = core_self();
    char name[160];
    if (u)
        fprintf(stderr, "upvm: ULP %d (%s) called %s: %s\n", u->id,
                core_ulp_name(u, name, sizeof name), call, why);
    else
        fprintf(stderr, "upvm: %s: %s\n", call, why);
}

#define NOT_A_PROCESS "not supported in a process-mode ULP (a ULP is not an OS process)"

/* ------------------------------------------------------------ heap */

/* 1.5 GiB, 512 MiB, 64 KiB */
static const char *fmt_size(size_t b, char *buf, size_t len)
{
    if (b >= (size_t)1 << 30)
        snprintf(buf, len, "%.2f GiB", (double)b / (1 << 30));
    else if (b >= (size_t)1 << 20)
        snprintf(buf, len, "%zu MiB", b >> 20);
    else
        snprintf(buf, len, "%zu KiB", b >> 10);
    return buf;
}

/* A size as UPVM_SLOT_SIZE takes it: 64M, 1G */
static const char *fmt_setting(size_t b, char *buf, size_t len)
{
    if (b % ((size_t)1 << 30) == 0)
        snprintf(buf, len, "%zuG", b >> 30);
    else
        snprintf(buf, len, "%zuM", b >> 20);
    return buf;
}

/*
 * A NULL from the ULP's heap (errno ENOMEM).  When the heap ran into the
 * end of the ULP's slot, rather than out of the system's memory, malloc
 * fails far below what the machine has (at about 950 MiB with the default
 * 1 GiB slots): say so once per ULP, with the setting that moves the end.
 */
void *proc_heap_null(struct proc *p, const char *call, size_t n)
{
    struct mem_heap_stats st;
    mem_heap_stats(p->heap, &st);
    if (!st.reached_end || p->heap_end_said)
        return NULL;
    p->heap_end_said = true;
    size_t slot = mem_window()->slot_size, more = 2 * slot;
    while (more < 2 * n && more < ((size_t)1 << 40))
        more <<= 1; /* powers of two, as UPVM_SLOT_SIZE takes */
    char why[400], req[32], now[16], heap[32], used[32], next[16];
    snprintf(why, sizeof why,
             "no room for %s: its heap ends with its slot (UPVM_SLOT_SIZE=%s holds the "
             "program, its stack of %zu MiB and a heap of %s, %s of it in use); give every "
             "slot more, e.g. UPVM_SLOT_SIZE=%s (said once per ULP)",
             fmt_size(n, req, sizeof req), fmt_setting(slot, now, sizeof now),
             p->stack_size >> 20, fmt_size(st.size, heap, sizeof heap),
             fmt_size(st.in_use, used, sizeof used), fmt_setting(more, next, sizeof next));
    int saved = errno;
    proc_refuse(call, why);
    errno = saved;
    return NULL;
}

void *proc_alloc(const char *call, size_t n, size_t align)
{
    struct proc *p = proc_current();
    if (!p) /* no task: the node's own allocation */
        return align ? memalign(align, n) : malloc(n);
    void *q = align ? mem_heap_memalign(p->heap, align, n) : mem_heap_malloc(p->heap, n);
    return q ? q : proc_heap_null(p, call, n);
}

static void *ip_malloc(size_t n)
{
    return proc_alloc("malloc()", n, 0);
}

static void *ip_calloc(size_t count, size_t n)
{
    struct proc *p = proc_current();
    if (!p)
        return calloc(count, n);
    void *q = mem_heap_calloc(p->heap, count, n);
    size_t bytes;
    return q || __builtin_mul_overflow(count, n, &bytes) ? q : proc_heap_null(p, "calloc()", bytes);
}

/* Which allocator a pointer belongs to. */
enum owner { OWNER_LIBC, OWNER_MINE, OWNER_OTHER };

static enum owner owner_of(struct proc *p, const void *ptr)
{
    if (p && mem_heap_owns(p->heap, ptr))
        return OWNER_MINE;
    return mem_slot_of(ptr) >= 0 ? OWNER_OTHER : OWNER_LIBC;
}

void proc_free(const char *call, void *ptr)
{
    if (!ptr)
        return;
    struct proc *p = proc_current();
    switch (owner_of(p, ptr)) {
    case OWNER_MINE:
        mem_heap_free(p->heap, ptr);
        break;
    case OWNER_LIBC:
        free(ptr);
        break;
    case OWNER_OTHER: /* freeing it here would corrupt that task's heap */
        proc_refuse(call, "the pointer is not from this task's heap (ignored)");
        break;
    }
}

static void ip_free(void *ptr)
{
    proc_free("free()", ptr);
}

static void *ip_realloc(void *ptr, size_t n)
{
    struct proc *p = proc_current();
    if (!p)
        return realloc(ptr, n);
    if (!ptr || owner_of(p, ptr) == OWNER_MINE) {
        void *q = mem_heap_realloc(p->heap, ptr, n);
        return q || n == 0 ? q : proc_heap_null(p, "realloc()", n); /* n 0: freed */
    }
    if (owner_of(p, ptr) == OWNER_OTHER) {
        proc_refuse("realloc()", "the pointer is not from this ULP's heap");
        errno = EINVAL;
        return NULL;
    }
    /* libc's block: move it into the ULP's heap */
    void *q = mem_heap_malloc(p->heap, n);
    if (!q)
        return proc_heap_null(p, "realloc()", n);
    size_t old = malloc_usable_size(ptr);
    memcpy(q, ptr, old < n ? old : n);
    free(ptr);
    return q;
}

static void *ip_reallocarray(void *ptr, size_t count, size_t n)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, n, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return ip_realloc(ptr, bytes);
}

static void *ip_memalign(size_t align, size_t n)
{
    return proc_alloc("memalign()", n, align);
}

static int ip_posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *q = ip_memalign(align, n);
    if (!q)
        return ENOMEM;
    *out = q;
    return 0;
}

static void *ip_aligned_alloc(size_t align, size_t n)
{
    return ip_memalign(align, n);
}

static void *ip_valloc(size_t n)
{
    return ip_memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

static void *ip_pvalloc(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return ip_memalign(page, (n + page - 1) & ~(page - 1));
}

static size_t ip_malloc_usable_size(void *ptr)
{
    struct proc *p = proc_current();
    if (!ptr)
        return 0;
    return owner_of(p, ptr) == OWNER_MINE ? mem_heap_usable_size(p->heap, ptr)
                                          : malloc_usable_size(ptr);
}

/* ------------------------------------------------------------ exit */

static _Noreturn void ip_exit(int status)
{
    struct proc *p = proc_current();
    if (!p)
        exit(status);
    proc_exit(p, status, false);
}

static _Noreturn void ip__exit(int status)
{
    struct proc *p = proc_current();
    if (!p)
        _exit(status);
    proc_exit(p, status, true);
}

static _Noreturn void ip_abort(void)
{
    struct proc *p = proc_current();
    if (!p)
        abort();
    proc_refuse("abort()", "the ULP ends with status 134; the node goes on");
    proc_exit(p, 128 + SIGABRT, true);
}

static int atexit_add(void (*fn)(void *), void *arg, bool with_arg)
{
    struct proc *p = proc_current();
    if (!p)
        return -1;
    if (p->natexits == p->capatexits) {
        int cap = p->capatexits ? 2 * p->capatexits : 32;
        struct proc_atexit *a =
            mem_heap_realloc(p->heap, p->atexits, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        p->atexits = a;
        p->capatexits = cap;
    }
    p->atexits[p->natexits++] = (struct proc_atexit){fn, arg, with_arg};
    return 0;
}

static int ip_atexit(void (*fn)(void))
{
    void (*f)(void *);
    memcpy(&f, &fn, sizeof f);
    return atexit_add(f, NULL, false);
}

static int ip_cxa_atexit(void (*fn)(void *), void *arg, void *dso)
{
    return atexit_add(fn, arg, true);
}

/* ------------------------------------------------------------ sleep */

static unsigned int ip_sleep(unsigned int s)
{
    upvm_sleep_ns((uint64_t)s * 1000000000u);
    return 0;
}

static int ip_usleep(useconds_t us)
{
    upvm_sleep_ns((uint64_t)us * 1000u);
    return 0;
}

static int ip_nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!req || req->tv_sec < 0 || req->tv_nsec < 0 || req->tv_nsec >= 1000000000) {
        errno = EINVAL;
        return -1;
    }
    upvm_sleep_ns((uint64_t)req->tv_sec * 1000000000u + (uint64_t)req->tv_nsec);
    if (rem)
        *rem = (struct timespec){0, 0};
    return 0;
}

/* ------------------------------------------------------------ refused */

/* Every way libc offers to make a process or a thread: each would copy or
 * share the whole node (all its ULPs), which the ULP cannot own.  glibc's
 * daemon(), _Fork and __fork reach the kernel without going through the
 * program's fork(), so they are refused here by name as well. */
static pid_t refuse_fork(const char *call)
{
    proc_refuse(call, NOT_A_PROCESS "; start tasks with pvm_spawn");
    errno = ENOSYS;
    return -1;
}

static pid_t ip_fork(void) { return refuse_fork("fork()"); }
static pid_t ip_vfork(void) { return refuse_fork("vfork()"); }
static pid_t ip__Fork(void) { return refuse_fork("_Fork()"); }
static pid_t ip___fork(void) { return refuse_fork("__fork()"); }
static pid_t ip___vfork(void) { return refuse_fork("__vfork()"); }
static int ip_daemon(int nochdir, int noclose) { return refuse_fork("daemon()"); }

static pid_t ip_forkpty(int *fd, char *name, const void *termp, const void *winp)
{
    return refuse_fork("forkpty()");
}

static int ip_clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    return refuse_fork("clone()");
}

static int ip___clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    return refuse_fork("__clone()");
}

static int refuse_exec(const char *call)
{
    proc_refuse(call, NOT_A_PROCESS "; start programs with pvm_spawn");
    errno = ENOSYS;
    return -1;
}

static int ip_execve(const char *f, char *const a[], char *const e[]) { return refuse_exec("execve()"); }
static int ip_execv(const char *f, char *const a[]) { return refuse_exec("execv()"); }
static int ip_execvp(const char *f, char *const a[]) { return refuse_exec("execvp()"); }
static int ip_execvpe(const char *f, char *const a[], char *const e[]) { return refuse_exec("execvpe()"); }
static int ip_execl(const char *f, const char *a, ...) { return refuse_exec("execl()"); }
static int ip_execlp(const char *f, const char *a, ...) { return refuse_exec("execlp()"); }
static int ip_execle(const char *f, const char *a, ...) { return refuse_exec("execle()"); }

/* system, popen and posix_spawn start a child of the node without copying
 * it (shell.c).  pidfd_spawn (glibc 2.39) is refused: the glibc this is
 * built with does not have it to pass the call on to. */
static int refuse_spawn(const char *call)
{
    proc_refuse(call, NOT_A_PROCESS "; start programs with pvm_spawn");
    return ENOSYS; /* these return the error, not -1 */
}

static int ip_pidfd_spawn(int *fd, const char *path, const void *fa, const void *at,
                          char *const a[], char *const e[])
{
    return refuse_spawn("pidfd_spawn()");
}

static int ip_pidfd_spawnp(int *fd, const char *file, const void *fa, const void *at,
                           char *const a[], char *const e[])
{
    return refuse_spawn("pidfd_spawnp()");
}

/* The system calls syscall() must not make: the same refusals as the
 * functions that make them.  NULL for the others. */
static const char *refused_syscall(long nr, const char **why)
{
    *why = NOT_A_PROCESS "; start tasks with pvm_spawn";
    switch (nr) {
    case SYS_fork: return "syscall(SYS_fork)";
    case SYS_vfork: return "syscall(SYS_vfork)";
    case SYS_clone: return "syscall(SYS_clone)";
#ifdef SYS_clone3
    case SYS_clone3: return "syscall(SYS_clone3)";
#endif
    }
    *why = NOT_A_PROCESS "; start programs with pvm_spawn";
    switch (nr) {
    case SYS_execve: return "syscall(SYS_execve)";
#ifdef SYS_execveat
    case SYS_execveat: return "syscall(SYS_execveat)";
#endif
    }
    return NULL;
}

/*
 * syscall(number, ...): the kernel takes at most six arguments and
 * syscall() cannot know how many its caller passed, so six are read and
 * passed on, as libc's own syscall() does.  On x86-64 the ones the caller
 * did not pass are whatever its registers and argument area hold; the
 * kernel does not look at them for a call that takes fewer.
 */
static long ip_syscall(long nr, ...)
{
    const char *why, *call = refused_syscall(nr, &why);
    if (call) {
        proc_refuse(call, why);
        errno = ENOSYS;
        return -1;
    }
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static int ip_pthread_create(void *t, const void *attr, void *(*fn)(void *), void *arg)
{
    proc_refuse("pthread_create()", "POSIX threads inside a ULP are not supported; "
                                    "use more PVM tasks");
    return ENOSYS;
}

/* Signal dispositions are the node's: SIG_IGN and SIG_DFL pass (except for
 * the signals UPVM's crash reports need), handlers are refused. */
static bool disposition_ok(int sig, void (*h)(int))
{
    bool crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
                 sig == SIGABRT;
    return (h == SIG_IGN || h == SIG_DFL) && !crash;
}

static void (*ip_signal(int sig, void (*h)(int)))(int)
{
    if (!disposition_ok(sig, h)) {
        proc_refuse("signal()", "signal handlers are not supported in process-mode ULPs");
        errno = ENOSYS;
        return SIG_ERR;
    }
    return signal(sig, h);
}

static int ip_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (act && ((act->sa_flags & SA_SIGINFO) || !disposition_ok(sig, act->sa_handler))) {
        proc_refuse("sigaction()", "signal handlers are not supported in process-mode ULPs");
        errno = ENOSYS;
        return -1;
    }
    return sigaction(sig, act, old);
}

/* ------------------------------------------------------------ getopt */

/* libc's getopt keeps its state in libc's globals: load the ULP's copies
 * into them for the call and save them back after it. */
static void opt_in(struct proc *p)
{
    optind = p->optind;
    opterr = p->opterr;
    optopt = p->optopt;
    optarg = p->optarg;
}

static void opt_out(struct proc *p)
{
    p->optind = optind;
    p->opterr = opterr;
    p->optopt = optopt;
    p->optarg = optarg;
}

/*
 * glibc keeps one more piece of getopt's state where no program reaches
 * it: its place inside a word of grouped options ("-bd" after -b).  That is
 * the node's, shared by its tasks and left behind by a move.  So each
 * task's calls in its current parse are counted, and when the node's libc
 * last parsed for someone else (another task, or this one before it moved)
 * the task's calls so far are made again from the start, silently: getopt
 * is a function of argv and the options, so libc ends where the task was.
 */
enum opt_kind { OPT_SHORT, OPT_LONG, OPT_LONG_ONLY };

struct opt_owner {
    int slot;
    unsigned parse;
    int calls;
};
static struct opt_owner opt_owner = {-1, 0, 0};

static int opt_libc(enum opt_kind k, int argc, char *const argv[], const char *opts,
                    const struct option *lo, int *index)
{
    switch (k) {
    case OPT_LONG: return getopt_long(argc, argv, opts, lo, index);
    case OPT_LONG_ONLY: return getopt_long_only(argc, argv, opts, lo, index);
    default: return getopt(argc, argv, opts);
    }
}

/* libc's getopt state made the task's: its globals, and the place inside a
 * word when libc last worked for someone else. */
static void opt_take(struct proc *p, enum opt_kind k, int argc, char *const argv[],
                     const char *opts, const struct option *lo)
{
    if (p->optind != p->opt_left) { /* the program set optind: a new parse */
        p->opt_parse++;
        p->opt_calls = 0;
    }
    bool ours = opt_owner.slot == p->slot && opt_owner.parse == p->opt_parse &&
                opt_owner.calls == p->opt_calls;
    if (ours) {
        opt_in(p);
        return;
    }
    optind = 0; /* libc starts over (and sets optind to 1) */
    opterr = 0; /* the calls made again say nothing */
    for (int i = 0; i < p->opt_calls; i++) {
        int ignored;
        (void)opt_libc(k, argc, argv, opts, lo, &ignored);
    }
    if (p->opt_calls > 0 || p->optind > 1)
        opt_in(p);
    else
        opterr = p->opterr; /* optind stays 0: the first call starts afresh */
}

static int opt_call(enum opt_kind k, int argc, char *const argv[], const char *opts,
                    const struct option *lo, int *index)
{
    struct proc *p = proc_current();
    if (!p)
        return opt_libc(k, argc, argv, opts, lo, index);
    opt_take(p, k, argc, argv, opts, lo);
    int r = opt_libc(k, argc, argv, opts, lo, index);
    opt_out(p);
    p->opt_calls++;
    p->opt_left = p->optind;
    opt_owner = (struct opt_owner){p->slot, p->opt_parse, p->opt_calls};
    return r;
}

static int ip_getopt(int argc, char *const argv[], const char *opts)
{
    return opt_call(OPT_SHORT, argc, argv, opts, NULL, NULL);
}

static int ip_getopt_long(int argc, char *const argv[], const char *opts,
                          const struct option *lo, int *index)
{
    return opt_call(OPT_LONG, argc, argv, opts, lo, index);
}

static int ip_getopt_long_only(int argc, char *const argv[], const char *opts,
                               const struct option *lo, int *index)
{
    return opt_call(OPT_LONG_ONLY, argc, argv, opts, lo, index);
}

/* ------------------------------------------------------------ environment */

/* The index of name's entry in p's environment, or -1. */
static int env_find(struct proc *p, const char *name, size_t len)
{
    for (int i = 0; i < p->nenv; i++)
        if (strncmp(p->environ[i], name, len) == 0 && p->environ[i][len] == '=')
            return i;
    return -1;
}

static char *ip_getenv(const char *name)
{
    struct proc *p = proc_current();
    if (!p)
        return getenv(name);
    int i = env_find(p, name, strlen(name));
    return i < 0 ? NULL : p->environ[i] + strlen(name) + 1;
}

/* Before the first change: the ULP's own copy of the array (the strings
 * are not changed in place, so they can stay shared). */
static int env_own(struct proc *p)
{
    if (p->capenv)
        return 0;
    int cap = p->nenv + 8;
    char **v = mem_heap_malloc(p->heap, (size_t)cap * sizeof *v);
    if (!v) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(v, p->environ, (size_t)(p->nenv + 1) * sizeof *v);
    p->environ = v;
    p->capenv = cap;
    return 0;
}

/* Put entry (owned by the heap) in the environment, replacing name's. */
static int env_put(struct proc *p, char *entry, size_t namelen)
{
    if (env_own(p) != 0)
        return -1;
    int i = env_find(p, entry, namelen);
    if (i >= 0) {
        p->environ[i] = entry; /* the old string may still be in use: kept */
        return 0;
    }
    if (p->nenv + 1 >= p->capenv) {
        int cap = 2 * p->capenv + 8;
        char **v = mem_heap_malloc(p->heap, (size_t)cap * sizeof *v);
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        memcpy(v, p->environ, (size_t)(p->nenv + 1) * sizeof *v);
        p->environ = v; /* the old array may be someone's environ copy: kept */
        p->capenv = cap;
    }
    p->environ[p->nenv++] = entry;
    p->environ[p->nenv] = NULL;
    return 0;
}

static int ip_setenv(const char *name, const char *value, int overwrite)
{
    struct proc *p = proc_current();
    if (!p)
        return setenv(name, value, overwrite);
    size_t len = name ? strlen(name) : 0;
    if (!len || strchr(name, '=')) {
        errno = EINVAL;
        return -1;
    }
    if (!overwrite && env_find(p, name, len) >= 0)
        return 0;
    size_t vlen = strlen(value);
    char *e = mem_heap_malloc(p->heap, len + vlen + 2);
    if (!e) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(e, name, len);
    e[len] = '=';
    memcpy(e + len + 1, value, vlen + 1);
    return env_put(p, e, len);
}

static int ip_putenv(char *entry)
{
    struct proc *p = proc_current();
    if (!p)
        return putenv(entry);
    char *eq = strchr(entry, '=');
    if (!eq) { /* glibc: putenv("NAME") removes NAME */
        if (env_own(p) != 0)
            return -1;
        int i = env_find(p, entry, strlen(entry));
        if (i >= 0) {
            p->environ[i] = p->environ[--p->nenv];
            p->environ[p->nenv] = NULL;
        }
        return 0;
    }
    return env_put(p, entry, (size_t)(eq - entry));
}

static int ip_unsetenv(const char *name)
{
    struct proc *p = proc_current();
    if (!p)
        return unsetenv(name);
    size_t len = name ? strlen(name) : 0;
    if (!len || strchr(name, '=')) {
        errno = EINVAL;
        return -1;
    }
    if (env_own(p) != 0)
        return -1;
    int i;
    while ((i = env_find(p, name, len)) >= 0) {
        p->environ[i] = p->environ[--p->nenv];
        p->environ[p->nenv] = NULL;
    }
    return 0;
}

static int ip_clearenv(void)
{
    struct proc *p = proc_current();
    if (!p)
        return clearenv();
    if (env_own(p) != 0)
        return -1;
    p->nenv = 0;
    p->environ[0] = NULL;
    return 0;
}

/* ------------------------------------------------------------ files */

/* Files and sockets a ULP opens belong to its node's process: they cannot
 * move with it, so the ULP keeps a list of those it holds, and migration
 * refuses to move it while the list is not empty (proc_open_files). */
static void fd_track(int fd)
{
    proc_blocking_fd_reset(fd);
    struct proc *p = proc_current();
    if (!p || fd < 0)
        return;
    if (p->nfds < (int)(sizeof p->fds / sizeof p->fds[0]))
        p->fds[p->nfds++] = fd;
    else
        p->fds_overflow = true;
}

static void fd_untrack(int fd)
{
    proc_blocking_fd_reset(fd);
    struct proc *p = proc_current();
    for (int i = 0; p && i < p->nfds; i++)
        if (p->fds[i] == fd) {
            p->fds[i] = p->fds[--p->nfds];
            return;
        }
}

static int ip_open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    int fd = open(path, flags, mode);
    fd_track(fd);
    return fd;
}

static int ip_openat(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, int);
    va_end(ap);
    int fd = openat(dir, path, flags, mode);
    fd_track(fd);
    return fd;
}

static int ip_creat(const char *path, mode_t mode)
{
    int fd = creat(path, mode);
    fd_track(fd);
    return fd;
}

static int ip_socket(int domain, int type, int proto)
{
    int fd = socket(domain, type, proto);
    fd_track(fd);
    return fd;
}

static int ip_socketpair(int domain, int type, int proto, int sv[2])
{
    int rc = socketpair(domain, type, proto, sv);
    if (rc == 0) {
        fd_track(sv[0]);
        fd_track(sv[1]);
    }
    return rc;
}

static int ip_pipe(int fds[2])
{
    int rc = pipe(fds);
    if (rc == 0) {
        fd_track(fds[0]);
        fd_track(fds[1]);
    }
    return rc;
}

static int ip_pipe2(int fds[2], int flags)
{
    int rc = pipe2(fds, flags);
    if (rc == 0) {
        fd_track(fds[0]);
        fd_track(fds[1]);
    }
    return rc;
}

static int ip_accept(int s, struct sockaddr *a, socklen_t *l)
{
    int fd = proc_coupled_accept4(s, a, l, 0);
    fd_track(fd);
    return fd;
}

static int ip_accept4(int s, struct sockaddr *a, socklen_t *l, int flags)
{
    int fd = proc_coupled_accept4(s, a, l, flags);
    fd_track(fd);
    return fd;
}

static int ip_dup(int old)
{
    int fd = dup(old);
    fd_track(fd);
    return fd;
}

/* A descriptor made anew at fd: what was there (closed by the call) is
 * forgotten first, so a number is listed once. */
static int fd_retrack(int fd)
{
    if (fd >= 0) {
        fd_untrack(fd);
        fd_track(fd);
    }
    return fd;
}

static int ip_dup2(int old, int new)
{
    int fd = dup2(old, new);
    return fd == old ? fd : fd_retrack(fd);
}

static int ip_dup3(int old, int new, int flags)
{
    return fd_retrack(dup3(old, new, flags));
}

static int ip_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *); /* as libc reads it: an int or a pointer */
    va_end(ap);
    if (cmd == F_SETLKW || cmd == F_OFD_SETLKW)
        return proc_coupled_fcntl_lock(fd, cmd, arg);
    int rc = fcntl(fd, cmd, arg);
    return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ? fd_retrack(rc) : rc;
}

static int ip_mkstemp(char *tmpl) { return fd_retrack(mkstemp(tmpl)); }
static int ip_mkostemp(char *tmpl, int flags) { return fd_retrack(mkostemp(tmpl, flags)); }
static int ip_mkstemps(char *tmpl, int suffix) { return fd_retrack(mkstemps(tmpl, suffix)); }
static int ip_mkostemps(char *tmpl, int suffix, int flags)
{
    return fd_retrack(mkostemps(tmpl, suffix, flags));
}

static int ip_eventfd(unsigned v, int flags) { return fd_retrack(eventfd(v, flags)); }
static int ip_epoll_create(int n) { return fd_retrack(epoll_create(n)); }
static int ip_epoll_create1(int flags) { return fd_retrack(epoll_create1(flags)); }
static int ip_timerfd_create(int clock, int flags)
{
    return fd_retrack(timerfd_create(clock, flags));
}
static int ip_signalfd(int fd, const sigset_t *mask, int flags)
{
    return fd_retrack(signalfd(fd, mask, flags));
}
static int ip_inotify_init(void) { return fd_retrack(inotify_init()); }
static int ip_inotify_init1(int flags) { return fd_retrack(inotify_init1(flags)); }
static int ip_memfd_create(const char *name, unsigned flags)
{
    return fd_retrack(memfd_create(name, flags));
}

static FILE *ip_tmpfile(void)
{
    FILE *f = tmpfile();
    if (f)
        fd_retrack(fileno(f));
    return f;
}

static FILE *ip_freopen(const char *path, const char *mode, FILE *f)
{
    if (f)
        fd_untrack(fileno(f));
    FILE *g = freopen(path, mode, f);
    if (g)
        fd_retrack(fileno(g));
    return g;
}

static DIR *ip_opendir(const char *path)
{
    DIR *d = opendir(path);
    if (d)
        fd_retrack(dirfd(d));
    return d;
}

static int ip_closedir(DIR *d)
{
    if (d)
        fd_untrack(dirfd(d));
    return closedir(d);
}

static FILE *ip_fopen(const char *path, const char *mode)
{
    FILE *f = fopen(path, mode);
    if (f)
        fd_track(fileno(f));
    return f;
}

static int ip_close(int fd)
{
    fd_untrack(fd);
    return close(fd);
}

static int ip_fclose(FILE *f)
{
    if (f)
        fd_untrack(fileno(f));
    return fclose(f);
}

const char *proc_open_files(struct proc *p)
{
    static char list[256];
    if (p->nfds == 0 && !p->fds_overflow)
        return NULL;
    size_t n = 0;
    list[0] = '\0';
    for (int i = 0; i < p->nfds && n + 40 < sizeof list; i++) {
        char link[64], target[128] = "?";
        snprintf(link, sizeof link, "/proc/self/fd/%d", p->fds[i]);
        ssize_t k = readlink(link, target, sizeof target - 1);
        target[k > 0 ? k : 1] = '\0';
        n += (size_t)snprintf(list + n, sizeof list - n, "%sfd %d %s", i ? ", " : "",
                              p->fds[i], target);
        if (n >= sizeof list)
            n = sizeof list - 1;
    }
    if (p->fds_overflow && n + 8 < sizeof list)
        snprintf(list + n, sizeof list - n, ", ...");
    return list;
}

/* ------------------------------------------------------------ the table */

/* Functions: the same address for every ULP. */
struct fn_entry {
    const char *name;
    void *addr;
};

#define FN(name, fn) {name, (void *)(fn)}

/* Sorted by name (bsearch). */
static const struct fn_entry functions[] = {
    FN("_Exit", ip__exit),
    FN("_Fork", ip__Fork),
    FN("__asprintf_chk", proc_asprintf_chk),
    FN("__clone", ip___clone),
    FN("__cxa_atexit", ip_cxa_atexit),
    /* C++ thread_local destructors: the ULP's exit runs them (tls.c in the
     * loader; the thread's own list would run them when a node thread
     * ends, into slots long gone) */
    FN("__cxa_thread_atexit", ip_cxa_atexit),
    FN("__cxa_thread_atexit_impl", ip_cxa_atexit),
    FN("__fork", ip___fork),
    FN("__vasprintf_chk", proc_vasprintf_chk),
    FN("__vfork", ip___vfork),
    FN("_exit", ip__exit),
    FN("abort", ip_abort),
    FN("accept", ip_accept),
    FN("accept4", ip_accept4),
    FN("aligned_alloc", ip_aligned_alloc),
    FN("asprintf", proc_asprintf),
    FN("atexit", ip_atexit),
    FN("calloc", ip_calloc),
    FN("clearenv", ip_clearenv),
    FN("clone", ip_clone),
    FN("close", ip_close),
    FN("closedir", ip_closedir),
    FN("creat", ip_creat),
    FN("daemon", ip_daemon),
    FN("dup", ip_dup),
    FN("dup2", ip_dup2),
    FN("dup3", ip_dup3),
    FN("epoll_create", ip_epoll_create),
    FN("epoll_create1", ip_epoll_create1),
    FN("eventfd", ip_eventfd),
    FN("execl", ip_execl),
    FN("execle", ip_execle),
    FN("execlp", ip_execlp),
    FN("execv", ip_execv),
    FN("execve", ip_execve),
    FN("execvp", ip_execvp),
    FN("execvpe", ip_execvpe),
    FN("exit", ip_exit),
    FN("fclose", ip_fclose),
    FN("fcntl", ip_fcntl),
    FN("fcntl64", ip_fcntl),
    FN("fopen", ip_fopen),
    FN("fopen64", ip_fopen),
    FN("fork", ip_fork),
    FN("forkpty", ip_forkpty),
    FN("free", ip_free),
    FN("freopen", ip_freopen),
    FN("freopen64", ip_freopen),
    FN("getdelim", proc_getdelim),
    FN("getenv", ip_getenv),
    FN("getline", proc_getline),
    FN("getopt", ip_getopt),
    FN("getopt_long", ip_getopt_long),
    FN("getopt_long_only", ip_getopt_long_only),
    FN("inotify_init", ip_inotify_init),
    FN("inotify_init1", ip_inotify_init1),
    FN("malloc", ip_malloc),
    FN("malloc_usable_size", ip_malloc_usable_size),
    FN("memalign", ip_memalign),
    FN("memfd_create", ip_memfd_create),
    FN("mkostemp", ip_mkostemp),
    FN("mkostemp64", ip_mkostemp),
    FN("mkostemps", ip_mkostemps),
    FN("mkstemp", ip_mkstemp),
    FN("mkstemp64", ip_mkstemp),
    FN("mkstemps", ip_mkstemps),
    FN("nanosleep", ip_nanosleep),
    FN("open", ip_open),
    FN("open64", ip_open),
    FN("openat", ip_openat),
    FN("openat64", ip_openat),
    FN("opendir", ip_opendir),
    FN("pclose", proc_pclose),
    FN("pidfd_spawn", ip_pidfd_spawn),
    FN("pidfd_spawnp", ip_pidfd_spawnp),
    FN("pipe", ip_pipe),
    FN("pipe2", ip_pipe2),
    FN("popen", proc_popen),
    FN("posix_memalign", ip_posix_memalign),
    FN("posix_spawn", proc_posix_spawn),
    FN("posix_spawnp", proc_posix_spawnp),
    FN("pthread_create", ip_pthread_create),
    FN("putenv", ip_putenv),
    FN("pvalloc", ip_pvalloc),
    FN("qsort", proc_qsort),
    FN("qsort_r", proc_qsort_r),
    FN("realloc", ip_realloc),
    FN("reallocarray", ip_reallocarray),
    FN("realpath", proc_realpath),
    FN("secure_getenv", ip_getenv),
    FN("setenv", ip_setenv),
    FN("sigaction", ip_sigaction),
    FN("signal", ip_signal),
    FN("signalfd", ip_signalfd),
    FN("sleep", ip_sleep),
    FN("socket", ip_socket),
    FN("socketpair", ip_socketpair),
    FN("strdup", proc_strdup),
    FN("strndup", proc_strndup),
    FN("syscall", ip_syscall),
    FN("system", proc_system),
    FN("timerfd_create", ip_timerfd_create),
    FN("tmpfile", ip_tmpfile),
    FN("tmpfile64", ip_tmpfile),
    FN("unsetenv", ip_unsetenv),
    FN("usleep", ip_usleep),
    FN("valloc", ip_valloc),
    FN("vasprintf", proc_vasprintf),
    FN("vfork", ip_vfork),
};

static int cmp_entry(const void *key, const void *e)
{
    return strcmp(key, ((const struct fn_entry *)e)->name);
}

/* Variables: an address inside the ULP's own struct proc. */
static void *variable(const char *name, struct proc *p)
{
    if (!strcmp(name, "optind"))
        return &p->optind;
    if (!strcmp(name, "opterr"))
        return &p->opterr;
    if (!strcmp(name, "optopt"))
        return &p->optopt;
    if (!strcmp(name, "optarg"))
        return &p->optarg;
    if (!strcmp(name, "environ") || !strcmp(name, "__environ") || !strcmp(name, "_environ"))
        return &p->environ;
    if (!strcmp(name, "__progname") || !strcmp(name, "program_invocation_short_name"))
        return &p->progname;
    if (!strcmp(name, "__progname_full") || !strcmp(name, "program_invocation_name"))
        return &p->progname_full;
    return NULL;
}

/* The table must stay sorted for bsearch: checked once, loudly. */
static void check_sorted(void)
{
    static bool checked;
    if (checked)
        return;
    checked = true;
    for (size_t i = 1; i < ARRAY_SIZE(functions); i++)
        if (strcmp(functions[i - 1].name, functions[i].name) >= 0) {
            fprintf(stderr, "upvm: bug: interposition table not sorted at %s\n",
                    functions[i].name);
            abort();
        }
}

void *proc_resolve(const char *name, void *ctx)
{
    check_sorted();
    const struct fn_entry *e =
        bsearch(name, functions, ARRAY_SIZE(functions), sizeof functions[0], cmp_entry);
    if (e)
        return e->addr;
    void *b = proc_blocking_resolve(name);
    if (!b)
        b = proc_fortran_resolve(name);
    if (b)
        return b;
    void *v = variable(name, ctx);
    if (!v)
        v = proc_input_resolve(name, ctx);
    return v ? v : proc_output_resolve(name, ctx);
}
