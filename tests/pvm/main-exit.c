/*
 * main-exit.c - what happens to tasks when main returns (driven by
 * test-pvm-main-exit.sh):
 *   finish   a worker still has work: it runs to the end after main returns
 *   blocked  a worker waits for a message nobody will send: the process
 *            ends anyway, naming it on stderr, with main's exit status
 *   crash    a worker dereferences NULL: the report names the task
 */
#include <pvm3.h>
#include <stdio.h>
#include <string.h>
#include <upvm.h>

static int worker(int argc, char **argv)
{
    if (strcmp(argv[1], "finish") == 0) {
        upvm_sleep_ns(20 * 1000 * 1000);
        printf("worker t%x finished after main returned\n", pvm_mytid());
        return 0;
    }
    if (strcmp(argv[1], "crash") == 0) {
        volatile int *p = (int *)16; /* not NULL: UBSan would stop it first */
        __asm__("" : "+r"(p));
        return *p;
    }
    pvm_recv(-1, 1); /* never comes */
    printf("not reached\n");
    return 0;
}
UPVM_TASK("worker", worker)

int main(int argc, char **argv)
{
    char *args[] = {argc > 1 ? argv[1] : "finish", NULL};
    int tid;
    if (pvm_spawn("worker", args, 0, "", 1, &tid) != 1)
        return 1;
    printf("main returns\n");
    fflush(stdout);
    return 5;
}
