/*
 * where.c - which OS process (node) and core each task of a job runs on:
 * the placement check of bench/nodes-compare.sh.  Plain PVM: built with
 * upvmcc (process-mode ULPs, the nodes of `upvm run --nodes K`) or with
 * -lpvm3 (genuine PVM: every task its own process).
 *
 *   where [-n N]
 *
 * Spawns N-1 copies of itself with one pvm_spawn call, exactly as the
 * baseline's ring.c does (PvmTaskDefault, where "", by
 * $PVMBENCH_SPAWN_DIR/where when that is set), so a placement policy puts
 * them where it puts ring members 1..N-1 (the pingpong's partner is the
 * case N=2).  Every task reports pvm_mytid, pvm_tidtohost, getpid() (a
 * process-mode ULP runs inside its node's process, so the pid names the
 * node), sched_getcpu() and its host name (gethostname: which host, in a
 * job over several) to the master, which prints one line per member, then
 * `node` = the index of the member's pid in order of first appearance (the
 * master's pid is node 0):
 *
 *   RESULT where n=4 member=2 tid=0x80001 host=0x80000 pid=4242 cpu=1 node=1 hostname=beta
 *   PLACEMENT n=4 nodes=0,1,0,1 processes=2 cross_hops=4
 *
 * cross_hops: how many of the N hops of the ring 0 -> 1 -> ... -> N-1 -> 0
 * go from one process to another.  The children wait for the master's
 * "quit" so all N are alive at once.
 */
#define _GNU_SOURCE
#include <pvm3.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_REPORT 30
#define TAG_QUIT 31
#define MAXN 4096
#define HOSTLEN 64

static const char *spawn_name(const char *prog, char *buf, size_t len)
{
    const char *dir = getenv("PVMBENCH_SPAWN_DIR");
    if (dir && *dir) {
        snprintf(buf, len, "%s/%s", dir, prog);
        return buf;
    }
    return prog;
}

/* this task's facts: tid, host part, pid, cpu; its host name */
static void self_facts(int v[4], char name[HOSTLEN])
{
    v[0] = pvm_mytid();
    v[1] = pvm_tidtohost(v[0]);
    v[2] = (int)getpid();
    v[3] = sched_getcpu();
    if (gethostname(name, HOSTLEN) != 0)
        strcpy(name, "?");
    name[HOSTLEN - 1] = '\0';
}

static int child(void)
{
    int parent = pvm_parent(), v[4];
    char name[HOSTLEN];
    self_facts(v, name);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, 4, 1);
    pvm_pkstr(name);
    pvm_send(parent, TAG_REPORT);
    pvm_recv(parent, TAG_QUIT);
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    static int tids[MAXN], facts[MAXN][4], node[MAXN];
    static int pids[MAXN];
    static char names[MAXN][HOSTLEN];
    int n = 2, got, i, j, npids = 0, cross = 0, mytid;
    char namebuf[4096];
    char *cargv[] = {"-child", NULL};

    mytid = pvm_mytid();
    if (mytid < 0) {
        pvm_perror("where: pvm_mytid");
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "-child"))
        return child();
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: where [-n N]\n");
            pvm_exit();
            return 2;
        }
    }
    if (n < 1 || n > MAXN) {
        fprintf(stderr, "where: N must be 1..%d\n", MAXN);
        pvm_exit();
        return 2;
    }

    tids[0] = mytid;
    got = n > 1 ? pvm_spawn((char *)spawn_name("where", namebuf, sizeof namebuf),
                            cargv, PvmTaskDefault, "", n - 1, tids + 1)
                : 0;
    if (got != n - 1) {
        fprintf(stderr, "where: spawned %d of %d tasks (%d)\n", got, n - 1,
                got > 0 ? 0 : tids[1]);
        for (i = 1; i < n && i - 1 < got; i++)
            pvm_kill(tids[i]);
        pvm_exit();
        return 1;
    }

    self_facts(facts[0], names[0]);
    for (i = 1; i < n; i++) {
        int bufid = pvm_recv(-1, TAG_REPORT), bytes, tag, src, v[4];
        char name[HOSTLEN];
        if (bufid < 0) {
            pvm_perror("where: pvm_recv");
            return 1;
        }
        pvm_bufinfo(bufid, &bytes, &tag, &src);
        pvm_upkint(v, 4, 1);
        if (pvm_upkstr(name) < 0)
            strcpy(name, "?");
        for (j = 1; j < n && tids[j] != src; j++)
            ;
        if (j == n) {
            fprintf(stderr, "where: report from unknown tid 0x%x\n", src);
            return 1;
        }
        memcpy(facts[j], v, sizeof v);
        memcpy(names[j], name, sizeof name);
    }
    if (n > 1) {
        pvm_initsend(PvmDataDefault);
        pvm_mcast(tids + 1, n - 1, TAG_QUIT);
    }

    for (i = 0; i < n; i++) {
        for (j = 0; j < npids && pids[j] != facts[i][2]; j++)
            ;
        if (j == npids)
            pids[npids++] = facts[i][2];
        node[i] = j;
        printf("RESULT where n=%d member=%d tid=0x%x host=0x%x pid=%d cpu=%d node=%d hostname=%s\n",
               n, i, (unsigned)facts[i][0], (unsigned)facts[i][1], facts[i][2],
               facts[i][3], node[i], names[i]);
    }
    for (i = 0; i < n; i++)
        cross += n > 1 && node[i] != node[(i + 1) % n];
    printf("PLACEMENT n=%d nodes=", n);
    for (i = 0; i < n; i++)
        printf("%s%d", i ? "," : "", node[i]);
    printf(" processes=%d cross_hops=%d\n", npids, cross);
    fflush(stdout);
    pvm_exit();
    return 0;
}
