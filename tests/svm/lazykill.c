/*
 * lazykill.c - a task moved lazily loses the node it came from before its
 * memory followed (docs/migration.md, "Lazy moves"): process mode, 3
 * nodes, UPVM_MIGRATE_PUSH=off (pages come only when touched).
 *
 * main (node 0) spawns itself as a worker on node1; the worker fills 4 MiB
 * of heap, sends its node's pid, moves itself lazily to node 2 and says
 * so.  main SIGKILLs node1 (the source, which still holds the heap) and
 * lets the worker go on: its first touch of the heap must end it with the
 * report "... lost: the node it moved from lazily died ...", not hang;
 * main gets the exit notification and prints OK.
 *
 * lazykill refused (UPVM_SVM_FAULT=mprotect): a lazy move needs
 * userfaultfd; the worker's upvm_migrate_lazy must say PvmNotImpl with
 * the reason, and the worker stays where it is.
 */
#include <pvm3.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <upvm.h>

enum { TAG_PID = 1, TAG_MOVED = 2, TAG_GO = 3, TAG_EXIT = 50 };
#define HEAP (4u << 20)

static int refused_worker(void)
{
    int rc = upvm_migrate_lazy(0, 2), ok = rc == PvmNotImpl &&
                                              strstr(upvm_migrate_error(), "needs userfaultfd") &&
                                              upvm_node_of(0) == 1;
    if (!ok)
        printf("lazykill: FAILED: upvm_migrate_lazy under mprotect: %d (%s), on node %d\n", rc,
               upvm_migrate_error(), upvm_node_of(0));
    else
        printf("refused: %s\n", upvm_migrate_error());
    fflush(stdout);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&ok, 1, 1);
    pvm_send(pvm_parent(), TAG_MOVED);
    pvm_exit();
    return !ok;
}

static int worker(void)
{
    unsigned char *h = malloc(HEAP);
    memset(h, 0x5a, HEAP);
    int pid = getpid();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&pid, 1, 1);
    pvm_send(pvm_parent(), TAG_PID);
    int rc = upvm_migrate_lazy(0, 2);
    int node = upvm_node_of(0);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&rc, 1, 1);
    pvm_pkint(&node, 1, 1);
    pvm_send(pvm_parent(), TAG_MOVED);
    pvm_recv(pvm_parent(), TAG_GO);
    unsigned sum = 0;
    for (size_t i = 0; i < HEAP; i += 4096)
        sum += h[i]; /* its heap is still on node1, which died */
    printf("lazykill: FAILED: the heap was read (%u) after its node died\n", sum);
    fflush(stdout);
    pvm_exit();
    return 1;
}

int main(int argc, char **argv)
{
    pvm_mytid();
    bool refused = argc > 1 && !strcmp(argv[1], "refused");
    if (pvm_parent() != PvmNoParent)
        return refused ? refused_worker() : worker();
    int w, pid, rc, node;
    if (pvm_spawn(argv[0], (char *[]){refused ? "refused" : "worker", NULL}, PvmTaskHost, "node1",
                  1, &w) != 1)
        return printf("lazykill: FAILED: spawn on node1\n"), 1;
    if (refused) {
        int ok = 0;
        pvm_recv(w, TAG_MOVED);
        pvm_upkint(&ok, 1, 1);
        if (ok)
            printf("OK\n");
        pvm_exit();
        return !ok;
    }
    pvm_notify(PvmTaskExit, TAG_EXIT, 1, &w);
    pvm_recv(w, TAG_PID);
    pvm_upkint(&pid, 1, 1);
    pvm_recv(w, TAG_MOVED);
    pvm_upkint(&rc, 1, 1);
    pvm_upkint(&node, 1, 1);
    if (rc != 0 || node != 2)
        return printf("lazykill: FAILED: the lazy move returned %d, the task is on node %d\n",
                      rc, node), 1;
    kill(pid, SIGKILL);
    pvm_initsend(PvmDataDefault);
    pvm_send(w, TAG_GO);
    pvm_recv(-1, TAG_EXIT);
    printf("OK\n");
    pvm_exit();
    return 0;
}
