/*
 * syscalls.c - system calls on shared memory (design notes §15.8,
 * docs/svm.md "System calls on shared memory").
 *
 * The kernel does not fault a shared page in for a system call: read(fd,
 * p, n) into a page this node does not hold fails with EFAULT, and a page
 * may be taken away while a call coupled to a kernel context runs.  So a
 * call whose buffer lies in shared memory runs on a private bounce buffer,
 * copied from or into the caller's memory on the ULP's own context, where
 * touching a shared page is an ordinary fault:
 *
 *   - process mode: the interposed calls of src/proc (read, write, readv,
 *     writev, pread, pwrite, recv, recvfrom, send, sendto) ask
 *     svm_bounce_test (registered with proc_set_bounce_test);
 *   - thread mode, whose libc is the process's own: libupvm exports read,
 *     write, pread, pwrite and send, which the program's calls reach before
 *     libc's (the dynamic linker looks in libupvm first, as the program
 *     links it); they bounce what is shared and pass everything else to
 *     libc's own entry points (__read, ...) unchanged.
 * Other calls with shared buffers: upvm_svm_touch first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "proc/proc.h"
#include "svm/svm_impl.h"

static bool bounce_range(uintptr_t lo, uintptr_t hi)
{
    int n = __atomic_load_n(&svm.nregions, __ATOMIC_ACQUIRE); /* any thread may ask */
    for (int i = 0; i < n; i++) {
        const struct svm_region *r = svm.regions[i];
        if (!r->shared && lo < r->base + r->size && hi > r->base)
            return true;
    }
    if (!__atomic_load_n(&svm.lazy_pending, __ATOMIC_RELAXED))
        return false;
    /* the lazy moves' records are the scheduler thread's: elsewhere (a
     * coupled call) bounce whenever one is under way */
    return !core_on_sched_thread_now() || svm_lazy_bounce(lo, hi);
}

bool svm_bounce_test(const void *p, size_t len)
{
    return bounce_range((uintptr_t)p, (uintptr_t)p + len);
}

/* libc's own entry points (exported by glibc for exactly this use). */
extern ssize_t __read(int fd, void *buf, size_t n);
extern ssize_t __write(int fd, const void *buf, size_t n);
extern ssize_t __pread64(int fd, void *buf, size_t n, off_t off);
extern ssize_t __pwrite64(int fd, const void *buf, size_t n, off_t off);
extern ssize_t __send(int fd, const void *buf, size_t n, int flags);

/* By address, not pointer: the compiler takes a pointer passed on from
 * read's buffer (write-only, as glibc declares it) for a read of it. */
static bool shared(uintptr_t p, size_t n)
{
    return unlikely(__atomic_load_n(&svm.nregions, __ATOMIC_RELAXED) || svm.lazy_pending) && n &&
           bounce_range(p, p + n);
}

/* A private buffer of n bytes (a copy of `from`, when given); NULL with
 * errno ENOMEM, which the call then fails with. */
static void *bounce(const void *from, size_t n)
{
    void *b = malloc(n ? n : 1);
    if (!b)
        errno = ENOMEM;
    else if (from)
        memcpy(b, from, n); /* faults in the pages as the program's own load would */
    return b;
}

/* The call made on b is over: its result, errno kept across the free. */
static ssize_t done(ssize_t r, void *b)
{
    int e = errno;
    free(b);
    errno = e;
    return r;
}

/* ... and what it read goes where the program asked. */
static ssize_t done_in(void *dst, ssize_t r, void *b)
{
    if (r > 0)
        memcpy(dst, b, (size_t)r); /* faults in the pages as the program's own store would */
    return done(r, b);
}

UPVM_API ssize_t read(int fd, void *buf, size_t n)
{
    if (!shared((uintptr_t)buf, n))
        return __read(fd, buf, n);
    void *b = bounce(NULL, n);
    return b ? done_in(buf, __read(fd, b, n), b) : -1;
}

UPVM_API ssize_t write(int fd, const void *buf, size_t n)
{
    if (!shared((uintptr_t)buf, n))
        return __write(fd, buf, n);
    void *b = bounce(buf, n);
    return b ? done(__write(fd, b, n), b) : -1;
}

UPVM_API ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    if (!shared((uintptr_t)buf, n))
        return __pread64(fd, buf, n, off);
    void *b = bounce(NULL, n);
    return b ? done_in(buf, __pread64(fd, b, n, off), b) : -1;
}

UPVM_API ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (!shared((uintptr_t)buf, n))
        return __pwrite64(fd, buf, n, off);
    void *b = bounce(buf, n);
    return b ? done(__pwrite64(fd, b, n, off), b) : -1;
}

UPVM_API ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));
UPVM_API ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
    __attribute__((alias("pwrite")));

UPVM_API ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    if (!shared((uintptr_t)buf, n))
        return __send(fd, buf, n, flags);
    void *b = bounce(buf, n);
    return b ? done(__send(fd, b, n, flags), b) : -1;
}
