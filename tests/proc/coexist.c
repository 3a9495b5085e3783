/*
 * coexist.c - thread-mode and process-mode tasks in one job.  A process-
 * mode program registers a thread-mode task (UPVM_TASK): spawned by name,
 * it runs inside that copy of the program and shares its globals (M-PVM
 * style); another process-mode copy has its own globals and its own helper.
 */
#include <pvm3.h>
#include <stdio.h>
#include <string.h>
#include <upvm.h>

static int counter; /* one per copy of the program */

static int helper(int argc, char **argv)
{
    counter++; /* the copy's global: shared with the copy's main */
    pvm_initsend(PvmDataRaw);
    pvm_send(pvm_parent(), 1);
    return 0;
}
UPVM_TASK("helper", helper)

static int run_helper(void)
{
    int tid;
    if (pvm_spawn("helper", NULL, 0, "", 1, &tid) != 1)
        return -1;
    pvm_recv(tid, 1);
    return counter;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "copy") == 0) {
        int v = run_helper(); /* 1: its own counter */
        pvm_initsend(PvmDataRaw);
        pvm_pkint(&v, 1, 1);
        pvm_send(pvm_parent(), 2);
        return 0;
    }
    int mine = run_helper();
    char *args[] = {"copy", NULL};
    int tid, theirs = -1;
    if (pvm_spawn(argv[0], args, 0, "", 1, &tid) != 1)
        return 1;
    pvm_recv(tid, 2);
    pvm_upkint(&theirs, 1, 1);
    printf("helper in this copy: counter %d; in the other copy: %d; here still %d\n", mine,
           theirs, counter);
    pvm_exit();
    return mine == 1 && theirs == 1 && counter == 1 ? 0 : 1;
}
