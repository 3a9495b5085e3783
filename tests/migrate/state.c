/*
 * state.c - what a task sees is unchanged by its migration
 * (test-migrate.sh state, stdio).
 *
 *   state            the master (node 0): spawns three copies of itself in
 *                    one pvm_spawn: S (siblings[0], the subject), P
 *                    (siblings[1], its peer and watcher) and Q
 *                    (siblings[2], a bystander), takes part in S's third
 *                    move and collects the three reports
 *   state stdio      a task (on node1) prints half a line, moves,
 *                    finishes it, and so on
 *
 * S moves four times, each a different way:
 *   1. itself: upvm_migrate(0, node);
 *   2. by P, while S waits in pvm_recv;
 *   3. by the master, while S sleeps (usleep);
 *   4. by P, while S computes without any PVM call, calling only
 *      upvm_migrate_point().
 * Before each move S leaves, half done: the active send buffer half packed
 * (and another buffer made the active one meanwhile where S must send), the
 * active receive buffer half unpacked (saved with pvm_setrbuf(0) where S
 * must receive), five messages from P queued (one of 1 MB), a message to
 * itself in a context of its own.  After each move it checks:
 *   pvm_mytid, pvm_parent, pvm_siblings (the same contents), argv (the same
 *   pointers and strings), program_invocation_short_name, errno (set before
 *   moves 1 and 4), the environment (setenv/unsetenv before), getopt's state
 *   (between two words after move 1, in the middle of "-bd" after move 2),
 *   pvm_getcontext (S's own context across moves 1 and 4),
 *   pvm_getopt(PvmRoute / PvmAutoErr), its group instance, the group's
 *   size and P's instance, its copy of a static group that P left (size 2
 *   and P's tid, where the group table says 1 member); then finishes both buffers (the send buffer goes
 *   to P, who checks it), receives the queued messages in order, its own
 *   message in its context (and not in the base one), and a message that
 *   P sends after the move runs the handler (pvm_addmhf) added before the
 *   first.  After the last move: a group barrier with P and Q; S tells Q to
 *   exit and gets the PvmTaskExit notification it asked for before its
 *   first move; S exits, and P, who asked for PvmTaskExit on S before S's
 *   first move, gets that notification.
 */
#define _GNU_SOURCE /* program_invocation_short_name */
#include <errno.h>
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#include "mtest.h"

#define GROUP "st"
#define SGROUP "sst" /* static: S and P freeze it, P leaves it */
#define MOVES 4
#define BIGQ (1 << 18) /* ints: a 1 MB queued message */

enum {
    T_READY = 1,
    T_PREP,     /* S -> P: send me the messages for move k */
    T_Q,        /* P -> S: five queued messages */
    T_RB,       /* P -> S: the one S half unpacks */
    T_QMARK,    /* P -> S: all sent */
    T_MOVEME,   /* S -> P / master: move me (k) */
    T_COMPUTING,/* S -> P: move me, I am computing */
    T_MOVED,    /* -> S: {rc, node} */
    T_SB,       /* S -> P: the send buffer packed across the move */
    T_MHF,      /* P -> S: for the handler */
    T_ACK,      /* P -> S */
    T_SELF,     /* S -> S, in S's context */
    T_BC,       /* S -> group */
    T_QUIT,     /* S -> Q */
    T_QEXIT,    /* notification to S: Q exited */
    T_SEXIT,    /* notification to P: S exited */
    T_DONE,     /* S -> P */
    T_REPORT,   /* -> master */
    T_MEXIT,    /* notifications to the master */
};

/* ------------------------------------------------------------ S */

static int mhf_count, mhf_sum, mhf_bad;
static int g_ptid;

static int on_mhf(int bufid)
{
    int v = -1, bytes, tag, src;
    pvm_bufinfo(bufid, &bytes, &tag, &src);
    if (tag != T_MHF || src != g_ptid || pvm_getrbuf() != bufid)
        mhf_bad++;
    pvm_upkint(&v, 1, 1);
    mhf_count++;
    mhf_sum += v;
    return 0;
}

struct snapshot {
    int mytid, parent, nsib, sib[8];
    int inst, pinst, qinst, gsize;
    char **argv;
    int argc;
    char args[8][32];
    const char *prog;
    char progname[64];
    int route, autoerr;
};

static void take(struct snapshot *s, int argc, char **argv, int p, int q)
{
    memset(s, 0, sizeof *s);
    s->mytid = pvm_mytid();
    s->parent = pvm_parent();
    int *sib;
    s->nsib = pvm_siblings(&sib);
    for (int i = 0; i < s->nsib && i < 8; i++)
        s->sib[i] = sib[i];
    s->inst = pvm_getinst(GROUP, s->mytid);
    s->pinst = pvm_getinst(GROUP, p);
    s->qinst = pvm_getinst(GROUP, q);
    s->gsize = pvm_gsize(GROUP);
    s->argv = argv;
    s->argc = argc;
    for (int i = 0; i < argc && i < 8; i++)
        snprintf(s->args[i], sizeof s->args[i], "%s", argv[i]);
    s->prog = program_invocation_short_name;
    snprintf(s->progname, sizeof s->progname, "%s", program_invocation_short_name);
    s->route = pvm_getopt(PvmRoute);
    s->autoerr = pvm_getopt(PvmAutoErr);
}

static void compare(const struct snapshot *a, int argc, char **argv, int p, int q, int k)
{
    struct snapshot b;
    take(&b, argc, argv, p, q);
    if (a->mytid != b.mytid || a->parent != b.parent)
        MT_FAIL("move %d: mytid t%x -> t%x, parent t%x -> t%x", k, a->mytid, b.mytid, a->parent,
                b.parent);
    if (a->nsib != b.nsib || memcmp(a->sib, b.sib, sizeof a->sib) != 0)
        MT_FAIL("move %d: pvm_siblings: %d [t%x t%x t%x] -> %d [t%x t%x t%x]", k, a->nsib,
                a->sib[0], a->sib[1], a->sib[2], b.nsib, b.sib[0], b.sib[1], b.sib[2]);
    if (a->inst != b.inst || a->pinst != b.pinst || a->qinst != b.qinst || a->gsize != b.gsize)
        MT_FAIL("move %d: group: my instance %d -> %d, P's %d -> %d, Q's %d -> %d, size %d -> %d",
                k, a->inst, b.inst, a->pinst, b.pinst, a->qinst, b.qinst, a->gsize, b.gsize);
    if (pvm_gettid(GROUP, a->pinst) != p)
        MT_FAIL("move %d: pvm_gettid(%d) is t%x, not P t%x", k, a->pinst, pvm_gettid(GROUP, a->pinst), p);
    if (a->argv != argv || a->argc != argc)
        MT_FAIL("move %d: argv moved", k);
    for (int i = 0; i < argc && i < 8; i++)
        if (strcmp(a->args[i], argv[i]) != 0)
            MT_FAIL("move %d: argv[%d] \"%s\" -> \"%s\"", k, i, a->args[i], argv[i]);
    if (a->prog != program_invocation_short_name || strcmp(a->progname, b.progname) != 0)
        MT_FAIL("move %d: program_invocation_short_name \"%s\" -> \"%s\"", k, a->progname, b.progname);
    if (a->route != b.route || a->autoerr != b.autoerr)
        MT_FAIL("move %d: pvm_getopt: PvmRoute %d -> %d, PvmAutoErr %d -> %d", k, a->route,
                b.route, a->autoerr, b.autoerr);
}

static void check_env(int k)
{
    /* MTEST_A set before move 1, removed after move 2; MTEST_B set after
     * move 1; MTEST_PUT put before move 1 */
    const char *a = getenv("MTEST_A"), *b = getenv("MTEST_B"), *pu = getenv("MTEST_PUT");
    if (k <= 2 ? !a || strcmp(a, "set before the first move") : a != NULL)
        MT_FAIL("move %d: MTEST_A is %s", k, a ? a : "(unset)");
    if (k >= 2 && (!b || strcmp(b, "set after the first move")))
        MT_FAIL("move %d: MTEST_B is %s", k, b ? b : "(unset)");
    if (!pu || strcmp(pu, "put"))
        MT_FAIL("move %d: MTEST_PUT is %s", k, pu ? pu : "(unset)");
    int found = 0;
    for (char **e = environ; e && *e; e++)
        found += strncmp(*e, "MTEST_PUT=", 10) == 0;
    MT_CHECK_EQ(found, 1);
}

static void check_getopt(int k, int argc, char **argv)
{
    /* argv: prog -a -bd -c val rest; optstring "+abc:d".  Move 1 comes
     * between two words (optind's state), move 2 in the middle of "-bd"
     * (libc's own state: where in the word it is) */
    static const int want_opt[MOVES + 1] = {'a', 'b', 'd', 'c', -1};
    static const int want_optind[MOVES + 1] = {2, 2, 3, 5, 5};
    int c = getopt(argc, argv, "+abc:d");
    if (c != want_opt[k])
        MT_FAIL("move %d: getopt returned %d ('%c'), expected '%c' (optind %d)", k, c,
                c > 0 ? c : '?', want_opt[k] > 0 ? want_opt[k] : '-', optind);
    if (c == 'c' && (!optarg || strcmp(optarg, "val") != 0))
        MT_FAIL("move %d: optarg \"%s\"", k, optarg ? optarg : "(null)");
    if (optind != want_optind[k])
        MT_FAIL("move %d: optind %d, expected %d", k, optind, want_optind[k]);
    if (k == MOVES && (optind >= argc || strcmp(argv[optind], "rest") != 0))
        MT_FAIL("after the options: argv[optind] is not \"rest\"");
}

static int pick(int cur) { return (cur + 1) % upvm_nodes(); }

static int subject(int argc, char **argv, int *sib)
{
    mt_role = "S";
    int P = sib[1], Q = sib[2], M = pvm_parent();
    g_ptid = P;
    pvm_joingroup(GROUP);
    pvm_barrier(GROUP, 3);
    pvm_joingroup(SGROUP);
    if (pvm_freezegroup(SGROUP, 2) != 2)
        MT_FAIL("pvm_freezegroup(%s, 2)", SGROUP);
    int ready;
    mt_recv_ints(P, T_READY, &ready, 1); /* P watches us now, and left SGROUP */
    int sinst = pvm_getinst(SGROUP, P); /* from S's copy of the static group */
    if (sinst < 0 || pvm_gsize(SGROUP) != 2)
        MT_FAIL("static group: P's instance %d, size %d", sinst, pvm_gsize(SGROUP));
    pvm_notify(PvmTaskExit, T_QEXIT, 1, &Q);
    if (pvm_addmhf(P, T_MHF, -1, on_mhf) < 0)
        MT_FAIL("pvm_addmhf");
    int base_ctx = pvm_getcontext();
    int ctx = pvm_newcontext();
    if (ctx < 0)
        MT_FAIL("pvm_newcontext: %d", ctx);
    pvm_setopt(PvmRoute, PvmRouteDirect);
    pvm_setopt(PvmAutoErr, 0);
    setenv("MTEST_A", "set before the first move", 1);
    static char put[] = "MTEST_PUT=put";
    putenv(put);
    check_getopt(0, argc, argv); /* 'a': "-a" done, "-bd" next */
    struct snapshot snap;
    take(&snap, argc, argv, P, Q);
    if (snap.inst < 0 || snap.gsize != 3)
        MT_FAIL("group instance %d, size %d", snap.inst, snap.gsize);

    for (int k = 1; k <= MOVES; k++) {
        /* --- leave things half done */
        mt_send_ints(P, T_PREP, &k, 1);
        int mark;
        mt_recv_ints(P, T_QMARK, &mark, 1);
        int rb = pvm_recv(P, T_RB);
        int got[10] = {0};
        pvm_upkint(got, 5, 1);
        for (int i = 0; i < 5; i++)
            if (got[i] != k * 100 + i)
                MT_FAIL("move %d: receive buffer [%d] = %d before moving", k, i, got[i]);
        int sb = pvm_initsend(PvmDataDefault);
        for (int i = 0; i < 5; i++) {
            int v = k * 10 + i;
            pvm_pkint(&v, 1, 1);
        }
        /* a message to itself in its own context, sent from another buffer */
        int other = pvm_mkbuf(PvmDataDefault);
        pvm_setsbuf(other);
        pvm_pkint(&k, 1, 1);
        pvm_setcontext(ctx);
        pvm_send(pvm_mytid(), T_SELF);
        pvm_setcontext(base_ctx);
        pvm_setsbuf(sb);
        pvm_freebuf(other);

        int from = upvm_node_of(0), to = pick(from);
        int moved_to = -1;
        int err_before = 1000 + k;
        int err_after = -1;
        int ctx_after = -1;
        /* --- move */
        if (k == 1) {
            pvm_setcontext(ctx); /* S's own context across moves 1 and 4 */
            errno = err_before;
            int rc = upvm_migrate(0, to);
            err_after = errno;
            ctx_after = pvm_getcontext();
            pvm_setcontext(base_ctx);
            if (rc != 0)
                MT_FAIL("move 1: upvm_migrate(0, %d): %d: %s", to, rc, upvm_migrate_error());
            else if (upvm_migrate_error()[0])
                MT_FAIL("move 1: upvm_migrate_error() after a success: \"%s\"", upvm_migrate_error());
            moved_to = to;
        } else {
            int saved_r = pvm_setrbuf(0); /* keep the half-unpacked buffer */
            int saved_s = pvm_setsbuf(pvm_mkbuf(PvmDataDefault));
            pvm_pkint(&k, 1, 1);
            pvm_send(k == 3 ? M : P, k == 4 ? T_COMPUTING : T_MOVEME);
            pvm_freebuf(pvm_setsbuf(saved_s));
            if (k == 2) {
                /* P moves us while we wait here */
            } else if (k == 3) {
                /* (errno is not checked here: a successful usleep may
                 * change it, as any libc call may) */
                for (int i = 0; i < 10000 && upvm_node_of(0) == from; i++)
                    usleep(2000);
            } else {
                /* no PVM call, no yield: only migration points */
                pvm_setcontext(ctx);
                errno = err_before;
                volatile uint64_t x = 1;
                struct timespec t0, t;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                long iters = 0;
                do {
                    for (int i = 0; i < 10000; i++)
                        x = mt_mix(x);
                    upvm_migrate_point();
                    iters++;
                    clock_gettime(CLOCK_MONOTONIC, &t);
                } while (upvm_node_of(0) == from && t.tv_sec - t0.tv_sec < 20);
                err_after = errno;
                ctx_after = pvm_getcontext();
                pvm_setcontext(base_ctx);
                if (upvm_node_of(0) == from)
                    MT_FAIL("move 4: still on node %d after %ld migration points in 20 s", from,
                            iters);
            }
            int r[2] = {-1, -1};
            mt_recv_ints(k == 3 ? M : P, T_MOVED, r, 2);
            pvm_freebuf(pvm_setrbuf(saved_r));
            if (r[0] != 0)
                MT_FAIL("move %d: the mover's upvm_migrate(S, %d) returned %d", k, r[1], r[0]);
            moved_to = r[1];
        }
        /* --- check */
        if (pvm_getrbuf() != rb)
            MT_FAIL("move %d: the active receive buffer is %d, was %d", k, pvm_getrbuf(), rb);
        if ((k == 1 || k == 4) && err_after != err_before)
            MT_FAIL("move %d: errno %d before, %d after", k, err_before, err_after);
        if (upvm_node_of(0) != moved_to || moved_to == from)
            MT_FAIL("move %d: from node %d to %d: now on node %d", k, from, moved_to, upvm_node_of(0));
        if ((k == 1 || k == 4) && ctx_after != ctx)
            MT_FAIL("move %d: pvm_getcontext() %d after the move, %d before", k, ctx_after, ctx);
        compare(&snap, argc, argv, P, Q, k);
        if (pvm_gsize(SGROUP) != 2 || pvm_gettid(SGROUP, sinst) != P)
            MT_FAIL("move %d: static group: size %d, instance %d is t%x, not P t%x (S's copy "
                    "of it did not move)", k, pvm_gsize(SGROUP), sinst,
                    pvm_gettid(SGROUP, sinst), P);
        check_env(k);
        if (k == 1)
            setenv("MTEST_B", "set after the first move", 1);
        if (k == 2)
            unsetenv("MTEST_A");
        check_getopt(k, argc, argv);
        if (pvm_getsbuf() != sb)
            MT_FAIL("move %d: the active send buffer is %d, was %d", k, pvm_getsbuf(), sb);
        /* the receive buffer: the other half */
        pvm_upkint(got + 5, 5, 1);
        char str[32] = "";
        pvm_upkstr(str);
        char want[32];
        snprintf(want, sizeof want, "rb-%d", k);
        for (int i = 5; i < 10; i++)
            if (got[i] != k * 100 + i)
                MT_FAIL("move %d: receive buffer [%d] = %d after moving", k, i, got[i]);
        MT_CHECK_STR(str, want);
        /* the send buffer: the other half, then to P */
        for (int i = 5; i < 10; i++) {
            int v = k * 10 + i;
            pvm_pkint(&v, 1, 1);
        }
        pvm_pkstr(want);
        pvm_send(P, T_SB);
        /* the queued messages, in order */
        for (int i = 0; i < 5; i++) {
            int bid = pvm_recv(P, T_Q);
            int h[3] = {-1, -1, -1};
            pvm_upkint(h, 3, 1);
            if (h[0] != k || h[1] != i)
                MT_FAIL("move %d: queued message %d: {%d, %d}", k, i, h[0], h[1]);
            if (h[2] > 0) {
                int *big = malloc(sizeof(int) * (size_t)h[2]);
                pvm_upkint(big, h[2], 1);
                for (int j = 0; j < h[2]; j++)
                    if (big[j] != (int)(mt_mix((uint64_t)j + (uint64_t)k) & 0x7fffffff)) {
                        MT_FAIL("move %d: the queued 1 MB message differs at int %d", k, j);
                        break;
                    }
                free(big);
            }
            (void)bid;
        }
        /* its own message, in its own context only */
        if (pvm_nrecv(pvm_mytid(), T_SELF) != 0)
            MT_FAIL("move %d: the message sent in context %d matched in context %d", k, ctx, base_ctx);
        pvm_setcontext(ctx);
        int selfk = -1;
        if (pvm_nrecv(pvm_mytid(), T_SELF) <= 0)
            MT_FAIL("move %d: the message to myself in context %d is not there", k, ctx);
        else
            pvm_upkint(&selfk, 1, 1);
        pvm_setcontext(base_ctx);
        MT_CHECK_EQ(selfk, k);
        /* the handler: P sends T_MHF, then T_ACK */
        int ack = -1;
        mt_recv_ints(P, T_ACK, &ack, 1);
        if (ack != 0)
            MT_FAIL("move %d: P found %d errors in the send buffer packed across the move", k, ack);
        if (mhf_count != k || mhf_sum != k * (k + 1) / 2 || mhf_bad)
            MT_FAIL("move %d: the message handler ran %d times (sum %d, %d bad), expected %d", k,
                    mhf_count, mhf_sum, mhf_bad, k);
        /* the group */
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&k, 1, 1);
        if (pvm_bcast(GROUP, T_BC) < 0)
            MT_FAIL("move %d: pvm_bcast", k);
        printf("S: move %d (%s) from node %d to node %d: checked\n", k,
               k == 1 ? "itself" : k == 2 ? "by P, in pvm_recv" : k == 3 ? "by the master, sleeping" : "by P, computing",
               from, upvm_node_of(0));
        fflush(stdout);
    }
    if (pvm_barrier(GROUP, 3) < 0)
        MT_FAIL("pvm_barrier after the moves");
    pvm_initsend(PvmDataDefault);
    pvm_send(Q, T_QUIT);
    int bid = pvm_recv(-1, T_QEXIT);
    int who = -1;
    if (bid > 0)
        pvm_upkint(&who, 1, 1);
    if (who != Q)
        MT_FAIL("the PvmTaskExit notification for Q (asked for before moving): t%x", who);
    int z = 0;
    mt_send_ints(P, T_DONE, &z, 1);
    int f = mt_failures;
    mt_send_ints(M, T_REPORT, &f, 1);
    return f ? 1 : 0; /* S ends: P's notification */
}

/* ------------------------------------------------------------ P and Q */

static int peer(int *sib)
{
    mt_role = "P";
    int S = sib[0];
    pvm_joingroup(GROUP);
    pvm_barrier(GROUP, 3);
    pvm_joingroup(SGROUP);
    if (pvm_freezegroup(SGROUP, 2) != 2)
        MT_FAIL("pvm_freezegroup(%s, 2)", SGROUP);
    pvm_lvgroup(SGROUP); /* the group is dead; S keeps its frozen copy */
    pvm_notify(PvmTaskExit, T_SEXIT, 1, &S);
    int one = 1;
    mt_send_ints(S, T_READY, &one, 1);
    int bcasts = 0;
    for (;;) {
        int bid = pvm_recv(S, -1);
        int bytes, tag, src;
        pvm_bufinfo(bid, &bytes, &tag, &src);
        int k = -1;
        if (tag == T_DONE)
            break;
        pvm_upkint(&k, 1, 1);
        switch (tag) {
        case T_PREP: {
            int *big = malloc(sizeof(int) * BIGQ);
            for (int j = 0; j < BIGQ; j++)
                big[j] = (int)(mt_mix((uint64_t)j + (uint64_t)k) & 0x7fffffff);
            for (int i = 0; i < 5; i++) {
                int h[3] = {k, i, i == 2 ? BIGQ : 0};
                pvm_initsend(PvmDataDefault);
                pvm_pkint(h, 3, 1);
                if (i == 2)
                    pvm_pkint(big, BIGQ, 1);
                pvm_send(S, T_Q);
            }
            free(big);
            int v[10];
            for (int i = 0; i < 10; i++)
                v[i] = k * 100 + i;
            char str[32];
            snprintf(str, sizeof str, "rb-%d", k);
            pvm_initsend(PvmDataDefault);
            pvm_pkint(v, 10, 1);
            pvm_pkstr(str);
            pvm_send(S, T_RB);
            mt_send_ints(S, T_QMARK, &k, 1);
            break;
        }
        case T_MOVEME:
        case T_COMPUTING: {
            int to = pick(upvm_node_of(S));
            int rc = upvm_migrate(S, to);
            if (rc != 0)
                MT_FAIL("move %d: upvm_migrate(S t%x, %d): %d: %s", k, S, to, rc, upvm_migrate_error());
            else if (upvm_node_of(S) != to)
                MT_FAIL("move %d: upvm_node_of(S) is %d after moving it to %d", k, upvm_node_of(S), to);
            int r[2] = {rc, to};
            mt_send_ints(S, T_MOVED, r, 2);
            break;
        }
        case T_SB: {
            int v[10] = {0}, errs = 0;
            v[0] = k;
            pvm_upkint(v + 1, 9, 1);
            char str[32] = "", want[32];
            pvm_upkstr(str);
            int kk = v[0] / 10;
            for (int i = 0; i < 10; i++)
                errs += v[i] != kk * 10 + i;
            snprintf(want, sizeof want, "rb-%d", kk);
            errs += strcmp(str, want) != 0;
            if (errs)
                MT_FAIL("move %d: the send buffer packed across the move: %d %d %d %d %d %d %d %d "
                        "%d %d \"%s\"",
                        kk, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], str);
            mt_send_ints(S, T_MHF, &kk, 1);
            mt_send_ints(S, T_ACK, &errs, 1);
            break;
        }
        case T_BC:
            bcasts++;
            if (k != bcasts)
                MT_FAIL("broadcast %d says %d", bcasts, k);
            if (bcasts == MOVES && pvm_barrier(GROUP, 3) < 0)
                MT_FAIL("pvm_barrier");
            break;
        default:
            MT_FAIL("an unexpected message, tag %d", tag);
        }
    }
    MT_CHECK_EQ(bcasts, MOVES);
    int bid = pvm_recv(-1, T_SEXIT);
    int who = -1;
    if (bid > 0)
        pvm_upkint(&who, 1, 1);
    if (who != S)
        MT_FAIL("the PvmTaskExit notification for S, which moved %d times: t%x", MOVES, who);
    else
        printf("P: S's exit notified after its moves\n");
    int f = mt_failures;
    mt_send_ints(pvm_parent(), T_REPORT, &f, 1);
    return f ? 1 : 0;
}

static int bystander(int *sib)
{
    mt_role = "Q";
    int S = sib[0];
    pvm_joingroup(GROUP);
    pvm_barrier(GROUP, 3);
    for (int i = 1; i <= MOVES; i++) {
        int k = -1;
        mt_recv_ints(S, T_BC, &k, 1);
        if (k != i)
            MT_FAIL("broadcast %d says %d", i, k);
    }
    if (pvm_barrier(GROUP, 3) < 0)
        MT_FAIL("pvm_barrier");
    pvm_recv(S, T_QUIT);
    int f = mt_failures;
    mt_send_ints(pvm_parent(), T_REPORT, &f, 1);
    return f ? 1 : 0;
}

/* ------------------------------------------------------------ master */

static int master(char **argv)
{
    mt_role = "master";
    if (upvm_nodes() < 3) {
        printf("FAIL: upvm_nodes() = %d: run with UPVM_NODES=3\n", upvm_nodes());
        return 1;
    }
    char *args[] = {"-a", "-bd", "-c", "val", "rest", NULL};
    int tids[3];
    if (pvm_spawn(argv[0], args, PvmTaskDefault, "", 3, tids) != 3) {
        printf("FAIL: spawn\n");
        return 1;
    }
    pvm_notify(PvmTaskExit, T_MEXIT, 3, tids);
    printf("S t%x on node %d, P t%x on node %d, Q t%x on node %d\n", tids[0],
           upvm_node_of(tids[0]), tids[1], upvm_node_of(tids[1]), tids[2], upvm_node_of(tids[2]));
    fflush(stdout);
    /* move 3: S sleeps, we move it */
    int k = -1;
    mt_recv_ints(tids[0], T_MOVEME, &k, 1);
    int to = pick(upvm_node_of(tids[0]));
    int rc = upvm_migrate(tids[0], to);
    if (rc != 0)
        MT_FAIL("upvm_migrate(S t%x, %d): %d: %s", tids[0], to, rc, upvm_migrate_error());
    int r[2] = {rc, to};
    mt_send_ints(tids[0], T_MOVED, r, 2);
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        int f = -1;
        mt_recv_ints(-1, T_REPORT, &f, 1);
        bad += f != 0;
    }
    for (int i = 0; i < 3; i++)
        pvm_recv(-1, T_MEXIT);
    bad += mt_failures;
    printf("%s\n", bad ? "FAILED" : "OK");
    pvm_exit();
    return bad ? 1 : 0;
}

/* Half a line before a move, the rest after it (a task on node1, spawned
 * by the master: the job's first task does not move). */
static int stdio_child(void)
{
    mt_role = "stdio";
    int n = upvm_nodes();
    printf("part-one ");
    int rc = upvm_migrate(0, (upvm_node_of(0) + 1) % n);
    printf("part-two (%d)\n", rc);
    printf("line two\n");
    rc = upvm_migrate(0, (upvm_node_of(0) + 1) % n);
    printf("line three (%d)\n", rc);
    fprintf(stderr, "to stderr ");
    rc = upvm_migrate(0, (upvm_node_of(0) + 1) % n);
    fprintf(stderr, "after a move (%d)\n", rc);
    pvm_exit();
    return 0;
}

static int stdio_case(char **argv)
{
    char *args[] = {"stdio-child", NULL};
    int tid;
    if (pvm_spawn(argv[0], args, PvmTaskHost, "node1", 1, &tid) != 1) {
        printf("FAIL: spawn on node1\n");
        return 1;
    }
    pvm_notify(PvmTaskExit, T_MEXIT, 1, &tid);
    pvm_recv(-1, T_MEXIT);
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "stdio") == 0)
        return stdio_case(argv);
    if (argc > 1 && strcmp(argv[1], "stdio-child") == 0)
        return stdio_child();
    if (pvm_parent() == PvmNoParent)
        return master(argv);
    int *sib;
    int n = pvm_siblings(&sib);
    if (n != 3) {
        MT_FAIL("pvm_siblings: %d", n);
        return 1;
    }
    if (sib[0] == pvm_mytid())
        return subject(argc, argv, sib);
    if (sib[1] == pvm_mytid())
        return peer(sib);
    return bystander(sib);
}
