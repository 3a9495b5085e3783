/*
 * delhost.c - pvm_delhosts of nodes in a one-host job of several nodes
 * (UPVM_NODES=4, thread mode): the job is one PVM host (pvm_config lists
 * it once, whatever its nodes); UPVM's node names ("node<n>") delete one
 * node, and pvm_delhosts returns once it is gone, as PVM's does for a
 * host; the job still ends when main returns.
 *
 * main (node 0) spawns a sleeper task on node1 and watches it (PvmTaskExit,
 * and PvmHostDelete of its host: this machine, which stays), deletes node1
 * and checks that
 *   - pvm_delhosts said 1 deleted, info 0;
 *   - pvm_mstat("node1") says PvmNoHost at once, pvm_config still lists
 *     the one host;
 *   - deleting node1 again gives info PvmNoHost;
 *   - the PvmTaskExit came (the sleeper ended with its node), and no
 *     PvmHostDelete (the host is still there);
 *   - the host itself cannot be deleted (PvmBadParam: the master's);
 * then spawns a "deleter" on node2 that deletes node3 (the request goes
 * through node 0) and checks pvm_mstat there; then main returns, and the
 * job must end (it used to wait for ever for the deleted node's answer).
 * Prints OK; any failed check exits 1 with a line saying which.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>

#define TAG_EXIT 50
#define TAG_HOST 51
#define TAG_RESULT 52

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "delhost: FAILED: %s\n", what);
        fflush(NULL);
        exit(1);
    }
}

/* Whether pvm_config lists a host named `name`. */
static int listed(const char *name, int *nhost)
{
    struct pvmhostinfo *hi;
    int narch;
    check(pvm_config(nhost, &narch, &hi) == 0, "pvm_config");
    for (int i = 0; i < *nhost; i++)
        if (strcmp(hi[i].hi_name, name) == 0)
            return 1;
    return 0;
}

static int delete_one(const char *name, int *info)
{
    char *hosts[1] = {(char *)name};
    return pvm_delhosts(hosts, 1, info);
}

static int sleeper(int argc, char **argv)
{
    (void)pvm_recv(-1, -1); /* nobody sends: it ends with its node */
    return 0;
}
UPVM_TASK("sleeper", sleeper)

/* On node2: delete node3, say what pvm_mstat and pvm_config say then. */
static int deleter(int argc, char **argv)
{
    int info = 1, nhost = 0;
    int n = delete_one("node3", &info);
    int gone = pvm_mstat("node3") == PvmNoHost && !listed("node3", &nhost);
    int v[4] = {n, info, gone, nhost};
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, 4, 1);
    pvm_send(pvm_parent(), TAG_RESULT);
    return 0;
}
UPVM_TASK("deleter", deleter)

static void expect_note(int tag, const char *what)
{
    struct timeval tmout = {20, 0};
    check(pvm_trecv(-1, tag, &tmout) > 0, what);
}

int main(void)
{
    int nhost = 0, tid = 0, info = 1;
    char me[256];
    check(pvm_mytid() > 0, "pvm_mytid");
    struct pvmhostinfo *hi;
    check(pvm_config(&nhost, NULL, &hi) == 0 && nhost == 1 && hi[0].hi_tid == 0x40000,
          "a job of one host: one pvm_config entry, host tid 0x40000");
    snprintf(me, sizeof me, "%s", hi[0].hi_name);
    for (int n = 0; n < 4; n++) {
        char name[16];
        snprintf(name, sizeof name, "node%d", n);
        check(pvm_mstat(name) == PvmOk, "a job of 4 nodes (UPVM_NODES=4)");
    }
    check(pvm_spawn("sleeper", NULL, PvmTaskHost, "node1", 1, &tid) == 1, "spawn on node1");
    check(pvm_notify(PvmTaskExit, TAG_EXIT, 1, &tid) == 0, "notify PvmTaskExit");
    int host = pvm_tidtohost(tid);
    check(host == 0x40000, "the sleeper runs on the one host");
    check(pvm_notify(PvmHostDelete, TAG_HOST, 1, &host) == 0, "notify PvmHostDelete");

    check(delete_one("node1", &info) == 1 && info == 0, "pvm_delhosts(node1) deletes it");
    check(pvm_mstat("node1") == PvmNoHost, "pvm_mstat(node1) says it is gone");
    check(listed(me, &nhost) && nhost == 1, "pvm_config still lists the host");
    check(delete_one("node1", &info) == 0 && info == PvmNoHost,
          "a second pvm_delhosts(node1) says PvmNoHost");
    expect_note(TAG_EXIT, "PvmTaskExit of the sleeper on node1");
    check(delete_one(me, &info) == 0 && info == PvmBadParam,
          "the master's host cannot be deleted");

    check(pvm_spawn("deleter", NULL, PvmTaskHost, "node2", 1, &tid) == 1, "spawn on node2");
    struct timeval tmout = {20, 0};
    int v[4] = {0};
    check(pvm_trecv(tid, TAG_RESULT, &tmout) > 0 && pvm_upkint(v, 4, 1) == 0,
          "the deleter's answer");
    check(v[0] == 1 && v[1] == 0, "pvm_delhosts(node3) from node2 deletes it");
    check(v[2] == 1 && v[3] == 1, "node2's pvm_mstat says node3 is gone");
    check(pvm_mstat("node3") == PvmNoHost && pvm_mstat("node2") == PvmOk,
          "main's pvm_mstat: node3 gone, node2 there");
    struct timeval none = {0, 0};
    check(pvm_trecv(-1, TAG_HOST, &none) == 0, "no PvmHostDelete: the host stays");
    printf("OK\n");
    return 0; /* the job must end now */
}
