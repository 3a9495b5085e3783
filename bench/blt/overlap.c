/*
 * overlap.c - how much of a file write overlaps computation (ULP-PiP's
 * Figure 8, measured as the Intel MPI Benchmarks measure overlap):
 *
 *   t_io    open a file on tmpfs, write one block, close (the I/O alone)
 *   t_cpu   a compute loop calibrated to take about t_io
 *   t_both  the write issued, the loop run meanwhile, the write waited for
 *   overlap = (t_io + t_cpu - t_both) / min(t_io, t_cpu)
 * (1: the shorter one hidden entirely; 0: one after the other).  Each is
 * the median of R samples, taken in turns (io, cpu, both) so that drift
 * hits all three.  The file is unlinked after each sample, untimed.
 *
 * Built two ways by bench/blt-compare.sh:
 *   upvmcc -DUPVM   method "upvm": the master ULP does open/write/close
 *                   with plain calls (a write of UPVM_KC_IO_MIN bytes or
 *                   more is coupled to a kernel context) while a second
 *                   task of the same node (UPVM_NODES=1) computes; t_both
 *                   ends when both the close and the task's answer are in
 *   cc -DHAVE_LIBAIO -DHAVE_LIBURING
 *                   method "aio": io_submit of the write (kernel AIO; on a
 *                   buffered tmpfs file it is done inside io_submit),
 *                   compute, io_getevents; "uring": IORING_OP_WRITE
 *                   submitted, compute, wait for the completion;
 *                   "uring-async": the same with IOSQE_ASYNC (io-wq at once)
 * Open and close are plain calls in every method (only the write is
 * asynchronous), so the methods do the same work.
 *
 *   overlap METHOD [-r SAMPLES] [-d DIR] SIZE_KIB...
 * Prints "RESULT overlap METHOD SIZE_KIB t_io_us t_cpu_us t_both_us overlap".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef UPVM
#include <pvm3.h>
#endif
#ifdef HAVE_LIBAIO
#include <libaio.h>
#endif
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#include "../bench_stats.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
    fprintf(stderr, "overlap: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* The compute loop: a dependent chain the compiler cannot drop. */
static double compute(long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++) {
        x = x * 1.0000001 + 1e-9;
        __asm__ volatile("" : "+x"(x));
    }
    return x;
}

static char path[4096];
static char *buf;
static size_t size;

static int open_file(void)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0)
        die(path);
    return fd;
}

static void check_written(ssize_t n)
{
    if (n != (ssize_t)size) {
        fprintf(stderr, "overlap: wrote %zd of %zu bytes\n", n, size);
        exit(1);
    }
}

static volatile double sink;

/* ------------------------------------------------------------ methods */

#ifdef UPVM
enum { TAG_GO = 1, TAG_DONE };
static int helper_tid;

static void helper(void)
{
    int parent = pvm_parent();
    for (;;) {
        long n;
        pvm_recv(parent, TAG_GO);
        pvm_upklong(&n, 1, 1);
        if (n < 0)
            break;
        sink = compute(n);
        pvm_initsend(PvmDataDefault);
        pvm_send(parent, TAG_DONE);
    }
    pvm_exit();
}

static double io_alone(void)
{
    double t0 = now_us();
    int fd = open_file();
    check_written(write(fd, buf, size)); /* coupled when size >= UPVM_KC_IO_MIN */
    close(fd);
    return now_us() - t0;
}

static double both(long n)
{
    double t0 = now_us();
    pvm_initsend(PvmDataDefault); /* the helper is made ready, not run */
    pvm_pklong(&n, 1, 1);
    pvm_send(helper_tid, TAG_GO);
    int fd = open_file();
    check_written(write(fd, buf, size)); /* the helper computes meanwhile */
    close(fd);
    pvm_recv(helper_tid, TAG_DONE);
    return now_us() - t0;
}
#else
static const char *method;
#ifdef HAVE_LIBAIO
static io_context_t aio;
#endif
#ifdef HAVE_LIBURING
static struct io_uring ring;
#endif

/* Issue the write on fd; returns nothing, wait_io waits for it. */
static void issue(int fd)
{
#ifdef HAVE_LIBAIO
    if (method[0] == 'a') {
        struct iocb cb, *cbs[1] = {&cb};
        io_prep_pwrite(&cb, fd, buf, size, 0);
        if (io_submit(aio, 1, cbs) != 1)
            die("io_submit");
        return;
    }
#endif
#ifdef HAVE_LIBURING
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    io_uring_prep_write(sqe, fd, buf, (unsigned)size, 0);
    if (strcmp(method, "uring-async") == 0)
        sqe->flags |= IOSQE_ASYNC;
    if (io_uring_submit(&ring) != 1)
        die("io_uring_submit");
#endif
}

static void wait_io(void)
{
#ifdef HAVE_LIBAIO
    if (method[0] == 'a') {
        struct io_event ev;
        if (io_getevents(aio, 1, 1, &ev, NULL) != 1)
            die("io_getevents");
        check_written((ssize_t)ev.res);
        return;
    }
#endif
#ifdef HAVE_LIBURING
    struct io_uring_cqe *cqe;
    int rc = io_uring_wait_cqe(&ring, &cqe);
    if (rc < 0) {
        errno = -rc;
        die("io_uring_wait_cqe");
    }
    check_written(cqe->res);
    io_uring_cqe_seen(&ring, cqe);
#endif
}

static double io_alone(void)
{
    double t0 = now_us();
    int fd = open_file();
    issue(fd);
    wait_io();
    close(fd);
    return now_us() - t0;
}

static double both(long n)
{
    double t0 = now_us();
    int fd = open_file();
    issue(fd);
    sink = compute(n);
    wait_io();
    close(fd);
    return now_us() - t0;
}
#endif

/* ------------------------------------------------------------ main */

static double cpu_alone(long n)
{
    double t0 = now_us();
    sink = compute(n);
    return now_us() - t0;
}

int main(int argc, char **argv)
{
#ifdef UPVM
    if (argc > 1 && strcmp(argv[1], "-helper") == 0) {
        helper();
        return 0;
    }
#endif
    if (argc < 2) {
        fprintf(stderr, "usage: %s METHOD [-r SAMPLES] [-d DIR] SIZE_KIB...\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    int samples = 40, opt;
    const char *dir = "/dev/shm";
    optind = 2;
    while ((opt = getopt(argc, argv, "r:d:")) != -1) {
        if (opt == 'r')
            samples = atoi(optarg);
        else if (opt == 'd')
            dir = optarg;
        else
            return 2;
    }
    snprintf(path, sizeof path, "%s/blt-overlap.%d", dir, (int)getpid());
#ifdef UPVM
    if (strcmp(name, "upvm") != 0) {
        fprintf(stderr, "overlap: this build has the method upvm only\n");
        return 2;
    }
    if (pvm_mytid() < 0)
        return 1;
    char *hargv[] = {"-helper", NULL};
    if (pvm_spawn(argv[0], hargv, PvmTaskDefault, "", 1, &helper_tid) != 1) {
        fprintf(stderr, "overlap: cannot spawn the helper (UPVM_NODES=1?)\n");
        return 1;
    }
#else
    method = name;
    if (strcmp(name, "aio") == 0) {
#ifdef HAVE_LIBAIO
        if (io_setup(4, &aio) != 0)
            die("io_setup");
#else
        fprintf(stderr, "overlap: built without libaio\n");
        return 3;
#endif
    } else if (strcmp(name, "uring") == 0 || strcmp(name, "uring-async") == 0) {
#ifdef HAVE_LIBURING
        int rc = io_uring_queue_init(4, &ring, 0);
        if (rc < 0) {
            errno = -rc;
            die("io_uring_queue_init");
        }
#else
        fprintf(stderr, "overlap: built without liburing\n");
        return 3;
#endif
    } else {
        fprintf(stderr, "overlap: unknown method %s (aio, uring, uring-async)\n", name);
        return 2;
    }
#endif
    /* the loop's speed: the best of a few 20 ms runs */
    long probe = 1000000;
    double best = 1e30;
    for (int i = 0; i < 5; i++) {
        double t = cpu_alone(probe);
        if (t < best)
            best = t;
    }
    double us_per_iter = best / (double)probe;

    double *tio = malloc((size_t)samples * sizeof(double));
    double *tcpu = malloc((size_t)samples * sizeof(double));
    double *tboth = malloc((size_t)samples * sizeof(double));
    if (!tio || !tcpu || !tboth)
        die("malloc");
    for (int a = optind; a < argc; a++) {
        size = (size_t)atol(argv[a]) * 1024;
        free(buf);
        if (!(buf = malloc(size)))
            die("malloc");
        memset(buf, 'x', size);
        /* warm up, and t_io's first estimate for the calibration */
        double est[5];
        for (int i = 0; i < 5; i++) {
            est[i] = io_alone();
            unlink(path);
        }
        long n = (long)(summarize(est, 5).median / us_per_iter);
        for (int i = 0; i < 2; i++) {
            (void)both(n);
            unlink(path);
        }
        for (int s = 0; s < samples; s++) {
            tio[s] = io_alone();
            unlink(path);
            tcpu[s] = cpu_alone(n);
            tboth[s] = both(n);
            unlink(path);
        }
        double io = summarize(tio, samples).median, cpu = summarize(tcpu, samples).median,
               bo = summarize(tboth, samples).median;
        double lo = io < cpu ? io : cpu;
        printf("RESULT overlap %-12s %6ld %10.1f %10.1f %10.1f %6.3f\n", name,
               (long)(size / 1024), io, cpu, bo, (io + cpu - bo) / lo);
        fflush(stdout);
    }
#ifdef UPVM
    long stop = -1;
    pvm_initsend(PvmDataDefault);
    pvm_pklong(&stop, 1, 1);
    pvm_send(helper_tid, TAG_GO);
    pvm_exit();
#endif
    return 0;
}
