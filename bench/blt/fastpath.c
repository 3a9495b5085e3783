/*
 * fastpath.c - what process mode's interposed read/write cost when they do
 * not block (no coupling: one RWF_NOWAIT try), against the same source
 * built with plain cc; and, for context, a read that must wait (coupled).
 *
 *   pread    pread of 4 KiB from a file in the page cache (256 offsets)
 *   read     lseek + read of 4 KiB from the same file
 *   preadv2  the system call UPVM's first try makes (preadv2 with
 *            RWF_NOWAIT, by syscall(): never interposed): the kernel's
 *            share of pread's difference
 *   pipe     write 64 bytes into a pipe, read them back (data there)
 *   pingpong one byte there and back between two tasks through two pipes:
 *            every read finds the pipe empty (UPVM: coupled); the partner
 *            is a task of the same node (UPVM_NODES=1) or a forked process
 *
 *   fastpath [-n ITERS] [-r REPS] FILE
 * Prints "RESULT fastpath CASE median p10 p90" in ns per operation (per
 * round trip for pingpong).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef UPVM
#include <pvm3.h>
#endif

#include "../bench_stats.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "fastpath: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void echo_loop(int in, int out, long n)
{
    char c;
    for (long i = 0; i < n; i++)
        if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
            die("echo");
}

static void report(const char *name, double *v, int n)
{
    struct stats s = summarize(v, n);
    printf("RESULT fastpath %-9s %9.1f %9.1f %9.1f\n", name, s.median, s.p10, s.p90);
    fflush(stdout);
}

int main(int argc, char **argv)
{
#ifdef UPVM
    if (argc == 5 && strcmp(argv[1], "-echo") == 0) {
        echo_loop(atoi(argv[2]), atoi(argv[3]), atol(argv[4]));
        pvm_exit();
        return 0;
    }
#endif
    long n = 200000;
    int reps = 7, opt;
    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        if (opt == 'n')
            n = atol(optarg);
        else if (opt == 'r')
            reps = atoi(optarg);
        else
            return 2;
    }
    if (optind >= argc || reps < 1 || n < 10) {
        fprintf(stderr, "usage: %s [-n iters] [-r reps] FILE\n", argv[0]);
        return 2;
    }
#ifdef UPVM
    if (pvm_mytid() < 0)
        return 1;
#endif
    int fd = open(argv[optind], O_RDONLY);
    if (fd < 0)
        die(argv[optind]);
    static char buf[4096];
    double *v = malloc((size_t)reps * sizeof(double));
    for (long i = 0; i < 256; i++) /* into the page cache */
        if (pread(fd, buf, sizeof buf, i * 4096) != (ssize_t)sizeof buf)
            die("pread (the file must have 1 MiB)");

    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            if (pread(fd, buf, sizeof buf, (i & 255) * 4096) != (ssize_t)sizeof buf)
                die("pread");
        v[r] = (now_ns() - t0) / (double)n;
    }
    report("pread", v, reps);
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            if (lseek(fd, (i & 255) * 4096, SEEK_SET) < 0 ||
                read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
                die("read");
        v[r] = (now_ns() - t0) / (double)n;
    }
    report("read", v, reps);
    for (int r = 0; r < reps; r++) {
        struct iovec iov = {buf, sizeof buf};
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            long off = (i & 255) * 4096;
            if (syscall(SYS_preadv2, fd, &iov, 1, off, 0L, RWF_NOWAIT) != (long)sizeof buf)
                die("preadv2");
        }
        v[r] = (now_ns() - t0) / (double)n;
    }
    report("preadv2", v, reps);

    int p[2];
    if (pipe(p) != 0)
        die("pipe");
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            if (write(p[1], buf, 64) != 64 || read(p[0], buf, 64) != 64)
                die("pipe");
        v[r] = (now_ns() - t0) / (double)n;
    }
    report("pipe", v, reps);

    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0)
        die("pipe");
    long m = n / 20;
    long total = m * (reps + 1);
#ifdef UPVM
    char a[16], b[16], c[24];
    snprintf(a, sizeof a, "%d", to[0]);
    snprintf(b, sizeof b, "%d", from[1]);
    snprintf(c, sizeof c, "%ld", total);
    char *eargv[] = {"-echo", a, b, c, NULL};
    int tid;
    if (pvm_spawn(argv[0], eargv, PvmTaskDefault, "", 1, &tid) != 1) {
        fprintf(stderr, "fastpath: cannot spawn the echo task (UPVM_NODES=1?)\n");
        return 1;
    }
#else
    pid_t pid = fork();
    if (pid == 0) {
        echo_loop(to[0], from[1], total);
        _exit(0);
    }
#endif
    char ch = 'x';
    for (int r = -1; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < m; i++)
            if (write(to[1], &ch, 1) != 1 || read(from[0], &ch, 1) != 1)
                die("pingpong");
        if (r >= 0)
            v[r] = (now_ns() - t0) / (double)m;
    }
    report("pingpong", v, reps);
#ifdef UPVM
    pvm_exit();
#else
    waitpid(pid, NULL, 0);
#endif
    return 0;
}
