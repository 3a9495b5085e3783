/*
 * test-pvm-groups.c - the group library between thread-mode tasks:
 * instance numbers and their reuse, barriers (counts, PvmMismatch, the
 * count-0 poison), bcast, reduce with every operator and a user function,
 * gather/scatter order, freezegroup and static groups, leaving on exit,
 * errors and their (absence of) reports.
 *
 * Expectations are those of genuine PVM 3.4.6: docs/reference/
 * pvm-probed-semantics.md section 11 ("ref §11"), and the probes listed in
 * docs/compat-groups-mailbox.md ("probe") where §11 is silent.  The main task is
 * instance 0 of most groups and, having the lowest tid, the coordinator
 * of every reduce.
 */
#include <math.h>
#include <stdbool.h>
#include <sys/time.h>

#include "pvmtest.h"

/* ---------------------------------------------------------- members */

/* Children are "members" driven by command messages from the main task:
 * each command is answered (tag REPLY, one int) when it has returned. */
enum { CMD = 100, REPLY = 101 };
enum member_op {
    OP_JOIN, OP_LEAVE, OP_BARRIER, OP_FREEZE, OP_RECV_INT, OP_BCAST,
    OP_REDUCE, OP_GATHER, OP_SCATTER, OP_GSIZE, OP_GETTID, OP_GETINST, OP_EXIT
};

/* What members saw, by instance (thread mode: one address space). */
union pair {
    int i[2];
    long l[2];
    float f[2];
    double d[2];
};
static union pair after[8];
static int gathered[8][8];
static int scattered[8];

/* Reduce operands of instance inst, by type (ref §11's values for int and
 * double; longs beyond 32 bits: PVM's XDR would cut them). */
static void operands(int type, int inst, union pair *p)
{
    switch (type) {
    case PVM_INT: p->i[0] = inst + 1, p->i[1] = -(inst + 1) * 10; break;
    case PVM_LONG: p->l[0] = (inst + 1) * 5000000000L, p->l[1] = -(inst + 1); break;
    case PVM_FLOAT: p->f[0] = inst + 1.5f, p->f[1] = -(inst + 1.5f); break;
    case PVM_DOUBLE: p->d[0] = inst + 1.5, p->d[1] = -(inst + 1.5); break;
    default: CHECK(!"type");
    }
}

/* A user reduce function whose result shows the order: x = 10x + y. */
static void shift_in(int *type, void *x, void *y, int *n, int *info)
{
    CHECK_EQ(*type, PVM_INT);
    for (int i = 0; i < *n; i++)
        ((int *)x)[i] = ((int *)x)[i] * 10 + ((int *)y)[i];
    *info = 0;
}

typedef void (*reduce_fn)(int *, void *, void *, int *, int *);
static reduce_fn const ops[] = {PvmSum, PvmMax, PvmMin, PvmProduct, shift_in};

static int member_reduce(const char *group, int opi, int type, int root, int tag)
{
    int inst = pvm_getinst((char *)group, pvm_mytid());
    operands(type, inst, &after[inst]);
    return pvm_reduce(ops[opi], &after[inst], 2, type, tag, (char *)group, root);
}

static int member_gather(const char *group, int root, int tag)
{
    int inst = pvm_getinst((char *)group, pvm_mytid()), mine = 100 * (inst + 1);
    return pvm_gather(gathered[inst], &mine, 1, PVM_INT, tag, (char *)group, root);
}

static int member_scatter(const char *group, int root, int tag)
{
    int inst = pvm_getinst((char *)group, pvm_mytid());
    return pvm_scatter(&scattered[inst], NULL, 1, PVM_INT, tag, (char *)group, root);
}

static int member_do(int op, const char *group, const int *a)
{
    switch (op) {
    case OP_JOIN: return pvm_joingroup((char *)group);
    case OP_LEAVE: return pvm_lvgroup((char *)group);
    case OP_BARRIER: return pvm_barrier((char *)group, a[0]);
    case OP_FREEZE: return pvm_freezegroup((char *)group, a[0]);
    case OP_RECV_INT: {
        struct timeval tmout = {0, 300000};
        int v = -1;
        if (pvm_trecv(-1, a[0], &tmout) > 0)
            CHECK_EQ(pvm_upkint(&v, 1, 1), 0);
        return v;
    }
    case OP_BCAST:
        CHECK(pvm_initsend(PvmDataDefault) > 0);
        CHECK_EQ(pvm_pkint((int *)&a[0], 1, 1), 0);
        return pvm_bcast((char *)group, a[1]);
    case OP_REDUCE: return member_reduce(group, a[0], a[1], a[2], a[3]);
    case OP_GATHER: return member_gather(group, a[0], a[1]);
    case OP_SCATTER: return member_scatter(group, a[0], a[1]);
    case OP_GSIZE: return pvm_gsize((char *)group);
    case OP_GETTID: return pvm_gettid((char *)group, a[0]);
    case OP_GETINST: return pvm_getinst((char *)group, a[0]);
    default: CHECK(!"op"); return 0;
    }
}

static void member(int ordinal, void *arg)
{
    int parent = pvm_parent();
    for (;;) {
        int op, a[4];
        char group[64];
        CHECK(pvm_recv(parent, CMD) > 0);
        CHECK_EQ(pvm_upkint(&op, 1, 1), 0);
        CHECK_EQ(pvm_upkstr(group), 0);
        CHECK_EQ(pvm_upkint(a, 4, 1), 0);
        if (op == OP_EXIT)
            return;
        int rc = member_do(op, group, a);
        send_int(parent, REPLY, rc);
    }
}

static void ask(int tid, int op, const char *group, int a0, int a1, int a2, int a3)
{
    int a[4] = {a0, a1, a2, a3};
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(&op, 1, 1), 0);
    CHECK_EQ(pvm_pkstr((char *)group), 0);
    CHECK_EQ(pvm_pkint(a, 4, 1), 0);
    CHECK_EQ(pvm_send(tid, CMD), 0);
}

/* The answer to the last command sent to tid (waits at most 5 s). */
static int answer(int tid)
{
    struct timeval tmout = {5, 0};
    int v = 0;
    CHECK(pvm_trecv(tid, REPLY, &tmout) > 0);
    CHECK_EQ(pvm_upkint(&v, 1, 1), 0);
    return v;
}

/* Has tid answered already?  (Lets every ready task run first.) */
static bool answered(int tid)
{
    upvm_yield();
    return pvm_probe(tid, REPLY) > 0;
}

static int do_cmd(int tid, int op, const char *group, int a0)
{
    ask(tid, op, group, a0, 0, 0, 0);
    return answer(tid);
}

static void spawn_members(int n, int *tids)
{
    CHECK_EQ(upvm_task_spawn_func(member, NULL, n, tids), n);
}

static void wait_exit(int tid)
{
    CHECK_EQ(pvm_notify(PvmTaskExit, 7777, 1, &tid), 0);
    struct timeval tmout = {5, 0};
    CHECK(pvm_trecv(-1, 7777, &tmout) > 0);
}

static void end_members(int n, const int *tids)
{
    for (int i = 0; i < n; i++) {
        ask(tids[i], OP_EXIT, "", 0, 0, 0, 0);
        wait_exit(tids[i]);
    }
}

/* Main and 3 members in group: instances 0 .. 3, members[i] = inst i+1. */
static void make_group_of_four(const char *group, int *members)
{
    CHECK_EQ(pvm_joingroup((char *)group), 0);
    spawn_members(3, members);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(do_cmd(members[i], OP_JOIN, group, 0), i + 1);
}

/* ---------------------------------------------------------- membership */

TEST(errors_before_any_group)
{
    int me = pvm_mytid();
    /* ref §11: no group call prints; each sets pvm_errno */
    capture_begin();
    CHECK_EQ(pvm_gsize("nogroup"), PvmNoGroup);
    CHECK_EQ(pvm_getinst("nogroup", me), PvmNoGroup);
    CHECK_EQ(pvm_gettid("nogroup", 0), PvmNoGroup);
    CHECK_EQ(pvm_lvgroup("nogroup"), PvmNoGroup);
    CHECK_EQ(pvm_barrier("nogroup", 1), PvmNoGroup);
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_bcast("nogroup", 1), PvmNoGroup);
    CHECK_EQ(pvm_errno, PvmNoGroup);
    CHECK_EQ(pvm_joingroup(""), PvmNullGroup);
    CHECK_EQ(pvm_joingroup(NULL), PvmNullGroup);
    CHECK_EQ(pvm_gsize(""), PvmNullGroup);
    CHECK_EQ(pvm_lvgroup(""), PvmNullGroup);
    /* probe */
    CHECK_EQ(pvm_barrier("", 1), PvmNullGroup);
    CHECK_EQ(pvm_getinst("", me), PvmNullGroup);
    CHECK_EQ(pvm_gettid(NULL, 0), PvmNullGroup);
    CHECK_EQ(pvm_bcast(NULL, 1), PvmNullGroup);
    CHECK_EQ(pvm_errno, PvmNullGroup);
    /* ref §11: freezegroup does not set pvm_errno */
    pvm_errno = 4242;
    CHECK_EQ(pvm_freezegroup("nofz", -1), PvmNoGroup);
    CHECK_EQ(pvm_freezegroup("", 1), PvmNullGroup);
    CHECK_EQ(pvm_errno, 4242);
    CHECK_EQ(*capture_end(), '\0');
}

TEST(join_and_information)
{
    int me = pvm_mytid();
    capture_begin();
    /* ref §11 "join / dup / info" */
    CHECK_EQ(pvm_joingroup("g"), 0);
    CHECK_EQ(pvm_joingroup("g"), PvmDupGroup);
    CHECK_EQ(pvm_getinst("g", me), 0);
    CHECK_EQ(pvm_getinst("g", me + 0x1000), PvmNotInGroup);
    CHECK_EQ(pvm_getinst("g", -1), 1); /* pvmgs's free-slot marker */
    CHECK_EQ(pvm_gettid("g", 0), me);
    CHECK_EQ(pvm_gettid("g", 1), PvmNoInst);
    CHECK_EQ(pvm_gettid("g", -1), PvmNoInst);
    CHECK_EQ(pvm_gsize("g"), 1);
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_bcast("g", 1), PvmNoInst); /* alone in it */
    CHECK_EQ(pvm_barrier("g", 1), 0);
    CHECK_EQ(pvm_barrier("g", -1), 0);
    CHECK_EQ(pvm_joingroup("h"), 0);
    CHECK_EQ(pvm_lvgroup("h"), 0);
    CHECK_EQ(pvm_lvgroup("h"), PvmNoGroup); /* deleted with its last member */
    CHECK_EQ(pvm_gsize("h"), PvmNoGroup);
    CHECK_EQ(*capture_end(), '\0');
    CHECK_EQ(pvm_lvgroup("g"), 0);
    CHECK_EQ(pvm_lvgroup("g"), PvmNoGroup);
}

TEST(instances_are_lowest_free)
{
    int m[3], joiner, me = pvm_mytid();
    make_group_of_four("g", m); /* ref §11: children join as 1, 2, 3 */
    CHECK_EQ(pvm_gsize("g"), 4);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(pvm_gettid("g", i + 1), m[i]);
    /* instance 2 leaves: its number is free, the next joiner gets it */
    CHECK_EQ(do_cmd(m[1], OP_LEAVE, "g", 0), 0);
    CHECK_EQ(pvm_gsize("g"), 3);
    CHECK_EQ(pvm_gettid("g", 2), PvmNoInst);
    CHECK_EQ(pvm_getinst("g", m[1]), PvmNotInGroup);
    CHECK_EQ(pvm_getinst("g", -1), 2);
    spawn_members(1, &joiner);
    CHECK_EQ(do_cmd(joiner, OP_JOIN, "g", 0), 2);
    CHECK_EQ(pvm_gsize("g"), 4);
    /* I leave and re-join: 0 again */
    CHECK_EQ(pvm_lvgroup("g"), 0);
    CHECK_EQ(pvm_getinst("g", me), PvmNotInGroup);
    CHECK_EQ(pvm_lvgroup("g"), PvmNotInGroup);
    CHECK_EQ(pvm_joingroup("g"), 0);
    CHECK_EQ(pvm_getinst("g", -1), 4); /* the first free slot */
    end_members(1, &joiner);
    end_members(3, m);
    /* members that exit leave their groups (pvmgs is told of their exit) */
    CHECK_EQ(pvm_gsize("g"), 1);
    CHECK_EQ(pvm_lvgroup("g"), 0);
}

/* ---------------------------------------------------------- barrier */

TEST(barrier_waits_for_count)
{
    int m[3];
    make_group_of_four("b", m);
    /* -1: everyone there now */
    for (int i = 0; i < 3; i++)
        ask(m[i], OP_BARRIER, "b", -1, 0, 0, 0);
    for (int i = 0; i < 3; i++)
        CHECK(!answered(m[i]));
    CHECK_EQ(pvm_barrier("b", -1), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(answer(m[i]), 0);

    /* ref §11 "count mismatch": inst 1 enters with 3 (and waits), inst 2
     * with 2 gets PvmMismatch at once, uncounted; inst 3 and I with 3
     * complete the barrier */
    ask(m[0], OP_BARRIER, "b", 3, 0, 0, 0);
    CHECK(!answered(m[0]));
    ask(m[1], OP_BARRIER, "b", 2, 0, 0, 0);
    CHECK_EQ(answer(m[1]), PvmMismatch);
    ask(m[2], OP_BARRIER, "b", 3, 0, 0, 0);
    CHECK(!answered(m[2]));
    capture_begin();
    CHECK_EQ(pvm_barrier("b", 3), 0);
    CHECK_EQ(*capture_end(), '\0');
    CHECK_EQ(answer(m[0]), 0);
    CHECK_EQ(answer(m[2]), 0);
    /* the barrier is over: a new one may have another count */
    ask(m[1], OP_BARRIER, "b", 2, 0, 0, 0);
    CHECK_EQ(pvm_barrier("b", 2), 0);
    CHECK_EQ(answer(m[1]), 0);
    end_members(3, m);
    CHECK_EQ(pvm_lvgroup("b"), 0);
}

TEST(barrier_count_zero_poisons_the_group)
{
    /* ref §11: barrier(z, 0) is PvmMismatch and so is every later barrier,
     * until the group is deleted.  Kept on purpose (see groups.c). */
    capture_begin();
    CHECK_EQ(pvm_joingroup("z"), 0);
    CHECK_EQ(pvm_barrier("z", 0), PvmMismatch);
    CHECK_EQ(pvm_errno, PvmMismatch);
    CHECK_EQ(pvm_barrier("z", 1), PvmMismatch);
    CHECK_EQ(pvm_barrier("z", -1), PvmMismatch);
    CHECK_EQ(pvm_barrier("z", 0), PvmMismatch);
    CHECK_EQ(pvm_lvgroup("z"), 0);
    CHECK_EQ(pvm_joingroup("z"), 0);
    CHECK_EQ(pvm_barrier("z", 1), 0);
    /* probe: so does a count below -1 */
    CHECK_EQ(pvm_barrier("z", -2), PvmMismatch);
    CHECK_EQ(pvm_barrier("z", 1), PvmMismatch);
    CHECK_EQ(*capture_end(), '\0');
    CHECK_EQ(pvm_lvgroup("z"), 0);
}

/* ---------------------------------------------------------- bcast */

TEST(bcast_reaches_the_others)
{
    int m[3], outsider;
    make_group_of_four("c", m);
    /* ref §11: from inst 0, instances 1..3 get it, the sender does not */
    int v = 4242;
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(&v, 1, 1), 0);
    CHECK_EQ(pvm_bcast("c", 10), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(do_cmd(m[i], OP_RECV_INT, "c", 10), 4242);
    CHECK_EQ(pvm_nrecv(-1, 10), 0);
    /* any task may bcast (man page): a non-member reaches all members */
    spawn_members(1, &outsider);
    ask(outsider, OP_BCAST, "c", 77, 11, 0, 0);
    CHECK_EQ(answer(outsider), 0);
    CHECK_EQ(recv_int(outsider, 11), 77);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(do_cmd(m[i], OP_RECV_INT, "c", 11), 77);
    /* bcast is pvm_mcast to the others: its errors are mcast's, printed
     * (ref §3.2) and left in pvm_errno by bcast */
    capture_begin();
    CHECK_EQ(pvm_bcast("c", -1), PvmBadParam);
    CHECK_EQ(pvm_freebuf(pvm_getsbuf()), 0);
    CHECK_EQ(pvm_bcast("c", 1), PvmNoBuf);
    const char *err = capture_end();
    CHECK_EQ(pvm_errno, PvmNoBuf);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_mcast", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_mcast", "No current buffer"));
    end_members(1, &outsider);
    end_members(3, m);
    CHECK_EQ(pvm_lvgroup("c"), 0);
}

/* ---------------------------------------------------------- reduce */

/* One reduce by all four: members[i] is inst i+1, main inst 0. */
static void reduce_round(const int *m, int opi, int type, int root, int tag)
{
    for (int i = 0; i < 3; i++)
        ask(m[i], OP_REDUCE, "r", opi, type, root, tag);
    operands(type, 0, &after[0]);
    CHECK_EQ(pvm_reduce(ops[opi], &after[0], 2, type, tag, "r", root), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(answer(m[i]), 0);
}

/* Non-root members other than the coordinator (inst 0) keep their data. */
static void check_untouched(int type, int root)
{
    for (int inst = 1; inst < 4; inst++) {
        union pair p = {{0}};
        operands(type, inst, &p);
        size_t size = type == PVM_INT || type == PVM_FLOAT ? 8 : 16;
        if (inst != root)
            CHECK(memcmp(&p, &after[inst], size) == 0);
    }
}

static void check_int_result(int root, int x, int y)
{
    CHECK_EQ(after[root].i[0], x);
    CHECK_EQ(after[root].i[1], y);
    /* ref §11: the host's coordinator (inst 0) holds the result too */
    CHECK(after[0].i[0] == x && after[0].i[1] == y);
    check_untouched(PVM_INT, root);
}

static void check_double_result(int root, double x, double y)
{
    CHECK(after[root].d[0] == x && after[root].d[1] == y);
    CHECK(after[0].d[0] == x && after[0].d[1] == y);
    check_untouched(PVM_DOUBLE, root);
}

enum { SUM, MAX, MIN, PRODUCT, SHIFT_IN };

TEST(reduce_every_operator)
{
    int m[3];
    make_group_of_four("r", m);
    /* ref §11: member i gives {i+1, -(i+1)*10} and {i+1.5, -(i+1.5)} */
    reduce_round(m, SUM, PVM_INT, 0, 20);
    check_int_result(0, 10, -100);
    reduce_round(m, SUM, PVM_DOUBLE, 0, 21);
    check_double_result(0, 12, -12);
    reduce_round(m, MAX, PVM_INT, 0, 22);
    check_int_result(0, 4, -10);
    reduce_round(m, MAX, PVM_DOUBLE, 0, 23);
    check_double_result(0, 4.5, -1.5);
    reduce_round(m, MIN, PVM_INT, 0, 24);
    check_int_result(0, 1, -40);
    reduce_round(m, MIN, PVM_DOUBLE, 0, 25);
    check_double_result(0, 1.5, -4.5);
    reduce_round(m, PRODUCT, PVM_INT, 2, 26);
    check_int_result(2, 24, 240000);
    reduce_round(m, PRODUCT, PVM_DOUBLE, 2, 27);
    check_double_result(2, 59.0625, 59.0625);

    /* float and long, with another root each time */
    reduce_round(m, SUM, PVM_FLOAT, 3, 28);
    CHECK(after[3].f[0] == 12.0f && after[3].f[1] == -12.0f);
    reduce_round(m, MAX, PVM_FLOAT, 1, 29);
    CHECK(after[1].f[0] == 4.5f && after[1].f[1] == -1.5f);
    /* longs travel whole (PVM's XDR would cut them to 32 bits) */
    reduce_round(m, SUM, PVM_LONG, 1, 30);
    CHECK(after[1].l[0] == 50000000000L && after[1].l[1] == -10);
    check_untouched(PVM_LONG, 1);
    reduce_round(m, MIN, PVM_LONG, 3, 31);
    CHECK(after[3].l[0] == 5000000000L && after[3].l[1] == -4);
    reduce_round(m, PRODUCT, PVM_LONG, 0, 32); /* wraps, as in C */
    unsigned long x = 1;
    for (int i = 1; i <= 4; i++)
        x *= (unsigned long)i * 5000000000UL;
    CHECK(after[0].l[0] == (long)x && after[0].l[1] == 24);

    /* A user function: the coordinator folds contributions in arrival
     * order (members 1, 2, 3 here), as the probe's x = 10x + y showed */
    reduce_round(m, SHIFT_IN, PVM_INT, 1, 33);
    check_int_result(1, 1234, ((-10 * 10 - 20) * 10 - 30) * 10 - 40);
    end_members(3, m);
    CHECK_EQ(pvm_lvgroup("r"), 0);
}

TEST(reduce_errors_are_reported)
{
    int d[2] = {1, 2};
    /* probe: unlike the other group calls, reduce reports */
    capture_begin();
    CHECK_EQ(pvm_reduce(PvmSum, d, 2, PVM_INT, 1, "nog", 0), PvmNoGroup);
    CHECK_EQ(pvm_joingroup("A"), 0);
    CHECK_EQ(pvm_reduce(PvmSum, d, 2, PVM_INT, 1, "A", 3), PvmNoInst);
    CHECK_EQ(pvm_reduce(PvmSum, d, 2, 99, 1, "A", 0), PvmBadParam);
    CHECK_EQ(pvm_reduce(PvmSum, d, 0, PVM_INT, 1, "A", 0), PvmBadParam);
    CHECK_EQ(pvm_reduce(PvmSum, NULL, 2, PVM_INT, 1, "A", 0), PvmBadParam);
    CHECK_EQ(pvm_reduce(PvmSum, d, 2, PVM_INT, 1, "", 0), PvmNullGroup);
    CHECK_EQ(pvm_errno, PvmNullGroup);
    const char *err = capture_end();
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_reduce", "No such group"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_reduce", "No such instance"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_reduce", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_reduce", "Null group name"));
    /* probe: alone, nothing is folded: 0, the data untouched, whatever
     * the operator makes of the type */
    capture_begin();
    CHECK_EQ(pvm_reduce(PvmSum, d, 2, PVM_INT, -5, "A", 0), 0);
    CHECK_EQ(pvm_reduce(PvmSum, d, 2, PVM_BYTE, 1, "A", 0), 0);
    CHECK_EQ(*capture_end(), '\0');
    CHECK(d[0] == 1 && d[1] == 2);

    /* probe: with others, PvmSum on bytes fails at the coordinator only */
    int m;
    spawn_members(1, &m);
    CHECK_EQ(do_cmd(m, OP_JOIN, "A", 0), 1);
    ask(m, OP_REDUCE, "A", SUM, PVM_INT, 0, 40); /* an int member... */
    CHECK_EQ(answer(m), 0);
    capture_begin();
    CHECK_EQ(pvm_reduce(PvmSum, d, 8, PVM_BYTE, 40, "A", 0), PvmBadParam);
    CHECK_STR_CONTAINS(capture_end(), autoerr_line("pvm_reduce", "Bad parameter"));
    end_members(1, &m);
    CHECK_EQ(pvm_lvgroup("A"), 0);
}

TEST(operators_on_every_type)
{
    int type, n = 2, info = 4242;
    signed char b[2] = {-3, 7}, b2[2] = {5, -9};
    type = PVM_BYTE;
    PvmMax(&type, b, b2, &n, &info);
    CHECK(info == 0 && b[0] == 5 && b[1] == 7);
    PvmMin(&type, b, b2, &n, &info);
    CHECK(info == 0 && b[0] == 5 && b[1] == -9);
    PvmSum(&type, b, b2, &n, &info); /* no sum or product of bytes */
    CHECK_EQ(info, PvmBadParam);
    PvmProduct(&type, b, b2, &n, &info);
    CHECK_EQ(info, PvmBadParam);

    short s[2] = {300, -2}, s2[2] = {100, 50};
    type = PVM_SHORT;
    PvmProduct(&type, s, s2, &n, &info);
    CHECK(info == 0 && s[0] == (short)30000 && s[1] == -100);
    PvmSum(&type, s, s2, &n, &info);
    CHECK(info == 0 && s[0] == (short)30100 && s[1] == -50);

    int i[2] = {0x7fffffff, -5}, i2[2] = {1, 5};
    type = PVM_INT;
    PvmSum(&type, i, i2, &n, &info); /* wraps: no undefined behaviour */
    CHECK(info == 0 && i[0] == (int)0x80000000u && i[1] == 0);

    float f[4] = {3, 4, 1, 1}, f2[4] = {0, 6, 2, 0}; /* complex: |.| 5 vs 6 */
    type = PVM_CPLX;
    PvmMax(&type, f, f2, &n, &info);
    CHECK(info == 0 && f[0] == 0 && f[1] == 6 && f[2] == 2 && f[3] == 0);
    PvmMin(&type, f, f2, &n, &info);
    CHECK(info == 0 && f[0] == 0 && f[1] == 6 && f[2] == 2 && f[3] == 0);
    float g[2] = {1, 2}, g2[2] = {3, 4};
    int one = 1;
    PvmProduct(&type, g, g2, &one, &info); /* (1+2i)(3+4i) = -5+10i */
    CHECK(info == 0 && g[0] == -5 && g[1] == 10);

    double z[2] = {1, 2}, z2[2] = {3, 4};
    type = PVM_DCPLX;
    PvmSum(&type, z, z2, &one, &info);
    CHECK(info == 0 && z[0] == 4 && z[1] == 6);
    PvmProduct(&type, z, z2, &one, &info); /* (4+6i)(3+4i) = -12+34i */
    CHECK(info == 0 && z[0] == -12 && z[1] == 34);
    double nan2[2] = {NAN, 1}, d2[2] = {2, NAN};
    type = PVM_DOUBLE;
    PvmMax(&type, nan2, d2, &n, &info); /* PVM's (a > b ? a : b) */
    CHECK(info == 0 && nan2[0] == 2 && isnan(nan2[1]));

    /* types PVM's operators do not take */
    int types[] = {PVM_STR, PVM_USHORT, PVM_UINT, PVM_ULONG, 99};
    for (int k = 0; k < 5; k++) {
        info = 0;
        PvmMin(&types[k], i, i2, &n, &info);
        CHECK_EQ(info, PvmBadParam);
    }
}

/* ---------------------------------------------------------- gather, scatter */

TEST(gather_and_scatter_order)
{
    int m[3];
    make_group_of_four("s", m);
    memset(gathered, 0, sizeof gathered);
    /* ref §11: gather to inst 1: by instance; the others' arrays untouched.
     * A contribution does not wait for the root: inst 2 and 3 answer
     * before the root has what it needs. */
    ask(m[0], OP_GATHER, "s", 1, 30, 0, 0);
    ask(m[1], OP_GATHER, "s", 1, 30, 0, 0);
    ask(m[2], OP_GATHER, "s", 1, 30, 0, 0);
    CHECK(!answered(m[0]));
    CHECK(answered(m[1]) && answered(m[2]));
    int mine = 100, all[4] = {0};
    CHECK_EQ(pvm_gather(all, &mine, 1, PVM_INT, 30, "s", 1), 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(answer(m[i]), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(gathered[1][i], 100 * (i + 1));
    CHECK(all[0] == 0 && gathered[2][0] == 0 && gathered[3][0] == 0);

    /* Gathering to me: the contributions wait in the group library's own
     * context, out of reach of my receives; my receive buffer and context
     * are left as they were */
    for (int i = 0; i < 3; i++)
        ask(m[i], OP_GATHER, "s", 0, 34, 0, 0);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(answer(m[i]), 0);
    send_int(pvm_mytid(), 99, 5);
    int rbuf = pvm_recv(-1, -1), ctx = pvm_getcontext();
    CHECK_EQ(pvm_bufinfo(rbuf, NULL, NULL, NULL), 0); /* my own message */
    CHECK_EQ(pvm_probe(-1, 34), 0);
    CHECK_EQ(pvm_gather(all, &mine, 1, PVM_INT, 34, "s", 0), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(all[i], 100 * (i + 1));
    CHECK_EQ(pvm_getrbuf(), rbuf);
    CHECK_EQ(pvm_getcontext(), ctx);
    int five = 0;
    CHECK_EQ(pvm_upkint(&five, 1, 1), 0); /* still my message */
    CHECK_EQ(five, 5);

    /* ref §11: scatter from inst 0: instance i gets src[i], root included;
     * the others wait for the root */
    for (int i = 0; i < 3; i++)
        ask(m[i], OP_SCATTER, "s", 0, 31, 0, 0);
    for (int i = 0; i < 3; i++)
        CHECK(!answered(m[i]));
    int src[4] = {1000, 1001, 1002, 1003}, got = -1;
    CHECK_EQ(pvm_scatter(&got, src, 1, PVM_INT, 31, "s", 0), 0);
    CHECK_EQ(got, 1000);
    CHECK_EQ(pvm_getrbuf(), rbuf);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(answer(m[i]), 0);
        CHECK_EQ(scattered[i + 1], 1001 + i);
    }

    /* probe: with a hole in the instances the root gets PvmNoInst
     * (printed); the others have sent and return 0 */
    CHECK_EQ(do_cmd(m[0], OP_LEAVE, "s", 0), 0);
    ask(m[1], OP_GATHER, "s", 0, 32, 0, 0);
    ask(m[2], OP_GATHER, "s", 0, 32, 0, 0);
    CHECK_EQ(answer(m[1]), 0);
    CHECK_EQ(answer(m[2]), 0);
    capture_begin();
    CHECK_EQ(pvm_gather(all, &mine, 1, PVM_INT, 32, "s", 0), PvmNoInst);
    CHECK_STR_CONTAINS(capture_end(), autoerr_line("pvm_gather", "No such instance"));
    end_members(3, m);
    CHECK_EQ(pvm_lvgroup("s"), 0);
}

TEST(gather_scatter_errors)
{
    int d[2] = {1, 2}, all[8] = {0};
    CHECK_EQ(pvm_joingroup("A"), 0);
    /* probe: alone, the root just copies */
    CHECK_EQ(pvm_gather(all, d, 2, PVM_INT, 1, "A", 0), 0);
    CHECK(all[0] == 1 && all[1] == 2);
    all[0] = all[1] = 0;
    CHECK_EQ(pvm_scatter(all, d, 2, PVM_INT, 1, "A", 0), 0);
    CHECK(all[0] == 1 && all[1] == 2);
    capture_begin();
    CHECK_EQ(pvm_gather(all, d, 2, PVM_INT, 1, "nog", 0), PvmNoGroup);
    CHECK_EQ(pvm_gather(NULL, d, 2, PVM_INT, 1, "A", 0), PvmBadParam);
    CHECK_EQ(pvm_gather(all, d, 2, PVM_INT, 1, "A", 1), PvmNoInst);
    CHECK_EQ(pvm_gather(all, d, 2, 99, 1, "A", 0), PvmBadParam);
    CHECK_EQ(pvm_gather(all, d, -1, PVM_INT, 1, "A", 0), PvmBadParam);
    CHECK_EQ(pvm_scatter(all, NULL, 2, PVM_INT, 1, "A", 0), PvmBadParam);
    CHECK_EQ(pvm_scatter(NULL, d, 2, PVM_INT, 1, "A", 0), PvmBadParam);
    CHECK_EQ(pvm_scatter(all, d, 2, PVM_INT, 1, "A", 2), PvmNoInst);
    CHECK_EQ(pvm_scatter(all, d, 2, PVM_INT, 1, "nog", 0), PvmNoGroup);
    const char *err = capture_end();
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_gather", "No such group"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_gather", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_scatter", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_scatter", "No such instance"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_scatter", "No such group"));
    CHECK_EQ(pvm_lvgroup("A"), 0);
}

/* ---------------------------------------------------------- freezegroup */

TEST(freezegroup)
{
    int m[2];
    pvm_errno = 4242;
    capture_begin();
    /* ref §11: alone, -1 freezes at once and returns the size (1) */
    CHECK_EQ(pvm_joingroup("fz"), 0);
    CHECK_EQ(pvm_freezegroup("fz", -1), 1);
    CHECK_EQ(pvm_freezegroup("fz", -1), PvmDupGroup);
    CHECK_EQ(pvm_errno, 4242);
    CHECK_EQ(pvm_gsize("fz"), 1);
    spawn_members(2, m);
    CHECK_EQ(do_cmd(m[0], OP_JOIN, "fz", 0), PvmNotInGroup); /* frozen */
    CHECK_EQ(pvm_barrier("fz", -1), 0);
    CHECK_EQ(pvm_lvgroup("fz"), 0);
    CHECK_EQ(pvm_gsize("fz"), PvmNoGroup);
    CHECK_EQ(pvm_joingroup("fz"), 0); /* a new, dynamic group */
    CHECK_EQ(pvm_getinst("fz", pvm_mytid()), 0);
    CHECK_EQ(pvm_lvgroup("fz"), 0);
    /* probe: size 0 is a mismatch that stays, like barrier's */
    CHECK_EQ(pvm_joingroup("FZ"), 0);
    CHECK_EQ(pvm_freezegroup("FZ", 0), PvmMismatch);
    CHECK_EQ(pvm_freezegroup("FZ", 1), PvmMismatch);
    CHECK_EQ(pvm_lvgroup("FZ"), 0);
    CHECK_EQ(*capture_end(), '\0');

    /* ref §11: freezing to 2 waits until the second member calls it */
    CHECK_EQ(pvm_joingroup("F2"), 0);
    CHECK_EQ(do_cmd(m[0], OP_JOIN, "F2", 0), 1);
    CHECK_EQ(do_cmd(m[1], OP_JOIN, "F2", 0), 2);
    ask(m[0], OP_FREEZE, "F2", 2, 0, 0, 0);
    CHECK(!answered(m[0]));
    ask(m[1], OP_FREEZE, "F2", 3, 0, 0, 0); /* another size: refused */
    CHECK_EQ(answer(m[1]), PvmMismatch);
    CHECK_EQ(pvm_freezegroup("F2", 2), 2);
    CHECK_EQ(answer(m[0]), 2);
    CHECK_EQ(do_cmd(m[1], OP_FREEZE, "F2", 2), PvmDupGroup); /* frozen */
    /* A member leaving a static group kills it: the barrier waiting ends
     * with PvmNoGroup (man page), so do later ones; nobody may join */
    ask(m[0], OP_BARRIER, "F2", 3, 0, 0, 0);
    CHECK(!answered(m[0]));
    CHECK_EQ(do_cmd(m[1], OP_LEAVE, "F2", 0), 0);
    CHECK_EQ(answer(m[0]), PvmNoGroup);
    CHECK_EQ(pvm_barrier("F2", -1), PvmNoGroup);
    CHECK_EQ(do_cmd(m[1], OP_JOIN, "F2", 0), PvmNotInGroup);
    /* probe p18 (ref §11.1): the tasks that froze it keep its frozen
     * membership (libgpvm3's cache): all three, the leaver too; their
     * bcast still works and reaches the leaver */
    CHECK_EQ(pvm_gsize("F2"), 3);
    CHECK_EQ(pvm_gettid("F2", 2), m[1]);
    CHECK_EQ(pvm_getinst("F2", m[1]), 2);
    CHECK_EQ(pvm_gettid("F2", 3), PvmNoInst); /* not in it: the server's */
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(&(int){31}, 1, 1), 0);
    CHECK_EQ(pvm_bcast("F2", 31), 0);
    CHECK_EQ(do_cmd(m[1], OP_RECV_INT, "", 31), 31);
    CHECK_EQ(do_cmd(m[0], OP_RECV_INT, "", 31), 31);
    /* the leaver dropped its copy: it sees the server's (dead) group */
    CHECK_EQ(do_cmd(m[1], OP_GSIZE, "F2", 0), 2);
    CHECK_EQ(do_cmd(m[1], OP_GETTID, "F2", 2), PvmNoInst);
    CHECK_EQ(do_cmd(m[1], OP_BCAST, "F2", 0), PvmNoGroup);
    /* the last ones leave: the group is gone, and can be made again */
    CHECK_EQ(do_cmd(m[0], OP_LEAVE, "F2", 0), 0);
    CHECK_EQ(pvm_lvgroup("F2"), 0);
    CHECK_EQ(pvm_joingroup("F2"), 0);
    CHECK_EQ(pvm_lvgroup("F2"), 0);
    end_members(2, m);
}

/*
 * A static group of two after one member leaves or exits, as genuine PVM
 * 3.4.6 shows it (probe tests/pvm-reference/p18_static_groups.c, ref
 * §11.1): every task keeps a copy of a static group it froze or asked
 * about while it was alive (libgpvm3's cache) and answers gsize, gettid
 * and getinst from it where it can; its own pvm_lvgroup drops it.  With
 * several nodes the tasks are spread over them (UPVM_NODES).
 */
TEST(static_group_members_keep_the_frozen_membership)
{
    int me = pvm_mytid(), m[4];
    spawn_members(4, m);
    int b = m[0], o1 = m[1], o2 = m[2], x = m[3];
    CHECK_EQ(pvm_joingroup("g"), 0);
    CHECK_EQ(do_cmd(b, OP_JOIN, "g", 0), 1);
    ask(b, OP_FREEZE, "g", 2, 0, 0, 0);
    CHECK_EQ(pvm_freezegroup("g", 2), 2);
    CHECK_EQ(answer(b), 2);
    CHECK_EQ(do_cmd(o1, OP_GSIZE, "g", 0), 2); /* o1 asks while it lives */

    CHECK_EQ(do_cmd(b, OP_LEAVE, "g", 0), 0);
    /* p18: "A: gsize(g) = 2, gettid(g,1) = t40003, getinst(g,t40003) = 1" */
    CHECK_EQ(pvm_gsize("g"), 2);
    CHECK_EQ(pvm_gettid("g", 0), me);
    CHECK_EQ(pvm_gettid("g", 1), b);
    CHECK_EQ(pvm_gettid("g", 2), PvmNoInst);
    CHECK_EQ(pvm_getinst("g", b), 1);
    CHECK_EQ(pvm_getinst("g", me), 0);
    CHECK_EQ(pvm_getinst("g", o1), PvmNotInGroup);
    /* p18: O1 (asked before) the same; B, the leaver, and O2 (first asks
     * now) the server's: "gsize(g) = 1, gettid(g,1) = PvmNoInst" */
    CHECK_EQ(do_cmd(o1, OP_GSIZE, "g", 0), 2);
    CHECK_EQ(do_cmd(o1, OP_GETTID, "g", 1), b);
    CHECK_EQ(do_cmd(o1, OP_GETINST, "g", b), 1);
    for (int i = 0; i < 2; i++) {
        int t = i ? o2 : b;
        CHECK_EQ(do_cmd(t, OP_GSIZE, "g", 0), 1);
        CHECK_EQ(do_cmd(t, OP_GETTID, "g", 0), me);
        CHECK_EQ(do_cmd(t, OP_GETTID, "g", 1), PvmNoInst);
        CHECK_EQ(do_cmd(t, OP_GETINST, "g", b), PvmNotInGroup);
        CHECK_EQ(do_cmd(t, OP_JOIN, "g", 0), PvmNotInGroup); /* dead static */
    }
    /* p18: "A: pvm_bcast("g", 10) = 0 ... B: received? yes" */
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(&(int){4242}, 1, 1), 0);
    CHECK_EQ(pvm_bcast("g", 10), 0);
    CHECK_EQ(do_cmd(b, OP_RECV_INT, "", 10), 4242);
    CHECK_EQ(do_cmd(o1, OP_RECV_INT, "", 10), -1); /* not a member */
    /* p18: "A: pvm_barrier("g", -1) = -19", and (2) too: the server's */
    CHECK_EQ(pvm_barrier("g", -1), PvmNoGroup);
    CHECK_EQ(pvm_barrier("g", 2), PvmNoGroup);
    CHECK_EQ(pvm_gsize("g"), 2);

    /* p18: A leaves (the group is deleted): its copy goes; O1's stays,
     * and what it lacks is the server's: "O1: gettid(g,2) = -19" */
    CHECK_EQ(pvm_lvgroup("g"), 0);
    CHECK_EQ(pvm_gsize("g"), PvmNoGroup);
    CHECK_EQ(pvm_gettid("g", 0), PvmNoGroup);
    CHECK_EQ(do_cmd(o1, OP_GSIZE, "g", 0), 2);
    CHECK_EQ(do_cmd(o1, OP_GETTID, "g", 1), b);
    CHECK_EQ(do_cmd(o1, OP_GETTID, "g", 2), PvmNoGroup);
    CHECK_EQ(do_cmd(o1, OP_GETINST, "g", o1), PvmNoGroup);
    CHECK_EQ(do_cmd(o2, OP_GSIZE, "g", 0), PvmNoGroup);
    /* p18: a new dynamic g with A alone; O1 still has the old one */
    CHECK_EQ(pvm_joingroup("g"), 0);
    CHECK_EQ(pvm_gsize("g"), 1);
    CHECK_EQ(pvm_getinst("g", b), PvmNotInGroup);
    CHECK_EQ(do_cmd(o1, OP_GSIZE, "g", 0), 2);
    CHECK_EQ(do_cmd(o1, OP_GETTID, "g", 2), PvmNoInst);
    CHECK_EQ(do_cmd(o2, OP_GSIZE, "g", 0), 1);
    CHECK_EQ(do_cmd(b, OP_GETTID, "g", 1), PvmNoInst);
    CHECK_EQ(pvm_lvgroup("g"), 0);

    /* p18, group h: a member that exits instead of leaving */
    CHECK_EQ(pvm_joingroup("h"), 0);
    CHECK_EQ(do_cmd(x, OP_JOIN, "h", 0), 1);
    ask(x, OP_FREEZE, "h", 2, 0, 0, 0);
    CHECK_EQ(pvm_freezegroup("h", 2), 2);
    CHECK_EQ(answer(x), 2);
    end_members(1, &x);
    CHECK_EQ(pvm_gsize("h"), 2);
    CHECK_EQ(pvm_gettid("h", 1), x);
    CHECK_EQ(pvm_getinst("h", x), 1);
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_bcast("h", 11), 0);
    CHECK_EQ(do_cmd(o2, OP_GSIZE, "h", 0), 1); /* p18: "J: gsize(h) = 1" */
    CHECK_EQ(do_cmd(o2, OP_GETTID, "h", 1), PvmNoInst);
    CHECK_EQ(do_cmd(o2, OP_JOIN, "h", 0), PvmNotInGroup);
    CHECK_EQ(pvm_barrier("h", -1), PvmNoGroup);
    CHECK_EQ(pvm_barrier("h", 2), PvmNoGroup);
    CHECK_EQ(pvm_lvgroup("h"), 0);
    CHECK_EQ(pvm_gsize("h"), PvmNoGroup);
    CHECK_EQ(pvm_joingroup("h"), 0);
    CHECK_EQ(pvm_lvgroup("h"), 0);
    end_members(3, m);
}

/* ---------------------------------------------------------- task exit */

TEST(leaving_on_exit)
{
    int m[2];
    CHECK_EQ(pvm_joingroup("e"), 0);
    spawn_members(2, m);
    CHECK_EQ(do_cmd(m[0], OP_JOIN, "e", 0), 1);
    CHECK_EQ(do_cmd(m[1], OP_JOIN, "e", 0), 2);
    end_members(1, m); /* exits: pvmgs drops dead tasks from their groups */
    CHECK_EQ(pvm_gsize("e"), 2);
    CHECK_EQ(pvm_gettid("e", 1), PvmNoInst);
    CHECK_EQ(pvm_getinst("e", -1), 1);

    /* killed while waiting in a barrier: it leaves the group, but its
     * arrival still counts (pvmgs keeps it in the barrier's list) */
    ask(m[1], OP_BARRIER, "e", 2, 0, 0, 0);
    CHECK(!answered(m[1]));
    CHECK_EQ(pvm_kill(m[1]), 0);
    CHECK_EQ(pvm_gsize("e"), 1);
    CHECK_EQ(pvm_barrier("e", 2), 0);
    CHECK_EQ(pvm_barrier("e", -1), 0);

    /* a member of a static group that exits kills the group */
    int s;
    spawn_members(1, &s);
    CHECK_EQ(do_cmd(s, OP_JOIN, "e", 0), 1);
    ask(s, OP_FREEZE, "e", -1, 0, 0, 0);
    CHECK_EQ(pvm_freezegroup("e", -1), 2);
    CHECK_EQ(answer(s), 2);
    end_members(1, &s);
    CHECK_EQ(pvm_barrier("e", -1), PvmNoGroup);
    CHECK_EQ(pvm_gsize("e"), 2); /* probe p18: its frozen copy */
    CHECK_EQ(pvm_gettid("e", 1), s);
    CHECK_EQ(pvm_lvgroup("e"), 0);
    CHECK_EQ(pvm_gsize("e"), PvmNoGroup);
}

TEST(grphostinfo)
{
    int pvm_grphostinfo(char *, int, int *, int *, int *);
    int pvm_grpvhostinfo(char *, int **, int **, int *);
    int m[2], coord, nmem, nhosts, *coords, *counts;
    CHECK_EQ(pvm_joingroup("hi"), 0);
    spawn_members(2, m);
    CHECK_EQ(do_cmd(m[0], OP_JOIN, "hi", 0), 1);
    CHECK_EQ(do_cmd(m[1], OP_JOIN, "hi", 0), 2);
    /* one host; its coordinator is the lowest tid */
    CHECK_EQ(pvm_grphostinfo("hi", pvm_tidtohost(pvm_mytid()), &coord, &nmem, &nhosts), 0);
    CHECK(coord == pvm_mytid() && nmem == 3 && nhosts == 1);
    CHECK_EQ(pvm_grpvhostinfo("hi", &coords, &counts, &nhosts), 0);
    CHECK(nhosts == 1 && coords[0] == pvm_mytid() && counts[0] == 3);
    CHECK_EQ(pvm_lvgroup("hi"), 0);
    CHECK_EQ(pvm_grphostinfo("hi", pvm_tidtohost(pvm_mytid()), &coord, &nmem, &nhosts), 0);
    CHECK(coord == (m[0] < m[1] ? m[0] : m[1]) && nmem == 2);
    end_members(2, m);
    CHECK_EQ(pvm_grphostinfo("hi", 0, &coord, &nmem, &nhosts), PvmNoGroup);
}

/* Every case ends by leaving PVM, which must succeed. */
static void leave_pvm(void) { CHECK_EQ(pvm_exit(), 0); }
HARNESS_AFTER(leave_pvm)

HARNESS_MAIN()
