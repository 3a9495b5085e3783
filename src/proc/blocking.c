/*
 * blocking.c - the system calls of process-mode programs that may block
 * for long, run so that the node's other ULPs keep running: the ULP is
 * coupled to a kernel context for the call (src/blt) when, and only when,
 * the call would block.
 *
 * How each call finds out, without a coupling when it would not block:
 *
 *   read, write, readv,     regular files: the plain call (they wait for
 *   writev, pread, pwrite   no other party).  Pipes, sockets, devices:
 *                           first with RWF_NOWAIT (preadv2/pwritev2, one
 *                           system call): data there, or room, is the
 *                           answer; EAGAIN → the call again, coupled.  A
 *                           short non-blocking write is finished coupled (a
 *                           blocking write writes all).  Descriptors that
 *                           do not take RWF_NOWAIT (FIFOs, terminals) are
 *                           remembered and coupled at once.  Transfers of
 *                           UPVM_KC_IO_MIN bytes or more are coupled at once
 *                           when the node may use more than one CPU: their
 *                           copy then runs beside the other ULPs.
 *   recv*, send*            first with MSG_DONTWAIT; the same.
 *   poll, select, epoll     first with a zero timeout (sets copied first).
 *   wait family             first with WNOHANG.
 *   flock, fcntl locks,     first without waiting (LOCK_NB, F_SETLK,
 *   lockf, msgrcv, msgsnd,  F_TLOCK, IPC_NOWAIT, a zero timeout).
 *   semop, sigwait*
 *   accept, connect, fsync, coupled at once: they are rare, or wait by
 *   fdatasync, syncfs,      nature.
 *   getaddrinfo, ...
 *
 * The coupled part of each wrapper is a function of its own (NOINLINE):
 * errno is set on the kernel context and comes back with the ULP (core),
 * and a function that ran on two threads must not read a thread-local
 * variable on both sides (core.h: core_errno_now).
 *
 * A killed ULP's blocking call is interrupted (EINTR); the ULP then ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "blt/blt.h"
#include "proc/proc.h"

/* ------------------------------------------------------------ descriptors */

/* What each descriptor is, learnt with one fstat at its first read or
 * write, forgotten when its number is closed or made anew
 * (proc_blocking_fd_reset, from interpose.c's descriptor tracking):
 *   FD_FILE        a regular file, block device or directory: it never
 *                  waits for another party, so the plain call (RWF_NOWAIT
 *                  would cost ~15 % more in the kernel on every read);
 *   otherwise      a pipe, socket or device: a RWF_NOWAIT try first, and
 *   FD_RD_COUPLED, one that refuses RWF_NOWAIT that way (a FIFO, a
 *   FD_WR_COUPLED  terminal): coupled at once. */
#define FD_MAX 4096
enum { FD_KNOWN = 1, FD_FILE = 2, FD_RD_COUPLED = 4, FD_WR_COUPLED = 8 };
static uint8_t fd_class[FD_MAX];

static unsigned fd_classify(int fd)
{
    if (fd < 0 || fd >= FD_MAX)
        return FD_KNOWN; /* not remembered: tried each time */
    if (likely(fd_class[fd]))
        return fd_class[fd];
    struct stat st;
    if (fstat(fd, &st) != 0)
        return FD_KNOWN; /* the call itself says what is wrong */
    bool file = S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode);
    return fd_class[fd] = (uint8_t)(FD_KNOWN | (file ? FD_FILE : 0));
}

/* fd refused RWF_NOWAIT in one direction: coupled from now on. */
static void fd_no_nowait(int fd, unsigned coupled_bit)
{
    if (fd >= 0 && fd < FD_MAX)
        fd_class[fd] |= (uint8_t)coupled_bit;
}

void proc_blocking_fd_reset(int fd)
{
    if (fd >= 0 && fd < FD_MAX)
        fd_class[fd] = 0;
}

static size_t iov_total(const struct iovec *iov, int n)
{
    size_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += iov[i].iov_len;
    return sum;
}

/* The plain call: read/pread for one buffer (the vector forms cost the
 * kernel ~100 ns more per call: the vector is copied in). */
static ssize_t plain_preadv(int fd, const struct iovec *v, int n, off_t off)
{
    if (n == 1)
        return off < 0 ? read(fd, v->iov_base, v->iov_len) : pread(fd, v->iov_base, v->iov_len, off);
    return off < 0 ? readv(fd, v, n) : preadv(fd, v, n, off);
}

static ssize_t plain_pwritev(int fd, const struct iovec *v, int n, off_t off)
{
    if (n == 1)
        return off < 0 ? write(fd, v->iov_base, v->iov_len)
                       : pwrite(fd, v->iov_base, v->iov_len, off);
    return off < 0 ? writev(fd, v, n) : pwritev(fd, v, n, off);
}

/* ------------------------------------------------------------ coupled calls */

#define COUPLED(type, name, params, call)                                                    \
    static NOINLINE type name params                                                        \
    {                                                                                        \
        bool coupled_ = blt_enter(&(#name "()")[2]); /* c_fsync: "fsync()" */             \
        type result_ = call;                                                                 \
        blt_leave(coupled_);                                                                 \
        return result_;                                                                      \
    }

COUPLED(ssize_t, c_preadv, (int fd, const struct iovec *v, int n, off_t off),
        plain_preadv(fd, v, n, off))
COUPLED(ssize_t, c_pwritev, (int fd, const struct iovec *v, int n, off_t off),
        plain_pwritev(fd, v, n, off))
COUPLED(ssize_t, c_recvmsg, (int fd, struct msghdr *m, int flags), recvmsg(fd, m, flags))
COUPLED(ssize_t, c_recvfrom,
        (int fd, void *b, size_t n, int flags, struct sockaddr *a, socklen_t *l),
        recvfrom(fd, b, n, flags, a, l))
COUPLED(ssize_t, c_sendto,
        (int fd, const void *b, size_t n, int flags, const struct sockaddr *a, socklen_t l),
        sendto(fd, b, n, flags, a, l))
COUPLED(ssize_t, c_sendmsg, (int fd, const struct msghdr *m, int flags), sendmsg(fd, m, flags))
COUPLED(int, c_poll, (struct pollfd *f, nfds_t n, int t), poll(f, n, t))
COUPLED(int, c_ppoll, (struct pollfd *f, nfds_t n, const struct timespec *t, const sigset_t *s),
        ppoll(f, n, t, s))
COUPLED(int, c_select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t),
        select(n, r, w, e, t))
COUPLED(int, c_pselect,
        (int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t, const sigset_t *s),
        pselect(n, r, w, e, t, s))
COUPLED(int, c_epoll_pwait, (int ep, struct epoll_event *ev, int n, int t, const sigset_t *s),
        epoll_pwait(ep, ev, n, t, s))
COUPLED(pid_t, c_wait4, (pid_t pid, int *st, int opt, struct rusage *ru),
        wait4(pid, st, opt, ru))
COUPLED(int, c_waitid, (idtype_t t, id_t id, siginfo_t *si, int opt), waitid(t, id, si, opt))
COUPLED(int, c_fsync, (int fd), fsync(fd))
COUPLED(int, c_fdatasync, (int fd), fdatasync(fd))
COUPLED(int, c_syncfs, (int fd), syncfs(fd))
COUPLED(int, c_flock, (int fd, int op), flock(fd, op))
COUPLED(int, c_fcntl_lock, (int fd, int cmd, void *arg), fcntl(fd, cmd, arg))
COUPLED(int, c_lockf, (int fd, int cmd, off_t len), lockf(fd, cmd, len))
COUPLED(int, c_accept4, (int s, struct sockaddr *a, socklen_t *l, int flags),
        accept4(s, a, l, flags))
COUPLED(int, c_connect, (int s, const struct sockaddr *a, socklen_t l), connect(s, a, l))
COUPLED(int, c_getaddrinfo,
        (const char *node, const char *svc, const struct addrinfo *h, struct addrinfo **res),
        getaddrinfo(node, svc, h, res))
COUPLED(int, c_getnameinfo,
        (const struct sockaddr *a, socklen_t l, char *h, socklen_t hl, char *s, socklen_t sl,
         int flags),
        getnameinfo(a, l, h, hl, s, sl, flags))
COUPLED(ssize_t, c_msgrcv, (int id, void *m, size_t n, long type, int flags),
        msgrcv(id, m, n, type, flags))
COUPLED(int, c_msgsnd, (int id, const void *m, size_t n, int flags), msgsnd(id, m, n, flags))
COUPLED(int, c_semtimedop, (int id, struct sembuf *s, size_t n, const struct timespec *t),
        semtimedop(id, s, n, t))
COUPLED(int, c_sigtimedwait, (const sigset_t *set, siginfo_t *si, const struct timespec *t),
        sigtimedwait(set, si, t))

/* ------------------------------------------------------------ bounce buffers */

static bool (*bounce_test)(const void *p, size_t len);

void proc_set_bounce_test(bool (*fn)(const void *p, size_t len))
{
    bounce_test = fn;
}

static bool needs_bounce(const struct iovec *iov, int n)
{
    if (likely(!bounce_test))
        return false;
    for (int i = 0; i < n; i++)
        if (iov[i].iov_len && bounce_test(iov[i].iov_base, iov[i].iov_len))
            return true;
    return false;
}

/* A private buffer for len bytes (errno ENOMEM and NULL when there is no
 * memory: the call then fails as the kernel would have it fail). */
static void *bounce_alloc(size_t len)
{
    void *b = malloc(len ? len : 1);
    if (!b)
        errno = ENOMEM;
    return b;
}

static void scatter(const struct iovec *iov, int n, const char *from, size_t len)
{
    for (int i = 0; i < n && len; i++) {
        size_t k = iov[i].iov_len < len ? iov[i].iov_len : len;
        memcpy(iov[i].iov_base, from, k);
        from += k;
        len -= k;
    }
}

static void gather(const struct iovec *iov, int n, char *to)
{
    for (int i = 0; i < n; i++) {
        memcpy(to, iov[i].iov_base, iov[i].iov_len);
        to += iov[i].iov_len;
    }
}

/* The result of a call made on a bounce buffer, errno kept across free. */
static ssize_t bounce_done(void *b, ssize_t r)
{
    int e = errno;
    free(b);
    errno = e;
    return r;
}

/* ------------------------------------------------------------ read, write */

static ssize_t read_iov_direct(int fd, const struct iovec *iov, int n, off_t off);
static ssize_t write_iov_direct(int fd, const struct iovec *iov, int n, off_t off);

static ssize_t read_iov(int fd, const struct iovec *iov, int n, off_t off)
{
    if (likely(!needs_bounce(iov, n)))
        return read_iov_direct(fd, iov, n, off);
    size_t total = iov_total(iov, n);
    char *b = bounce_alloc(total);
    if (!b)
        return -1;
    struct iovec v = {b, total};
    ssize_t r = read_iov_direct(fd, &v, 1, off);
    if (r > 0)
        scatter(iov, n, b, (size_t)r);
    return bounce_done(b, r);
}

static ssize_t write_iov(int fd, const struct iovec *iov, int n, off_t off)
{
    if (likely(!needs_bounce(iov, n)))
        return write_iov_direct(fd, iov, n, off);
    size_t total = iov_total(iov, n);
    char *b = bounce_alloc(total);
    if (!b)
        return -1;
    gather(iov, n, b);
    struct iovec v = {b, total};
    return bounce_done(b, write_iov_direct(fd, &v, 1, off));
}

static ssize_t read_iov_direct(int fd, const struct iovec *iov, int n, off_t off)
{
    if (blt_coupled())
        return plain_preadv(fd, iov, n, off);
    unsigned c = fd_classify(fd);
    if (iov_total(iov, n) >= blt_offload_min() || (c & FD_RD_COUPLED))
        return c_preadv(fd, iov, n, off);
    if (c & FD_FILE)
        return plain_preadv(fd, iov, n, off);
    ssize_t r = preadv2(fd, iov, n, off, RWF_NOWAIT);
    if (r >= 0)
        return r;
    if (errno == EOPNOTSUPP)
        fd_no_nowait(fd, FD_RD_COUPLED);
    return errno == EAGAIN || errno == EOPNOTSUPP ? c_preadv(fd, iov, n, off) : r;
}

/* Writes what is left of iov after `done` bytes, coupled; returns the
 * total written (done if nothing more could be). */
/* What is left of iov[0 .. n) after its first `done` bytes, in rest
 * (REST_MAX entries: callers with more vectors couple at once); the
 * number of entries. */
#define REST_MAX 64
static int iov_rest(const struct iovec *iov, size_t n, size_t done, struct iovec *rest)
{
    int k = 0;
    for (size_t i = 0; i < n && k < REST_MAX; i++) {
        if (done >= iov[i].iov_len) {
            done -= iov[i].iov_len;
            continue;
        }
        rest[k].iov_base = (char *)iov[i].iov_base + done;
        rest[k++].iov_len = iov[i].iov_len - done;
        done = 0;
    }
    return k;
}

static ssize_t finish_write(int fd, const struct iovec *iov, int n, off_t off, size_t done)
{
    struct iovec rest[REST_MAX];
    int k = iov_rest(iov, (size_t)n, done, rest);
    ssize_t r = c_pwritev(fd, rest, k, off < 0 ? off : off + (off_t)done);
    return r < 0 ? (ssize_t)done : (ssize_t)done + r;
}

static ssize_t write_iov_direct(int fd, const struct iovec *iov, int n, off_t off)
{
    if (blt_coupled())
        return plain_pwritev(fd, iov, n, off);
    unsigned c = fd_classify(fd);
    size_t total = iov_total(iov, n);
    if (total >= blt_offload_min() || (c & FD_WR_COUPLED))
        return c_pwritev(fd, iov, n, off);
    if (c & FD_FILE)
        return plain_pwritev(fd, iov, n, off);
    if (n > REST_MAX) /* finish_write's copy holds REST_MAX */
        return c_pwritev(fd, iov, n, off);
    ssize_t r = pwritev2(fd, iov, n, off, RWF_NOWAIT);
    if (r >= 0)
        return (size_t)r == total || r == 0 ? r : finish_write(fd, iov, n, off, (size_t)r);
    if (errno == EOPNOTSUPP)
        fd_no_nowait(fd, FD_WR_COUPLED);
    return errno == EAGAIN || errno == EOPNOTSUPP ? c_pwritev(fd, iov, n, off) : r;
}

static ssize_t ip_read(int fd, void *buf, size_t n)
{
    struct iovec v = {buf, n};
    return read_iov(fd, &v, 1, -1);
}

static ssize_t ip_write(int fd, const void *buf, size_t n)
{
    struct iovec v = {(void *)buf, n};
    return write_iov(fd, &v, 1, -1);
}

static ssize_t ip_readv(int fd, const struct iovec *iov, int n)
{
    return read_iov(fd, iov, n, -1);
}

static ssize_t ip_writev(int fd, const struct iovec *iov, int n)
{
    return write_iov(fd, iov, n, -1);
}

/* An offset below 0 is EINVAL for pread/pwrite; preadv2 would take -1 as
 * "the current position". */
static ssize_t ip_pread(int fd, void *buf, size_t n, off_t off)
{
    if (off < 0) {
        errno = EINVAL;
        return -1;
    }
    struct iovec v = {buf, n};
    return read_iov(fd, &v, 1, off);
}

static ssize_t ip_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (off < 0) {
        errno = EINVAL;
        return -1;
    }
    struct iovec v = {(void *)buf, n};
    return write_iov(fd, &v, 1, off);
}

/* _FORTIFY_SOURCE's checked read: the buffer must hold n bytes. */
static ssize_t ip_read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        __builtin_trap();
    return ip_read(fd, buf, n);
}

/* ------------------------------------------------------------ sockets */

static ssize_t recvfrom_direct(int fd, void *b, size_t n, int flags, struct sockaddr *a,
                               socklen_t *l);

static ssize_t ip_recvfrom(int fd, void *b, size_t n, int flags, struct sockaddr *a,
                           socklen_t *l)
{
    struct iovec v = {b, n};
    if (likely(!needs_bounce(&v, 1)))
        return recvfrom_direct(fd, b, n, flags, a, l);
    char *bb = bounce_alloc(n);
    if (!bb)
        return -1;
    ssize_t r = recvfrom_direct(fd, bb, n, flags, a, l);
    if (r > 0)
        memcpy(b, bb, (size_t)r);
    return bounce_done(bb, r);
}

static ssize_t recvfrom_direct(int fd, void *b, size_t n, int flags, struct sockaddr *a,
                               socklen_t *l)
{
    if (blt_coupled() || (flags & MSG_DONTWAIT))
        return recvfrom(fd, b, n, flags, a, l);
    ssize_t r = recvfrom(fd, b, n, flags | MSG_DONTWAIT, a, l);
    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? c_recvfrom(fd, b, n, flags, a, l)
                                                             : r;
}

static ssize_t ip_recv(int fd, void *b, size_t n, int flags)
{
    return ip_recvfrom(fd, b, n, flags, NULL, NULL);
}

static ssize_t ip_recv_chk(int fd, void *b, size_t n, size_t buflen, int flags)
{
    if (n > buflen)
        __builtin_trap();
    return ip_recv(fd, b, n, flags);
}

static ssize_t ip_recvmsg(int fd, struct msghdr *m, int flags)
{
    if (blt_coupled() || (flags & MSG_DONTWAIT))
        return recvmsg(fd, m, flags);
    ssize_t r = recvmsg(fd, m, flags | MSG_DONTWAIT);
    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? c_recvmsg(fd, m, flags) : r;
}

/* A blocking send on a stream socket sends everything: a short
 * non-blocking one is finished coupled. */
static ssize_t sendto_direct(int fd, const void *b, size_t n, int flags,
                             const struct sockaddr *a, socklen_t l);

static ssize_t ip_sendto(int fd, const void *b, size_t n, int flags, const struct sockaddr *a,
                         socklen_t l)
{
    struct iovec v = {(void *)b, n};
    if (likely(!needs_bounce(&v, 1)))
        return sendto_direct(fd, b, n, flags, a, l);
    char *bb = bounce_alloc(n);
    if (!bb)
        return -1;
    memcpy(bb, b, n);
    return bounce_done(bb, sendto_direct(fd, bb, n, flags, a, l));
}

static ssize_t sendto_direct(int fd, const void *b, size_t n, int flags,
                             const struct sockaddr *a, socklen_t l)
{
    if (blt_coupled() || (flags & MSG_DONTWAIT))
        return sendto(fd, b, n, flags, a, l);
    ssize_t r = sendto(fd, b, n, flags | MSG_DONTWAIT, a, l);
    if (r < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? c_sendto(fd, b, n, flags, a, l) : r;
    if ((size_t)r == n || r == 0)
        return r;
    ssize_t more = c_sendto(fd, (const char *)b + r, n - (size_t)r, flags, a, l);
    return more < 0 ? r : r + more;
}

static ssize_t ip_send(int fd, const void *b, size_t n, int flags)
{
    return ip_sendto(fd, b, n, flags, NULL, 0);
}

static ssize_t ip_sendmsg(int fd, const struct msghdr *m, int flags)
{
    if (blt_coupled() || (flags & MSG_DONTWAIT))
        return sendmsg(fd, m, flags);
    if (m->msg_iovlen > REST_MAX) /* the rest of a short send would not fit */
        return c_sendmsg(fd, m, flags);
    ssize_t r = sendmsg(fd, m, flags | MSG_DONTWAIT);
    if (r < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? c_sendmsg(fd, m, flags) : r;
    size_t total = iov_total(m->msg_iov, (int)m->msg_iovlen);
    if ((size_t)r == total || r == 0)
        return r;
    struct msghdr rest = *m; /* the ancillary data went with the first part */
    rest.msg_control = NULL;
    rest.msg_controllen = 0;
    struct iovec v[REST_MAX];
    rest.msg_iov = v;
    rest.msg_iovlen = (size_t)iov_rest(m->msg_iov, m->msg_iovlen, (size_t)r, v);
    ssize_t more = c_sendmsg(fd, &rest, flags);
    return more < 0 ? r : r + more;
}

int proc_coupled_accept4(int s, struct sockaddr *a, socklen_t *l, int flags)
{
    return blt_coupled() ? accept4(s, a, l, flags) : c_accept4(s, a, l, flags);
}

static int ip_connect(int s, const struct sockaddr *a, socklen_t l)
{
    return blt_coupled() ? connect(s, a, l) : c_connect(s, a, l);
}

static int ip_getaddrinfo(const char *node, const char *svc, const struct addrinfo *h,
                          struct addrinfo **res)
{
    return c_getaddrinfo(node, svc, h, res);
}

static int ip_getnameinfo(const struct sockaddr *a, socklen_t l, char *h, socklen_t hl, char *s,
                          socklen_t sl, int flags)
{
    return c_getnameinfo(a, l, h, hl, s, sl, flags);
}

/* ------------------------------------------------------------ waiting for many */

static int ip_poll(struct pollfd *f, nfds_t n, int timeout)
{
    if (blt_coupled() || timeout == 0)
        return poll(f, n, timeout);
    int r = poll(f, n, 0);
    return r == 0 ? c_poll(f, n, timeout) : r;
}

static int ip_poll_chk(struct pollfd *f, nfds_t n, int timeout, size_t flen)
{
    if (flen / sizeof *f < n)
        __builtin_trap();
    return ip_poll(f, n, timeout);
}

static bool zero_ts(const struct timespec *t)
{
    return t && t->tv_sec == 0 && t->tv_nsec == 0;
}

static int ip_ppoll(struct pollfd *f, nfds_t n, const struct timespec *t, const sigset_t *s)
{
    if (blt_coupled() || zero_ts(t))
        return ppoll(f, n, t, s);
    static const struct timespec zero;
    int r = ppoll(f, n, &zero, s);
    return r == 0 ? c_ppoll(f, n, t, s) : r;
}

/* select's sets are results: a first look with a zero timeout works on
 * copies, so that the coupled call starts from the caller's sets. */
struct fd_sets {
    fd_set r, w, e;
};

static int select_look(int n, fd_set *r, fd_set *w, fd_set *e, struct fd_sets *copy)
{
    if (r)
        copy->r = *r;
    if (w)
        copy->w = *w;
    if (e)
        copy->e = *e;
    struct timeval zero = {0, 0};
    int got = select(n, r ? &copy->r : NULL, w ? &copy->w : NULL, e ? &copy->e : NULL, &zero);
    if (got > 0) {
        if (r)
            *r = copy->r;
        if (w)
            *w = copy->w;
        if (e)
            *e = copy->e;
    }
    return got;
}

static int ip_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
    if (blt_coupled() || (t && t->tv_sec == 0 && t->tv_usec == 0) || n > FD_SETSIZE)
        return select(n, r, w, e, t);
    struct fd_sets copy;
    int got = select_look(n, r, w, e, &copy);
    return got == 0 ? c_select(n, r, w, e, t) : got;
}

static int ip_pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
                      const sigset_t *s)
{
    if (blt_coupled() || zero_ts(t) || n > FD_SETSIZE)
        return pselect(n, r, w, e, t, s);
    struct fd_sets copy;
    int got = select_look(n, r, w, e, &copy);
    return got == 0 ? c_pselect(n, r, w, e, t, s) : got;
}

static int ip_epoll_pwait(int ep, struct epoll_event *ev, int n, int t, const sigset_t *s)
{
    if (blt_coupled() || t == 0)
        return epoll_pwait(ep, ev, n, t, s);
    int r = epoll_pwait(ep, ev, n, 0, s);
    return r == 0 ? c_epoll_pwait(ep, ev, n, t, s) : r;
}

static int ip_epoll_wait(int ep, struct epoll_event *ev, int n, int t)
{
    return ip_epoll_pwait(ep, ev, n, t, NULL);
}

/* ------------------------------------------------------------ children */

static pid_t ip_wait4(pid_t pid, int *st, int opt, struct rusage *ru)
{
    if (blt_coupled() || (opt & WNOHANG))
        return wait4(pid, st, opt, ru);
    pid_t r = wait4(pid, st, opt | WNOHANG, ru);
    return r == 0 ? c_wait4(pid, st, opt, ru) : r;
}

static pid_t ip_waitpid(pid_t pid, int *st, int opt) { return ip_wait4(pid, st, opt, NULL); }
static pid_t ip_wait(int *st) { return ip_wait4(-1, st, 0, NULL); }
static pid_t ip_wait3(int *st, int opt, struct rusage *ru) { return ip_wait4(-1, st, opt, ru); }

static int ip_waitid(idtype_t t, id_t id, siginfo_t *si, int opt)
{
    if (blt_coupled() || (opt & WNOHANG))
        return waitid(t, id, si, opt);
    si->si_pid = 0;
    int r = waitid(t, id, si, opt | WNOHANG);
    return r == 0 && si->si_pid == 0 ? c_waitid(t, id, si, opt) : r;
}

/* ------------------------------------------------------------ files */

static int ip_fsync(int fd) { return blt_coupled() ? fsync(fd) : c_fsync(fd); }
static int ip_fdatasync(int fd) { return blt_coupled() ? fdatasync(fd) : c_fdatasync(fd); }
static int ip_syncfs(int fd) { return blt_coupled() ? syncfs(fd) : c_syncfs(fd); }

static int ip_flock(int fd, int op)
{
    if (blt_coupled() || (op & LOCK_NB) || (op & LOCK_UN))
        return flock(fd, op);
    int r = flock(fd, op | LOCK_NB);
    return r < 0 && errno == EWOULDBLOCK ? c_flock(fd, op) : r;
}

int proc_coupled_fcntl_lock(int fd, int cmd, void *arg)
{
    int try_cmd = cmd == F_SETLKW ? F_SETLK : F_OFD_SETLK;
    if (blt_coupled())
        return fcntl(fd, cmd, arg);
    int r = fcntl(fd, try_cmd, arg);
    return r < 0 && (errno == EAGAIN || errno == EACCES) ? c_fcntl_lock(fd, cmd, arg) : r;
}

static int ip_lockf(int fd, int cmd, off_t len)
{
    if (blt_coupled() || cmd != F_LOCK)
        return lockf(fd, cmd, len);
    int r = lockf(fd, F_TLOCK, len);
    return r < 0 && (errno == EAGAIN || errno == EACCES) ? c_lockf(fd, cmd, len) : r;
}

/* ------------------------------------------------------------ System V IPC */

static ssize_t ip_msgrcv(int id, void *m, size_t n, long type, int flags)
{
    if (blt_coupled() || (flags & IPC_NOWAIT))
        return msgrcv(id, m, n, type, flags);
    ssize_t r = msgrcv(id, m, n, type, flags | IPC_NOWAIT);
    return r < 0 && errno == ENOMSG ? c_msgrcv(id, m, n, type, flags) : r;
}

static int ip_msgsnd(int id, const void *m, size_t n, int flags)
{
    if (blt_coupled() || (flags & IPC_NOWAIT))
        return msgsnd(id, m, n, flags);
    int r = msgsnd(id, m, n, flags | IPC_NOWAIT);
    return r < 0 && errno == EAGAIN ? c_msgsnd(id, m, n, flags) : r;
}

static int ip_semtimedop(int id, struct sembuf *s, size_t n, const struct timespec *t)
{
    if (blt_coupled() || zero_ts(t) || n > 64)
        return semtimedop(id, s, n, t);
    struct sembuf now[64];
    bool waits = false;
    for (size_t i = 0; i < n; i++) {
        now[i] = s[i];
        waits |= !(s[i].sem_flg & IPC_NOWAIT);
        now[i].sem_flg |= IPC_NOWAIT;
    }
    if (!waits)
        return semtimedop(id, s, n, t);
    int r = semtimedop(id, now, n, NULL);
    return r < 0 && errno == EAGAIN ? c_semtimedop(id, s, n, t) : r;
}

static int ip_semop(int id, struct sembuf *s, size_t n) { return ip_semtimedop(id, s, n, NULL); }

/* ------------------------------------------------------------ signals */

static int ip_sigtimedwait(const sigset_t *set, siginfo_t *si, const struct timespec *t)
{
    if (blt_coupled() || zero_ts(t))
        return sigtimedwait(set, si, t);
    static const struct timespec zero;
    int r = sigtimedwait(set, si, &zero);
    return r < 0 && errno == EAGAIN ? c_sigtimedwait(set, si, t) : r;
}

static int ip_sigwaitinfo(const sigset_t *set, siginfo_t *si)
{
    return ip_sigtimedwait(set, si, NULL);
}

/* sigwait returns the error number instead of setting errno. */
static int ip_sigwait(const sigset_t *set, int *sig)
{
    siginfo_t si;
    int r;
    do
        r = ip_sigtimedwait(set, &si, NULL);
    while (r < 0 && errno == EINTR && !core_self()->kill_pending);
    if (r < 0)
        return errno;
    *sig = r;
    return 0;
}

/* ------------------------------------------------------------ for proc */

ssize_t proc_read(int fd, void *buf, size_t n) { return ip_read(fd, buf, n); }
ssize_t proc_write(int fd, const void *buf, size_t n) { return ip_write(fd, buf, n); }
pid_t proc_waitpid(pid_t pid, int *status, int options)
{
    return ip_wait4(pid, status, options, NULL);
}

/* ------------------------------------------------------------ the table */

struct blocking_fn {
    const char *name;
    void *addr;
};

#define FN(n, f) {n, (void *)(f)}
static const struct blocking_fn table[] = {
    FN("__poll_chk", ip_poll_chk),
    FN("__read_chk", ip_read_chk),
    FN("__recv_chk", ip_recv_chk),
    FN("connect", ip_connect),
    FN("epoll_pwait", ip_epoll_pwait),
    FN("epoll_wait", ip_epoll_wait),
    FN("fdatasync", ip_fdatasync),
    FN("flock", ip_flock),
    FN("fsync", ip_fsync),
    FN("getaddrinfo", ip_getaddrinfo),
    FN("getnameinfo", ip_getnameinfo),
    FN("lockf", ip_lockf),
    FN("lockf64", ip_lockf),
    FN("msgrcv", ip_msgrcv),
    FN("msgsnd", ip_msgsnd),
    FN("poll", ip_poll),
    FN("ppoll", ip_ppoll),
    FN("pread", ip_pread),
    FN("pread64", ip_pread),
    FN("pselect", ip_pselect),
    FN("pwrite", ip_pwrite),
    FN("pwrite64", ip_pwrite),
    FN("read", ip_read),
    FN("readv", ip_readv),
    FN("recv", ip_recv),
    FN("recvfrom", ip_recvfrom),
    FN("recvmsg", ip_recvmsg),
    FN("select", ip_select),
    FN("semop", ip_semop),
    FN("semtimedop", ip_semtimedop),
    FN("send", ip_send),
    FN("sendmsg", ip_sendmsg),
    FN("sendto", ip_sendto),
    FN("sigtimedwait", ip_sigtimedwait),
    FN("sigwait", ip_sigwait),
    FN("sigwaitinfo", ip_sigwaitinfo),
    FN("syncfs", ip_syncfs),
    FN("wait", ip_wait),
    FN("wait3", ip_wait3),
    FN("wait4", ip_wait4),
    FN("waitid", ip_waitid),
    FN("waitpid", ip_waitpid),
    FN("write", ip_write),
    FN("writev", ip_writev),
};

void *proc_blocking_resolve(const char *name)
{
    size_t lo = 0, hi = sizeof table / sizeof table[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, table[mid].name);
        if (c == 0)
            return table[mid].addr;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}
