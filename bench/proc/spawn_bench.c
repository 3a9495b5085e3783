/*
 * spawn_bench.c - the cost of starting tasks, for UPVM process mode and for
 * genuine PVM, from one plain-PVM source (bench/proc-compare.sh builds it
 * with upvmcc and with -lpvm3):
 *
 *   spawn_bench [-n N] [-r reps] [-m]
 *
 * The master spawns N copies of itself ("-child"); each sends one empty
 * message to the master and waits for a "quit" multicast.  start_us is the
 * time from before pvm_spawn until all N messages arrived, per task (so it
 * includes loading, initialising and scheduling every task up to its first
 * send).  rss_kib is the private resident memory (RssAnon) the N running
 * tasks add: for UPVM the growth of the node's, for genuine PVM the sum of
 * the children's (each is a process).  Text is shared in both cases (page
 * cache), so it is not counted.  Medians of `reps` rounds; first_us is
 * start_us of the first round alone (a runtime that keeps the slots of
 * ended tasks for the next ones starts the later rounds warm).
 *
 *   RESULT spawn n=1000 start_us=45.1 rss_kib=35.2 reps=5 first_us=70.3
 *
 * -m adds, from the first round while all N tasks are alive, where the
 * memory goes, per task (procmem.h says what each field is): the node's
 * growth when the tasks are ULPs of this process (tasks=node), the sum
 * over the children / N when they are processes (tasks=procs); total_*:
 * the node's, or the children's, whole Pss and RssFile:
 *
 *   RESULT spawn_mem n=1000 tasks=node anon_kib=28.4 file_kib=12.0
 *          pss_kib=28.4 pss_file_kib=0.00 pte_kib=12.00 maps=9.00
 *          total_pss_kib=30803 total_file_kib=13916
 *
 * If not all N tasks start, the line "spawn_bench: spawned K of N (error
 * E)" goes to stderr, the K started are told to quit, and the exit status
 * is 1.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procmem.h"

/* Memory a task really costs, in short: its private (anonymous) resident
 * pages.  VmRSS would count the program's text once per mapping, although
 * every mapping shares the same page-cache pages. */
static long rss_kib(int pid)
{
    return proc_kib(pid, "status", "RssAnon:");
}

/* Adds the memory of the processes the tasks in tids run in, other than
 * this one, to *m, each process once (UPVM nodes hold many tasks each;
 * real PVM tasks are one process each); returns how many tasks run in
 * another process (0: they all run in this one). */
static int children_mem(const int *tids, int n, struct proc_mem *m)
{
    int ntask, self = 0, counted = 0, npids = 0;
    struct pvmtaskinfo *ti;
    if (pvm_tasks(0, &ntask, &ti) < 0)
        return 0;
    int *pids = malloc((size_t)ntask * sizeof *pids);
    if (!pids)
        return 0;
    for (int i = 0; i < ntask; i++)
        if (ti[i].ti_tid == pvm_mytid())
            self = ti[i].ti_pid;
    for (int i = 0; i < ntask; i++)
        for (int k = 0; k < n; k++)
            if (ti[i].ti_tid == tids[k] && ti[i].ti_pid != self) {
                int seen = 0;
                for (int j = 0; j < npids && !seen; j++)
                    seen = pids[j] == ti[i].ti_pid;
                if (!seen) {
                    proc_mem_add(m, ti[i].ti_pid);
                    pids[npids++] = ti[i].ti_pid;
                }
                counted++;
                break;
            }
    free(pids);
    return counted;
}

/* RSS (RssAnon) of the tasks' processes, 0 when they run in this one. */
static long children_rss(const int *tids, int n)
{
    struct proc_mem m = {0};
    return children_mem(tids, n, &m) ? m.anon : 0;
}

/* The spawn_mem line: the children's memory, or this process's growth
 * since `before` when the tasks are ULPs of it. */
static void print_mem(int n, const int *tids, const struct proc_mem *before)
{
    struct proc_mem m = {0}, total;
    const char *where = "procs";
    if (children_mem(tids, n, &m)) {
        total = m;
    } else {
        where = "node";
        proc_mem_add(&m, 0);
        total = m;
        proc_mem_sub(&m, before);
    }
    proc_mem_print("spawn_mem", n, where, &m, &total);
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
    int n = 100, reps = 5, memory = 0;
    if (!procmem_args(argc, argv, "spawn_bench", &n, &reps, &memory))
        return 2;
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
        struct proc_mem mbefore = {0};
        if (memory && r == 0)
            proc_mem_add(&mbefore, 0);
        long before = rss_kib(0);
        double t0 = now_us();
        int got = pvm_spawn(self, cargv, PvmTaskDefault, "", n, tids);
        if (got != n) {
            fprintf(stderr, "spawn_bench: spawned %d of %d (error %d)\n", got, n,
                    got >= 0 && got < n ? tids[got] : got);
            if (got > 0) { /* let the spawned ones go */
                pvm_initsend(PvmDataRaw);
                pvm_mcast(tids, got, 2);
            }
            pvm_exit();
            return 1;
        }
        for (int i = 0; i < n; i++)
            pvm_recv(-1, 1);
        t[r] = (now_us() - t0) / n;
        long kids = children_rss(tids, n);
        m[r] = (double)(kids ? kids : rss_kib(0) - before) / n;
        if (memory && r == 0)
            print_mem(n, tids, &mbefore);
        pvm_initsend(PvmDataRaw);
        pvm_mcast(tids, n, 2);
        for (int i = 0; i < n; i++) /* wait until they are gone */
            while (pvm_pstat(tids[i]) == PvmOk)
                pvm_trecv(-1, 99, &(struct timeval){0, 1000});
    }
    double first = t[0];
    printf("RESULT spawn n=%d start_us=%.1f rss_kib=%.1f reps=%d first_us=%.1f\n", n,
           procmem_median(t, reps), procmem_median(m, reps), reps, first);
    pvm_exit();
    return 0;
}
