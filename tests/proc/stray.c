/*
 * stray.c - a fork that gets past every refusal (the system call made by
 * the instruction itself, as hand-written assembly or a library with its
 * own system calls would): the copy of the node it makes waits forever,
 * holding the job's output open.  The job must end all the same, and take
 * the copy with it.  The parent goes on and ends the job with status 0.
 * Its arguments are ignored (the test passes a marker to find the job's
 * processes by).
 */
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>

static long raw_fork(void)
{
    long rc;
    __asm__ volatile("syscall" : "=a"(rc) : "0"((long)SYS_fork) : "rcx", "r11", "memory");
    return rc;
}

int main(void)
{
    fflush(stdout);
    long pid = raw_fork();
    if (pid == 0)
        for (;;)
            pause(); /* the stray: a copy of the node, which nothing ends */
    printf(pid > 0 ? "stray started; the parent goes on\n" : "raw fork failed\n");
    return pid > 0 ? 0 : 1;
}
