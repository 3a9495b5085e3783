/*
 * fire.c - migration under fire (test-migrate.sh fire): W workers on three
 * nodes exchange sequence-numbered, checksummed messages with every kind of
 * receive while a driver task moves them between nodes, hundreds of times.
 *
 *   fire [mig|nomig]     the master: spawns W workers (spread over the
 *                        nodes) and the driver (on node1), prints a RESULT
 *                        line per worker and the group's reductions (the
 *                        same with and without migration), then the
 *                        driver's count of migrations
 *   fire worker / fire driver     the two roles (spawned by the master)
 *
 * Each of R rounds, every worker:
 *   1. point to point: sends a burst of 1-3 messages to each of the next
 *      three workers and receives the bursts of the previous three, each
 *      (sender, receiver, round) with one of seven receives: pvm_recv,
 *      pvm_nrecv polling (usleep between polls), pvm_trecv with a short
 *      timeout (in a loop), pvm_probe then pvm_recv, pvm_precv (the sender
 *      used pvm_psend), pvm_recv with a pvm_recvf matcher (the sender
 *      varies the tag), pvm_recv from any task (-1);
 *   2. (one worker) a directed sleep: asks the driver to move it and sleeps
 *      (usleep, nanosleep, once sleep(1)) until it runs on another node;
 *   3. (two workers) multicast to all the others (pvm_mcast);
 *   4. (one worker) a directed receive: asks the driver to move it and waits
 *      in pvm_recv / pvm_trecv / pvm_probe for the driver's go, which says
 *      the node it must now be on;
 *   5. a multi-message protocol: a header, then 3-10 parts, to the worker
 *      four places on; every third round one sender stops half way, asks
 *      the driver to move it and its receiver, and goes on when told;
 *   6. a group broadcast (pvm_bcast) by one worker;
 *   7. pvm_reduce(PvmSum) over the group;
 *   8. pvm_barrier; every fourth round one worker holds the barrier back
 *      until the driver has moved three of the workers waiting in it.
 * Every message carries (channel, source, destination, sequence number,
 * round) and a checksum of all of it: a receiver checks that nothing was
 * lost, duplicated, reordered or corrupted.  Meanwhile the driver moves
 * random workers to random nodes (seeded), and checks that each
 * migration succeeds and that upvm_node_of then names the target node
 * (and, before each, the node it was last moved to).  The driver does each
 * migration in a "mover" (a thread-mode task of its own), so that it never
 * waits for one itself (see the driver).
 * With "nomig" the driver answers the same requests without moving
 * anybody: the RESULT lines must be identical.
 *
 * Environment: MTEST_FIRE_WORKERS (12), MTEST_FIRE_ROUNDS (24),
 * MTEST_FIRE_MIGRATIONS (300, directed ones included), MTEST_SEED.
 */
#include <errno.h>
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#include "mtest.h"

#define MAXW 64
#define MAXN 65536       /* ints of data in one message, at most */
#define MAXLEN (MAXN + 16)
#define MAGIC 0x5eed1e55

enum {
    T_INIT = 1,
    T_DATA = 10,   /* recv, nrecv, trecv, probe */
    T_PDATA = 11,  /* psend / precv */
    T_FDATA = 12,  /* 12..15: the recvf matcher's */
    T_ANY = 16,    /* recv from any task */
    T_MCAST = 20,
    T_HDR = 30,
    T_PART = 31,
    T_BCAST = 40,
    T_RED = 41,
    T_FINRED = 42,
    T_REQ = 50,    /* worker -> driver */
    T_GO = 51,     /* driver or a mover -> worker */
    T_MDONE = 52,  /* mover -> driver */
    T_DONE = 60,   /* worker -> master */
    T_RESULT = 61, /* group root -> master */
    T_DRIVER = 62, /* driver -> master */
    T_EXIT = 63,   /* master -> workers */
    T_GONE = 64,   /* PvmTaskExit notifications to the master */
};

enum { CH_P2P = 1, CH_MCAST, CH_HDR, CH_PART, CH_BCAST };
enum { K_SLEEP = 1, K_RECV, K_MIDPROTO, K_INBARRIER, K_ACK, K_FIN };
enum { V_RECV, V_NRECV, V_TRECV, V_PROBE, V_PRECV, V_RECVF, V_ANY, NVARIANTS };

static const char *const variant_name[] = {"recv", "nrecv", "trecv", "probe", "precv", "recvf", "any"};

#define GROUP "fire"

/* ------------------------------------------------------------ shared setup */

struct setup {
    int mig;    /* 1: the driver migrates */
    int w;      /* workers */
    int rounds;
    int total;  /* migrations in all */
    unsigned seed;
    int driver;
    int master;
    int tids[MAXW];
};

static void send_setup(int to, const struct setup *s)
{
    int v[7] = {s->mig, s->w, s->rounds, s->total, (int)s->seed, s->driver, s->master};
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, 7, 1);
    pvm_pkint((int *)s->tids, s->w, 1);
    pvm_send(to, T_INIT);
}

static void recv_setup(struct setup *s)
{
    int v[7];
    pvm_recv(pvm_parent(), T_INIT);
    pvm_upkint(v, 7, 1);
    s->mig = v[0];
    s->w = v[1];
    s->rounds = v[2];
    s->total = v[3];
    s->seed = (unsigned)v[4];
    s->driver = v[5];
    s->master = v[6];
    pvm_upkint(s->tids, s->w, 1);
}

/* The schedule of directed events: every task computes it the same way. */
static int sleep_worker(int r, int w) { return (r * 3 + 1) % w; }
static int recv_worker(int r, int w) { return (r * 5 + 2) % w; }
static int proto_dst(int i, int w) { return (i + 4) % w; }
static int proto_src(int i, int w) { return (i - 4 + w) % w; }
static int midproto_sender(int r, int w) { return r % 3 == 1 ? (r * 7) % w : -1; }
static int barrier_gate(int r, int w) { return r % 4 == 2 ? r % w : -1; }
static int mcaster(int r, int k, int w) { return k == 0 ? r % w : (r + 5) % w; }
static int bcaster(int r, int w) { return (r * 11 + 3) % w; }
#define GATE_MOVES 3

static int directed_migrations(int rounds, int w)
{
    int d = 0;
    for (int r = 0; r < rounds; r++) {
        d += 2; /* the sleeping and the receiving worker */
        if (midproto_sender(r, w) >= 0)
            d += 2;
        if (barrier_gate(r, w) >= 0)
            d += GATE_MOVES < w - 1 ? GATE_MOVES : w - 1;
    }
    return d;
}

/* ------------------------------------------------------------ messages */

/* Layout: MAGIC chan src dst seq round n data[n] cksum (ints). */
static int make_msg(int *m, int chan, int src, int dst, int seq, int round, int n)
{
    m[0] = MAGIC;
    m[1] = chan;
    m[2] = src;
    m[3] = dst;
    m[4] = seq;
    m[5] = round;
    m[6] = n;
    uint64_t key = ((uint64_t)chan << 56) ^ ((uint64_t)src << 44) ^ ((uint64_t)dst << 32) ^
                   ((uint64_t)seq << 8) ^ (uint64_t)round;
    for (int j = 0; j < n; j++)
        m[7 + j] = (int)(mt_mix(key + (uint64_t)j) & 0x7fffffff);
    m[7 + n] = (int)(uint32_t)mt_hash(0, m, (size_t)(7 + n) * sizeof(int));
    return 8 + n;
}

/* Message length for (chan, src, dst, seq, round): mostly small, now and
 * then 256 KB, so that big messages are queued when tasks move. */
static int msg_n(int chan, int src, int dst, int seq, int round)
{
    uint64_t h = mt_mix(((uint64_t)chan << 48) ^ ((uint64_t)src << 36) ^ ((uint64_t)dst << 24) ^
                        ((uint64_t)seq << 8) ^ (uint64_t)round);
    if (h % 23 == 0)
        return MAXN;
    return 1 + (int)((h >> 8) % 2000);
}

/* Checks one received message; returns its checksum (for the digest). */
static uint32_t check_msg(const int *m, int len, int chan, int src, int dst, int seq, int round,
                          const char *how)
{
    if (len < 8 || m[0] != MAGIC || m[6] < 0 || m[6] > MAXN || len != 8 + m[6]) {
        MT_FAIL("%s: malformed message (len %d, magic %x, n %d) chan %d from %d, expected seq "
                "%d round %d",
                how, len, len > 0 ? (unsigned)m[0] : 0u, len > 6 ? m[6] : -1, chan, src, seq,
                round);
        return 0;
    }
    uint32_t ck = (uint32_t)mt_hash(0, m, (size_t)(7 + m[6]) * sizeof(int));
    if ((uint32_t)m[7 + m[6]] != ck)
        MT_FAIL("%s: checksum mismatch: chan %d src %d dst %d seq %d round %d n %d", how, m[1],
                m[2], m[3], m[4], m[5], m[6]);
    if (m[1] != chan || m[2] != src || m[3] != dst || m[4] != seq || m[5] != round)
        MT_FAIL("%s: got chan %d src %d dst %d seq %d round %d, expected chan %d src %d dst %d "
                "seq %d round %d (lost, duplicated or reordered)",
                how, m[1], m[2], m[3], m[4], m[5], chan, src, dst, seq, round);
    return ck;
}

/* Packs m in pieces of several types (ints, a string, a double). */
static void pack_msg(const int *m, int len)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint((int *)m, 7, 1);
    char label[32];
    snprintf(label, sizeof label, "seq %d", m[4]);
    pvm_pkstr(label);
    double d = m[4] * 0.5 + m[5];
    pvm_pkdouble(&d, 1, 1);
    pvm_pkint((int *)m + 7, len - 7, 1);
}

/* Unpacks what pack_msg packed from the active receive buffer. */
static int unpack_msg(int *m, const char *how)
{
    if (pvm_upkint(m, 7, 1) < 0)
        return 0;
    char label[32] = "";
    double d = -1;
    pvm_upkstr(label);
    pvm_upkdouble(&d, 1, 1);
    char want[32];
    snprintf(want, sizeof want, "seq %d", m[4]);
    if (strcmp(label, want) != 0 || d != m[4] * 0.5 + m[5])
        MT_FAIL("%s: string/double parts \"%s\" %g, expected \"%s\" %g", how, label, d, want,
                m[4] * 0.5 + m[5]);
    int n = m[6];
    if (n < 0 || n > MAXN) {
        MT_FAIL("%s: bad length %d", how, n);
        return 7;
    }
    pvm_upkint(m + 7, n + 1, 1);
    return 8 + n;
}

/* ------------------------------------------------------------ worker */

static struct setup S;
static int me;         /* ordinal */
static int mytid0;
static int *msgbuf;    /* MAXLEN ints */
static int *sendbuf;   /* MAXLEN ints */
static int seq_p2p_out[MAXW], seq_p2p_in[MAXW];
static int seq_mc_out, seq_mc_in[MAXW];
static int seq_hdr_out, seq_hdr_in;
static int seq_bc_out, seq_bc_in[MAXW];
static long received;
static uint64_t digest;

static void account(uint32_t ck)
{
    received++;
    digest = mt_mix(digest ^ ck);
}

/* Order-independent accounting (wildcard receives). */
static uint64_t digest_any;
static void account_any(uint32_t ck)
{
    received++;
    digest_any += mt_mix(ck);
}

static int variant(int r, int k, int dst) { return (r + 2 * k + dst) % NVARIANTS; }
static int burst(int src, int dst, int r) { return 1 + (int)(mt_mix((uint64_t)src * 1000003u + (uint64_t)dst * 1009u + (uint64_t)r) % 3); }

static int want_src_for_matcher;
static int matcher(int bufid, int tid, int tag)
{
    int bytes, mtag, mtid;
    (void)tag;
    if (pvm_bufinfo(bufid, &bytes, &mtag, &mtid) < 0)
        return 0;
    if (tid != -1 && mtid != tid)
        return 0;
    if (mtid != want_src_for_matcher)
        return 0;
    return mtag >= T_FDATA && mtag <= T_FDATA + 3;
}

static void check_still_me(const char *where)
{
    if (pvm_mytid() != mytid0)
        MT_FAIL("%s: pvm_mytid() is t%x, was t%x", where, pvm_mytid(), mytid0);
}

/* A receive that says so when it has waited long (STALL lines are no
 * failure: they tell what a hung run was waiting for; the test's time
 * limit ends it).  The plain pvm_recv is kept for its own variants. */
static int stall_s = 10;
static int recv_watch(int tid, int tag, int r, const char *what)
{
    struct timeval tv = {stall_s, 0};
    int bid, waited = 0;
    while ((bid = pvm_trecv(tid, tag, &tv)) == 0) {
        waited += stall_s;
        printf("STALL worker %d (t%x on node %d) round %d: %s: nothing from t%x with tag %d for "
               "%d s\n",
               me, mytid0, upvm_node_of(0), r, what, tid, tag, waited);
        fflush(stdout);
    }
    return bid;
}

static void recv_ints_watch(int tid, int tag, int *v, int n, int r, const char *what)
{
    if (recv_watch(tid, tag, r, what) > 0)
        pvm_upkint(v, n, 1);
}

static void request(int kind, int round, int aux)
{
    int v[4] = {kind, me, round, aux};
    mt_send_ints(S.driver, T_REQ, v, 4);
}

static void p2p_send(int r)
{
    for (int k = 1; k <= 3; k++) {
        int dst = (me + k) % S.w;
        int v = variant(r, k, dst);
        int b = burst(me, dst, r);
        for (int j = 0; j < b; j++) {
            int seq = seq_p2p_out[dst]++;
            int len = make_msg(sendbuf, CH_P2P, me, dst, seq, r, msg_n(CH_P2P, me, dst, seq, r));
            int rc;
            switch (v) {
            case V_PRECV:
                rc = pvm_psend(S.tids[dst], T_PDATA, sendbuf, len, PVM_INT);
                break;
            case V_RECVF:
                pack_msg(sendbuf, len);
                rc = pvm_send(S.tids[dst], T_FDATA + seq % 4);
                break;
            case V_ANY:
                pack_msg(sendbuf, len);
                rc = pvm_send(S.tids[dst], T_ANY);
                break;
            default:
                pack_msg(sendbuf, len);
                rc = pvm_send(S.tids[dst], T_DATA);
                break;
            }
            if (rc < 0)
                MT_FAIL("round %d: send to worker %d (%s): %d", r, dst, variant_name[v], rc);
        }
    }
}

static void p2p_recv_one(int r, int src, int v)
{
    int stid = S.tids[src];
    char how[64];
    snprintf(how, sizeof how, "round %d p2p from %d by %s", r, src, variant_name[v]);
    int bid = 0;
    struct timeval tv = {0, 3000};
    switch (v) {
    case V_RECV:
        bid = pvm_recv(stid, T_DATA);
        break;
    case V_NRECV:
        while ((bid = pvm_nrecv(stid, T_DATA)) == 0)
            usleep(100);
        break;
    case V_TRECV:
        while ((bid = pvm_trecv(stid, T_DATA, &tv)) == 0)
            ;
        break;
    case V_PROBE: {
        int pb;
        while ((pb = pvm_probe(stid, T_DATA)) == 0)
            usleep(150);
        int bytes = -1, tag = -1, tid = -1;
        if (pb < 0 || pvm_bufinfo(pb, &bytes, &tag, &tid) < 0 || tag != T_DATA || tid != stid)
            MT_FAIL("%s: probe gave %d (tag %d from t%x)", how, pb, tag, tid);
        bid = pvm_recv(stid, T_DATA);
        int bytes2 = -2, tag2, tid2;
        pvm_bufinfo(bid, &bytes2, &tag2, &tid2);
        if (bytes2 != bytes)
            MT_FAIL("%s: probed %d bytes, received %d", how, bytes, bytes2);
        break;
    }
    case V_PRECV: {
        int atid = -1, atag = -1, alen = -1;
        int rc = pvm_precv(stid, T_PDATA, msgbuf, MAXLEN, PVM_INT, &atid, &atag, &alen);
        if (rc < 0 || atid != stid || atag != T_PDATA) {
            MT_FAIL("%s: pvm_precv %d, from t%x tag %d", how, rc, atid, atag);
            return;
        }
        int seq = seq_p2p_in[src]++; /* (alen: bytes, as in PVM) */
        account(check_msg(msgbuf, alen / (int)sizeof(int), CH_P2P, src, me, seq, r, how));
        return;
    }
    case V_RECVF: {
        want_src_for_matcher = stid;
        int (*old)(int, int, int);
        __typeof__(pvm_recvf(NULL)) prev = pvm_recvf(matcher);
        memcpy(&old, &prev, sizeof old);
        bid = pvm_recv(stid, T_FDATA);
        pvm_recvf(old);
        int bytes, tag = -1, tid;
        pvm_bufinfo(bid, &bytes, &tag, &tid);
        if (tag != T_FDATA + seq_p2p_in[src] % 4)
            MT_FAIL("%s: tag %d, expected %d", how, tag, T_FDATA + seq_p2p_in[src] % 4);
        break;
    }
    default:
        break;
    }
    if (bid <= 0) {
        MT_FAIL("%s: receive returned %d", how, bid);
        return;
    }
    int len = unpack_msg(msgbuf, how);
    int seq = seq_p2p_in[src]++;
    account(check_msg(msgbuf, len, CH_P2P, src, me, seq, r, how));
}

static void p2p_recv(int r)
{
    int any_expected = 0;
    for (int k = 1; k <= 3; k++) {
        int src = (me - k + S.w) % S.w;
        int v = variant(r, k, me);
        if (v == V_ANY) {
            any_expected += burst(src, me, r);
            continue;
        }
        for (int j = burst(src, me, r); j > 0; j--)
            p2p_recv_one(r, src, v);
    }
    for (; any_expected > 0; any_expected--) {
        char how[64];
        snprintf(how, sizeof how, "round %d p2p from any", r);
        int bid = recv_watch(-1, T_ANY, r, "p2p from any");
        int bytes, tag, tid = -1;
        if (bid <= 0 || pvm_bufinfo(bid, &bytes, &tag, &tid) < 0) {
            MT_FAIL("%s: recv %d", how, bid);
            continue;
        }
        int src = -1;
        for (int k = 1; k <= 3; k++)
            if (S.tids[(me - k + S.w) % S.w] == tid && variant(r, k, me) == V_ANY)
                src = (me - k + S.w) % S.w;
        if (src < 0) {
            MT_FAIL("%s: a T_ANY message from t%x, which was not to send one", how, tid);
            continue;
        }
        int len = unpack_msg(msgbuf, how);
        int seq = seq_p2p_in[src]++;
        account_any(check_msg(msgbuf, len, CH_P2P, src, me, seq, r, how));
    }
}

/* Sleeps until the driver has moved this task (mig) or once (nomig), then
 * takes the driver's go, which names the node this task must be on. */
static void directed_sleep(int r)
{
    int before = upvm_node_of(0);
    request(K_SLEEP, r, before);
    if (r == 2) {
        sleep(1); /* once in a run: the libc call itself */
    }
    long naps = 0;
    do {
        if (naps % 2) {
            struct timespec ts = {0, 700 * 1000};
            nanosleep(&ts, NULL);
        } else {
            usleep(1000);
        }
        naps++;
    } while (S.mig && upvm_node_of(0) == before && naps < 10000);
    int go[2] = {-1, -1};
    recv_ints_watch(-1, T_GO, go, 2, r, "the go after a directed sleep");
    if (S.mig) {
        if (upvm_node_of(0) == before)
            MT_FAIL("round %d: still on node %d after sleeping %ld times; the driver moved me "
                    "to node %d",
                    r, before, naps, go[0]);
        else if (upvm_node_of(0) != go[0])
            MT_FAIL("round %d: woke on node %d, the driver moved me to node %d", r,
                    upvm_node_of(0), go[0]);
    }
    check_still_me("after a directed sleep");
    request(K_ACK, r, 0);
}

static void directed_recv(int r)
{
    int before = upvm_node_of(0);
    request(K_RECV, r, before);
    int go[2] = {-1, -1};
    int bid = 0;
    struct timeval tv = {0, 2000};
    switch (r % 3) {
    case 0:
        bid = pvm_recv(-1, T_GO);
        break;
    case 1: {
        uint64_t t0 = upvm_now_ns(), said = 0;
        while ((bid = pvm_trecv(-1, T_GO, &tv)) == 0)
            if ((upvm_now_ns() - t0) / 1000000000u >= (uint64_t)stall_s * (said + 1))
                printf("STALL worker %d (t%x on node %d) round %d: no go (pvm_trecv) for %d s\n",
                       me, mytid0, upvm_node_of(0), r, stall_s * (int)++said),
                    fflush(stdout);
        break;
    }
    default: {
        uint64_t t0 = upvm_now_ns(), said = 0;
        while (pvm_probe(-1, T_GO) == 0) {
            usleep(500);
            if ((upvm_now_ns() - t0) / 1000000000u >= (uint64_t)stall_s * (said + 1))
                printf("STALL worker %d (t%x on node %d) round %d: no go (pvm_probe) for %d s\n",
                       me, mytid0, upvm_node_of(0), r, stall_s * (int)++said),
                    fflush(stdout);
        }
        bid = pvm_recv(-1, T_GO);
        break;
    }
    }
    if (bid <= 0)
        MT_FAIL("round %d: the driver's go: %d", r, bid);
    pvm_upkint(go, 2, 1);
    if (S.mig && upvm_node_of(0) != go[0])
        MT_FAIL("round %d: after a receive during which the driver moved me from node %d to "
                "node %d, I am on node %d",
                r, before, go[0], upvm_node_of(0));
    check_still_me("after a directed receive");
    request(K_ACK, r, 0);
}

static void mcast_round(int r)
{
    for (int k = 0; k < 2; k++) {
        int m = mcaster(r, k, S.w);
        if (m == me) {
            int others[MAXW], n = 0;
            for (int i = 0; i < S.w; i++)
                if (i != me)
                    others[n++] = S.tids[i];
            int seq = seq_mc_out++;
            int len = make_msg(sendbuf, CH_MCAST, me, -1, seq, r, msg_n(CH_MCAST, me, 0, seq, r));
            pack_msg(sendbuf, len);
            int rc = pvm_mcast(others, n, T_MCAST);
            if (rc < 0)
                MT_FAIL("round %d: pvm_mcast: %d", r, rc);
        }
    }
    for (int k = 0; k < 2; k++) {
        int m = mcaster(r, k, S.w);
        if (m == me || (k == 1 && m == mcaster(r, 0, S.w)))
            continue;
        char how[64];
        snprintf(how, sizeof how, "round %d mcast from %d", r, m);
        if (recv_watch(S.tids[m], T_MCAST, r, "mcast") <= 0) {
            MT_FAIL("%s: recv failed", how);
            continue;
        }
        int len = unpack_msg(msgbuf, how);
        int seq = seq_mc_in[m]++;
        account(check_msg(msgbuf, len, CH_MCAST, m, -1, seq, r, how));
    }
}

static void proto_round(int r)
{
    /* send: header, then the parts (half of them, then a pause, if this is
     * the round's paused sender) */
    int dst = proto_dst(me, S.w);
    int nparts = 3 + (int)(mt_mix((uint64_t)me * 31u + (uint64_t)r) % 8);
    int hseq = seq_hdr_out++;
    uint32_t total = 0;
    for (int p = 0; p < nparts; p++) {
        int len = make_msg(sendbuf, CH_PART, me, dst, p, r, msg_n(CH_PART, me, dst, p + 100 * hseq, r));
        total = total * 31u + (uint32_t)sendbuf[len - 1];
    }
    int hdr[8] = {MAGIC, CH_HDR, me, dst, hseq, r, nparts, (int)total};
    mt_send_ints(S.tids[dst], T_HDR, hdr, 8);
    int pause_at = midproto_sender(r, S.w) == me ? nparts / 2 : -1;
    for (int p = 0; p < nparts; p++) {
        if (p == pause_at) {
            request(K_MIDPROTO, r, dst);
            int go[2];
            recv_ints_watch(-1, T_GO, go, 2, r, "the go half way through a protocol");
        }
        int len = make_msg(sendbuf, CH_PART, me, dst, p, r, msg_n(CH_PART, me, dst, p + 100 * hseq, r));
        pack_msg(sendbuf, len);
        if (pvm_send(S.tids[dst], T_PART) < 0)
            MT_FAIL("round %d: send part %d", r, p);
    }
    /* receive from the worker four places back */
    int src = proto_src(me, S.w);
    char how[64];
    snprintf(how, sizeof how, "round %d protocol from %d", r, src);
    int h[8] = {0};
    recv_ints_watch(S.tids[src], T_HDR, h, 8, r, "a protocol's header");
    int want_seq = seq_hdr_in++;
    if (h[0] != MAGIC || h[1] != CH_HDR || h[2] != src || h[3] != me || h[4] != want_seq ||
        h[5] != r || h[6] < 3 || h[6] > 10) {
        MT_FAIL("%s: bad header %x %d %d %d seq %d round %d parts %d (expected seq %d)", how,
                (unsigned)h[0], h[1], h[2], h[3], h[4], h[5], h[6], want_seq);
        return;
    }
    uint32_t got_total = 0;
    for (int p = 0; p < h[6]; p++) {
        if (recv_watch(S.tids[src], T_PART, r, "a protocol's part") <= 0) {
            MT_FAIL("%s: part %d: recv failed", how, p);
            return;
        }
        int len = unpack_msg(msgbuf, how);
        uint32_t ck = check_msg(msgbuf, len, CH_PART, src, me, p, r, how);
        got_total = got_total * 31u + ck;
        account(ck);
    }
    if (got_total != (uint32_t)h[7])
        MT_FAIL("%s: the parts' checksum %08x, the header says %08x", how, got_total,
                (uint32_t)h[7]);
}

static void bcast_round(int r)
{
    int b = bcaster(r, S.w);
    if (b == me) {
        int seq = seq_bc_out++;
        int len = make_msg(sendbuf, CH_BCAST, me, -1, seq, r, msg_n(CH_BCAST, me, 0, seq, r));
        pack_msg(sendbuf, len);
        int rc = pvm_bcast(GROUP, T_BCAST);
        if (rc < 0)
            MT_FAIL("round %d: pvm_bcast: %d", r, rc);
        return;
    }
    char how[64];
    snprintf(how, sizeof how, "round %d bcast from %d", r, b);
    if (recv_watch(-1, T_BCAST, r, "bcast") <= 0) {
        MT_FAIL("%s: recv failed", how);
        return;
    }
    int bytes, tag, tid;
    pvm_bufinfo(pvm_getrbuf(), &bytes, &tag, &tid);
    if (tid != S.tids[b])
        MT_FAIL("%s: came from t%x, not t%x", how, tid, S.tids[b]);
    int len = unpack_msg(msgbuf, how);
    int seq = seq_bc_in[b]++;
    account(check_msg(msgbuf, len, CH_BCAST, b, -1, seq, r, how));
}

static long red_total[3]; /* at the group's root: the rounds' sums */

/* pvm_reduce(PvmSum) of three longs to instance 0; true at the root,
 * where v then holds the sums. */
static int reduce(int r, int tag, long v[3])
{
    int rc = pvm_reduce(PvmSum, v, 3, PVM_LONG, tag, GROUP, 0);
    if (rc < 0)
        MT_FAIL("round %d: pvm_reduce: %d", r, rc);
    return pvm_getinst(GROUP, pvm_mytid()) == 0;
}

static void reduce_round(int r)
{
    long v[3] = {me + 1, (long)(digest & 0xffff), received};
    if (reduce(r, T_RED, v))
        for (int i = 0; i < 3; i++)
            red_total[i] += v[i] * (i == 0 ? r + 1 : 1);
}

static void barrier_round(int r)
{
    int g = barrier_gate(r, S.w);
    if (g < 0) {
        int rc = pvm_barrier(GROUP, S.w);
        if (rc < 0)
            MT_FAIL("round %d: pvm_barrier: %d", r, rc);
        return;
    }
    if (g == me) {
        int go[2];
        recv_ints_watch(-1, T_GO, go, 2, r, "the go of a held barrier"); /* some of the others moved */
    } else {
        request(K_INBARRIER, r, g);
    }
    int rc = pvm_barrier(GROUP, S.w);
    if (rc < 0)
        MT_FAIL("round %d: the held pvm_barrier: %d", r, rc);
}

static int worker(void)
{
    mt_role = "worker";
    mytid0 = pvm_mytid();
    stall_s = mt_env_int("MTEST_STALL_S", 10);
    if (stall_s < 1)
        stall_s = 1;
    recv_setup(&S);
    me = -1;
    for (int i = 0; i < S.w; i++)
        if (S.tids[i] == mytid0)
            me = i;
    if (me < 0) {
        MT_FAIL("not among the workers");
        return 1;
    }
    int *sib, nsib = pvm_siblings(&sib);
    MT_CHECK_EQ(nsib, S.w);
    msgbuf = malloc(MAXLEN * sizeof(int));
    sendbuf = malloc(MAXLEN * sizeof(int));
    if (pvm_joingroup(GROUP) < 0)
        MT_FAIL("pvm_joingroup");
    pvm_barrier(GROUP, S.w);
    for (int r = 0; r < S.rounds; r++) {
        p2p_send(r);
        p2p_recv(r);
        if (sleep_worker(r, S.w) == me)
            directed_sleep(r);
        mcast_round(r);
        if (recv_worker(r, S.w) == me)
            directed_recv(r);
        proto_round(r);
        bcast_round(r);
        reduce_round(r);
        barrier_round(r);
        check_still_me("end of round");
    }
    /* the end: the group's sums, each worker's digest to the master */
    uint64_t all = digest ^ mt_mix(digest_any);
    long fin[3] = {(long)(all & 0xffffff), received, mt_failures};
    if (reduce(S.rounds, T_FINRED, fin)) {
        long res[6] = {red_total[0], red_total[1], red_total[2], fin[0], fin[1], fin[2]};
        pvm_initsend(PvmDataDefault);
        pvm_pklong(res, 6, 1);
        pvm_send(S.master, T_RESULT);
    }
    int nfail = mt_failures;
    pvm_initsend(PvmDataDefault);
    int v[5] = {me, (int)received, nfail, (int)(uint32_t)(all >> 32), (int)(uint32_t)all};
    pvm_pkint(v, 5, 1);
    pvm_send(S.master, T_DONE);
    request(K_FIN, S.rounds, 0);
    pvm_recv(S.master, T_EXIT);
    pvm_lvgroup(GROUP);
    pvm_exit();
    return nfail ? 1 : 0;
}

/* ------------------------------------------------------------ driver */

/*
 * The driver answers the workers' requests and never blocks in a
 * migration itself: each migration is done by a short-lived "mover", a
 * thread-mode task of the driver's copy of the program (so it shares the
 * driver's globals below), which calls upvm_migrate, records the result,
 * sends the worker its go if it waits for one, and tells the driver.  A
 * migration may wait as long as its task waits for an answer from another
 * node (a barrier away from node 0 moves after the barrier:
 * docs/migration.md), and that barrier may wait for a worker that waits
 * for the driver: the driver must go on meanwhile.
 */

struct dstats {
    int ok, moved, refused, directed, random, random_late, node_wrong;
};

struct job {
    int n;          /* moves, done in order */
    int ord[2];
    int node[2];    /* -1: any node but the one it is on */
    const char *why;
    int directed;
    int go_to;      /* a worker to send T_GO {its node, kind} to after, or -1 */
    int avoid;      /* K_SLEEP, K_RECV: the node the worker waits to leave (a
                     * random move since may have taken it elsewhere) */
    int go_kind;
    int random;
    unsigned ticket[2]; /* moves of one worker happen in the order asked */
    /* while it runs: */
    int active, cur_i, cur_ord, cur_node, stall_reported;
    uint64_t since_ns;
};

/* Shared by the driver and its movers (one copy of the program, one node,
 * one scheduler thread: no locks). */
static int where[MAXW];       /* the truth: only the movers move workers */
static unsigned next_ticket[MAXW], serving[MAXW];
static upvm_waitq_t moveq = UPVM_WAITQ_INITIALIZER(moveq, "a worker being moved");
static struct dstats st;
static struct mt_rng rng;
static int nodes_n;
static int driver_tid;
static int late_phase;        /* every worker has finished its rounds */

/* A node other than cur, and than avoid when there is a third. */
static int pick_other_node(int cur, int avoid)
{
    int n;
    do
        n = (cur + 1 + mt_below(&rng, nodes_n - 1)) % nodes_n;
    while (n == avoid && avoid != cur && nodes_n > 2);
    return n;
}


/* MTEST_LAZY=1: every move is lazy (upvm_migrate_lazy).  A task whose
 * memory is still arriving from its last lazy move is refused another
 * (PvmNotImpl, "still arriving"): asked again until its pages are all
 * there (20 s at most). */
static int move_it(int tid, int node)
{
    static int lazy = -1;
    if (lazy < 0)
        lazy = getenv("MTEST_LAZY") && atoi(getenv("MTEST_LAZY")) > 0;
    if (!lazy)
        return upvm_migrate(tid, node);
    for (int tries = 0;; tries++) {
        int rc = upvm_migrate_lazy(tid, node);
        if (rc != PvmNotImpl || !strstr(upvm_migrate_error(), "still arriving") || tries > 20000)
            return rc;
        (void)upvm_sleep_ns(1000000);
    }
}

static void move_one(int ord, int node, struct job *j)
{
    int tid = S.tids[ord];
    unsigned ticket = j->ticket[j->cur_i];
    while (serving[ord] != ticket)
        upvm_wait(&moveq, -1);
    if (node < 0)
        node = pick_other_node(where[ord], j->go_kind == K_SLEEP || j->go_kind == K_RECV
                                               ? j->avoid : -1);
    j->cur_ord = ord;
    j->cur_node = node;
    j->since_ns = upvm_now_ns();
    if (j->random)
        st.random++, st.random_late += late_phase;
    if (j->directed)
        st.directed++;
    if (S.mig) {
        int from = upvm_node_of(tid);
        if (from != where[ord]) {
            st.node_wrong++;
            MT_FAIL("before moving t%x [worker %d, %s]: upvm_node_of says node %d, but it is on "
                    "node %d (where it was last moved)",
                    tid, ord, j->why, from, where[ord]);
        }
        int rc = move_it(tid, node);
        if (rc != 0) {
            st.refused++;
            MT_FAIL("upvm_migrate(t%x [worker %d, %s], %d) from node %d: %d: %s", tid, ord, j->why,
                    node, where[ord], rc, upvm_migrate_error());
        } else {
            st.ok++;
            st.moved += where[ord] != node;
            where[ord] = node;
            if (upvm_migrate_error()[0] != '\0')
                MT_FAIL("after a successful migration upvm_migrate_error() says \"%s\"",
                        upvm_migrate_error());
            int now = upvm_node_of(tid);
            if (now != node) {
                st.node_wrong++;
                MT_FAIL("upvm_migrate(t%x, %d) returned 0 (%s) but upvm_node_of says node %d",
                        tid, node, j->why, now);
            }
        }
    }
    serving[ord]++;
    upvm_wake_all(&moveq);
}

static void mover(int ordinal, void *arg)
{
    (void)ordinal;
    struct job *j = arg;
    for (int i = 0; i < j->n; i++) {
        j->cur_i = i;
        move_one(j->ord[i], j->node[i], j);
    }
    if (j->go_to >= 0) {
        int go[2] = {where[j->go_to], j->go_kind};
        mt_send_ints(S.tids[j->go_to], T_GO, go, 2);
    }
    int done[2] = {j->random, j->go_kind};
    j->active = 0;
    mt_send_ints(driver_tid, T_MDONE, done, 2);
    pvm_exit();
}

/* (a ring, not malloc: a thread-mode task has a heap of its own, and may
 * not free what its spawner allocated) */
static struct job jobs[256];
static unsigned njobs;

static void start_job(struct job j, int *inflight)
{
    struct job *p = &jobs[njobs++ % 256]; /* at most ~10 run at once */
    *p = j;
    for (int i = 0; i < p->n; i++)
        p->ticket[i] = next_ticket[p->ord[i]]++;
    p->active = 1;
    p->since_ns = upvm_now_ns();
    p->cur_ord = -1;
    int tid;
    if (upvm_task_spawn_func(mover, p, 1, &tid) != 1) {
        MT_FAIL("upvm_task_spawn_func (a mover)");
        return;
    }
    (*inflight)++;
}

static int driver(void)
{
    mt_role = "driver";
    recv_setup(&S);
    stall_s = mt_env_int("MTEST_STALL_S", 10);
    if (stall_s < 1)
        stall_s = 1;
    driver_tid = pvm_mytid();
    nodes_n = upvm_nodes();
    rng.s = S.seed;
    int directed = directed_migrations(S.rounds, S.w);
    int random_total = S.total > directed ? S.total - directed : 0;
    for (int i = 0; i < S.w; i++)
        where[i] = upvm_node_of(S.tids[i]);
    int fin = 0, inflight = 0, random_started = 0, random_inflight = 0;
    int busy[MAXW] = {0};
    int inbarrier[MAXW], ninbarrier = 0, barrier_round_seen = -1;
    int gate = -1, gate_left = 0; /* a held barrier: its gate, moves not done */
    uint64_t gate_deadline = 0;
    while (fin < S.w || random_started < random_total || inflight > 0) {
        int can_random = random_started < random_total && !random_inflight;
        uint64_t now = upvm_now_ns();
        int64_t wait_us = -1;
        if (can_random)
            wait_us = fin < S.w ? 1000 : 0;
        if (gate >= 0) {
            int64_t g = gate_deadline > now ? (int64_t)(gate_deadline - now) / 1000 : 0;
            if (wait_us < 0 || g < wait_us)
                wait_us = g;
        }
        if (inflight > 0 && (wait_us < 0 || wait_us > 1000000))
            wait_us = 1000000; /* to look for stalled migrations */
        int bid;
        if (wait_us < 0) {
            bid = pvm_recv(-1, -1);
        } else {
            struct timeval tv = {wait_us / 1000000, wait_us % 1000000};
            bid = pvm_trecv(-1, -1, &tv);
        }
        if (bid < 0) {
            MT_FAIL("receiving: %d", bid);
            break;
        }
        if (gate >= 0 && (gate_left == 0 || upvm_now_ns() >= gate_deadline)) {
            /* the moves of workers held in the barrier are done, or wait
             * for the barrier itself (away from node 0): let it go */
            int go[2] = {0, K_INBARRIER};
            mt_send_ints(S.tids[gate], T_GO, go, 2);
            gate = -1;
        }
        for (int i = 0; i < 256 && inflight > 0; i++) {
            struct job *j = &jobs[i];
            if (j->active && !j->stall_reported && j->cur_ord >= 0 &&
                upvm_now_ns() - j->since_ns > (uint64_t)stall_s * 1000000000ull) {
                j->stall_reported = 1;
                printf("STALL driver: upvm_migrate(t%x [worker %d, %s], %d) has not returned for "
                       "%d s\n",
                       S.tids[j->cur_ord], j->cur_ord, j->why, j->cur_node, stall_s);
                fflush(stdout);
            }
        }
        if (bid == 0) {
            if (can_random) {
                int cand[MAXW], nc = 0;
                for (int i = 0; i < S.w; i++)
                    if (!busy[i] && serving[i] == next_ticket[i]) /* not being moved */
                        cand[nc++] = i;
                if (nc > 0) {
                    int ord = cand[mt_below(&rng, nc)];
                    struct job j = {.n = 1, .ord = {ord}, .node = {mt_below(&rng, nodes_n)},
                                    .why = "random", .go_to = -1, .random = 1};
                    start_job(j, &inflight);
                    random_started++;
                    random_inflight = 1;
                }
            }
            continue;
        }
        int bytes, tag, src;
        pvm_bufinfo(bid, &bytes, &tag, &src);
        if (tag == T_MDONE) {
            int done[2];
            pvm_upkint(done, 2, 1);
            inflight--;
            if (done[0])
                random_inflight = 0;
            if (done[1] == K_INBARRIER && gate_left > 0)
                gate_left--;
            if (gate >= 0 && gate_left == 0) {
                int go[2] = {0, K_INBARRIER};
                mt_send_ints(S.tids[gate], T_GO, go, 2);
                gate = -1;
            }
            continue;
        }
        if (tag != T_REQ) {
            MT_FAIL("an unexpected message (tag %d from t%x)", tag, src);
            continue;
        }
        int q[4];
        pvm_upkint(q, 4, 1);
        int kind = q[0], ord = q[1], r = q[2], aux = q[3];
        if (ord < 0 || ord >= S.w) {
            MT_FAIL("a request from worker %d", ord);
            continue;
        }
        switch (kind) {
        case K_SLEEP:
        case K_RECV: {
            /* (aux, the node the worker saw when it asked, may be older
             * than a random move since) */
            busy[ord] = 1;
            struct job j = {.n = 1, .ord = {ord}, .node = {-1},
                            .why = kind == K_SLEEP ? "sleeping" : "in a receive", .directed = 1,
                            .go_to = ord, .go_kind = kind, .avoid = aux};
            start_job(j, &inflight);
            break;
        }
        case K_ACK:
            busy[ord] = 0;
            break;
        case K_MIDPROTO: {
            /* the sender waits for our go half way through its parts; the
             * receiver waits for the next part.  (A receiver checking its
             * own node after a directed move is left alone: the sender
             * moves twice instead.) */
            int rcv = aux;
            struct job j = {.n = 2, .ord = {rcv, ord}, .node = {-1, -1},
                            .why = "mid-protocol receiver, then sender", .directed = 1,
                            .go_to = ord, .go_kind = kind};
            if (busy[rcv])
                j.ord[0] = ord, j.why = "mid-protocol sender, twice";
            start_job(j, &inflight);
            break;
        }
        case K_INBARRIER: {
            if (barrier_round_seen != r) {
                barrier_round_seen = r;
                ninbarrier = 0;
            }
            inbarrier[ninbarrier++] = ord;
            if (ninbarrier == S.w - 1) {
                /* all but the gate are in (or entering) the barrier */
                int moves = GATE_MOVES < S.w - 1 ? GATE_MOVES : S.w - 1;
                for (int m = 0; m < moves; m++) {
                    int pick = m + mt_below(&rng, ninbarrier - m);
                    int o = inbarrier[pick];
                    inbarrier[pick] = inbarrier[m];
                    inbarrier[m] = o;
                    if (busy[o]) /* its ack came before: messages keep their order */
                        MT_FAIL("worker %d in the barrier is busy", o);
                    struct job j = {.n = 1, .ord = {o}, .node = {-1}, .why = "in a barrier",
                                    .directed = 1, .go_to = -1, .go_kind = K_INBARRIER};
                    start_job(j, &inflight);
                }
                gate = aux;
                gate_left = moves;
                gate_deadline = upvm_now_ns() + 200 * 1000 * 1000ull;
            }
            break;
        }
        case K_FIN:
            fin++;
            late_phase = fin == S.w;
            break;
        default:
            MT_FAIL("unknown request %d from worker %d", kind, ord);
        }
    }
    int rep[8] = {st.ok, st.moved, st.refused, st.directed, st.random, st.random_late,
                  st.node_wrong, mt_failures};
    mt_send_ints(S.master, T_DRIVER, rep, 8);
    pvm_exit();
    return mt_failures ? 1 : 0;
}

/* ------------------------------------------------------------ master */

static int master(int argc, char **argv)
{
    mt_role = "master";
    memset(&S, 0, sizeof S);
    S.mig = !(argc > 1 && strcmp(argv[1], "nomig") == 0);
    S.w = mt_env_int("MTEST_FIRE_WORKERS", 12);
    S.rounds = mt_env_int("MTEST_FIRE_ROUNDS", 24);
    S.total = mt_env_int("MTEST_FIRE_MIGRATIONS", 300);
    S.seed = (unsigned)mt_env_int("MTEST_SEED", (int)(time(NULL) % 1000000));
    S.master = pvm_mytid();
    if (S.w < 5 || S.w > MAXW) {
        printf("FAIL: MTEST_FIRE_WORKERS must be 5..%d\n", MAXW);
        return 2;
    }
    int nodes = upvm_nodes();
    printf("fire: %s, %d workers, %d rounds, %d nodes, seed %u (rerun with MTEST_SEED=%u)\n",
           S.mig ? "migrating" : "not migrating", S.w, S.rounds, nodes, S.seed, S.seed);
    fflush(stdout);
    if (nodes < 2) {
        printf("FAIL: upvm_nodes() is %d: run with UPVM_NODES=3\n", nodes);
        return 1;
    }
    char *wargs[] = {"worker", NULL};
    int n = pvm_spawn(argv[0], wargs, PvmTaskDefault, "", S.w, S.tids);
    if (n != S.w) {
        printf("FAIL: spawned %d workers of %d\n", n, S.w);
        return 1;
    }
    char *dargs[] = {"driver", NULL};
    if (pvm_spawn(argv[0], dargs, PvmTaskHost, "node1", 1, &S.driver) != 1) {
        printf("FAIL: could not spawn the driver on node1\n");
        return 1;
    }
    int watch[MAXW + 1];
    memcpy(watch, S.tids, sizeof(int) * (size_t)S.w);
    watch[S.w] = S.driver;
    pvm_notify(PvmTaskExit, T_GONE, S.w + 1, watch);
    int per_node[64] = {0};
    for (int i = 0; i < S.w; i++) {
        int nd = upvm_node_of(S.tids[i]);
        if (nd >= 0 && nd < 64)
            per_node[nd]++;
    }
    printf("workers per node at the start:");
    for (int i = 0; i < nodes && i < 64; i++)
        printf(" %d", per_node[i]);
    printf("; the driver on node %d\n", upvm_node_of(S.driver));
    for (int i = 0; i < S.w; i++)
        send_setup(S.tids[i], &S);
    send_setup(S.driver, &S);

    int failed = 0;
    unsigned long digests[MAXW] = {0};
    int counts[MAXW] = {0}, got[MAXW] = {0};
    long res[6] = {0};
    int rep[8] = {0};
    int ndone = 0, have_result = 0, have_driver = 0, ngone = 0;
    /* the reports; a task that ends before its report was lost (a crash
     * of its node, notified): say so and end the job at once */
    while (ndone < S.w || !have_result || !have_driver) {
        int bid = pvm_recv(-1, -1);
        int bytes, tag, src;
        pvm_bufinfo(bid, &bytes, &tag, &src);
        if (tag == T_DONE) {
            int v[5];
            pvm_upkint(v, 5, 1);
            unsigned long d = (unsigned long)(uint32_t)v[3] << 32 | (uint32_t)v[4];
            if (v[0] < 0 || v[0] >= S.w || got[v[0]]++) {
                printf("FAIL: a result from worker %d\n", v[0]);
                failed = 1;
                continue;
            }
            ndone++;
            digests[v[0]] = d;
            counts[v[0]] = v[1];
            if (v[2])
                failed = 1;
        } else if (tag == T_RESULT) {
            pvm_upklong(res, 6, 1);
            have_result = 1;
        } else if (tag == T_DRIVER) {
            pvm_upkint(rep, 8, 1);
            have_driver = 1;
        } else if (tag == T_GONE) {
            int who = -1;
            pvm_upkint(&who, 1, 1);
            ngone++;
            int ord = -1;
            for (int i = 0; i < S.w; i++)
                if (S.tids[i] == who)
                    ord = i;
            if ((ord >= 0 && !got[ord]) || (who == S.driver && !have_driver)) {
                printf("FAIL: %s t%x ended before its report (its node crashed?): ending the job\n",
                       ord >= 0 ? "worker" : "the driver", who);
                fflush(stdout);
                for (int i = 0; i < S.w; i++)
                    pvm_kill(S.tids[i]);
                pvm_kill(S.driver);
                pvm_exit();
                return 1;
            }
        } else {
            printf("FAIL: an unexpected message (tag %d from t%x)\n", tag, src);
            failed = 1;
        }
    }
    for (int i = 0; i < S.w; i++)
        printf("RESULT worker %d: %d messages, digest %016lx\n", i, counts[i], digests[i]);
    printf("RESULT group sums over the rounds: %ld %ld %ld; at the end: %ld %ld\n", res[0],
           res[1], res[2], res[3], res[4]);
    if (res[5] != 0) {
        printf("FAIL: the workers counted %ld failed checks\n", res[5]);
        failed = 1;
    }
    printf("migrations: %d asked (%d directed, %d random, %d of them after the work), %d "
           "succeeded (%d changed node), %d refused, %d with a wrong upvm_node_of\n",
           rep[3] + rep[4], rep[3], rep[4], rep[5], rep[0], rep[1], rep[2], rep[6]);
    if (rep[7] || rep[2] || rep[6])
        failed = 1;
    if (S.mig && rep[0] < S.total) {
        printf("FAIL: %d migrations succeeded, %d were asked for\n", rep[0], S.total);
        failed = 1;
    }
    pvm_initsend(PvmDataDefault);
    for (int i = 0; i < S.w; i++)
        pvm_send(S.tids[i], T_EXIT);
    for (int i = ngone; i < S.w + 1; i++)
        pvm_recv(-1, T_GONE);
    printf("%s\n", failed ? "FAILED" : "OK");
    pvm_exit();
    return failed;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "worker") == 0)
        return worker();
    if (argc > 1 && strcmp(argv[1], "driver") == 0)
        return driver();
    return master(argc, argv);
}
