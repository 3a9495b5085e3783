/*
 * test-pvm-badtids.c - send, psend, mcast, sendsig, kill and notify given
 * tids that are malformed (negative, 0, the pvmd's, bits outside the tid
 * format) or well formed but naming no task.  Every expectation is what
 * genuine PVM 3.4.6 returned to the probe recorded in docs/compat.md
 * ("Bad tids"): a malformed tid anywhere in the list is PvmBadParam and
 * nothing is sent (mcast included); a well-formed tid of no task is 0, and
 * mcast still sends to the others.
 */
#include <signal.h>

#include "pvmtest.h"
#include "util/compiler.h"

/* Malformed: PVM's TIDISTASK is false for them. */
static const int malformed[] = {
    -1, -5, 0,
    0x40000,             /* host part only: a pvmd's tid */
    (int)0x80000000,     /* the pvmd flag alone */
    0x40000001,          /* the group bit, no host part */
    (int)0x80040001,     /* a task's tid with the pvmd flag */
    0x40040001,          /* a task's tid with the group bit */
};

/* Well formed, no such task (0x40000 | local part; host 31). */
static const int absent[] = {0x4fff0, 0x7c0001, 0x7ffff};

static void pack_one(int v)
{
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(&v, 1, 1), 0);
}

/* The next echo from child must carry tag `want`: the messages before
 * it (if any had been sent) would have come first. */
static void next_echo_is(int child, int want)
{
    int tag;
    CHECK(pvm_recv(child, -1) > 0);
    CHECK_EQ(pvm_bufinfo(pvm_getrbuf(), NULL, &tag, NULL), 0);
    CHECK_EQ(tag, want);
}

/* Every call on one malformed tid: PvmBadParam, pvm_errno set. */
static void all_refuse(int child, int bad)
{
    int pair[2] = {child, bad}, rpair[2] = {bad, child}, one = 7;
    pack_one(1);
    CHECK_EQ(pvm_send(bad, 1), PvmBadParam);
    CHECK_EQ(pvm_psend(bad, 1, &one, 1, PVM_INT), PvmBadParam);
    CHECK_EQ(pvm_mcast(&bad, 1, 1), PvmBadParam);
    CHECK_EQ(pvm_mcast(pair, 2, 2), PvmBadParam);  /* nothing to the child */
    CHECK_EQ(pvm_mcast(rpair, 2, 3), PvmBadParam); /* in either order */
    CHECK_EQ(pvm_sendsig(bad, 0), PvmBadParam);
    CHECK_EQ(pvm_sendsig(bad, SIGCONT), PvmBadParam);
    CHECK_EQ(pvm_kill(bad), PvmBadParam);
    CHECK_EQ(pvm_notify(PvmTaskExit, 77, 1, &bad), PvmBadParam);
    CHECK_EQ(pvm_notify(PvmTaskExit, 78, 2, pair), PvmBadParam);
    CHECK_EQ(pvm_errno, PvmBadParam);
    pack_one(2);
    CHECK_EQ(pvm_send(child, 50), 0);
    next_echo_is(child, 50);
    CHECK_EQ(pvm_nrecv(-1, 77), 0); /* no notification was set up */
    CHECK_EQ(pvm_nrecv(-1, 78), 0);
}

TEST(malformed_tids_are_bad_params_and_nothing_is_sent)
{
    int child;
    CHECK_EQ(upvm_task_spawn_func(echo_child, NULL, 1, &child), 1);
    capture_begin();
    for (size_t i = 0; i < ARRAY_SIZE(malformed); i++)
        all_refuse(child, malformed[i]);
    const char *err = capture_end();
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_mcast", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_notify", "Bad parameter"));
    pack_one(0);
    CHECK_EQ(pvm_send(child, 999), 0);
}

/* Every call on one tid of no task: 0, silent; mcast reaches the child,
 * notify fires at once. */
static void all_accept(int child, int gone)
{
    int pair[2] = {child, gone}, rpair[2] = {gone, child}, one = 7;
    pvm_errno = 4242;
    pack_one(1);
    CHECK_EQ(pvm_send(gone, 1), 0);
    CHECK_EQ(pvm_psend(gone, 1, &one, 1, PVM_INT), 0);
    CHECK_EQ(pvm_mcast(&gone, 1, 1), 0);
    CHECK_EQ(pvm_mcast(pair, 2, 2), 0);
    next_echo_is(child, 2);
    CHECK_EQ(pvm_mcast(rpair, 2, 3), 0);
    next_echo_is(child, 3);
    CHECK_EQ(pvm_sendsig(gone, 0), 0);
    CHECK_EQ(pvm_sendsig(gone, SIGCONT), 0);
    CHECK_EQ(pvm_kill(gone), 0);
    CHECK_EQ(pvm_notify(PvmTaskExit, 77, 1, &gone), 0);
    CHECK_EQ(recv_int(-1, 77), gone);
    CHECK_EQ(pvm_errno, 4242);
}

TEST(tids_of_no_task_are_accepted_and_mcast_sends_to_the_rest)
{
    int child;
    CHECK_EQ(upvm_task_spawn_func(echo_child, NULL, 1, &child), 1);
    for (size_t i = 0; i < ARRAY_SIZE(absent); i++)
        all_accept(child, absent[i]);
    pack_one(0);
    CHECK_EQ(pvm_send(child, 999), 0);
}

HARNESS_MAIN()
