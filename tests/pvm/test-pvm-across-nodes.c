/*
 * test-pvm-across-nodes.c - groups and the mailbox when their users sit
 * on different nodes (run with UPVM_NODES=3; on one node it checks the
 * same things without the spread).  Members are spawned by name, cyclic
 * placement puts each on another node, and everything they see comes
 * back by message (nodes share no memory).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pvmtest.h"

enum { NMEMBERS = 4, READY = 50, RESULT = 51, GO = 52, BCAST = 53, RED = 54, GAT = 55,
       SCAT = 56, DONE = 57 };

/* A member: joins "x", waits at barriers, takes part in bcast, reduce,
 * gather and scatter, then reports what it saw in one message. */
static int member(int argc, char **argv)
{
    (void)argc, (void)argv;
    int parent = pvm_parent();
    int inst = pvm_joingroup("x");
    send_int(parent, READY, inst);
    pvm_recv(parent, GO); /* every member has joined */
    int size = pvm_gsize("x");
    int tid0 = pvm_gettid("x", 0);
    int myinst = pvm_getinst("x", pvm_mytid());
    int bar = pvm_barrier("x", NMEMBERS + 1);
    int bval = recv_int(-1, BCAST); /* main's bcast */
    int contrib[2] = {inst + 1, 10 * (inst + 1)};
    int red = pvm_reduce(PvmSum, contrib, 2, PVM_INT, RED, "x", 0);
    int mine = 100 + inst;
    int gat = pvm_gather(NULL, &mine, 1, PVM_INT, GAT, "x", 0);
    int piece = -1;
    int scat = pvm_scatter(&piece, NULL, 1, PVM_INT, SCAT, "x", 0);
    int bar2 = pvm_barrier("x", -1);
    int report[10] = {inst, size, tid0, myinst, bar, bval, red, gat, scat, piece};
    report[4] |= bar2;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(report, 10, 1);
    pvm_send(parent, RESULT);
    pvm_recv(parent, DONE);
    return 0; /* leaves "x" as it ends */
}
UPVM_TASK("member", member)

TEST(groups_across_nodes)
{
    int me = pvm_mytid(), tids[NMEMBERS];
    CHECK_EQ(pvm_joingroup("x"), 0);
    CHECK_EQ(pvm_spawn("member", NULL, 0, "", NMEMBERS, tids), NMEMBERS);
    int nhost = 0, narch = 0;
    struct pvmhostinfo *hosts;
    CHECK_EQ(pvm_config(&nhost, &narch, &hosts), 0);
    int remote = 0;
    for (int i = 0; i < NMEMBERS; i++)
        remote += pvm_tidtohost(tids[i]) != pvm_tidtohost(me);
    if (nhost > 1)
        CHECK(remote >= NMEMBERS / 2); /* cyclic: most are elsewhere */
    bool seen[NMEMBERS + 1] = {true};
    for (int i = 0; i < NMEMBERS; i++) {
        int inst = recv_int(-1, READY);
        CHECK(inst >= 1 && inst <= NMEMBERS && !seen[inst]);
        seen[inst] = true;
    }
    CHECK_EQ(pvm_gsize("x"), NMEMBERS + 1);
    pvm_initsend(PvmDataDefault);
    CHECK_EQ(pvm_mcast(tids, NMEMBERS, GO), 0);
    CHECK_EQ(pvm_barrier("x", NMEMBERS + 1), 0);
    pvm_initsend(PvmDataDefault);
    int v = 4242;
    pvm_pkint(&v, 1, 1);
    CHECK_EQ(pvm_bcast("x", BCAST), 0);
    int sum[2] = {0, 0}; /* main is instance 0: contributes 0 */
    CHECK_EQ(pvm_reduce(PvmSum, sum, 2, PVM_INT, RED, "x", 0), 0);
    CHECK_EQ(sum[0], 2 + 3 + 4 + 5); /* instance i gives i + 1 */
    CHECK_EQ(sum[1], 10 * (2 + 3 + 4 + 5));
    int all[NMEMBERS + 1], mine = 100;
    CHECK_EQ(pvm_gather(all, &mine, 1, PVM_INT, GAT, "x", 0), 0);
    for (int i = 0; i <= NMEMBERS; i++)
        CHECK_EQ(all[i], 100 + i);
    int pieces[NMEMBERS + 1], piece = -1;
    for (int i = 0; i <= NMEMBERS; i++)
        pieces[i] = 7 * i;
    CHECK_EQ(pvm_scatter(&piece, pieces, 1, PVM_INT, SCAT, "x", 0), 0);
    CHECK_EQ(piece, 0);
    CHECK_EQ(pvm_barrier("x", -1), 0);
    for (int i = 0; i < NMEMBERS; i++) {
        int r[10];
        CHECK(pvm_recv(-1, RESULT) > 0);
        CHECK_EQ(pvm_upkint(r, 10, 1), 0);
        int inst = r[0];
        CHECK_EQ(r[1], NMEMBERS + 1); /* gsize seen from its node */
        CHECK_EQ(r[2], me);           /* gettid(x, 0) */
        CHECK_EQ(r[3], inst);         /* getinst of itself */
        CHECK_EQ(r[4], 0);            /* both barriers */
        CHECK_EQ(r[5], 4242);         /* the bcast */
        CHECK_EQ(r[6], 0);
        CHECK_EQ(r[7], 0);
        CHECK_EQ(r[8], 0);
        CHECK_EQ(r[9], 7 * inst);     /* its scatter piece */
    }
    /* members that end leave the group, wherever they ran */
    pvm_initsend(PvmDataDefault);
    CHECK_EQ(pvm_mcast(tids, NMEMBERS, DONE), 0);
    for (int i = 0; i < 200 && pvm_gsize("x") > 1; i++)
        (void)upvm_sleep_ns(5 * 1000 * 1000);
    CHECK_EQ(pvm_gsize("x"), 1);
    CHECK_EQ(pvm_lvgroup("x"), 0);
    CHECK_EQ(pvm_gsize("x"), PvmNoGroup);
}

/* A mailbox user on another node: puts an entry, then waits for one. */
static int mailer(int argc, char **argv)
{
    (void)argc, (void)argv;
    int parent = pvm_parent();
    pvm_initsend(PvmDataDefault);
    int v = pvm_mytid();
    pvm_pkint(&v, 1, 1);
    int idx = pvm_putinfo("box", pvm_getsbuf(), PvmMboxDefault);
    pvm_initsend(PvmDataDefault);
    v = 77;
    pvm_pkint(&v, 1, 1);
    int pidx = pvm_putinfo("keep", pvm_getsbuf(), PvmMboxPersistent);
    send_int(parent, READY, idx * 1000 + pidx);
    /* blocks until main puts "reply" */
    int got = -1, rb = pvm_recvinfo("reply", 0, PvmMboxWaitForInfo);
    if (rb > 0)
        pvm_upkint(&got, 1, 1);
    int nclasses = 0;
    struct pvmmboxinfo *classes = NULL;
    int info = pvm_getmboxinfo("box", &nclasses, &classes);
    int owner = nclasses == 1 && classes[0].mi_nentries == 1 ? classes[0].mi_owners[0] : 0;
    int report[4] = {got, info, nclasses, owner};
    pvm_initsend(PvmDataDefault);
    pvm_pkint(report, 4, 1);
    pvm_send(parent, RESULT);
    return 0; /* "box" goes with it, "keep" stays */
}
UPVM_TASK("mailer", mailer)

TEST(mailbox_across_nodes)
{
    int tid;
    CHECK_EQ(pvm_spawn("mailer", NULL, 0, "", 1, &tid), 1);
    int idx = recv_int(tid, READY);
    CHECK_EQ(idx, 0);
    int rb = pvm_recvinfo("box", 0, PvmMboxDefault);
    CHECK(rb > 0);
    int v = 0;
    CHECK_EQ(pvm_upkint(&v, 1, 1), 0);
    CHECK_EQ(v, tid);
    /* not ours to replace or delete */
    pvm_initsend(PvmDataDefault);
    CHECK_EQ(pvm_putinfo("box", pvm_getsbuf(), PvmMboxDefault), PvmDenied);
    CHECK_EQ(pvm_delinfo("box", 0, 0), PvmDenied);
    /* answer the waiting lookup on the other node */
    pvm_initsend(PvmDataDefault);
    v = 31337;
    pvm_pkint(&v, 1, 1);
    CHECK_EQ(pvm_putinfo("reply", pvm_getsbuf(), PvmMboxDefault), 0);
    CHECK(pvm_recv(tid, RESULT) > 0);
    int r[4];
    CHECK_EQ(pvm_upkint(r, 4, 1), 0);
    CHECK_EQ(r[0], 31337);
    CHECK_EQ(r[1], 0);
    CHECK_EQ(r[2], 1);
    CHECK_EQ(r[3], tid);
    /* its end tidies its entries; the persistent one stays, ownerless */
    for (int i = 0; i < 200 && pvm_recvinfo("box", 0, PvmMboxDefault) > 0; i++)
        (void)upvm_sleep_ns(5 * 1000 * 1000);
    CHECK_EQ(pvm_recvinfo("box", 0, PvmMboxDefault), PvmNotFound);
    CHECK(pvm_recvinfo("keep", 0, PvmMboxDefault) > 0);
    CHECK_EQ(pvm_upkint(&v, 1, 1), 0);
    CHECK_EQ(v, 77);
    int nclasses = 0;
    struct pvmmboxinfo *classes;
    CHECK_EQ(pvm_getmboxinfo("keep", &nclasses, &classes), 0);
    CHECK_EQ(nclasses, 1);
    CHECK_EQ(classes[0].mi_owners[0], 0);
    CHECK_EQ(pvm_delinfo("reply", 0, 0), 0);
}

/* Every case starts enrolled: with UPVM_NODES, the job's nodes start here,
 * in the case's own process. */
static void enrol(void) { CHECK(pvm_mytid() > 0); }
HARNESS_BEFORE(enrol)
static void leave_pvm(void) { pvm_exit(); }
HARNESS_AFTER(leave_pvm)

HARNESS_MAIN()
