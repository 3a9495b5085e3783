/*
 * test-pvm-messages.c - send, mcast, psend and the receive family between
 * thread-mode tasks: wildcards and order, timeouts, probe, precv, recvf,
 * contexts, message handlers, copy-on-write and hand-off.  Run twice by
 * ctest: with the shared delivery strategy and with UPVM_DELIVERY=copy.
 */
#include <errno.h>
#include <limits.h>
#include <sys/time.h>

#include "pvmtest.h"

/* ---------------------------------------------------------- helpers */

static int spawn1(upvm_ordinal_entry_t fn, void *arg)
{
    int tid;
    CHECK_EQ(upvm_task_spawn_func(fn, arg, 1, &tid), 1);
    return tid;
}

/* ---------------------------------------------------------- tests */

TEST(send_to_self_and_bad_params)
{
    int me = pvm_mytid();
    send_int(me, 0, 7);
    send_int(me, 0x7fffffff, 8);
    CHECK_EQ(recv_int(me, 0), 7);
    CHECK_EQ(recv_int(me, 0x7fffffff), 8);
    int src, tag, len;
    CHECK_EQ(pvm_bufinfo(pvm_getrbuf(), &len, &tag, &src), 0);
    CHECK_EQ(src, me);
    CHECK_EQ(len, 4);

    /* ref §3: bad tids and negative tags are PvmBadParam, printed */
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    capture_begin();
    int r1 = pvm_send(-1, 1), r2 = pvm_send(0, 1), r3 = pvm_send(0x40000, 1);
    int r4 = pvm_send(me, -1);
    const char *err = capture_end();
    CHECK_EQ(r1, PvmBadParam);
    CHECK_EQ(r2, PvmBadParam);
    CHECK_EQ(r3, PvmBadParam);
    CHECK_EQ(r4, PvmBadParam);
    CHECK_EQ(pvm_errno, PvmBadParam);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_send", "Bad parameter"));
    /* to a task that does not exist: 0, dropped silently */
    pvm_errno = 4242;
    CHECK_EQ(pvm_send(pvm_mytid() + 1000, 1), 0);
    CHECK_EQ(pvm_errno, 4242);
    /* no send buffer */
    CHECK_EQ(pvm_freebuf(pvm_getsbuf()), 0);
    capture_begin();
    int r5 = pvm_send(me, 1);
    err = capture_end();
    CHECK_EQ(r5, PvmNoBuf);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_send", "No current buffer"));
}

TEST(fifo_and_wildcards)
{
    int me = pvm_mytid();
    /* ref §3: 100 messages with 7 tags come back in order under (-1,-1) */
    for (int i = 0; i < 100; i++)
        send_int(me, i % 7, i);
    /* a selective receive takes the first tag-4 message, leaving order */
    CHECK_EQ(recv_int(me, 4), 4);
    for (int i = 0; i < 100; i++) {
        if (i == 4)
            continue;
        CHECK_EQ(recv_int(-1, -1), i);
    }
    /* ref §3: only -1 is a wildcard: other negative values never match */
    send_int(me, 3, 1);
    CHECK_EQ(pvm_nrecv(-2, -1), 0);
    CHECK_EQ(pvm_nrecv(-1, -2), 0);
    CHECK_EQ(pvm_nrecv(0, -1), 0);
    CHECK(pvm_nrecv(me, 3) > 0);
}

TEST(pairwise_order_between_tasks)
{
    int tid = spawn1(echo_child, NULL);
    for (int i = 0; i < 50; i++)
        send_int(tid, 1 + i % 3, i);
    for (int i = 0; i < 50; i++)
        CHECK_EQ(recv_int(tid, -1), i);
    send_int(tid, 999, 0);
}

TEST(nrecv_trecv_free_the_receive_buffer)
{
    int me = pvm_mytid();
    send_int(me, 5, 1);
    int id = pvm_recv(me, 5);
    CHECK(id > 0);
    CHECK_EQ(pvm_getrbuf(), id);
    /* ref §3: an unsuccessful nrecv frees the current receive buffer */
    CHECK_EQ(pvm_nrecv(-1, -1), 0);
    CHECK_EQ(pvm_getrbuf(), 0);
    pvm_setopt(PvmAutoErr, 0);
    CHECK_EQ(pvm_bufinfo(id, NULL, NULL, NULL), PvmNoSuchBuf);
    pvm_setopt(PvmAutoErr, 1);

    /* probe leaves it */
    send_int(me, 5, 2);
    id = pvm_recv(me, 5);
    CHECK_EQ(pvm_probe(-1, -1), 0);
    CHECK_EQ(pvm_getrbuf(), id);

    /* trecv: {0,0} polls; a timeout returns 0 and frees the rbuf */
    struct timeval zero = {0, 0}, tenth = {0, 100000}, neg = {-1, 0};
    CHECK_EQ(pvm_trecv(-1, -1, &zero), 0);
    CHECK_EQ(pvm_getrbuf(), 0);
    uint64_t t0 = upvm_now_ns();
    CHECK_EQ(pvm_trecv(-1, -1, &tenth), 0);
    uint64_t waited = upvm_now_ns() - t0;
    CHECK(waited >= 100000000u);
    CHECK_EQ(pvm_trecv(-1, -1, &neg), 0); /* negative: 0 at once */
}

/* A child that sleeps a little, then sends one int. */
static void late_sender(int ordinal, void *arg)
{
    upvm_sleep_ns(20 * 1000 * 1000);
    send_int(pvm_parent(), 77, 123);
}

TEST(trecv_gets_message_before_timeout)
{
    int tid = spawn1(late_sender, NULL);
    struct timeval five = {5, 0};
    uint64_t t0 = upvm_now_ns();
    int id = pvm_trecv(tid, 77, &five);
    CHECK(id > 0);
    CHECK(upvm_now_ns() - t0 < 4000000000u);
    int v;
    CHECK_EQ(pvm_upkint(&v, 1, 1), 0);
    CHECK_EQ(v, 123);
}

/* A child that, for every request (tag 1, one int: a tag), waits 300 ms
 * and then sends the parent a message with that tag; a negative one ends it. */
static void sender_300ms_later(int ordinal, void *arg)
{
    for (;;) {
        int tag = recv_int(pvm_parent(), 1);
        if (tag < 0)
            return;
        upvm_sleep_ns(300 * 1000 * 1000);
        send_int(pvm_parent(), tag, tag);
    }
}

/* pvm_trecv(kid, tag, tv) while kid sends tag 300 ms after being asked:
 * the id (it waited), 0 (it returned before; the late message is taken
 * away) or an error.  Nothing received frees the receive buffer. */
static int trecv_with_late_message(int kid, int tag, struct timeval *tv)
{
    send_int(kid, 1, tag);
    int id = pvm_trecv(kid, tag, tv);
    CHECK_EQ(pvm_getrbuf(), id > 0 ? id : 0);
    if (id <= 0)
        CHECK_EQ(recv_int(kid, tag), tag);
    return id;
}

/*
 * Every form of pvm_trecv's timeout, as genuine PVM 3.4.6 treats it (probe
 * tests/pvm-reference/p17_trecv_timeout.c, ref §3): the pair is compared
 * field by field with the time elapsed, never summed, and what is left is
 * given to select(2).  A message sent 300 ms after the call is received
 * (the call waited) or not (it returned at once).
 */
TEST(trecv_timeout_forms_as_pvm)
{
    static const struct {
        long sec, usec;
        int waits; /* 1: receives the late message; 0: returns 0 at once */
    } forms[] = {
        {0, 0, 0},              /* a poll */
        {0, 1, 0},              /* 1 us */
        {0, 100000, 0},         /* 0.1 s: over before the message */
        {0, 999999, 1},
        {0, 1000000, 1},        /* usec >= 1000000: select normalises */
        {0, 1500000, 1},        /* (1.5 s without a message) */
        {1, 0, 1},
        {1, -5, 1},             /* a second, not a poll */
        {1, -500000, 1},        /* a second, not half of one */
        {1, -999999, 1},
        {1, -1000000, 1},
        {1, -2000000, 1},       /* a second too */
        {2, -1500000, 1},       /* (without a message: PvmSysErr after 0.5 s) */
        {0, -1, 0},             /* behind the clock at once: 0, no poll */
        {0, -5, 0},
        {0, -1000000, 0},
        {-1, 0, 0},
        {-1, -5, 0},
        {-1, 1500000, 0},       /* negative seconds: not 0.5 s */
        {-5, 999999, 0},
        {LONG_MIN, 0, 0},
        {0, LONG_MIN, 0},
        {INT_MAX, 0, 1},        /* for ever, in practice */
        {LONG_MAX, 0, 1},
        {LONG_MAX, 999999, 1},
    };
    int kid = spawn1(sender_300ms_later, NULL);
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        struct timeval tv = {forms[i].sec, forms[i].usec};
        int tag = 100 + (int)i;
        int id = trecv_with_late_message(kid, tag, &tv);
        if (forms[i].waits ? id <= 0 : id != 0)
            fprintf(stderr, "trecv({%ld,%ld}) = %d: expected %s\n", forms[i].sec,
                    forms[i].usec, id, forms[i].waits ? "the message" : "0 at once");
        CHECK(forms[i].waits ? id > 0 : id == 0);
        CHECK_EQ(tv.tv_sec, forms[i].sec); /* untouched */
        CHECK_EQ(tv.tv_usec, forms[i].usec);
    }

    /* What select refuses: PvmSysErr, libpvm's log line and the report;
     * the receive buffer is freed as by a timeout (p17 (a) and (c)). */
    static const struct timeval refused[] = {{2, -2000000}, {5, -3000000}, {0, LONG_MAX}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct timeval tv = refused[i];
        send_int(pvm_mytid(), 5, 0);
        CHECK(pvm_recv(-1, 5) > 0);
        char expect[512];
        snprintf(expect, sizeof expect, "libpvm [t%x] mxfer() select: Invalid argument\n%s",
                 (unsigned)pvm_mytid(), autoerr_line("pvm_trecv", "Can't contact local daemon"));
        capture_begin();
        int id = trecv_with_late_message(kid, 200 + (int)i, &tv);
        const char *err = capture_end();
        CHECK_EQ(id, PvmSysErr);
        CHECK_EQ(strcmp(err, expect), 0);
    }

    /* Without a message: {1,-500000} waits a whole second (PVM polls until
     * its seconds are up), {2,-1500000} half of one before select refuses
     * the rest.  Lower bounds only. */
    struct timeval half = {1, -500000}, later = {2, -1500000};
    uint64_t t0 = upvm_now_ns();
    CHECK_EQ(pvm_trecv(kid, 9999, &half), 0);
    CHECK(upvm_now_ns() - t0 >= 900000000u);
    pvm_setopt(PvmAutoErr, 0);
    t0 = upvm_now_ns();
    capture_begin();
    int rc = pvm_trecv(kid, 9999, &later);
    (void)capture_end();
    CHECK_EQ(rc, PvmSysErr);
    CHECK(upvm_now_ns() - t0 >= 400000000u);
    pvm_setopt(PvmAutoErr, 1);
    send_int(kid, 1, -1);
}

TEST(probe_returns_the_id_recv_will_return)
{
    int me = pvm_mytid();
    send_int(me, 8, 42);
    int pid = pvm_probe(me, 8);
    CHECK(pid > 0);
    CHECK_EQ(pvm_getrbuf() == pid, 0); /* not made active */
    int tag;
    CHECK_EQ(pvm_bufinfo(pid, NULL, &tag, NULL), 0);
    CHECK_EQ(tag, 8);
    CHECK_EQ(pvm_probe(me, 8), pid);
    CHECK_EQ(pvm_recv(me, 8), pid);
    int v;
    CHECK_EQ(pvm_upkint(&v, 1, 1), 0);
    CHECK_EQ(v, 42);
    /* freeing a probed id drops the message */
    send_int(me, 9, 1);
    pid = pvm_probe(me, 9);
    CHECK_EQ(pvm_freebuf(pid), 0);
    CHECK_EQ(pvm_nrecv(me, 9), 0);
}

TEST(precv_psend)
{
    int me = pvm_mytid();
    int iv[10], out[10] = {0};
    for (int i = 0; i < 10; i++)
        iv[i] = 100 + i;
    CHECK_EQ(pvm_psend(me, 60, iv, 10, PVM_INT), 0);
    int rtid, rtag, rlen;
    int saved = pvm_getrbuf();
    CHECK_EQ(pvm_precv(me, 60, out, 10, PVM_INT, &rtid, &rtag, &rlen), 0);
    CHECK_EQ(rtid, me);
    CHECK_EQ(rtag, 60);
    CHECK_EQ(rlen, 40); /* ref §3.1: a byte count */
    CHECK_EQ(memcmp(iv, out, sizeof iv), 0);
    CHECK_EQ(pvm_getrbuf(), saved); /* precv leaves the receive buffer */

    /* too small: the first items, no error; rlen is the message's */
    memset(out, 0, sizeof out);
    CHECK_EQ(pvm_psend(me, 61, iv, 10, PVM_INT), 0);
    CHECK_EQ(pvm_precv(me, 61, out, 5, PVM_INT, NULL, NULL, &rlen), 0);
    CHECK_EQ(rlen, 40);
    CHECK_EQ(out[4], 104);
    CHECK_EQ(out[5], 0);

    /* XDR messages are not decoded by precv (bytes as they are) */
    send_int(me, 62, 100);
    CHECK_EQ(pvm_precv(me, 62, out, 1, PVM_INT, NULL, NULL, NULL), 0);
    CHECK_EQ((unsigned)out[0], 0x64000000u);

    capture_begin();
    int a = pvm_psend(me, 63, iv, 1, PVM_STR);
    int b = pvm_psend(me, 63, iv, 1, 99);
    int c = pvm_precv(me, 63, out, 1, PVM_STR, NULL, NULL, NULL);
    int d = pvm_psend(me, -3, iv, 1, PVM_INT);
    const char *err = capture_end();
    CHECK_EQ(a, PvmNotImpl);
    CHECK_EQ(b, PvmBadParam);
    CHECK_EQ(c, PvmNotImpl);
    CHECK_EQ(d, PvmBadParam);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_psend", "Not implemented"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_precv", "Not implemented"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_send", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_psend", "Bad parameter"));
    /* ref §3.1: count -1 reports pkbyte, returns 0, sends an empty message */
    capture_begin();
    int e = pvm_psend(me, 64, iv, -1, PVM_INT);
    err = capture_end();
    CHECK_EQ(e, 0);
    CHECK_EQ(pvm_errno, PvmBadParam);
    CHECK_EQ(pvm_precv(me, 64, out, 1, PVM_INT, NULL, NULL, &rlen), 0);
    CHECK_EQ(rlen, 0);
}

/* recvf: rank tag 1 as 2 and tag 2 as 3: the highest-ranked queued wins. */
static int rank_by_tag(int bufid, int tid, int tag)
{
    int mtag;
    if (pvm_bufinfo(bufid, NULL, &mtag, NULL) < 0)
        return 0;
    if (mtag == 13)
        return -7; /* an error: returned at once */
    return mtag == 1 ? 2 : mtag == 2 ? 3 : 0;
}

TEST(recvf)
{
    int me = pvm_mytid();
    send_int(me, 1, 10);
    send_int(me, 2, 20);
    send_int(me, 3, 30);
    /* pvm3.h's declared result type is PVM's odd one: what comes back is
     * the previous matcher, int f(int, int, int). */
    void *prev = (void *)pvm_recvf(rank_by_tag);
    int (*old)(int, int, int);
    memcpy(&old, &prev, sizeof old);
    CHECK(old != NULL); /* ref §3: the default is a function, not NULL */
    CHECK_EQ(recv_int(-1, -1), 20);
    CHECK_EQ(recv_int(-1, -1), 10);
    CHECK_EQ(pvm_nrecv(-1, -1), 0); /* tag 3 ranks 0: never taken */
    send_int(me, 13, 0);
    capture_begin();
    int rc = pvm_nrecv(-1, -1);
    const char *err = capture_end();
    CHECK_EQ(rc, PvmNoFile);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_nrecv", "No such file"));
    /* restoring the default returns ours */
    CHECK((void *)pvm_recvf(old) == (void *)rank_by_tag);
    CHECK_EQ(recv_int(me, 3), 30);
    CHECK(pvm_nrecv(me, 13) > 0);
}

/* Reports whether its parent's multicast reached it (tag 20), then exits. */
static void mcast_child(int ordinal, void *arg)
{
    int v = recv_int(pvm_parent(), 20);
    send_int(pvm_parent(), 21, v + ordinal);
}

TEST(mcast)
{
    int me = pvm_mytid();
    int tids[6];
    CHECK_EQ(upvm_task_spawn_func(mcast_child, NULL, 4, tids), 4);
    tids[4] = me;      /* ref §3.2: never to the sender */
    tids[5] = tids[0]; /* duplicates removed */
    send_int(me, 0, 0); /* (only to build a send buffer) */
    CHECK(pvm_recv(me, 0) > 0);
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    int v = 1000;
    CHECK_EQ(pvm_pkint(&v, 1, 1), 0);
    CHECK_EQ(pvm_mcast(tids, 6, 20), 0);
    int sum = 0;
    for (int i = 0; i < 4; i++)
        sum += recv_int(-1, 21);
    CHECK_EQ(sum, 4 * 1000 + 0 + 1 + 2 + 3);
    CHECK_EQ(pvm_nrecv(-1, 21), 0); /* exactly one each */
    CHECK_EQ(pvm_nrecv(me, 20), 0); /* nothing to self */
    capture_begin();
    int a = pvm_mcast(tids, -1, 20), b = pvm_mcast(tids, 1, -3);
    int bad[2] = {me, -1};
    int c = pvm_mcast(bad, 2, 20);
    capture_end();
    CHECK_EQ(a, PvmBadParam);
    CHECK_EQ(b, PvmBadParam);
    CHECK_EQ(c, PvmBadParam);
    CHECK_EQ(pvm_mcast(tids, 0, 20), 0);
}

/* The receiver must see the data as it was sent, whatever the sender
 * does to its buffer afterwards. */
static void cow_child(int ordinal, void *arg)
{
    int v[4];
    CHECK(pvm_recv(pvm_parent(), 30) > 0);
    CHECK_EQ(pvm_upkint(v, 4, 1), 0);
    int extra;
    pvm_setopt(PvmAutoErr, 0);
    CHECK_EQ(pvm_upkint(&extra, 1, 1), PvmNoData); /* later packs not seen */
    send_int(pvm_parent(), 31, v[0] + v[1] + v[2] + v[3]);
}

TEST(copy_on_write)
{
    int tid = spawn1(cow_child, NULL);
    int v[4] = {1, 2, 3, 4};
    int sb = pvm_initsend(PvmDataRaw);
    CHECK_EQ(pvm_pkint(v, 4, 1), 0);
    CHECK_EQ(pvm_send(tid, 30), 0);
    /* the sender keeps packing into the same buffer before the child runs */
    int more = 1000;
    pvm_setopt(PvmAutoErr, 0);
    CHECK_EQ(pvm_pkint(&more, 1, 1), 0);
    pvm_setopt(PvmAutoErr, 1);
    CHECK_EQ(pvm_getsbuf(), sb);
    int len;
    CHECK_EQ(pvm_bufinfo(sb, &len, NULL, NULL), 0);
    CHECK_EQ(len, 20); /* ref §2: sending does not consume the buffer */
    CHECK_EQ(recv_int(tid, 31), 10);

    /* in place: the bytes at send time travel, not those at pack time */
    int w[2] = {1, 2};
    CHECK(pvm_initsend(PvmDataInPlace) > 0);
    CHECK_EQ(pvm_pkint(w, 2, 1), 0);
    w[0] = 100;
    w[1] = 200;
    CHECK_EQ(pvm_send(pvm_mytid(), 32), 0);
    w[0] = -1;
    CHECK(pvm_recv(-1, 32) > 0);
    int got[2];
    CHECK_EQ(pvm_upkint(got, 2, 1), 0);
    CHECK_EQ(got[0], 100);
    CHECK_EQ(got[1], 200);
}

TEST(contexts_isolate_traffic)
{
    int me = pvm_mytid();
    CHECK_EQ(pvm_getcontext(), PvmBaseContext);
    int a = pvm_newcontext(), b = pvm_newcontext();
    CHECK(a > 0 && b > 0 && a != b);
    CHECK_EQ(pvm_setcontext(a), 0);
    send_int(me, 1, 11);
    CHECK_EQ(pvm_setcontext(b), a);
    CHECK_EQ(pvm_nrecv(-1, -1), 0); /* not visible in b */
    send_int(me, 1, 22);
    CHECK_EQ(pvm_setcontext(0), b);
    CHECK_EQ(pvm_nrecv(-1, -1), 0); /* nor in the base context */
    pvm_setcontext(a);
    CHECK_EQ(recv_int(-1, -1), 11);
    struct pvmminfo mi;
    CHECK_EQ(pvm_getminfo(pvm_getrbuf(), &mi), 0);
    CHECK_EQ(mi.ctx, a);
    pvm_setcontext(b);
    CHECK_EQ(recv_int(-1, -1), 22);
    pvm_setcontext(0);
    /* ref §8 */
    CHECK_EQ(pvm_freecontext(a), 0);
    capture_begin();
    int r = pvm_freecontext(a);
    const char *err = capture_end();
    CHECK_EQ(r, PvmNotFound);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_freecontext", "Not Found"));
    int c = pvm_freecontext(0); /* 0 allocates, as in PVM */
    CHECK(c > 0 && c != a && c != b);
    CHECK_EQ(pvm_freecontext(b), 0);
    CHECK_EQ(pvm_freecontext(c), 0);
}

/* Children inherit the context current at spawn. */
static void ctx_child(int ordinal, void *arg)
{
    send_int(pvm_parent(), 40, pvm_getcontext());
}

TEST(children_inherit_context)
{
    int c = pvm_newcontext();
    pvm_setcontext(c);
    int tid = spawn1(ctx_child, NULL);
    CHECK_EQ(recv_int(tid, 40), c);
    pvm_setcontext(0);
    CHECK_EQ(pvm_freecontext(c), 0);
}

static int handled_value, handled_count;

static int handler(int mid)
{
    CHECK_EQ(pvm_getrbuf(), mid);
    CHECK_EQ(pvm_getsbuf(), 0);
    CHECK_EQ(pvm_upkint(&handled_value, 1, 1), 0);
    handled_count++;
    return 0;
}

TEST(message_handlers)
{
    int me = pvm_mytid();
    int sb = pvm_initsend(PvmDataDefault);
    int h = pvm_addmhf(-1, 50, -1, handler);
    CHECK_EQ(h, 9); /* ref §9: the first user handler id */
    capture_begin();
    int dup = pvm_addmhf(me, 50, 0, handler);
    const char *err = capture_end();
    CHECK_EQ(dup, PvmExists);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_addmhf", "Already Exists"));
    send_int(me, 50, 5);
    send_int(me, 51, 6);
    /* the handler consumes its message before any matching */
    CHECK_EQ(recv_int(-1, -1), 6);
    CHECK_EQ(handled_count, 1);
    CHECK_EQ(handled_value, 5);
    CHECK_EQ(pvm_delmhf(h), 0);
    capture_begin();
    int a = pvm_delmhf(h), b = pvm_delmhf(-1);
    capture_end();
    CHECK_EQ(a, PvmNotFound);
    CHECK_EQ(b, PvmBadParam);
    send_int(me, 50, 7);
    CHECK_EQ(recv_int(me, 50), 7);
    CHECK_EQ(handled_count, 1);
    (void)sb;
}

/* Receiving from a sender that is ready runs that sender next. */
static int order[8], norder;

static void handoff_sender(int ordinal, void *arg)
{
    order[norder++] = ordinal;
    send_int(pvm_parent(), 70, ordinal);
}

TEST(blocked_receiver_hands_off_to_its_sender)
{
    int tids[3];
    norder = 0;
    CHECK_EQ(upvm_task_spawn_func(handoff_sender, NULL, 3, tids), 3);
    /* waiting for the last-spawned sender runs it first, not the queue head */
    CHECK_EQ(recv_int(tids[2], 70), 2);
    CHECK_EQ(order[0], 2);
    CHECK_EQ(recv_int(-1, 70) + recv_int(-1, 70), 0 + 1);
}

/* Every case ends by leaving PVM, which must succeed. */
static void leave_pvm(void) { CHECK_EQ(pvm_exit(), 0); }
HARNESS_AFTER(leave_pvm)

HARNESS_MAIN()
