/*
 * addhost.c - pvm_addhosts and pvm_delhosts of a real host, in a job of
 * MPI ranks over emulated hosts (tests/hosts): run with two hosts, the
 * second a standby one ("&HOST" in the hostfile, UPVM_STANDBY_HOSTS):
 *
 *   addhost HOST NAME     HOST: as the hostfile names it (an address);
 *                         NAME: its host name, as pvm_config shows it
 *
 * The master adds HOST (a PvmHostAdd notification comes, pvm_config shows
 * NAME), spawns a copy of itself there by NAME (which reports the host it
 * runs on), checks the errors of adding it again and of an unknown host,
 * then deletes it while a task waits there (PvmHostDelete and PvmTaskExit
 * come), and checks that it cannot be added back.  Prints OK at the end; any failure says what and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvm3.h"

#define TAG_HOSTADD 70
#define TAG_HOSTDEL 71
#define TAG_EXIT    72
#define TAG_WHERE   73
#define TAG_GO      74

#define FAIL(...)                                                                        \
    do {                                                                                 \
        printf("FAIL: " __VA_ARGS__);                                                    \
        printf("\n");                                                                    \
        pvm_exit();                                                                      \
        exit(1);                                                                         \
    } while (0)

static int recv_int(int tag)
{
    int v;
    if (pvm_recv(-1, tag) < 0 || pvm_upkint(&v, 1, 1) < 0)
        FAIL("no message with tag %d", tag);
    return v;
}

/* A child: say where it runs, then wait to be told to go (or killed with
 * its host). */
static int child(void)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(host);
    pvm_send(pvm_parent(), TAG_WHERE);
    pvm_recv(pvm_parent(), TAG_GO);
    pvm_exit();
    return 0;
}

static int nhosts(struct pvmhostinfo **hi)
{
    int n;
    if (pvm_config(&n, NULL, hi) < 0)
        FAIL("pvm_config");
    return n;
}

static const char *spawn_where(const char *name, int *tid)
{
    static char where[256];
    char *argv[] = {"child", NULL};
    if (pvm_spawn("addhost", argv, PvmTaskHost, (char *)name, 1, tid) != 1)
        FAIL("spawn on %s: %d", name, *tid);
    if (pvm_recv(*tid, TAG_WHERE) < 0 || pvm_upkstr(where) < 0)
        FAIL("no word from the child on %s", name);
    return where;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child();
    if (argc != 3) {
        fprintf(stderr, "usage: addhost HOST NAME\n");
        return 2;
    }
    char *host = argv[1];
    const char *name = argv[2];
    struct pvmhostinfo *hi;
    pvm_mytid();
    int before = nhosts(&hi);
    for (int i = 0; i < before; i++)
        if (strcmp(hi[i].hi_name, name) == 0)
            FAIL("%s is in the VM before pvm_addhosts", name);

    pvm_notify(PvmHostAdd, TAG_HOSTADD, -1, NULL);
    int info;
    if (pvm_addhosts(&host, 1, &info) != 1 || info <= 0)
        FAIL("pvm_addhosts(%s): info %d", host, info);
    if (recv_int(TAG_HOSTADD) != 1 || pvm_upkint(&info, 0, 1) < 0)
        FAIL("PvmHostAdd");
    int htid = info;
    int after = nhosts(&hi);
    const char *listed = NULL;
    for (int i = 0; i < after; i++)
        if (hi[i].hi_tid == htid)
            listed = hi[i].hi_name;
    if (after != before + 1 || !listed || strcmp(listed, name) != 0)
        FAIL("pvm_config after the add: %d hosts (was %d), the new one named %s", after,
             before, listed ? listed : "(none)");
    printf("added %s: host t%x, named %s\n", host, htid, listed);

    int tid;
    const char *where = spawn_where(name, &tid);
    if (strcmp(where, name) != 0 || pvm_tidtohost(tid) != htid)
        FAIL("the child spawned on %s runs on %s (host t%x)", name, where, pvm_tidtohost(tid));
    printf("a task spawned on %s runs on %s\n", name, where);

    int infos[2];
    char *again[] = {host, "nosuchhost.invalid"};
    if (pvm_addhosts(again, 2, infos) != 0 || infos[0] != PvmDupHost ||
        infos[1] != PvmCantStart)
        FAIL("adding again / an unknown host: infos %d %d", infos[0], infos[1]);

    pvm_notify(PvmHostDelete, TAG_HOSTDEL, 1, &htid);
    pvm_notify(PvmTaskExit, TAG_EXIT, 1, &tid);
    char *del = (char *)name;
    if (pvm_delhosts(&del, 1, &info) != 1 || info != 0)
        FAIL("pvm_delhosts(%s): info %d", name, info);
    if (recv_int(TAG_HOSTDEL) != htid || recv_int(TAG_EXIT) != tid)
        FAIL("notifications of the deletion");
    if (pvm_pstat(tid) != PvmNoTask || nhosts(&hi) != before)
        FAIL("after the deletion: pstat %d, %d hosts", pvm_pstat(tid), nhosts(&hi));
    printf("deleted %s: its task ended\n", name);
    /* a rank cannot start again: adding the host back fails, said why */
    if (pvm_addhosts(&host, 1, &info) != 0 || info != PvmCantStart)
        FAIL("adding %s back after its deletion: info %d", host, info);
    pvm_exit();
    printf("OK\n");
    return 0;
}
