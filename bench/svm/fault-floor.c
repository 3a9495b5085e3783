/*
 * fault-floor.c - what a shared-virtual-memory page fault can cost at best
 * on this machine (issue 22; docs/design-notes.md §15): the floors a
 * protocol is compared against, and the fault mechanisms it can choose
 * from, measured in one run.  Plain C, no UPVM.
 *
 *   copy      a 4 KiB page copied from another process through shared
 *             memory with polling: request, the peer copies the page into
 *             a shared slot, the requester copies it into place (the
 *             transport's floor of a remote fault, without the fault)
 *   segv      a page made inaccessible (mprotect PROT_NONE), touched:
 *             SIGSEGV, the handler copies the page in and makes it
 *             writable again (mprotect), the access resumes; per fault,
 *             the mprotect that arms it included (an invalidation does it)
 *   uffd      a missing page of a userfaultfd-registered region touched:
 *             the faulting thread sleeps in the kernel, a handler thread
 *             reads the event and resolves it with UFFDIO_COPY; re-armed
 *             with MADV_DONTNEED (included)
 *   uffd-sigbus   the same region with UFFD_FEATURE_SIGBUS: the fault is a
 *             SIGBUS on the faulting thread, whose handler resolves it
 *             with UFFDIO_COPY itself (no second thread: a ULP could
 *             block in it and let others run, as with segv)
 *   uffd-wp   a write to a page write-protected with UFFDIO_WRITEPROTECT
 *             (a read copy to upgrade): the handler thread un-protects
 *             it (the page's contents stay)
 *
 *   fault-floor [-n FAULTS] [-r ROUNDS]     (default 2000 faults, 7 rounds)
 * Prints per mechanism the median over rounds of the mean time per fault
 * (µs), p10 beside, and the ratio to copy.  A mechanism the kernel refuses
 * (no userfaultfd, no write-protect support) is said, not measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench_stats.h"

#define PAGE 4096
#define MAX_ROUNDS 31

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static char source[PAGE]; /* what every fault brings in */

/* ------------------------------------------------------------ copy */

struct slot {
    _Atomic unsigned req, done;
    char page[PAGE];
};

/* One round of n requests served by a forked peer; µs per page. */
static double run_copy(int n)
{
    struct slot *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                          -1, 0);
    char *dst = aligned_alloc(PAGE, PAGE);
    if (s == MAP_FAILED || !dst)
        return -1;
    pid_t peer = fork();
    if (peer == 0) {
        for (unsigned seen = 0; seen < (unsigned)n;) {
            unsigned r = atomic_load_explicit(&s->req, memory_order_acquire);
            if (r == seen)
                continue;
            memcpy(s->page, source, PAGE);
            seen = r;
            atomic_store_explicit(&s->done, r, memory_order_release);
        }
        _exit(0);
    }
    double t0 = now_us();
    for (unsigned i = 1; i <= (unsigned)n; i++) {
        atomic_store_explicit(&s->req, i, memory_order_release);
        while (atomic_load_explicit(&s->done, memory_order_acquire) != i)
            ;
        memcpy(dst, s->page, PAGE);
    }
    double t = (now_us() - t0) / n;
    waitpid(peer, NULL, 0);
    munmap(s, sizeof *s);
    free(dst);
    return t;
}

/* ------------------------------------------------------------ segv */

static char *segv_page;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    char *p = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(PAGE - 1));
    (void)sig;
    (void)uc;
    if (p != segv_page)
        abort();
    mprotect(p, PAGE, PROT_READ | PROT_WRITE);
    memcpy(p, source, PAGE);
}

static double run_segv(int n)
{
    segv_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (segv_page == MAP_FAILED)
        return -1;
    struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO}, old;
    sigaction(SIGSEGV, &sa, &old);
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        mprotect(segv_page, PAGE, PROT_NONE);
        ((volatile char *)segv_page)[i % PAGE] = 1;
    }
    double t = (now_us() - t0) / n;
    sigaction(SIGSEGV, &old, NULL);
    munmap(segv_page, PAGE);
    return t;
}

/* ------------------------------------------------------------ userfaultfd */

static int uffd_open(uint64_t features, uint64_t *have)
{
    /* non-blocking: poll may say readable when the event is gone by the
     * read (another read took it, a wake-up without one) */
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct uffdio_api api = {.api = UFFD_API, .features = features};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (have)
        *have = api.features;
    return fd;
}

static int uffd_register(int fd, char *p, size_t len, uint64_t mode)
{
    struct uffdio_register r = {.range = {(uintptr_t)p, len}, .mode = mode};
    return ioctl(fd, UFFDIO_REGISTER, &r) == 0 ? 0 : -errno;
}

static int uffd_copy(int fd, char *page)
{
    struct uffdio_copy c = {.dst = (uintptr_t)page, .src = (uintptr_t)source, .len = PAGE};
    return ioctl(fd, UFFDIO_COPY, &c) == 0 || errno == EEXIST ? 0 : -errno;
}

struct server {
    int fd;
    int stop;  /* readable: the round is over */
    bool wp;   /* write-protect faults: un-protect; else missing: copy */
};

/* The handler thread: serves every fault until told to stop. */
static void *serve(void *arg)
{
    struct server *s = arg;
    struct uffd_msg m;
    struct pollfd pfd[2] = {{s->fd, POLLIN, 0}, {s->stop, POLLIN, 0}};
    while (poll(pfd, 2, -1) > 0 && !(pfd[1].revents & POLLIN)) {
        ssize_t got = read(s->fd, &m, sizeof m);
        if (got < 0 && errno == EAGAIN)
            continue;
        if (got != (ssize_t)sizeof m || m.event != UFFD_EVENT_PAGEFAULT)
            break;
        char *page = (char *)(uintptr_t)(m.arg.pagefault.address & ~(uint64_t)(PAGE - 1));
        if (s->wp) {
            struct uffdio_writeprotect w = {.range = {(uintptr_t)page, PAGE}, .mode = 0};
            ioctl(s->fd, UFFDIO_WRITEPROTECT, &w);
        } else {
            uffd_copy(s->fd, page);
        }
    }
    return NULL;
}

/* uffd (missing) or uffd-wp with a handler thread; µs per fault, or < 0. */
static double run_uffd_thread(int n, bool wp)
{
    uint64_t have = 0;
    int fd = uffd_open(wp ? UFFD_FEATURE_PAGEFAULT_FLAG_WP : 0, &have);
    if (fd < 0)
        return fd;
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double t = -ENOTSUP;
    if (p == MAP_FAILED)
        goto out;
    if (wp)
        memset(p, 1, PAGE); /* present: only write-protect faults */
    if (uffd_register(fd, p, PAGE, wp ? UFFDIO_REGISTER_MODE_WP : UFFDIO_REGISTER_MODE_MISSING))
        goto out_unmap;
    int stop[2];
    if (pipe(stop) != 0)
        goto out_unmap;
    struct server s = {fd, stop[0], wp};
    pthread_t th;
    if (pthread_create(&th, NULL, serve, &s) != 0) {
        close(stop[0]);
        close(stop[1]);
        goto out_unmap;
    }
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        if (wp) {
            struct uffdio_writeprotect w = {.range = {(uintptr_t)p, PAGE},
                                            .mode = UFFDIO_WRITEPROTECT_MODE_WP};
            if (ioctl(fd, UFFDIO_WRITEPROTECT, &w) != 0)
                break;
        } else {
            madvise(p, PAGE, MADV_DONTNEED);
        }
        ((volatile char *)p)[i % PAGE] = 2;
    }
    t = (now_us() - t0) / n;
    if (write(stop[1], "", 1) != 1)
        abort();
    pthread_join(th, NULL);
    close(stop[0]);
    close(stop[1]);
out_unmap:
    munmap(p, PAGE);
out:
    if (fd >= 0)
        close(fd);
    return t;
}

static int sigbus_fd;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (uffd_copy(sigbus_fd, (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(PAGE - 1))) != 0)
        abort();
}

/* uffd-sigbus: the faulting thread resolves its own fault. */
static double run_uffd_sigbus(int n)
{
    int fd = uffd_open(UFFD_FEATURE_SIGBUS, NULL);
    if (fd < 0)
        return fd;
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double t = -ENOTSUP;
    if (p != MAP_FAILED && uffd_register(fd, p, PAGE, UFFDIO_REGISTER_MODE_MISSING) == 0) {
        sigbus_fd = fd;
        struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO}, old;
        sigaction(SIGBUS, &sa, &old);
        double t0 = now_us();
        for (int i = 0; i < n; i++) {
            madvise(p, PAGE, MADV_DONTNEED);
            ((volatile char *)p)[i % PAGE] = 3;
        }
        t = (now_us() - t0) / n;
        sigaction(SIGBUS, &old, NULL);
    }
    if (p != MAP_FAILED)
        munmap(p, PAGE);
    close(fd);
    return t;
}

/* ------------------------------------------------------------ main */

enum { COPY, SEGV, UFFD, UFFD_SIGBUS, UFFD_WP, NMECH };
static const char *const names[NMECH] = {"copy (the floor)", "segv", "uffd", "uffd-sigbus",
                                         "uffd-wp"};

static double run(int which, int n)
{
    switch (which) {
    case COPY: return run_copy(n);
    case SEGV: return run_segv(n);
    case UFFD: return run_uffd_thread(n, false);
    case UFFD_SIGBUS: return run_uffd_sigbus(n);
    default: return run_uffd_thread(n, true);
    }
}

int main(int argc, char **argv)
{
    int n = 2000, rounds = 7, opt;
    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'r')
            rounds = atoi(optarg);
        else {
            fprintf(stderr, "usage: fault-floor [-n FAULTS] [-r ROUNDS]\n");
            return 2;
        }
    }
    if (n < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "fault-floor: -n >= 1, -r 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    memset(source, 7, sizeof source);
    static double t[NMECH][MAX_ROUNDS];
    int refused[NMECH] = {0};
    for (int r = 0; r < rounds; r++) /* rounds outermost: drifts hit every row */
        for (int m = 0; m < NMECH; m++) {
            t[m][r] = run(m, n);
            if (t[m][r] < 0)
                refused[m] = (int)-t[m][r];
        }
    double floor = summarize(t[COPY], rounds).median;
    printf("| fault (%d per round, %d rounds) | median µs | p10 µs | / copy |\n", n, rounds);
    printf("|---|---:|---:|---:|\n");
    for (int m = 0; m < NMECH; m++) {
        if (refused[m]) {
            printf("| %s | refused: %s | | |\n", names[m], strerror(refused[m]));
            continue;
        }
        struct stats st = summarize(t[m], rounds);
        printf("| %s | %.2f | %.2f | %.2f |\n", names[m], st.median, st.p10, st.median / floor);
    }
    return 0;
}
