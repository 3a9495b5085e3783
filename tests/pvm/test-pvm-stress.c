/*
 * test-pvm-stress.c - many tasks exchange checksummed, sequence-numbered
 * messages of random sizes and encodings through every receive variant
 * (recv with and without wildcards, nrecv polling, trecv, probe + recv,
 * precv); nothing may be lost, duplicated, corrupted or reordered between
 * any pair.  The plan comes from a seed (UPVM_STRESS_SEED, printed) so a
 * failure can be replayed.
 *
 * Tag 1 carries packed messages: int seq, int len, len bytes, uint checksum.
 * Tag 2 carries psend'ed int arrays: seq, len, len ints, checksum.
 */
#include <sys/time.h>

#include "pvmtest.h"

enum { NTASKS = 64, NMSGS = 400, MAXLEN = 3000 };

static unsigned seed;
static int tids[NTASKS];
static int expected[NTASKS][NTASKS][3]; /* [dst][src][tag] message counts */
static int done_count;

static unsigned rng(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* Message k of task i: its destination, tag and length. */
static void plan(int i, int k, int *dst, int *tag, int *len)
{
    unsigned s = seed ^ (unsigned)(i * 7919 + k * 104729);
    rng(&s);
    *dst = (int)(rng(&s) % NTASKS);
    *tag = 1 + (int)(rng(&s) % 2);
    *len = (int)(rng(&s) % (MAXLEN + 1));
    if (rng(&s) % 8 == 0)
        *len = 0;
}

static unsigned checksum(const unsigned char *p, int n, int seq)
{
    unsigned h = 2166136261u ^ (unsigned)seq;
    for (int i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static void fill(unsigned char *p, int n, int i, int k)
{
    for (int j = 0; j < n; j++)
        p[j] = (unsigned char)(i * 31 + k * 17 + j);
}

static int seqs_out[NTASKS][NTASKS][3]; /* next seq per (src, dst, tag) */

static void send_one(int i, int k)
{
    static unsigned char payload[MAXLEN * 4 + 16];
    int dst, tag, len;
    plan(i, k, &dst, &tag, &len);
    int seq = seqs_out[i][dst][tag]++;
    if (tag == 1) {
        int encs[] = {PvmDataDefault, PvmDataRaw, PvmDataInPlace};
        fill(payload, len, i, k);
        unsigned sum = checksum(payload, len, seq);
        CHECK(pvm_initsend(encs[k % 3]) > 0);
        CHECK_EQ(pvm_pkint(&seq, 1, 1), 0);
        CHECK_EQ(pvm_pkint(&len, 1, 1), 0);
        CHECK_EQ(pvm_pkbyte((char *)payload, len, 1), 0);
        CHECK_EQ(pvm_pkuint(&sum, 1, 1), 0);
        CHECK_EQ(pvm_send(tids[dst], tag), 0);
    } else {
        int *v = (int *)payload;
        int n = len / 4;
        v[0] = seq;
        v[1] = n;
        fill((unsigned char *)(v + 2), n * 4, i, k);
        v[2 + n] = (int)checksum((unsigned char *)(v + 2), n * 4, seq);
        CHECK_EQ(pvm_psend(tids[dst], tag, v, n + 3, PVM_INT), 0);
    }
}

struct rx {
    int me;
    int seq_in[NTASKS][3];
    int left;
    unsigned s;
};

static int index_of(int tid)
{
    for (int i = 0; i < NTASKS; i++)
        if (tids[i] == tid)
            return i;
    CHECK(!"message from an unknown task");
    return -1;
}

/* Check the packed message now in the receive buffer. */
static void check_packed(struct rx *r)
{
    static unsigned char payload[MAXLEN];
    int src_tid, tag, seq, len;
    unsigned sum;
    CHECK_EQ(pvm_bufinfo(pvm_getrbuf(), NULL, &tag, &src_tid), 0);
    CHECK_EQ(tag, 1);
    int src = index_of(src_tid);
    CHECK_EQ(pvm_upkint(&seq, 1, 1), 0);
    CHECK_EQ(pvm_upkint(&len, 1, 1), 0);
    CHECK(len >= 0 && len <= MAXLEN);
    CHECK_EQ(pvm_upkbyte((char *)payload, len, 1), 0);
    CHECK_EQ(pvm_upkuint(&sum, 1, 1), 0);
    CHECK_EQ(seq, r->seq_in[src][1]); /* in order, none lost or doubled */
    CHECK_EQ(sum, checksum(payload, len, seq));
    r->seq_in[src][1]++;
    r->left--;
}

static void check_ints(struct rx *r, const int *v, int rtid, int rlen)
{
    int src = index_of(rtid);
    int n = v[1];
    CHECK_EQ(rlen, (n + 3) * 4);
    CHECK_EQ(v[0], r->seq_in[src][2]);
    CHECK_EQ((unsigned)v[2 + n], checksum((const unsigned char *)(v + 2), n * 4, v[0]));
    r->seq_in[src][2]++;
    r->left--;
}

/* A source that still owes this task a message with tag (or -1). */
static int pending_source(struct rx *r, int tag)
{
    int start = (int)(rng(&r->s) % NTASKS);
    for (int k = 0; k < NTASKS; k++) {
        int src = (start + k) % NTASKS;
        if (r->seq_in[src][tag] < expected[r->me][src][tag])
            return src;
    }
    return -1;
}

/* While a task still has messages to send it must not block (two tasks
 * could wait for each other's next message): it only polls. */
static void poll_one(struct rx *r)
{
    struct timeval tmo = {0, 1000};
    int id;
    switch (rng(&r->s) % 3) {
    case 0:
        id = pvm_nrecv(-1, 1);
        break;
    case 1:
        id = pvm_trecv(-1, 1, &tmo);
        break;
    default:
        if ((id = pvm_probe(-1, 1)) > 0)
            CHECK_EQ(pvm_recv(-1, 1), id);
    }
    CHECK(id >= 0);
    if (id > 0)
        check_packed(r);
}

/* Receive one message with a randomly chosen variant (every task has sent
 * all its messages or will without waiting: blocking is safe). */
static void receive_one(struct rx *r)
{
    static int ints[MAXLEN + 16];
    int variant = (int)(rng(&r->s) % 6);
    int src1 = pending_source(r, 1), src2 = pending_source(r, 2);
    if (src1 < 0)
        variant = 5; /* only psend'ed ones left */
    else if (src2 < 0 && variant == 5)
        variant = 0;
    int id;
    struct timeval tmo = {0, 1000};
    switch (variant) {
    case 0: /* from one source, tag 1 */
        CHECK(pvm_recv(tids[src1], 1) > 0);
        check_packed(r);
        break;
    case 1: /* any source, tag 1 */
        CHECK(pvm_recv(-1, 1) > 0);
        check_packed(r);
        break;
    case 2: /* poll */
        while ((id = pvm_nrecv(-1, 1)) == 0)
            upvm_yield();
        CHECK(id > 0);
        check_packed(r);
        break;
    case 3: /* short timeouts */
        while ((id = pvm_trecv(tids[src1], 1, &tmo)) == 0)
            ;
        CHECK(id > 0);
        check_packed(r);
        break;
    case 4: /* probe, then take exactly the probed one */
        while ((id = pvm_probe(-1, 1)) == 0)
            upvm_yield();
        CHECK_EQ(pvm_recv(-1, 1), id);
        check_packed(r);
        break;
    default: { /* precv of psend'ed ints */
        int rtid, rtag, rlen;
        CHECK_EQ(pvm_precv(src2 == r->me || rng(&r->s) % 2 ? -1 : tids[src2], 2, ints,
                           MAXLEN + 16, PVM_INT, &rtid, &rtag, &rlen), 0);
        CHECK_EQ(rtag, 2);
        check_ints(r, ints, rtid, rlen);
    }
    }
}

static void stress_task(int me, void *unused)
{
    struct rx *r = calloc(1, sizeof *r);
    CHECK(r != NULL);
    r->me = me;
    r->s = seed + (unsigned)me;
    for (int src = 0; src < NTASKS; src++)
        r->left += expected[me][src][1] + expected[me][src][2];
    int sent = 0;
    while (sent < NMSGS || r->left > 0) {
        if (sent < NMSGS)
            send_one(me, sent++);
        if (r->left > 0 && sent == NMSGS)
            receive_one(r);
        else if (r->left > 0 && rng(&r->s) % 3 == 0)
            poll_one(r);
        if (rng(&r->s) % 5 == 0)
            upvm_yield();
    }
    CHECK_EQ(pvm_nrecv(-1, -1), 0); /* nothing extra */
    free(r);
    done_count++;
}

TEST(every_message_once_in_order_intact)
{
    const char *env = getenv("UPVM_STRESS_SEED");
    seed = env ? (unsigned)strtoul(env, NULL, 0) : (unsigned)upvm_now_ns();
    fprintf(stderr, "seed %u (replay: UPVM_STRESS_SEED=%u)\n", seed, seed);
    for (int i = 0; i < NTASKS; i++)
        for (int k = 0; k < NMSGS; k++) {
            int dst, tag, len;
            plan(i, k, &dst, &tag, &len);
            expected[dst][i][tag]++;
        }
    pvm_mytid();
    CHECK_EQ(upvm_task_spawn_func(stress_task, NULL, NTASKS, tids), NTASKS);
    while (done_count < NTASKS)
        upvm_yield();
    CHECK_EQ(pvm_exit(), 0);
    fprintf(stderr, "%d tasks x %d messages: all delivered once, in order, intact\n",
            NTASKS, NMSGS);
}

HARNESS_MAIN()
