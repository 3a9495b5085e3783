/*
 * title.c - a node's name in ps and top (title.h).
 *
 * The kernel shows as /proc/PID/cmdline the bytes from mm->arg_start to
 * mm->arg_end.  PR_SET_MM_MAP sets those (with the other fields of the
 * memory map, which must be given as they are: /proc/self/stat has them),
 * so the title goes to a page of its own and the program's argument and
 * environment strings stay where and what they were.
 */
#define _GNU_SOURCE
#include "node/title.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define STAT_FIELDS 52 /* /proc/PID/stat: 52 fields since Linux 3.5 */
#define TITLE_MAX 4096 /* a page; a longer command line is cut */

/* The fields of /proc/self/stat, 1-based as proc(5) numbers them: 0, or
 * -errno.  (Field 2, the command, is in parentheses and may hold spaces:
 * the numbers start after its last ')'.) */
static int read_stat(unsigned long f[STAT_FIELDS + 1])
{
    char buf[2048];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -EIO;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p)
        return -EIO;
    p++;
    int k = 3;
    for (; k <= STAT_FIELDS && *p; k++) {
        while (*p == ' ')
            p++;
        if (k == 3) { /* the state, a letter */
            f[k] = 0;
            p += strcspn(p, " ");
            continue;
        }
        char *end;
        f[k] = strtoul(p, &end, 10);
        p = end;
    }
    return k > STAT_FIELDS ? 0 : -EIO;
}

/* "upvm: node N of job J (the command line, its arguments joined by
 * spaces)" into buf: its length with the NUL. */
static size_t format_title(char *buf, size_t len, int node, pid_t job, const char *args,
                           size_t args_len)
{
    int n = snprintf(buf, len, "upvm: node %d of job %d (", node, (int)job);
    size_t at = n > 0 && (size_t)n < len ? (size_t)n : 0;
    for (size_t i = 0; i < args_len && at + 3 < len; i++)
        buf[at++] = args[i] ? args[i] : ' ';
    while (at > 0 && buf[at - 1] == ' ') /* the last argument's NUL */
        at--;
    buf[at++] = ')';
    buf[at++] = '\0';
    return at;
}

int node_set_title(int node, pid_t job)
{
    char comm[16];
    snprintf(comm, sizeof comm, "upvm-node%d", node);
    (void)prctl(PR_SET_NAME, comm, 0, 0, 0);

    unsigned long f[STAT_FIELDS + 1];
    int rc = read_stat(f);
    if (rc != 0)
        return rc;
    char *page = mmap(NULL, TITLE_MAX, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return -errno;
    /* fields 48, 49: arg_start, arg_end, the command line as it is now */
    size_t title_len = format_title(page, TITLE_MAX, node, job, (const char *)f[48],
                                    f[49] > f[48] ? f[49] - f[48] : 0);
    struct prctl_mm_map map = {
        .start_code = f[26],
        .end_code = f[27],
        .start_stack = f[28],
        .start_data = f[45],
        .end_data = f[46],
        .start_brk = f[47],
        .brk = (unsigned long)sbrk(0),
        .arg_start = (unsigned long)page,
        .arg_end = (unsigned long)page + title_len,
        .env_start = f[50],
        .env_end = f[51],
        .exe_fd = (unsigned)-1, /* unchanged: no privilege needed */
    };
    if (prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&map, sizeof map, 0) != 0) {
        rc = -errno;
        munmap(page, TITLE_MAX);
        return rc;
    }
    return 0; /* the page stays: it is the command line now */
}
