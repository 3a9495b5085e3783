/*
 * cpus.c - the CPUs this process may use (cpus.h).
 *
 * The cgroup files are found from /proc/self/cgroup: a v2 line "0::/path"
 * and, on a v1 or hybrid system, the line of the hierarchy with the cpu
 * controller ("4:cpu,cpuacct:/path").  The hierarchies are looked for
 * where systems mount them (/sys/fs/cgroup, /sys/fs/cgroup/unified,
 * /sys/fs/cgroup/cpu, /sys/fs/cgroup/cpu,cpuacct); inside a container the
 * path is usually "/" and the container's own limits sit at the root.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cpus.h"

/* The first line of file: a word (at most 63 bytes: "max", or a number)
 * and a number; how many of the two it read. */
static int read_two(const char *file, char word[64], long long *b)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return 0;
    int n = fscanf(f, "%63s %lld", word, b);
    fclose(f);
    return n < 0 ? 0 : n;
}

/* CPUs (scaled by 1000) a v2 cpu.max allows in dir, or 0: none set. */
static long long quota_v2(const char *dir)
{
    char file[PATH_MAX + 16], word[64];
    long long period = 0;
    snprintf(file, sizeof file, "%s/cpu.max", dir);
    if (read_two(file, word, &period) != 2 || !strcmp(word, "max") || period <= 0)
        return 0;
    long long quota = atoll(word);
    return quota > 0 ? quota * 1000 / period : 0;
}

/* The same for v1's two files. */
static long long quota_v1(const char *dir)
{
    char file[PATH_MAX + 32], word[64];
    long long unused, quota, period;
    snprintf(file, sizeof file, "%s/cpu.cfs_quota_us", dir);
    if (read_two(file, word, &unused) < 1 || (quota = atoll(word)) <= 0)
        return 0;
    snprintf(file, sizeof file, "%s/cpu.cfs_period_us", dir);
    if (read_two(file, word, &unused) < 1 || (period = atoll(word)) <= 0)
        return 0;
    return quota * 1000 / period;
}

/* The smallest quota from mount/path up to mount (0: none). */
static long long quota_along(const char *mount, const char *path,
                             long long (*quota)(const char *dir))
{
    char dir[PATH_MAX];
    long long best = 0;
    if ((size_t)snprintf(dir, sizeof dir, "%s%s", mount, path) >= sizeof dir)
        return 0;
    size_t root = strlen(mount);
    for (;;) {
        long long q = quota(dir);
        if (q > 0 && (best == 0 || q < best))
            best = q;
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < root)
            break;
        *slash = '\0';
        if (strlen(dir) < root)
            break;
    }
    return best;
}

/* Does the v1 controller list (field 2 of /proc/self/cgroup) name cpu? */
static int names_cpu(const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 3 && !strncmp(p, "cpu", 3))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

static long long min_quota(long long a, long long b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

int util_cpus_quota(void)
{
    static const char *const v2_mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    static const char *const v1_mounts[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"};
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return 0;
    char line[PATH_MAX + 64];
    long long milli = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *ctl = strchr(line, ':');
        char *path = ctl ? strchr(ctl + 1, ':') : NULL;
        if (!path)
            continue;
        *path++ = '\0';
        ctl++;
        bool v2 = *ctl == '\0';
        if (!v2 && !names_cpu(ctl))
            continue;
        const char *const *mounts = v2 ? v2_mounts : v1_mounts;
        for (int i = 0; i < 2; i++)
            milli = min_quota(milli, quota_along(mounts[i], strcmp(path, "/") ? path : "",
                                                 v2 ? quota_v2 : quota_v1));
    }
    fclose(f);
    return milli > 0 ? (int)((milli + 999) / 1000) : 0;
}

int util_cpus_usable(void)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int quota = util_cpus_quota();
    if (quota > 0 && quota < n)
        n = quota;
    return n > 0 ? n : 1;
}
