/*
 * spawn_bench.c - the cost of starting tasks, for UPVM process mode and for
 * genuine PVM, from one plain-PVM source (bench/proc-compare.sh builds it
 * with upvmcc and with -lpvm3):
 *
 *   spawn_bench [-n N] [-r reps]
 *
 * The master spawns N copies of itself ("-child"); each sends one empty
 * message to the master and waits for a "quit" multicast.  start_us is the
 * time from before pvm_spawn until all N messages arrived, per task (so it
 * includes loading, initialising and scheduling every task up to its first
 * send).  rss_kib is the private resident memory (RssAnon) the N running
 * tasks add: for UPVM the growth of the node's, for genuine PVM the sum of
 * the children's (each is a process).  Text is shared in both cases (page
 * cache), so it is not counted.  Medians of `reps` rounds.
 *
 *   RESULT spawn n=1000 start_us=45.1 rss_kib=35.2 reps=5
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A field of /proc/<pid>/status in KiB ("VmRSS:", "RssAnon:", ...). */
static long status_kib(int pid, const char *field)
{
    char path[64], line[256];
    long kib = 0;
    size_t len = strlen(field);
    snprintf(path, sizeof path, pid ? "/proc/%d/status" : "/proc/self/status", pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0)
            kib = atol(line + len);
    if (f)
        fclose(f);
    return kib;
}

/* Memory a task really costs: its private (anonymous) resident pages.
 * VmRSS would count the program's text once per mapping, although every
 * mapping shares the same page-cache pages. */
static long rss_kib(int pid)
{
    return status_kib(pid, "RssAnon:");
}

/* Resident memory of the tasks in tids: their processes' RSS when they
 * are processes of their own, else 0 (the caller measures its own). */
static long children_rss(const int *tids, int n)
{
    int ntask;
    struct pvmtaskinfo *ti;
    long sum = 0;
    if (pvm_tasks(0, &ntask, &ti) < 0)
        return 0;
    int self = 0;
    for (int i = 0; i < ntask; i++)
        if (ti[i].ti_tid == pvm_mytid())
            self = ti[i].ti_pid;
    for (int i = 0; i < ntask; i++)
        for (int k = 0; k < n; k++)
            if (ti[i].ti_tid == tids[k] && ti[i].ti_pid != self)
                sum += rss_kib(ti[i].ti_pid);
    return sum;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-child") == 0) {
        pvm_initsend(PvmDataRaw);
        pvm_send(pvm_parent(), 1);
        pvm_recv(pvm_parent(), 2);
        pvm_exit();
        return 0;
    }
    int n = 100, reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r"))
            reps = atoi(argv[i + 1]);
    }
    if (pvm_mytid() < 0)
        return 1;
    const char *dir = getenv("PVMBENCH_SPAWN_DIR");
    char self[4096];
    snprintf(self, sizeof self, "%s%s%s", dir ? dir : "", dir ? "/" : "",
             dir ? "spawn_bench" : argv[0]);
    int *tids = malloc((size_t)n * sizeof *tids);
    double *t = malloc((size_t)reps * sizeof *t), *m = malloc((size_t)reps * sizeof *m);
    char *cargv[] = {"-child", NULL};
    for (int r = 0; r < reps; r++) {
        long before = rss_kib(0);
        double t0 = now_us();
        int got = pvm_spawn(self, cargv, PvmTaskDefault, "", n, tids);
        if (got != n) {
            fprintf(stderr, "spawn_bench: spawned %d of %d (%d)\n", got, n, tids[0]);
            return 1;
        }
        for (int i = 0; i < n; i++)
            pvm_recv(-1, 1);
        t[r] = (now_us() - t0) / n;
        long kids = children_rss(tids, n);
        m[r] = (double)(kids ? kids : rss_kib(0) - before) / n;
        pvm_initsend(PvmDataRaw);
        pvm_mcast(tids, n, 2);
        for (int i = 0; i < n; i++) /* wait until they are gone */
            while (pvm_pstat(tids[i]) == PvmOk)
                pvm_trecv(-1, 99, &(struct timeval){0, 1000});
    }
    printf("RESULT spawn n=%d start_us=%.1f rss_kib=%.1f reps=%d\n", n, median(t, reps),
           median(m, reps), reps);
    pvm_exit();
    return 0;
}
