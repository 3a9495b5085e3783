/*
 * comm.h - a process's short name (comm: top, ps -o comm, pgrep NAME)
 * after it ran itself again through /proc/self/exe.
 *
 * The kernel names a process after the file name it was started by, so a
 * program that re-executes itself by /proc/self/exe (to run without
 * address randomisation: src/run/start.c, the upvm command) would show
 * as "exe".  util_comm_from_argv0 gives it back the name it had: the base
 * name of argv[0], cut to 15 bytes as the kernel cuts it.
 */
#ifndef UPVM_UTIL_COMM_H
#define UPVM_UTIL_COMM_H

#include <string.h>
#include <sys/prctl.h>

/* After an exec of /proc/self/exe: comm from argv0 instead of "exe". */
static inline void util_comm_from_argv0(const char *argv0)
{
    char now[16] = "";
    if (!argv0 || prctl(PR_GET_NAME, now, 0, 0, 0) != 0 || strcmp(now, "exe") != 0)
        return;
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    if (*base && strcmp(base, "exe") != 0)
        (void)prctl(PR_SET_NAME, base, 0, 0, 0); /* the kernel keeps 15 bytes */
}

#endif /* UPVM_UTIL_COMM_H */
