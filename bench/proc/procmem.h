/*
 * procmem.h - what a set of tasks costs in memory, read from /proc, and
 * small timing helpers; shared by spawn_bench.c (plain PVM, built with
 * upvmcc and with -lpvm3) and fork_bench.c (plain POSIX).  Plain C, no
 * UPVM interface.
 *
 * Per task, for the RESULT ..._mem lines:
 *   anon_kib      RssAnon (/proc/PID/status): private resident pages
 *   file_kib      RssFile: resident file pages, counted once per mapping of
 *                 them (a program's text mapped by 1000 tasks counts 1000
 *                 times even when all share one page-cache copy)
 *   pss_kib       Pss (/proc/PID/smaps_rollup): every resident page divided
 *                 among all its mappings: what the tasks really cost
 *   pss_file_kib  the file-backed part of Pss (text, read-only data)
 *   pte_kib       VmPTE: page tables
 *   maps          memory mappings (lines of /proc/PID/maps)
 */
#ifndef PROCMEM_H
#define PROCMEM_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* A "Field:  123 kB" line of /proc/<pid>/<file> (pid 0: self), in KiB. */
static inline long proc_kib(int pid, const char *file, const char *field)
{
    char path[64], line[256];
    long kib = 0;
    size_t len = strlen(field);
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
    else
        snprintf(path, sizeof path, "/proc/self/%s", file);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0)
            kib = atol(line + len);
    if (f)
        fclose(f);
    return kib;
}

static inline long proc_maps(int pid)
{
    char path[64];
    long n = 0;
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/maps", pid);
    else
        snprintf(path, sizeof path, "/proc/self/maps");
    FILE *f = fopen(path, "r");
    for (int c; f && (c = getc(f)) != EOF;)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

struct proc_mem {
    long anon, file, pss, pss_file, pte, maps;
};

/* Adds the memory of process pid (0: this one) to *m. */
static inline void proc_mem_add(struct proc_mem *m, int pid)
{
    m->anon += proc_kib(pid, "status", "RssAnon:");
    m->file += proc_kib(pid, "status", "RssFile:");
    m->pte += proc_kib(pid, "status", "VmPTE:");
    m->pss += proc_kib(pid, "smaps_rollup", "Pss:");
    m->pss_file += proc_kib(pid, "smaps_rollup", "Pss_File:");
    m->maps += proc_maps(pid);
}

static inline void proc_mem_sub(struct proc_mem *m, const struct proc_mem *b)
{
    m->anon -= b->anon;
    m->file -= b->file;
    m->pss -= b->pss;
    m->pss_file -= b->pss_file;
    m->pte -= b->pte;
    m->maps -= b->maps;
}

/* RESULT <name> n=N tasks=<where> anon_kib=... (per task: m / n), then the
 * totals total_pss_kib, total_file_kib (of `total`). */
static inline void proc_mem_print(const char *name, int n, const char *where,
                                  const struct proc_mem *m, const struct proc_mem *total)
{
    printf("RESULT %s n=%d tasks=%s anon_kib=%.1f file_kib=%.1f pss_kib=%.1f "
           "pss_file_kib=%.2f pte_kib=%.2f maps=%.2f total_pss_kib=%ld total_file_kib=%ld\n",
           name, n, where, (double)m->anon / n, (double)m->file / n, (double)m->pss / n,
           (double)m->pss_file / n, (double)m->pte / n, (double)m->maps / n, total->pss,
           total->file);
    fflush(stdout);
}

/* The options both start-up benchmarks take: -n N, -r reps, -m.  False
 * (after printing the usage of prog) when they are not valid. */
static inline bool procmem_args(int argc, char **argv, const char *prog, int *n, int *reps,
                                int *memory)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            *n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            *reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-m"))
            *memory = 1;
    }
    if (*n >= 1 && *reps >= 1)
        return true;
    fprintf(stderr, "usage: %s [-n N] [-r reps] [-m]\n", prog);
    return false;
}

static inline int procmem_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double procmem_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, procmem_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
