/*
 * stages.c - a node dies in the middle of a move: the task then lives on
 * exactly one node, or it is reported lost with its notifications.
 * Driven by test-migrate-stages.sh, which sets UPVM_TEST_MIGRATE_PAUSE (a
 * node stops itself at a stage of the protocol, src/migrate/migrate.c),
 * kills the move's source or destination, and lets the stopped one go on.
 *
 * A process-mode job of three nodes (UPVM_NODES=3).  The master (node 0)
 * spawns a worker on node1 (8 MiB of heap in a known pattern) and a probe
 * on node1 and one on node2, asks for PvmTaskExit of the worker and of the
 * probes (the nodes are one PVM host, this machine: a node's death is told
 * by its tasks' exits, not by a PvmHostDelete), prints
 *
 *   pids node1=P1 node2=P2
 *
 * and moves the worker to node 2 (upvm_migrate).  When the move returns
 * it prints "migrate: rc R: WHY", waits (20 s at most) for the exit of the
 * killed node's probe, and decides what became of the worker:
 *
 *   outcome: alive on node N   pvm_pstat says it runs, it answers a
 *                              message (its memory checked intact), and
 *                              no PvmTaskExit came;
 *   outcome: lost              pvm_pstat says no such task, and its
 *                              PvmTaskExit came (20 s at most).
 *
 * Anything else prints "INCONSISTENT: ..." and exits 1.  With "local" as
 * its argument the worker starts on node 0, beside main (its watch is then
 * kept with the task's state), and the driver kills node 2 after the move.  Then it ends the
 * tasks that live and returns 0: the job must end (status 0).
 */
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>

#define TAG_EXIT 50
#define TAG_HOST 51
#define TAG_PING 52
#define TAG_PONG 53
#define TAG_QUIT 54
#define HEAP_WORDS ((size_t)1 << 20) /* 8 MiB */

static uint64_t pattern(size_t i)
{
    return (i * 0x9e3779b97f4a7c15u) ^ 0x5bd1e995u;
}

static int worker(void)
{
    uint64_t *heap = malloc(HEAP_WORDS * sizeof *heap);
    if (!heap)
        return 1;
    for (size_t i = 0; i < HEAP_WORDS; i++)
        heap[i] = pattern(i);
    for (;;) {
        int bufid = pvm_recv(pvm_parent(), -1), tag = 0;
        pvm_bufinfo(bufid, NULL, &tag, NULL);
        if (tag != TAG_PING)
            return 0;
        size_t bad = 0;
        for (size_t i = 0; i < HEAP_WORDS; i++)
            bad += heap[i] != pattern(i);
        int v[2] = {(int)bad, upvm_node_of(0)};
        pvm_initsend(PvmDataDefault);
        pvm_pkint(v, 2, 1);
        pvm_send(pvm_parent(), TAG_PONG);
    }
}

static void inconsistent(const char *what, int tid)
{
    printf("INCONSISTENT: %s (t%x)\n", what, (unsigned)tid);
    fflush(NULL);
    exit(1);
}

static int node_pid(int tid)
{
    int n;
    struct pvmtaskinfo *ti;
    return pvm_tasks(tid, &n, &ti) == 0 && n == 1 ? ti[0].ti_pid : -1;
}

/* The worker is alive: it answers, its memory intact; no exit came. */
static void check_alive(int w)
{
    struct timeval tmout = {20, 0};
    pvm_initsend(PvmDataDefault);
    if (pvm_send(w, TAG_PING) < 0)
        inconsistent("pvm_pstat says it runs, but a send to it fails", w);
    int v[2] = {-1, -1};
    if (pvm_trecv(w, TAG_PONG, &tmout) <= 0 || pvm_upkint(v, 2, 1) < 0)
        inconsistent("pvm_pstat says it runs, but it does not answer", w);
    if (v[0] != 0)
        inconsistent("it answers, but its memory is not what it wrote", w);
    if (pvm_nrecv(-1, TAG_EXIT) > 0)
        inconsistent("it answers, but its PvmTaskExit came", w);
    printf("outcome: alive on node %d\n", v[1]);
    pvm_initsend(PvmDataDefault);
    pvm_send(w, TAG_QUIT);
}

static void check_lost(int w)
{
    struct timeval tmout = {20, 0};
    if (pvm_trecv(-1, TAG_EXIT, &tmout) <= 0)
        inconsistent("pvm_pstat says it is gone, but no PvmTaskExit came", w);
    printf("outcome: lost\n");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "worker") == 0)
        return worker();
    if (argc > 1 && strcmp(argv[1], "probe") == 0) {
        (void)pvm_recv(pvm_parent(), TAG_QUIT);
        return 0;
    }
    /* "local": the worker starts on node 0 with main, which watches it from
     * there; after the move the driver kills its new node */
    int local = argc > 1 && strcmp(argv[1], "local") == 0;
    int w, probe, n1, hosts[2];
    char *wargs[] = {"worker", NULL}, *pargs[] = {"probe", NULL};
    if (pvm_spawn(argv[0], wargs, PvmTaskHost, local ? "node0" : "node1", 1, &w) != 1 ||
        pvm_spawn(argv[0], pargs, PvmTaskHost, "node1", 1, &n1) != 1 ||
        pvm_spawn(argv[0], pargs, PvmTaskHost, "node2", 1, &probe) != 1) {
        printf("cannot spawn (a job of 3 nodes: UPVM_NODES=3)\n");
        return 1;
    }
    hosts[0] = n1;    /* node1's probe: ends with it */
    hosts[1] = probe; /* node2's */
    pvm_notify(PvmTaskExit, TAG_EXIT, 1, &w);
    pvm_notify(PvmTaskExit, TAG_HOST, 2, hosts);
    printf("pids node1=%d node2=%d\n", node_pid(n1), node_pid(probe));
    fflush(stdout);
    int rc = upvm_migrate(w, 2);
    printf("migrate: rc %d: %s\n", rc, rc ? upvm_migrate_error() : "moved");
    fflush(stdout);
    struct timeval tmout = {20, 0};
    int dead_host = 0;
    if (pvm_trecv(-1, TAG_HOST, &tmout) <= 0 || pvm_upkint(&dead_host, 1, 1) < 0)
        inconsistent("no PvmTaskExit came for the killed node's probe", w);
    printf("node%d's probe t%x ended with it\n", dead_host == n1 ? 1 : 2, (unsigned)dead_host);
    if (pvm_pstat(w) == PvmOk)
        check_alive(w);
    else
        check_lost(w);
    if (dead_host != hosts[1]) {
        pvm_initsend(PvmDataDefault);
        pvm_send(probe, TAG_QUIT);
    }
    if (dead_host != hosts[0]) {
        pvm_initsend(PvmDataDefault);
        pvm_send(n1, TAG_QUIT);
    }
    fflush(NULL);
    return 0;
}
