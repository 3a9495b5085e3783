/*
 * ec.c - IVY's eventcounts (upvm_ec_*) as a producer/consumer ring in
 * shared memory over 3 nodes (UPVM_NODES=3), and an await that blocks its
 * ULP, never its node.
 *
 * Shared block (main, node 0): eventcounts IN (items produced), OUT (items
 * consumed: the "free slots" back-pressure) and START, each on a page of
 * its own; a ring of R = 8 slots of 1 KiB; a seen[] word per item.  A
 * producer on node1 writes item i (its number and 1000 bytes that depend
 * on it) into slot i % R once OUT >= i - R + 1 (the slot's previous item
 * is consumed), then advances IN; upvm_ec_advance must return i + 1.  Two
 * consumers, on node2 (even items) and node0 (odd items), take turns:
 * item i is read once IN >= i + 1 and OUT >= i (every earlier item is
 * consumed), its number and bytes are checked, seen[i] goes from 0 to 1,
 * and OUT is advanced (it must return i + 1).  So every item arrives once,
 * in order, with its contents; at the end main checks seen[] is all 1 and
 * IN = OUT = N.
 *
 * The await blocks the ULP only: a "counter" task on node2 increments a
 * node-local counter and yields until node2's consumer is done.
 * Everything starts with the node2 consumer in upvm_ec_await(START, 1):
 * main polls START's waiters word until node 2's bit is there (upvm_svm.h:
 * a bit per node with a ULP in the await; a 30 s deadline), then tells
 * the counter, which notes its count, counts 100 more and tells main;
 * main checks the bit is still there and advances START; the consumer
 * then checks that the counter moved by >= 100 since the note, all while
 * it was registered and blocked in the await.  If the await blocked the
 * node, the counter would never count: main says so after 30 s (a
 * deadline of the check, not a timing).  During the run, every await of the node2
 * consumer that has to wait (the value read just before it is below the
 * target) is counted, with whether the counter moved meanwhile: at least
 * one of them must have seen it move.  Prints OK; a failed check prints
 * where and halts the job.  SVM_TEST_ITEMS overrides N (1000).
 */
#include <errno.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>
#include <upvm_svm.h>

#include "svmtest.h"

const char *svmtest_name = "ec";

#define RING 8
#define SLOT 1024
#define PAYLOAD 1000
#define TAG_START 90
#define TAG_BLOCKED 91
#define TAG_DONE 92
#define TAG_MARK 93

struct slot {
    uint64_t item;
    uint64_t len;
    uint8_t bytes[PAYLOAD];
};
_Static_assert(sizeof(struct slot) <= SLOT, "a slot");

/* The block: one page per eventcount, then the ring, then seen[]. */
struct shared {
    upvm_ec_t in;
    uint8_t pad0[UPVM_SVM_PAGE - sizeof(upvm_ec_t)];
    upvm_ec_t out;
    uint8_t pad1[UPVM_SVM_PAGE - sizeof(upvm_ec_t)];
    upvm_ec_t start;
    uint8_t pad2[UPVM_SVM_PAGE - sizeof(upvm_ec_t)];
    uint8_t ring[RING][SLOT];
    uint64_t seen[]; /* N words */
};

static uint8_t byte_of(uint64_t item, int k)
{
    return (uint8_t)(item * 31 + (uint64_t)k * 7 + (item >> 8) + 1);
}

/* Node-local: the node2 consumer and the counter share them (one
 * process, one scheduler thread: no atomics needed). */
static volatile unsigned long counter;
static volatile int consumer_done;
static volatile unsigned long start_mark;

struct params {
    struct shared *sh;
    unsigned long n;
    int role; /* 0: producer, 1: consumer of even items, 2: of odd items, 3: counter */
};

static void recv_params(struct params *p)
{
    SVM_CHECK(pvm_recv(pvm_parent(), TAG_START) > 0, "the start message");
    p->sh = svm_upk_ptr();
    SVM_CHECK(pvm_upkulong(&p->n, 1, 1) == 0 && pvm_upkint(&p->role, 1, 1) == 0,
              "unpack the start message");
}

static void await_ok(upvm_ec_t *ec, uint64_t v, const char *who, const char *name)
{
    int rc = upvm_ec_await(ec, v);
    SVM_CHECK(rc == 0, "%s: upvm_ec_await(%s at %p, %lu): %d", who, name, (void *)ec,
              (unsigned long)v, rc);
    uint64_t now = upvm_ec_read(ec);
    SVM_CHECK(now >= v, "%s: upvm_ec_await(%s, %lu) returned with the value %lu", who, name,
              (unsigned long)v, (unsigned long)now);
}

static int producer(struct params *p)
{
    struct shared *sh = p->sh;
    await_ok(&sh->start, 1, "producer", "START");
    for (uint64_t i = 0; i < p->n; i++) {
        if (i >= RING)
            await_ok(&sh->out, i - RING + 1, "producer", "OUT");
        volatile struct slot *s = (volatile struct slot *)sh->ring[i % RING];
        s->item = i;
        s->len = PAYLOAD;
        for (int k = 0; k < PAYLOAD; k++)
            s->bytes[k] = byte_of(i, k);
        uint64_t v = upvm_ec_advance(&sh->in);
        SVM_CHECK(v == i + 1, "producer: upvm_ec_advance(IN) after item %lu returned %lu",
                  (unsigned long)i, (unsigned long)v);
    }
    return 0;
}

static int consumer(struct params *p)
{
    struct shared *sh = p->sh;
    int c = p->role - 1, on_node2 = c == 0;
    char who[32];
    snprintf(who, sizeof who, "consumer %d (node %d)", c, on_node2 ? 2 : 0);
    if (on_node2) {
        await_ok(&sh->start, 1, who, "START");
        unsigned long moved = counter - start_mark;
        SVM_CHECK(start_mark != 0 && moved >= 100,
                  "%s: the counter ULP of its node moved by %lu (< 100) while it was blocked in "
                  "upvm_ec_await(START) (from %lu)",
                  who, moved, start_mark);
        printf("ec: the counter ULP moved by %lu while node 2's consumer awaited START\n", moved);
        fflush(stdout);
    } else {
        await_ok(&sh->start, 1, who, "START");
    }
    unsigned long waited = 0, moved_during = 0, got = 0;
    for (uint64_t i = (uint64_t)c; i < p->n; i += 2) {
        upvm_ec_t *ecs[2] = {&sh->in, &sh->out};
        const char *names[2] = {"IN", "OUT"};
        uint64_t targets[2] = {i + 1, i};
        for (int e = 0; e < 2; e++) {
            if (upvm_ec_read(ecs[e]) < targets[e]) {
                unsigned long before = counter;
                await_ok(ecs[e], targets[e], who, names[e]);
                waited++;
                moved_during += counter != before;
            } else {
                await_ok(ecs[e], targets[e], who, names[e]); /* returns at once */
            }
        }
        volatile struct slot *s = (volatile struct slot *)sh->ring[i % RING];
        SVM_CHECK(s->item == i && s->len == PAYLOAD,
                  "%s: slot %lu at %p: expected item %lu (len %d), seen item %lu (len %lu)", who,
                  (unsigned long)(i % RING), (void *)s, (unsigned long)i, PAYLOAD,
                  (unsigned long)s->item, (unsigned long)s->len);
        for (int k = 0; k < PAYLOAD; k++)
            SVM_CHECK(s->bytes[k] == byte_of(i, k),
                      "%s: item %lu, byte %d at %p: expected 0x%02x, seen 0x%02x", who,
                      (unsigned long)i, k, (void *)&s->bytes[k], byte_of(i, k), s->bytes[k]);
        volatile uint64_t *seen = &sh->seen[i];
        SVM_CHECK(*seen == 0, "%s: item %lu arrives again (seen[%lu] at %p is %lu)", who,
                  (unsigned long)i, (unsigned long)i, (void *)seen, (unsigned long)*seen);
        *seen = 1;
        uint64_t v = upvm_ec_advance(&sh->out);
        SVM_CHECK(v == i + 1, "%s: upvm_ec_advance(OUT) after item %lu returned %lu", who,
                  (unsigned long)i, (unsigned long)v);
        got++;
    }
    if (on_node2) {
        consumer_done = 1;
        printf("ec: node 2's consumer: %lu awaits had to wait, the counter ULP ran during %lu "
               "of them\n",
               waited, moved_during);
        fflush(stdout);
        SVM_CHECK(waited == 0 || moved_during > 0,
                  "%s: the counter ULP never ran during any of its %lu waiting awaits", who,
                  waited);
    }
    unsigned long rep[3] = {got, waited, moved_during};
    SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_pkint(&c, 1, 1) == 0 &&
                  pvm_pkulong(rep, 3, 1) == 0 && pvm_send(pvm_parent(), TAG_DONE) == 0,
              "%s: the report", who);
    return 0;
}

static int count(void)
{
    int marked = 0, told = 0;
    while (!consumer_done) {
        counter++;
        if (!marked && pvm_nrecv(pvm_parent(), TAG_MARK) > 0) {
            marked = 1; /* node 2's consumer is registered in its await now */
            start_mark = counter;
        }
        if (marked && !told && counter - start_mark >= 100) {
            told = 1;
            SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_send(pvm_parent(), TAG_BLOCKED) == 0,
                      "counter: tell main");
        }
        upvm_yield();
    }
    return 0;
}

static int task(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    struct params p;
    recv_params(&p);
    switch (p.role) {
    case 0:
        return producer(&p);
    case 1:
    case 2:
        return consumer(&p);
    default:
        return count();
    }
}
UPVM_TASK("ectask", task)

int main(void)
{
    unsigned long n = svm_env_ul("SVM_TEST_ITEMS", 1000);
    SVM_CHECK(pvm_mytid() > 0, "pvm_mytid (the job's nodes start here)");
    SVM_CHECK(upvm_nodes() == 3, "this test needs UPVM_NODES=3 (the job has %d nodes)",
              upvm_nodes());
    size_t size = sizeof(struct shared) + n * sizeof(uint64_t);
    struct shared *sh = upvm_svm_alloc(size);
    SVM_CHECK(sh != NULL, "upvm_svm_alloc(%zu): NULL (errno %d)", size, errno);
    upvm_ec_t *ecs[3] = {&sh->in, &sh->out, &sh->start};
    for (int e = 0; e < 3; e++) {
        int rc = upvm_ec_init(ecs[e]);
        SVM_CHECK(rc == 0, "upvm_ec_init(%p): %d", (void *)ecs[e], rc);
        SVM_CHECK(upvm_ec_read(ecs[e]) == 0, "a new eventcount reads %lu",
                  (unsigned long)upvm_ec_read(ecs[e]));
    }
    static upvm_ec_t private_ec;
    int rc = upvm_ec_init(&private_ec);
    SVM_CHECK(rc == -EINVAL, "upvm_ec_init of private memory: %d, not -EINVAL", rc);
    rc = upvm_ec_init((upvm_ec_t *)(void *)((char *)&sh->in + 8));
    SVM_CHECK(rc == -EINVAL, "upvm_ec_init of a misaligned eventcount: %d, not -EINVAL", rc);

    /* role r on node: the counter and consumer 0 on node2, the producer on
     * node1, consumer 1 on node0 (main's node) */
    int roles[4] = {3, 1, 0, 2}, nodes[4] = {2, 2, 1, 0};
    int tids[4];
    for (int t = 0; t < 4; t++)
        tids[t] = svm_spawn_on("ectask", nodes[t]);
    for (int t = 0; t < 4; t++) {
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0, "pvm_initsend");
        svm_pk_ptr(sh);
        SVM_CHECK(pvm_pkulong(&n, 1, 1) == 0 && pvm_pkint(&roles[t], 1, 1) == 0 &&
                      pvm_send(tids[t], TAG_START) == 0,
                  "start task %d", t);
    }
    /* node 2's consumer registered in its await (its bit in START's
     * waiters word: upvm_svm.h), polled with a deadline */
    uint64_t deadline = upvm_now_ns() + 30ull * 1000000000, waiters = 0;
    while (!((waiters = ((volatile upvm_ec_t *)&sh->start)->waiters) & (1u << 2))) {
        SVM_CHECK(upvm_now_ns() < deadline,
                  "START's waiters word is still 0x%lx after 30 s: node 2's consumer never "
                  "registered in upvm_ec_await(START)",
                  (unsigned long)waiters);
        (void)upvm_sleep_ns(1000000);
    }
    SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_send(tids[0], TAG_MARK) == 0, "mark the counter");
    struct timeval limit = {30, 0};
    rc = pvm_trecv(tids[0], TAG_BLOCKED, &limit);
    SVM_CHECK(rc > 0, "node 2's counter ULP did not count 100 (30 s) while node 2's consumer was "
                      "in upvm_ec_await(START): the await blocks the node? (pvm_trecv: %d)",
              rc);
    waiters = ((volatile upvm_ec_t *)&sh->start)->waiters;
    SVM_CHECK(waiters & (1u << 2),
              "START's waiters word is 0x%lx while node 2's consumer still awaits it (bit 2 "
              "went away)",
              (unsigned long)waiters);
    SVM_CHECK(upvm_ec_advance(&sh->start) == 1, "upvm_ec_advance(START) != 1");

    unsigned long got_total = 0;
    for (int i = 0; i < 2; i++) {
        int c = -1;
        unsigned long rep[3];
        SVM_CHECK(pvm_recv(-1, TAG_DONE) > 0 && pvm_upkint(&c, 1, 1) == 0 &&
                      pvm_upkulong(rep, 3, 1) == 0,
                  "a consumer's report");
        printf("ec: consumer %d took %lu items, waited in %lu awaits\n", c, rep[0], rep[1]);
        got_total += rep[0];
    }
    SVM_CHECK(got_total == n, "the consumers took %lu items, not %lu", got_total, n);
    for (unsigned long i = 0; i < n; i++)
        SVM_CHECK(((volatile uint64_t *)sh->seen)[i] == 1, "seen[%lu] at %p is %lu, not 1", i,
                  (void *)&sh->seen[i], (unsigned long)sh->seen[i]);
    SVM_CHECK(upvm_ec_read(&sh->in) == n && upvm_ec_read(&sh->out) == n,
              "at the end IN is %lu and OUT %lu, not %lu", (unsigned long)upvm_ec_read(&sh->in),
              (unsigned long)upvm_ec_read(&sh->out), n);
    unsigned long st[SVM_NSTATS];
    svm_my_stats(st);
    svm_print_stats("node 0's svm stats", st);
    printf("OK\n");
    return 0;
}
