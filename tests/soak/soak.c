/*
 * soak.c - one round of scripts/soak.sh: a process-mode job (upvmcc) of
 * UPVM_NODES nodes that spawns workers, sends them checked messages,
 * moves them between nodes at random, and keeps going when the driver
 * kills a node, checking invariants all along:
 *
 *   - every answer carries the checksum of exactly what was sent;
 *   - a worker answers every message, or its PvmTaskExit comes (it was on
 *     a node that died, or was lost in a move), and never answers after;
 *   - a move returns 0, or PvmHostFail / PvmNoTask when a node died;
 *   - at the end every worker's PvmTaskExit has come.
 *
 *   soak SEED ROUNDS WORKERS MARK
 *
 * prints "node N pid P" for every node (the driver kills one of them),
 * READY, then "SOAK OK sent=.. answered=.. moves=.. refused=.. lost=.."
 * and exits 0, or "SOAK FAIL: ..." and exits 1.  MARK is not read: a
 * unique word in every process's command line for the driver.
 */
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <upvm.h>

#define TAG_WORK 1
#define TAG_ANSWER 2
#define TAG_QUIT 3
#define TAG_EXIT 50
#define TAG_HOST 51
#define TAG_PID 52
#define MAX_WORKERS 64
#define MAX_BYTES 65536

static uint64_t rng;

static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

static void fail(const char *what, int tid)
{
    printf("SOAK FAIL: %s (t%x)\n", what, (unsigned)tid);
    fflush(NULL);
    exit(1);
}

/* A worker: answers each message with its checksum and its node. */
static int worker(void)
{
    static unsigned char buf[MAX_BYTES];
    /* its node's pid first (the driver kills nodes by pid) */
    int pid_node[2] = {(int)getpid(), upvm_node_of(0)};
    pvm_initsend(PvmDataDefault);
    pvm_pkint(pid_node, 2, 1);
    pvm_send(pvm_parent(), TAG_PID);
    for (;;) {
        int bufid = pvm_recv(pvm_parent(), -1), tag = 0, len = 0;
        pvm_bufinfo(bufid, &len, &tag, NULL);
        if (tag != TAG_WORK)
            return 0;
        int n = 0;
        pvm_upkint(&n, 1, 1);
        if (n < 0 || n > MAX_BYTES)
            return 2;
        pvm_upkbyte((char *)buf, n, 1);
        uint64_t sum = checksum(buf, (size_t)n);
        int node = upvm_node_of(0);
        pvm_initsend(PvmDataRaw);
        pvm_pkbyte((char *)&sum, sizeof sum, 1);
        pvm_pkint(&node, 1, 1);
        pvm_send(pvm_parent(), TAG_ANSWER);
    }
}

struct w {
    int tid;
    int alive;        /* its PvmTaskExit has not come */
    int pending;      /* a message it has not answered */
    uint64_t want;    /* that message's checksum */
};

static struct w ws[MAX_WORKERS];
static int nw, lost;

static struct w *by_tid(int tid)
{
    for (int i = 0; i < nw; i++)
        if (ws[i].tid == tid)
            return &ws[i];
    return NULL;
}

/* Take in the exit notifications that came. */
static void take_exits(void)
{
    while (pvm_nrecv(-1, TAG_EXIT) > 0) {
        int tid = 0;
        pvm_upkint(&tid, 1, 1);
        struct w *x = by_tid(tid);
        if (x && x->alive) {
            x->alive = 0;
            lost++;
        }
    }
    while (pvm_nrecv(-1, TAG_HOST) > 0)
        ;
}

/* Wait for x's answer, or its exit (a node died). */
static int await(struct w *x)
{
    for (int tries = 0; tries < 600; tries++) { /* 60 s */
        struct timeval t = {0, 100000};
        if (pvm_trecv(x->tid, TAG_ANSWER, &t) > 0) {
            if (!x->alive)
                fail("an answer after the worker's PvmTaskExit", x->tid);
            uint64_t sum = 0;
            int node = -1;
            pvm_upkbyte((char *)&sum, sizeof sum, 1);
            pvm_upkint(&node, 1, 1);
            if (sum != x->want)
                fail("an answer with the wrong checksum (a corrupt message)", x->tid);
            x->pending = 0;
            return 1;
        }
        take_exits();
        if (!x->alive) {
            x->pending = 0;
            return 0;
        }
    }
    fail("no answer and no PvmTaskExit within 60 s", x->tid);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "worker") == 0)
        return worker();
    if (argc < 4)
        return 2;
    rng = strtoull(argv[1], NULL, 0) | 1;
    int rounds = atoi(argv[2]);
    nw = atoi(argv[3]);
    if (nw < 1 || nw > MAX_WORKERS)
        return 2;
    int nodes = upvm_nodes();
    char *wargs[] = {"worker", argv[4 < argc ? 4 : 3], NULL};
    for (int i = 0; i < nw; i++) {
        if (pvm_spawn(argv[0], wargs, PvmTaskDefault, "", 1, &ws[i].tid) != 1)
            fail("spawn", 0);
        ws[i].alive = 1;
        pvm_notify(PvmTaskExit, TAG_EXIT, 1, &ws[i].tid);
    }
    int hosts[16], nh = 0;
    for (int n = 1; n < nodes && nh < 16; n++)
        hosts[nh++] = (n + 1) << 18;
    if (nh)
        pvm_notify(PvmHostDelete, TAG_HOST, nh, hosts);
    int said[16] = {0};
    for (int i = 0; i < nw; i++) { /* every node's pid, once */
        int v[2];
        struct timeval t = {30, 0};
        if (pvm_trecv(-1, TAG_PID, &t) <= 0 || pvm_upkint(v, 2, 1) < 0)
            fail("a worker's pid", 0);
        if (v[1] >= 0 && v[1] < 16 && !said[v[1]]++)
            printf("node %d pid %d\n", v[1], v[0]);
    }
    printf("READY\n");
    fflush(stdout);

    static unsigned char buf[MAX_BYTES];
    long sent = 0, answered = 0, moves = 0, refused = 0;
    for (int r = 0; r < rounds; r++) {
        take_exits();
        struct w *x = &ws[next() % (uint64_t)nw];
        if (!x->alive)
            continue;
        if (nodes > 1 && next() % 4 == 0) { /* a move */
            int to = (int)(next() % (uint64_t)nodes);
            int rc = upvm_migrate(x->tid, to);
            if (rc == 0)
                moves++;
            else if (rc == PvmHostFail || rc == PvmNoTask || rc == PvmBadParam)
                refused++; /* a node died (or the destination is gone) */
            else {
                printf("upvm_migrate(t%x, %d): %d: %s\n", (unsigned)x->tid, to, rc,
                       upvm_migrate_error());
                fail("a move failed for no reason a node death explains", x->tid);
            }
            continue;
        }
        int n = (int)(next() % MAX_BYTES);
        for (int i = 0; i < n; i++)
            buf[i] = (unsigned char)next();
        x->want = checksum(buf, (size_t)n);
        x->pending = 1;
        pvm_initsend(next() % 2 ? PvmDataRaw : PvmDataDefault);
        pvm_pkint(&n, 1, 1);
        pvm_pkbyte((char *)buf, n, 1);
        pvm_send(x->tid, TAG_WORK);
        sent++;
        answered += await(x);
    }
    for (int i = 0; i < nw; i++)
        if (ws[i].alive) {
            pvm_initsend(PvmDataDefault);
            pvm_send(ws[i].tid, TAG_QUIT);
        }
    for (int tries = 0; tries < 600; tries++) { /* every exit, 60 s at most */
        int left = 0;
        for (int i = 0; i < nw; i++)
            left += ws[i].alive;
        if (!left)
            break;
        struct timeval t = {0, 100000};
        if (pvm_trecv(-1, TAG_EXIT, &t) > 0) {
            int tid = 0;
            pvm_upkint(&tid, 1, 1);
            struct w *x = by_tid(tid);
            if (x)
                x->alive = 0;
        }
    }
    for (int i = 0; i < nw; i++)
        if (ws[i].alive)
            fail("a worker whose PvmTaskExit never came", ws[i].tid);
    printf("SOAK OK sent=%ld answered=%ld moves=%ld refused=%ld lost=%d\n", sent, answered,
           moves, refused, lost);
    return 0;
}
