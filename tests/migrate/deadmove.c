/*
 * deadmove.c - a move whose destination dies before it answers: the task
 * that asked to move gets PvmHostFail and the reason, stays where it was,
 * and the job goes on (it asked to hear of the sleeper's exit: node 1 is
 * one node of this machine, whose death is no host's deletion).
 *
 * The master stops node 1 (SIGSTOP: it cannot answer the prepare step),
 * starts a killer on node 0, and asks to move itself to node 1.  The killer
 * lets the migrator send its request (a few yields: scheduling on a node is
 * cooperative, the migrator runs first), then kills node 1.
 */
#include <pvm3.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>

int main(int argc, char **argv)
{
    pvm_mytid();
    if (argc > 2 && strcmp(argv[1], "killer") == 0) {
        for (int i = 0; i < 50; i++)
            upvm_yield();
        kill(atoi(argv[2]), SIGKILL);
        pvm_exit();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "sleeper") == 0) {
        pvm_recv(-1, 1); /* dies with its node */
        return 0;
    }
    int sleeper, killer, host1;
    char *sargs[] = {"sleeper", NULL};
    if (pvm_spawn(argv[0], sargs, PvmTaskHost, "node1", 1, &sleeper) != 1) {
        printf("cannot spawn on node1\n");
        return 1;
    }
    host1 = sleeper;
    pvm_notify(PvmTaskExit, 77, 1, &host1);
    int ntask;
    struct pvmtaskinfo *ti;
    if (pvm_tasks(sleeper, &ntask, &ti) < 0 || ntask != 1) {
        printf("pvm_tasks failed\n");
        return 1;
    }
    int pid = ti[0].ti_pid;
    kill(pid, SIGSTOP);
    char pidarg[16];
    snprintf(pidarg, sizeof pidarg, "%d", pid);
    char *kargs[] = {"killer", pidarg, NULL};
    if (pvm_spawn(argv[0], kargs, PvmTaskHost, "node0", 1, &killer) != 1) {
        printf("cannot spawn the killer\n");
        return 1;
    }
    int rc = upvm_migrate(0, 1);
    printf("migrate: rc %d: %s\n", rc, upvm_migrate_error());
    printf("still on node %d\n", upvm_node_of(0));
    int got = pvm_recv(-1, 77);
    int who = 0;
    pvm_upkint(&who, 1, 1);
    printf("task exit %s\n", got > 0 && who == host1 ? "ok" : "wrong");
    pvm_exit();
    return 0;
}
