/*
 * refused.c - calls that a process-mode ULP cannot make: each must fail
 * with a message naming the call and the ULP, and the ULP goes on.
 * Then it exits with status 5 through exit(), which ends only this ULP:
 * the job's exit status is 5.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void handler(int sig) { (void)sig; }
static void *thread_main(void *arg) { return arg; }

int main(void)
{
    int ok = 1;
    ok &= fork() == -1 && errno == ENOSYS;
    ok &= execv("/bin/true", (char *[]){"true", NULL}) == -1;
    ok &= execlp("true", "true", (char *)NULL) == -1;
    pthread_t t;
    ok &= pthread_create(&t, NULL, thread_main, NULL) == ENOSYS;
    ok &= signal(SIGUSR1, handler) == SIG_ERR;
    ok &= signal(SIGPIPE, SIG_IGN) != SIG_ERR; /* dispositions pass */
    printf(ok ? "refusals OK\n" : "refusals FAIL\n");
    fflush(stdout);
    exit(ok ? 5 : 1);
}
