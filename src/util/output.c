/*
 * output.c - failed writes of the job's output (output.h).
 */
#include "util/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_int first_error;

void out_failed(int err)
{
    int none = 0;
    if (err > 0)
        (void)atomic_compare_exchange_strong(&first_error, &none, err);
}

int out_check(void)
{
    errno = 0;
    if (fflush(stdout) != 0 && errno > 0) /* pending data: the reason now */
        out_failed(errno);
    int err = atomic_load(&first_error);
    if (err || !ferror(stdout))
        return err;
    /* An earlier write failed and stdio dropped why: ask the descriptor. */
    errno = 0;
    if (write(1, "", 0) < 0 && errno > 0)
        return errno;
    return -1;
}

void out_report(int err)
{
    char line[160];
    int n = err > 0 ? snprintf(line, sizeof line, "upvm: writing the job's output failed: %s\n",
                               strerror(err))
                    : snprintf(line, sizeof line, "upvm: writing the job's output failed "
                                                  "(some of it is lost)\n");
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

void out_keep_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (got >= 0 && got != fd) { /* a lower one was open after all */
            (void)dup2(got, fd);
            (void)close(got);
        }
    }
}
