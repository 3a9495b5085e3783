/*
 * killed.c - a node dies holding the only copy of a shared page
 * (docs/svm.md, "When a node dies"): UPVM_NODES=3, thread mode.
 *
 * main (node 0) allocates two pages and writes page B; a holder task on
 * node1 writes page A (it is now A's only copy) and sends its pid; main
 * watches it (pvm_notify) and SIGKILLs node1.  Then a toucher on node2
 * reads B (a copy of node 0's: it must still be there) and then A: that
 * access must end the toucher with the report "shared page ... lost",
 * not hang; main gets its exit notification, reads B itself and prints
 * OK.  tests/svm/test-svm-killed.sh checks the report and that nothing of
 * the job is left.
 *
 * Two more ways a ULP cannot wait for a page, each reported and ending its
 * node as a crash does (main watches it, gets its exit, prints OK):
 *   killed coupled  the toucher reads a page it does not hold after
 *                   upvm_couple (a kernel context cannot wait for a page:
 *                   the report says to call upvm_svm_touch first);
 *   killed stack    the toucher faults with too little stack left to
 *                   wait (run with UPVM_STACK_SIZE=16K: the report says
 *                   to give it a bigger stack).
 */
#include <pvm3.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <upvm.h>
#include <upvm_svm.h>

enum { TAG_PTR = 1, TAG_PID = 2, TAG_HOLDER_EXIT = 50, TAG_TOUCHER_EXIT = 51 };

static long *recv_block(void)
{
    unsigned long p;
    pvm_recv(-1, TAG_PTR);
    pvm_upkulong(&p, 1, 1);
    return (long *)p;
}

static void send_block(int tid, long *a)
{
    unsigned long p = (unsigned long)a;
    pvm_initsend(PvmDataRaw);
    pvm_pkulong(&p, 1, 1);
    pvm_send(tid, TAG_PTR);
}

static int holder(int argc, char **argv)
{
    long *a = recv_block();
    a[0] = 7; /* page A: its only copy is here now */
    int pid = getpid();
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&pid, 1, 1);
    pvm_send(pvm_parent(), TAG_PID);
    pvm_recv(-1, 99); /* nothing comes: it waits to be killed */
    return 0;
}
UPVM_TASK("holder", holder)

/* A fault with ~3 KiB of a 16 KiB stack left. */
static __attribute__((noinline)) long touch_deep(volatile long *a)
{
    volatile char big[12 * 1024];
    big[0] = 1;
    big[sizeof big - 1] = 2;
    return a[0] + big[0] + big[sizeof big - 1];
}

static int toucher(int argc, char **argv)
{
    long *a = recv_block();
    if (argc > 1 && !strcmp(argv[1], "coupled")) {
        if (upvm_couple() != 0)
            printf("toucher: FAILED: upvm_couple\n");
        printf("toucher: FAILED: read %ld on a kernel context\n", *(volatile long *)a);
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "stack")) {
        printf("toucher: FAILED: read %ld with no stack to wait on\n", touch_deep(a));
        return 1;
    }
    printf("toucher: page B reads %ld\n", a[512]);
    fflush(stdout);
    long v = a[0]; /* page A died with node1: the toucher ends here */
    printf("toucher: FAILED: page A read %ld after its only copy died\n", v);
    fflush(stdout);
    return 1;
}
UPVM_TASK("toucher", toucher)

/* The ways a ULP cannot wait: the toucher on node1 is told which. */
static int cannot_wait(const char *how)
{
    long *a = upvm_svm_alloc(4096);
    if (!a)
        return perror("killed: upvm_svm_alloc"), 1;
    a[0] = 3; /* node 0's, written: node1 has no copy */
    int t;
    char *args[] = {(char *)how, NULL};
    if (pvm_spawn("toucher", args, PvmTaskHost, "node1", 1, &t) != 1)
        return printf("killed: FAILED: spawn on node1\n"), 1;
    pvm_notify(PvmTaskExit, TAG_TOUCHER_EXIT, 1, &t);
    send_block(t, a);
    pvm_recv(-1, TAG_TOUCHER_EXIT);
    printf("OK\n");
    return 0;
}

int main(int argc, char **argv)
{
    pvm_mytid();
    if (argc > 1)
        return cannot_wait(argv[1]);
    long *a = upvm_svm_alloc(2 * 4096);
    if (!a) {
        perror("killed: upvm_svm_alloc");
        return 1;
    }
    a[512] = 5; /* page B, node 0's */
    int h, t, pid;
    if (pvm_spawn("holder", NULL, PvmTaskHost, "node1", 1, &h) != 1)
        return printf("killed: FAILED: spawn on node1\n"), 1;
    send_block(h, a);
    pvm_recv(h, TAG_PID);
    pvm_upkint(&pid, 1, 1);
    pvm_notify(PvmTaskExit, TAG_HOLDER_EXIT, 1, &h);
    kill(pid, SIGKILL);
    pvm_recv(-1, TAG_HOLDER_EXIT);
    if (pvm_spawn("toucher", NULL, PvmTaskHost, "node2", 1, &t) != 1)
        return printf("killed: FAILED: spawn on node2\n"), 1;
    pvm_notify(PvmTaskExit, TAG_TOUCHER_EXIT, 1, &t);
    send_block(t, a);
    pvm_recv(-1, TAG_TOUCHER_EXIT);
    if (a[512] != 5)
        return printf("killed: FAILED: page B reads %ld on node 0\n", a[512]), 1;
    printf("OK\n");
    return 0;
}
