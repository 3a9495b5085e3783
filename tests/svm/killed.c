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
 */
#include <pvm3.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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

static int toucher(int argc, char **argv)
{
    long *a = recv_block();
    printf("toucher: page B reads %ld\n", a[512]);
    fflush(stdout);
    long v = a[0]; /* page A died with node1: the toucher ends here */
    printf("toucher: FAILED: page A read %ld after its only copy died\n", v);
    fflush(stdout);
    return 1;
}
UPVM_TASK("toucher", toucher)

int main(void)
{
    pvm_mytid();
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
