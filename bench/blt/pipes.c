/*
 * pipes.c - compute throughput of a node with C computing tasks while R
 * tasks read FIFOs that a writer task feeds every millisecond.  Readers
 * block in read() most of the time: under UPVM (built with upvmcc -DUPVM,
 * one node: UPVM_NODES=1) each such read is coupled to a kernel context,
 * and the computing tasks go on; under genuine PVM (cc -lpvm3) every task
 * is a process.
 *
 *   pipes [-c COMPUTERS] [-r READERS] [-t SECONDS] [-d DIR]
 * The master spawns the tasks (its own program), waits until all have
 * started, and gives them one window [start, end] (CLOCK_MONOTONIC); the
 * computers count loop iterations inside it (chunks of CHUNK iterations,
 * a yield between chunks: UPVM does not preempt), the readers read until
 * the writer's last byte ('q'), the writer writes one byte to each FIFO
 * every millisecond (usleep: under UPVM a timer of the scheduler).
 * Prints "RESULT pipes C R iterations_per_s bytes_read bytes_written".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pvm3.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef UPVM
#include <upvm.h>
#endif

#define CHUNK 20000L
enum { TAG_READY = 1, TAG_GO, TAG_RESULT };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void yield(void)
{
#ifdef UPVM
    upvm_yield();
#else
    sched_yield();
#endif
}

static void fifo_path(char *out, size_t n, const char *dir, int i)
{
    snprintf(out, n, "%s/fifo%d", dir, i);
}

static int open_fifo(const char *dir, int i)
{
    char p[4096];
    fifo_path(p, sizeof p, dir, i);
    int fd = open(p, O_RDWR); /* never waits for the other end (Linux) */
    if (fd < 0) {
        fprintf(stderr, "pipes: %s: %s\n", p, strerror(errno));
        exit(1);
    }
    return fd;
}

static void window(double *start, double *end)
{
    int parent = pvm_parent();
    pvm_initsend(PvmDataDefault);
    pvm_send(parent, TAG_READY);
    pvm_recv(parent, TAG_GO);
    pvm_upkdouble(start, 1, 1);
    pvm_upkdouble(end, 1, 1);
}

/* kind: 0 iterations (a computer), 1 bytes read, 2 bytes written */
static void result(double a, double kind)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&a, 1, 1);
    pvm_pkdouble(&kind, 1, 1);
    pvm_send(pvm_parent(), TAG_RESULT);
}

static void computer(void)
{
    double start, end, count = 0;
    window(&start, &end);
    double x = 1.0;
    for (;;) {
        for (long i = 0; i < CHUNK; i++) {
            x = x * 1.0000001 + 1e-9;
            __asm__ volatile("" : "+x"(x));
        }
        double t = now_s();
        if (t >= start && t < end)
            count += CHUNK;
        if (t >= end)
            break;
        yield();
    }
    if (x < 0)
        count = 0; /* never: keeps x */
    result(count, 0);
}

static void reader(const char *dir, int i)
{
    double start, end, bytes = 0;
    int fd = open_fifo(dir, i);
    window(&start, &end);
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break;
        }
        bytes += (double)n;
        if (buf[n - 1] == 'q')
            break;
    }
    close(fd);
    result(bytes, 1);
}

static void writer(const char *dir, int nr)
{
    double start, end, written = 0;
    int fds[64];
    for (int i = 0; i < nr; i++)
        fds[i] = open_fifo(dir, i);
    window(&start, &end);
    double next = start;
    while (next < end) {
        double t = now_s();
        if (t < next)
            usleep((useconds_t)((next - t) * 1e6));
        for (int i = 0; i < nr; i++)
            if (write(fds[i], "x", 1) == 1)
                written++;
        next += 0.001;
    }
    for (int i = 0; i < nr; i++) {
        if (write(fds[i], "q", 1) == 1)
            written++;
        close(fds[i]);
    }
    result(written, 2);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "-task") == 0) {
        const char *role = argv[2];
        if (strcmp(role, "compute") == 0)
            computer();
        else if (strcmp(role, "read") == 0)
            reader(argv[3], atoi(argv[4]));
        else if (strcmp(role, "write") == 0)
            writer(argv[3], atoi(argv[4]));
        pvm_exit();
        return 0;
    }
    int nc = 100, nr = 10, opt;
    double secs = 2;
    const char *dir = "/tmp";
    while ((opt = getopt(argc, argv, "c:r:t:d:")) != -1) {
        switch (opt) {
        case 'c': nc = atoi(optarg); break;
        case 'r': nr = atoi(optarg); break;
        case 't': secs = atof(optarg); break;
        case 'd': dir = optarg; break;
        default: return 2;
        }
    }
    if (nr > 64)
        return 2;
    char self[4096];
    if (!realpath(argv[0], self))
        return 1;
    if (pvm_mytid() < 0)
        return 1;
    char p[4096];
    for (int i = 0; i < nr; i++) {
        fifo_path(p, sizeof p, dir, i);
        unlink(p);
        if (mkfifo(p, 0600) != 0) {
            perror(p);
            return 1;
        }
    }
    int ntasks = nc + nr + (nr > 0), tid, got = 0;
    char num[16];
    char *cargv[] = {"-task", "compute", NULL};
    for (int i = 0; i < nc; i++)
        got += pvm_spawn(self, cargv, PvmTaskDefault, "", 1, &tid);
    for (int i = 0; i < nr; i++) {
        snprintf(num, sizeof num, "%d", i);
        char *rargv[] = {"-task", "read", (char *)dir, num, NULL};
        got += pvm_spawn(self, rargv, PvmTaskDefault, "", 1, &tid);
    }
    if (nr > 0) {
        snprintf(num, sizeof num, "%d", nr);
        char *wargv[] = {"-task", "write", (char *)dir, num, NULL};
        got += pvm_spawn(self, wargv, PvmTaskDefault, "", 1, &tid);
    }
    if (got != ntasks) {
        fprintf(stderr, "pipes: spawned %d of %d tasks\n", got, ntasks);
        return 1;
    }
    int *tids = malloc((size_t)ntasks * sizeof *tids);
    for (int i = 0; i < ntasks; i++) {
        int bufid = pvm_recv(-1, TAG_READY);
        int bytes, tag;
        pvm_bufinfo(bufid, &bytes, &tag, &tids[i]);
    }
    double start = now_s() + 0.05, end = start + secs;
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(&start, 1, 1);
    pvm_pkdouble(&end, 1, 1);
    pvm_mcast(tids, ntasks, TAG_GO);
    double iters = 0, bytes_read = 0, written = 0;
    for (int i = 0; i < ntasks; i++) {
        int bufid = pvm_recv(-1, TAG_RESULT), len, tag, from;
        pvm_bufinfo(bufid, &len, &tag, &from);
        double a, kind;
        pvm_upkdouble(&a, 1, 1);
        pvm_upkdouble(&kind, 1, 1);
        if (kind == 0)
            iters += a;
        else if (kind == 1)
            bytes_read += a;
        else
            written += a;
        (void)from;
    }
    printf("RESULT pipes %d %d %.6g %.0f %.0f\n", nc, nr, iters / secs, bytes_read, written);
    for (int i = 0; i < nr; i++) {
        fifo_path(p, sizeof p, dir, i);
        unlink(p);
    }
    free(tids);
    pvm_exit();
    return 0;
}
