/*
 * fork_bench.c - the operating system's way of starting a task, as the
 * peer of spawn_bench.c: fork + exec of a trivial program (this one,
 * dynamically linked to libc like any program), without PVM.
 *
 *   fork_bench [-n N] [-r reps] [-m]
 *
 * alive: the master forks N children; each execs this program with
 *        "-child R Q", writes one byte to the pipe R and waits until the
 *        pipe Q reaches end of file.  start_us is the time from the first
 *        fork until all N bytes arrived, per child (spawn_bench's start_us:
 *        every task started and ran up to its first message).  Then the
 *        master closes Q and waits for all N.  rss_kib: the children's
 *        RssAnon, summed, per child.
 * seq:   fork + exec + exit + waitpid of the trivial program ("-exit"),
 *        one after the other: start_us is the whole life of one, per child.
 *
 *   RESULT forkexec mode=alive n=200 start_us=310.2 rss_kib=180.0 reps=5
 *   RESULT forkexec mode=seq n=200 start_us=420.7 reps=5
 *
 * Medians of `reps` rounds.  -m adds, from the last alive round,
 *   RESULT forkexec_mem n=200 tasks=procs anon_kib=... (see procmem.h)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procmem.h"

static char self[PATH_MAX];

static int child(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    int r = atoi(argv[2]), q = atoi(argv[3]);
    char c = 1, buf[16];
    if (write(r, &c, 1) != 1)
        return 1;
    close(r);
    for (;;) {
        ssize_t k = read(q, buf, sizeof buf);
        if (k == 0 || (k < 0 && errno != EINTR))
            return 0;
    }
}

static pid_t start(char *const *argv, const int *keep, int nkeep)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < nkeep; i++) /* these two survive the exec */
            fcntl(keep[i], F_SETFD, 0);
        execv(self, argv);
        _exit(127);
    }
    return pid;
}

/* One alive round: the time per child; their memory in *m if m. */
static double alive(int n, pid_t *pids, struct proc_mem *m, long *anon)
{
    int ready[2], quit[2];
    if (pipe2(ready, O_CLOEXEC) || pipe2(quit, O_CLOEXEC)) {
        perror("fork_bench: pipe2");
        exit(1);
    }
    char rs[16], qs[16];
    snprintf(rs, sizeof rs, "%d", ready[1]);
    snprintf(qs, sizeof qs, "%d", quit[0]);
    char *argv[] = {self, "-child", rs, qs, NULL};
    int keep[] = {ready[1], quit[0]};
    double t0 = now_us();
    for (int i = 0; i < n; i++)
        if ((pids[i] = start(argv, keep, 2)) < 0) {
            perror("fork_bench: fork");
            exit(1);
        }
    close(ready[1]);
    close(quit[0]);
    char buf[256];
    for (int got = 0; got < n;) {
        ssize_t k = read(ready[0], buf, sizeof buf);
        if (k == 0 || (k < 0 && errno != EINTR)) {
            fprintf(stderr, "fork_bench: %d of %d children reported\n", got, n);
            exit(1);
        }
        got += k > 0 ? (int)k : 0;
    }
    double t = (now_us() - t0) / n;
    struct proc_mem sum = {0};
    for (int i = 0; i < n; i++)
        proc_mem_add(&sum, pids[i]);
    *anon = sum.anon;
    if (m)
        *m = sum;
    close(quit[1]);
    close(ready[0]);
    for (int i = 0; i < n; i++)
        waitpid(pids[i], NULL, 0);
    return t;
}

static double sequential(int n)
{
    char *argv[] = {self, "-exit", NULL};
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        int st;
        pid_t pid = start(argv, NULL, 0);
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "fork_bench: child %d failed\n", i);
            exit(1);
        }
    }
    return (now_us() - t0) / n;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "-exit"))
        return 0;
    if (argc > 1 && !strcmp(argv[1], "-child"))
        return child(argc, argv);
    int n = 200, reps = 5, memory = 0;
    if (!procmem_args(argc, argv, "fork_bench", &n, &reps, &memory))
        return 2;
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        perror("fork_bench: /proc/self/exe");
        return 1;
    }
    self[len] = 0;
    pid_t *pids = malloc((size_t)n * sizeof *pids);
    double *t = malloc((size_t)reps * sizeof *t), *a = malloc((size_t)reps * sizeof *a);
    double *s = malloc((size_t)reps * sizeof *s);
    struct proc_mem m = {0};
    for (int r = 0; r < reps; r++) {
        long anon;
        t[r] = alive(n, pids, memory && r == reps - 1 ? &m : NULL, &anon);
        a[r] = (double)anon / n;
        s[r] = sequential(n);
    }
    if (memory)
        proc_mem_print("forkexec_mem", n, "procs", &m, &m);
    printf("RESULT forkexec mode=alive n=%d start_us=%.1f rss_kib=%.1f reps=%d\n", n,
           procmem_median(t, reps), procmem_median(a, reps), reps);
    printf("RESULT forkexec mode=seq n=%d start_us=%.1f reps=%d\n", n,
           procmem_median(s, reps), reps);
    return 0;
}
