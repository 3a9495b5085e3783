/*
 * forks.c - every way libc and the kernel offer to make a process or a
 * thread, called from a process-mode ULP: each must be refused with a
 * message naming the call and the ULP (none may fork the node), and
 * syscall() must pass every other system call on with its arguments;
 * posix_spawn (no copy of the node) is not refused.
 * Prints "forks OK" and ends the job with status 0.  Its arguments are
 * ignored (the test passes a marker to find the job's processes by).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pty.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;
extern pid_t __fork(void);
extern pid_t __vfork(void);
extern int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);

static int child_fn(void *arg) { return arg != NULL; }

/* A refused call: -1 and ENOSYS. */
static int refused(long rc, const char *what)
{
    int ok = rc == -1 && errno == ENOSYS;
    if (!ok)
        printf("%s: rc %ld errno %d, expected -1 ENOSYS\n", what, rc, errno);
    return ok;
}

static int refusals(void)
{
    static char stack[16384];
    int ok = 1, fd;
    pid_t pid;
    ok &= refused(daemon(1, 1), "daemon");
    ok &= refused(syscall(SYS_fork), "syscall(SYS_fork)");
    ok &= refused(syscall(SYS_vfork), "syscall(SYS_vfork)");
    ok &= refused(syscall(SYS_clone, 17 /* SIGCHLD */, 0, 0, 0, 0), "syscall(SYS_clone)");
    ok &= refused(syscall(SYS_clone3, NULL, 0), "syscall(SYS_clone3)");
    ok &= refused(_Fork(), "_Fork");
    ok &= refused(__fork(), "__fork");
    ok &= refused(__vfork(), "__vfork");
    ok &= refused(forkpty(&fd, NULL, NULL, NULL), "forkpty");
    ok &= refused(clone(child_fn, stack + sizeof stack, 17, NULL), "clone");
    ok &= refused(__clone(child_fn, stack + sizeof stack, 17, NULL), "__clone");
    char *argv[] = {"true", NULL};
    ok &= refused(syscall(SYS_execve, "/bin/true", argv, environ), "syscall(SYS_execve)");
    /* posix_spawn makes a child without copying the node: it passes */
    int st = -1;
    ok &= posix_spawnp(&pid, "true", NULL, NULL, argv, environ) == 0 &&
          waitpid(pid, &st, 0) == pid && st == 0;
    return ok;
}

/* syscall() passes the rest on, all six arguments included: mmap's sixth
 * is the offset of the page it maps. */
static int pass_through(void)
{
    int ok = syscall(SYS_getpid) == getpid();
    ok &= syscall(SYS_write, 1, "write passed\n", 13) == 13;
    int fd = memfd_create("forks", 0);
    char page[4096];
    memset(page, 'A', sizeof page);
    ok &= fd >= 0 && write(fd, page, sizeof page) == (ssize_t)sizeof page;
    memset(page, 'B', sizeof page);
    ok &= write(fd, page, sizeof page) == (ssize_t)sizeof page;
    long p = syscall(SYS_mmap, NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
    ok &= p != -1 && *(const char *)p == 'B';
    if (p != -1)
        munmap((void *)p, 4096);
    close(fd);
    if (!ok)
        printf("syscall() did not pass the calls on\n");
    return ok;
}

int main(void)
{
    int ok = refusals();
    ok &= pass_through();
    printf(ok ? "forks OK\n" : "forks FAIL\n");
    return ok ? 0 : 1;
}
