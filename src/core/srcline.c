/*
 * srcline.c - the source lines of a crash report's frames (crash.h:
 * crash_source_lines), from the debug information of each frame's file.
 *
 * Reading DWARF here, in a crash handler over a heap that may be corrupt,
 * would mean a DWARF reader that allocates nothing (libdw allocates, and
 * is one more library in every node).  Instead binutils' addr2line runs
 * in a child, once per object file, with every address of that file:
 *
 *   addr2line -a -f -i -C -s -e FILE VADDR...
 *
 * started with posix_spawn (glibc's clones without touching the heap: the
 * arguments and the environment are built in static buffers), its output
 * read from a pipe with poll until a deadline, after which it is killed.
 * Its answer per address: the address (-a), then a function and
 * "file:line" per inlined level (-i), innermost first.  An answer that is
 * cut short, or "??", places nothing.  A node without addr2line (-1) gets
 * reports as before, with the command to run by hand.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/crash.h"

#define MAX_ADDRS 64           /* addresses per addr2line run */
#define OUTPUT_MAX (32 * 1024) /* what one run may answer */

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* addr2line's path, from $PATH (or the usual directories): "" if none. */
static const char *find_addr2line(void)
{
    static char found[256];
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    for (const char *d = path; *d;) {
        size_t len = strcspn(d, ":");
        if (len && len < sizeof found - 16) {
            snprintf(found, sizeof found, "%.*s/addr2line", (int)len, d);
            if (access(found, X_OK) == 0)
                return found;
        }
        d += len + (d[len] == ':');
    }
    return "";
}

/* Run addr2line on object with the addresses; its output into out (NUL
 * terminated).  False when it could not be run or did not finish in time. */
static bool run_addr2line(const char *tool, const char *object, const uintptr_t *vaddrs, int n,
                          char *out, size_t len, long deadline)
{
    static char hex[MAX_ADDRS][24];
    static char *argv[MAX_ADDRS + 10];
    static char *const envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
    int k = 0;
    argv[k++] = "addr2line";
    argv[k++] = "-a";
    argv[k++] = "-f";
    argv[k++] = "-i";
    argv[k++] = "-C";
    argv[k++] = "-s";
    argv[k++] = "-e";
    argv[k++] = (char *)object;
    for (int i = 0; i < n; i++) {
        snprintf(hex[i], sizeof hex[i], "0x%lx", (unsigned long)vaddrs[i]);
        argv[k++] = hex[i];
    }
    argv[k] = NULL;

    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0)
        return false;
    posix_spawn_file_actions_t fa;
    pid_t pid = -1;
    bool spawned = false;
    if (posix_spawn_file_actions_init(&fa) == 0) {
        (void)posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
        (void)posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        (void)posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        spawned = posix_spawn(&pid, tool, &fa, NULL, argv, envp) == 0;
        posix_spawn_file_actions_destroy(&fa);
    }
    close(fd[1]);
    size_t got = 0;
    bool done = false;
    while (spawned && !done && got < len - 1) {
        long left = deadline - now_ms();
        struct pollfd p = {fd[0], POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            if (left > 0 && errno == EINTR)
                continue;
            break; /* the deadline */
        }
        ssize_t r = read(fd[0], out + got, len - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            done = true;
        else
            got += (size_t)r;
    }
    out[got] = '\0';
    close(fd[0]);
    if (spawned) {
        int status;
        if (!done)
            kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    return done;
}

/* The next line of text at *p (cut at '\n'), or NULL at the end. */
static char *next_line(char **p)
{
    if (!**p)
        return NULL;
    char *line = *p, *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = line + strlen(line);
    }
    return line;
}

static bool placed(const char *fileline)
{
    return strncmp(fileline, "??", 2) != 0 && !strstr(fileline, ":0") && !strstr(fileline, ":?");
}

/* addr2line's answer for the lines of one object (the lines with index
 * in idx, in the order their addresses were given): each gets " at F:L"
 * and, for code inlined into another function, " (inlined in G at F:L)". */
static int parse_answer(char *text, struct crash_line *lines, const int *idx, int n)
{
    int which = -1, level = 0, placed_n = 0;
    char *func = NULL, *line;
    while ((line = next_line(&text)) != NULL) {
        if (line[0] == '0' && line[1] == 'x') { /* -a: the next address */
            which++;
            level = 0;
            func = NULL;
            continue;
        }
        if (which < 0 || which >= n)
            break;
        if (!func) {
            func = line;
            continue;
        }
        struct crash_line *l = &lines[idx[which]];
        size_t used = strlen(l->source);
        if (placed(line)) {
            if (level == 0)
                snprintf(l->source, sizeof l->source, " at %s", line);
            else if (used + 1 < sizeof l->source)
                snprintf(l->source + used, sizeof l->source - used, " (inlined in %s at %s)", func,
                         line);
            placed_n += level == 0;
        }
        func = NULL;
        level++;
    }
    return placed_n;
}

int crash_source_lines(struct crash_line *lines, int n, int deadline_ms)
{
    static char answer[OUTPUT_MAX];
    static uintptr_t vaddrs[MAX_ADDRS];
    static int idx[MAX_ADDRS];
    static bool done[256];
    const char *tool = find_addr2line();
    if (!*tool)
        return -1;
    long deadline = now_ms() + deadline_ms;
    int total = 0;
    if (n > (int)ARRAY_SIZE(done))
        n = (int)ARRAY_SIZE(done);
    for (int i = 0; i < n; i++)
        done[i] = !lines[i].object[0];
    /* one run per object, with every address of that object */
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        int k = 0;
        for (int j = i; j < n && k < MAX_ADDRS; j++) {
            if (done[j] || strcmp(lines[j].object, lines[i].object) != 0)
                continue;
            done[j] = true;
            idx[k] = j;
            vaddrs[k++] = lines[j].vaddr;
        }
        if (now_ms() >= deadline)
            break;
        if (run_addr2line(tool, lines[i].object, vaddrs, k, answer, sizeof answer, deadline))
            total += parse_answer(answer, lines, idx, k);
    }
    return total;
}
