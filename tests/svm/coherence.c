/*
 * coherence.c - the coherence stress of the shared virtual memory (IVY's
 * write-invalidate protocol, docs/design-notes.md §15.5): UPVM_NODES=3,
 * 4 worker tasks per node (12 ULPs, so a node's ULPs interleave and fault
 * on the same pages while others of the node run), one shared block of 4
 * hot pages and 1000 cold pages, allocated by main (node 0: its home).
 *
 * Every worker owns disjoint 8-byte cells: 8 on each hot page (so every
 * hot page is written by all 12 workers: false sharing on 3 nodes) and one
 * on each cold page.  A worker writes its cells with values that only grow
 * ((worker + 1) << 48 | its own op count).  Then a seeded pseudo-random mix
 * of
 *   - writes of its own cells;
 *   - reads of its own cells: each must return the last value the worker
 *     wrote there (a stale read is a coherence bug: an old copy that was
 *     not invalidated, a page installed with old contents, a lost write);
 *   - read-modify-writes of 8 shared counters under two upvm_svm_lock_t
 *     (one on hot page 0, one on the last cold page), yielding inside the
 *     critical section now and then: mutual exclusion across ULPs and
 *     nodes, no lost update (each counter's final value is the sum of the
 *     increments all workers did on it), and the counter never goes back;
 *   - reads of other workers' cells: the value must be 0 or carry that
 *     worker's tag, and never be smaller than the value this reader saw
 *     there before (sequential consistency per location: writes to one
 *     location are seen in one order by everyone);
 *   - message passing across pages: after each write of a cold cell a
 *     worker writes its "latest" cell (on hot page 0) naming that cell and
 *     the write's number; a reader that reads someone's latest cell and
 *     then the cold cell it names must see that write or a later one
 *     (sequential consistency across pages: a cold page's old read copy
 *     still mapped after the writer went on shows here);
 *   - upvm_yield.
 * At the end each worker sends main its per-cell last values, its counter
 * increments and its node's upvm_svm_stats; main checks the whole block
 * against that sequential model: every worker cell holds its last value,
 * every counter the total, every other word of the block is still 0, both
 * locks are free.  Prints the nodes' stats totals (for information) and
 * OK; a failed check prints what, where (worker, address, expected, seen)
 * and halts the job.
 *
 * The page manager: UPVM_SVM_MANAGER (central, fixed, dynamic) for the
 * block, or with an argument (central|fixed|dynamic) upvm_svm_alloc_flags
 * with that manager's flag, which must win over the environment.  Which
 * one served is checked from the nodes' forwarded-request counts: under
 * central only node 0 forwards; under fixed and dynamic nodes 1 and 2
 * forward too.  The
 * fault mechanism: UPVM_SVM_FAULT (the ctest entries run mprotect too).
 * SVM_TEST_OPS (default 5000) sets the ops per worker, SVM_TEST_SEED the
 * seed.
 */
#include <errno.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>
#include <upvm_svm.h>

#include "svmtest.h"

const char *svmtest_name = "coherence";

#define NODES 3
#define PER_NODE 4
#define NWORKERS (NODES * PER_NODE)
#define HOT 4
#define COLD 1000
#define NPAGES (HOT + COLD)
#define CELLS_PER_PAGE (UPVM_SVM_PAGE / 8)
#define HOT_CELLS_PER_PAGE 8
#define NHOT (HOT * HOT_CELLS_PER_PAGE)
#define NCELLS (NHOT + COLD) /* per worker */
#define NCOUNTERS 8
#define NLOCKS 2

#define TAG_START 70
#define TAG_REPORT 71

/* The cell index (in 8-byte words from the block's start) of worker w's
 * j-th cell: j < NHOT on hot page j / 8, else on cold page j - NHOT. */
static size_t cell_index(int w, int j)
{
    if (j < NHOT)
        return (size_t)(j / HOT_CELLS_PER_PAGE) * CELLS_PER_PAGE + 16 +
               (size_t)w * HOT_CELLS_PER_PAGE + (size_t)(j % HOT_CELLS_PER_PAGE);
    int c = j - NHOT;
    return (size_t)(HOT + c) * CELLS_PER_PAGE + 64 + (size_t)w * 8 + (size_t)(c % 8);
}

/* Counter k: on hot page k % 4, word 8 + k / 4; lock k / 4 guards it. */
static size_t counter_index(int k)
{
    return (size_t)(k % HOT) * CELLS_PER_PAGE + 8 + (size_t)(k / HOT);
}

/* Lock 0 at the start of hot page 0, lock 1 at the start of the last page. */
static upvm_svm_lock_t *lock_of(volatile uint64_t *base, int l)
{
    size_t page = l == 0 ? 0 : NPAGES - 1;
    return (upvm_svm_lock_t *)(uintptr_t)(base + page * CELLS_PER_PAGE);
}

/* Whether word i of the block lies in one of the locks. */
static int in_lock(size_t i)
{
    return i < 8 || (i >= (size_t)(NPAGES - 1) * CELLS_PER_PAGE &&
                     i < (size_t)(NPAGES - 1) * CELLS_PER_PAGE + 8);
}

/* Worker o's cell j as worker w sees it: 0 or o's tag, and never less
 * than w saw there before (seen: w's last sight of every cell). */
static uint64_t read_other(volatile uint64_t *base, uint64_t *seen, int w, int node,
                           unsigned long op, int o, int j)
{
    volatile uint64_t *p = base + cell_index(o, j);
    uint64_t got = *p;
    uint64_t *s = &seen[(size_t)o * NCELLS + (size_t)j];
    SVM_CHECK(got == 0 || got >> 48 == (uint64_t)(o + 1),
              "worker %d (node %d) op %lu: worker %d's cell %d at %p holds 0x%" PRIx64
              ", not that worker's value",
              w, node, op, o, j, (void *)p, got);
    SVM_CHECK(got >= *s,
              "worker %d (node %d) op %lu: worker %d's cell %d at %p went back: "
              "expected at least 0x%" PRIx64 " (seen before), seen 0x%" PRIx64,
              w, node, op, o, j, (void *)p, *s, got);
    *s = got;
    return got;
}

static int worker(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    SVM_CHECK(pvm_recv(pvm_parent(), TAG_START) > 0, "worker: the start message");
    volatile uint64_t *base = svm_upk_ptr();
    int w = -1, node = -1;
    unsigned long ops = 0, seed = 0;
    SVM_CHECK(pvm_upkint(&w, 1, 1) == 0 && pvm_upkint(&node, 1, 1) == 0 &&
              pvm_upkulong(&ops, 1, 1) == 0 && pvm_upkulong(&seed, 1, 1) == 0,
              "worker: unpack the start message");

    uint64_t rng = svm_seed(seed, (uint64_t)w);
    uint64_t *last = calloc(NCELLS, sizeof *last);             /* my cells */
    uint64_t *seen = calloc((size_t)NWORKERS * NCELLS, sizeof *seen); /* others' */
    unsigned long incs[NCOUNTERS] = {0};
    uint64_t counter_seen[NCOUNTERS] = {0};
    SVM_CHECK(last && seen, "worker %d: calloc", w);
    uint64_t seq = 0;
    unsigned long nread = 0, nwrite = 0, nlock = 0, nother = 0, nyield = 0, nmp = 0;

    for (unsigned long op = 0; op < ops; op++) {
        unsigned r = (unsigned)(svm_rand(&rng) % 100);
        int j = svm_rand(&rng) % 2 ? (int)(svm_rand(&rng) % NHOT)
                                   : NHOT + (int)(svm_rand(&rng) % COLD);
        if (r < 30) { /* write one of mine */
            if (j == 0) /* my "latest" cell: written after each cold write only */
                j = 1 + (int)(svm_rand(&rng) % (NHOT - 1));
            volatile uint64_t *p = base + cell_index(w, j);
            uint64_t v = (uint64_t)(w + 1) << 48 | ++seq;
            *p = v;
            last[j] = v;
            uint64_t got = *p;
            SVM_CHECK(got == v,
                      "worker %d (node %d) op %lu: read right after writing my cell %d at %p: "
                      "expected 0x%" PRIx64 ", seen 0x%" PRIx64,
                      w, node, op, j, (void *)p, v, got);
            if (j >= NHOT) { /* then say so in my latest cell (hot page 0) */
                uint64_t l = (uint64_t)(w + 1) << 48 | seq << 12 | (uint64_t)(j - NHOT);
                base[cell_index(w, 0)] = l;
                last[0] = l;
            }
            nwrite++;
        } else if (r < 55) { /* read one of mine */
            volatile uint64_t *p = base + cell_index(w, j);
            uint64_t got = *p;
            SVM_CHECK(got == last[j],
                      "worker %d (node %d) op %lu: stale read of my cell %d at %p: "
                      "expected 0x%" PRIx64 " (my last write), seen 0x%" PRIx64,
                      w, node, op, j, (void *)p, last[j], got);
            nread++;
        } else if (r < 65) { /* a counter under its lock */
            int k = (int)(svm_rand(&rng) % NCOUNTERS);
            upvm_svm_lock_t *l = lock_of(base, k / HOT);
            int rc = upvm_svm_lock(l);
            SVM_CHECK(rc == 0, "worker %d (node %d) op %lu: upvm_svm_lock(%p): %d", w, node,
                      op, (void *)l, rc);
            volatile uint64_t *c = base + counter_index(k);
            uint64_t v = *c;
            SVM_CHECK(v >= counter_seen[k],
                      "worker %d (node %d) op %lu: counter %d at %p went back: "
                      "had seen %" PRIu64 ", now %" PRIu64,
                      w, node, op, k, (void *)c, counter_seen[k], v);
            if (svm_rand(&rng) % 2)
                upvm_yield(); /* others run, and want the lock */
            *c = v + 1;
            counter_seen[k] = v + 1;
            rc = upvm_svm_unlock(l);
            SVM_CHECK(rc == 0, "worker %d (node %d) op %lu: upvm_svm_unlock(%p): %d", w, node,
                      op, (void *)l, rc);
            incs[k]++;
            nlock++;
        } else if (r < 95) { /* read someone else's */
            int o = (int)(svm_rand(&rng) % (NWORKERS - 1));
            if (o >= w)
                o++;
            if (svm_rand(&rng) % 3) {
                read_other(base, seen, w, node, op, o, j);
            } else { /* its latest cell, then the cold cell it names */
                uint64_t l = read_other(base, seen, w, node, op, o, 0);
                if (l != 0) {
                    uint64_t s = (l >> 12) & ((1ull << 36) - 1);
                    int jc = NHOT + (int)(l & 0xfff);
                    SVM_CHECK(jc < NCELLS,
                              "worker %d (node %d) op %lu: worker %d's latest cell at %p holds "
                              "0x%" PRIx64 ": no cold cell of its",
                              w, node, op, o, (void *)(base + cell_index(o, 0)), l);
                    uint64_t got = read_other(base, seen, w, node, op, o, jc);
                    SVM_CHECK((got & ((1ull << 48) - 1)) >= s,
                              "worker %d (node %d) op %lu: worker %d's latest cell at %p says it "
                              "wrote 0x%" PRIx64 " into its cell %d at %p before, but that cell "
                              "holds 0x%" PRIx64 " (an older write: a stale copy of the cold page)",
                              w, node, op, o, (void *)(base + cell_index(o, 0)),
                              (uint64_t)(o + 1) << 48 | s, jc, (void *)(base + cell_index(o, jc)),
                              got);
                    nmp++;
                }
            }
            nother++;
        } else {
            upvm_yield();
            nyield++;
        }
        if (op % 64 == 63)
            upvm_yield();
    }

    /* My cells once more, all of them, after everything. */
    for (int j = 0; j < NCELLS; j++) {
        volatile uint64_t *p = base + cell_index(w, j);
        uint64_t got = *p;
        SVM_CHECK(got == last[j],
                  "worker %d (node %d) at the end: stale read of my cell %d at %p: "
                  "expected 0x%" PRIx64 ", seen 0x%" PRIx64,
                  w, node, j, (void *)p, last[j], got);
    }

    unsigned long st[SVM_NSTATS], counts[6] = {nread, nwrite, nlock, nother, nyield, nmp};
    svm_my_stats(st);
    unsigned long *lastul = malloc(NCELLS * sizeof *lastul);
    SVM_CHECK(lastul, "worker %d: malloc", w);
    for (int j = 0; j < NCELLS; j++)
        lastul[j] = (unsigned long)last[j];
    SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_pkint(&w, 1, 1) == 0 &&
                  pvm_pkulong(lastul, NCELLS, 1) == 0 && pvm_pkulong(incs, NCOUNTERS, 1) == 0 &&
                  pvm_pkulong(st, SVM_NSTATS, 1) == 0 && pvm_pkulong(counts, 6, 1) == 0 &&
                  pvm_send(pvm_parent(), TAG_REPORT) == 0,
              "worker %d: send the report", w);
    free(lastul);
    free(last);
    free(seen);
    return 0;
}
UPVM_TASK("cohworker", worker)

/* The prelude's poker: on the parent's word, a write to the page it was
 * given, then a word back; TAG_POKE with a NULL page ends it. */
#define TAG_POKE 71
static int poker(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (;;) {
        SVM_CHECK(pvm_recv(pvm_parent(), TAG_POKE) > 0, "poker: a poke");
        volatile uint64_t *p = svm_upk_ptr();
        if (!p)
            return 0;
        p[1] += 1; /* a write: ownership comes here */
        SVM_CHECK(pvm_initsend(SVM_ENC) >= 0 && pvm_send(pvm_parent(), TAG_POKE) == 0,
                  "poker: the answer");
    }
}
UPVM_TASK("cohpoker", poker)

static void poke(int tid, volatile uint64_t *page)
{
    SVM_CHECK(pvm_initsend(SVM_ENC) >= 0, "poke: initsend");
    svm_pk_ptr((const void *)page);
    SVM_CHECK(pvm_send(tid, TAG_POKE) == 0 && pvm_recv(tid, TAG_POKE) > 0, "poke: the round trip");
}

/*
 * A prelude that leaves a stale hint for certain, so that the manager
 * check below holds whatever the random stress does: writes to one page
 * by node 1, node 2, node 0, node 1.  Under the dynamic manager node 1's
 * hint then points at node 2 (it gave the page to node 2), which gave it
 * on to node 0: node 2 forwards node 1's last request.  Under fixed, the
 * page's manager forwards as for any page; under central only node 0
 * forwards.
 */
static void prelude(volatile uint64_t *page)
{
    int p1 = svm_spawn_on("cohpoker", 1), p2 = svm_spawn_on("cohpoker", 2);
    poke(p1, page);
    poke(p2, page);
    page[1] += 1;
    poke(p1, page);
    for (int i = 0; i < 2; i++) {
        SVM_CHECK(pvm_initsend(SVM_ENC) >= 0, "prelude: initsend");
        svm_pk_ptr(NULL);
        SVM_CHECK(pvm_send(i ? p2 : p1, TAG_POKE) == 0, "prelude: the end");
    }
}

static unsigned manager_flag(const char *name)
{
    if (strcmp(name, "central") == 0)
        return UPVM_SVM_CENTRAL;
    if (strcmp(name, "fixed") == 0)
        return UPVM_SVM_FIXED;
    if (strcmp(name, "dynamic") == 0)
        return UPVM_SVM_DYNAMIC;
    svm_fail("usage: coherence [central|fixed|dynamic] (not %s)", name);
}

int main(int argc, char **argv)
{
    const char *env_mgr = getenv("UPVM_SVM_MANAGER"), *env_fault = getenv("UPVM_SVM_FAULT");
    unsigned long ops = svm_env_ul("SVM_TEST_OPS", 5000);
    unsigned long seed = svm_env_ul("SVM_TEST_SEED", 20261126);
    unsigned flag = argc > 1 ? manager_flag(argv[1]) : 0;
    printf("coherence: %d nodes, %d workers, %d hot + %d cold pages, %lu ops each, seed %lu, "
           "UPVM_SVM_MANAGER=%s UPVM_SVM_FAULT=%s, alloc flag %s\n",
           NODES, NWORKERS, HOT, COLD, ops, seed, env_mgr ? env_mgr : "(unset)",
           env_fault ? env_fault : "(unset)", argc > 1 ? argv[1] : "(none)");
    SVM_CHECK(pvm_mytid() > 0, "pvm_mytid (the job's nodes start here)");
    SVM_CHECK(upvm_nodes() == NODES, "this test needs UPVM_NODES=%d (the job has %d nodes)", NODES,
              upvm_nodes());

    size_t size = (size_t)NPAGES * UPVM_SVM_PAGE;
    volatile uint64_t *base = argc > 1 ? upvm_svm_alloc_flags(size, flag) : upvm_svm_alloc(size);
    SVM_CHECK(base != NULL, "upvm_svm_alloc%s(%zu): NULL (errno %d)", argc > 1 ? "_flags" : "",
              size, errno);
    SVM_CHECK(((uintptr_t)base & (UPVM_SVM_PAGE - 1)) == 0, "the block %p is not page-aligned",
              (void *)base);
    for (int l = 0; l < NLOCKS; l++) {
        int rc = upvm_svm_lock_init(lock_of(base, l));
        SVM_CHECK(rc == 0, "upvm_svm_lock_init(%p): %d", (void *)lock_of(base, l), rc);
    }

    volatile uint64_t *pre = argc > 1 ? upvm_svm_alloc_flags(UPVM_SVM_PAGE, flag)
                                      : upvm_svm_alloc(UPVM_SVM_PAGE);
    SVM_CHECK(pre != NULL, "the prelude's page: NULL (errno %d)", errno);
    prelude(pre);

    int tids[NWORKERS], node_of[NWORKERS];
    for (int w = 0; w < NWORKERS; w++) {
        node_of[w] = w % NODES;
        tids[w] = svm_spawn_on("cohworker", node_of[w]);
    }
    for (int w = 0; w < NWORKERS; w++) { /* the start, once every worker is there */
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0, "pvm_initsend");
        svm_pk_ptr((const void *)base);
        SVM_CHECK(pvm_pkint(&w, 1, 1) == 0 && pvm_pkint(&node_of[w], 1, 1) == 0 &&
                      pvm_pkulong(&ops, 1, 1) == 0 && pvm_pkulong(&seed, 1, 1) == 0 &&
                      pvm_send(tids[w], TAG_START) == 0,
                  "send worker %d its start", w);
    }

    /* The sequential model: what every word of the block must hold. */
    size_t nwords = (size_t)NPAGES * CELLS_PER_PAGE;
    uint64_t *expect = calloc(nwords, sizeof *expect);
    unsigned long *lastul = malloc(NCELLS * sizeof *lastul);
    SVM_CHECK(expect && lastul, "calloc");
    unsigned long total[NCOUNTERS] = {0}, stats[NODES][SVM_NSTATS], sums[6] = {0};
    memset(stats, 0, sizeof stats);
    for (int i = 0; i < NWORKERS; i++) {
        int w = -1;
        unsigned long incs[NCOUNTERS], st[SVM_NSTATS], counts[6];
        SVM_CHECK(pvm_recv(-1, TAG_REPORT) > 0, "receive a report");
        SVM_CHECK(pvm_upkint(&w, 1, 1) == 0 && w >= 0 && w < NWORKERS &&
                      pvm_upkulong(lastul, NCELLS, 1) == 0 &&
                      pvm_upkulong(incs, NCOUNTERS, 1) == 0 &&
                      pvm_upkulong(st, SVM_NSTATS, 1) == 0 && pvm_upkulong(counts, 6, 1) == 0,
                  "unpack a report");
        for (int j = 0; j < NCELLS; j++)
            expect[cell_index(w, j)] = lastul[j];
        for (int k = 0; k < NCOUNTERS; k++)
            total[k] += incs[k];
        for (int s = 0; s < SVM_NSTATS; s++) /* the node's counters only grow */
            if (st[s] > stats[node_of[w]][s])
                stats[node_of[w]][s] = st[s];
        for (int s = 0; s < 6; s++)
            sums[s] += counts[s];
    }
    for (int k = 0; k < NCOUNTERS; k++)
        expect[counter_index(k)] = total[k];

    unsigned long job[SVM_NSTATS] = {0};
    for (int n = 0; n < NODES; n++)
        for (int s = 0; s < SVM_NSTATS; s++)
            job[s] += stats[n][s];
    printf("coherence: ops: %lu reads of own cells, %lu writes, %lu locked increments, "
           "%lu reads of others' cells (%lu latest-then-cold pairs), %lu yields\n",
           sums[0], sums[1], sums[2], sums[3], sums[5], sums[4]);
    svm_print_stats("svm stats, 3 nodes' totals at the workers' ends", job);

    /* Which manager served the block, seen from outside: under central
     * only node 0 forwards requests (it knows every owner); under fixed
     * (node H(page)) and dynamic (hints) nodes 1 and 2 forward too. */
    const char *mgr = argc > 1 ? argv[1] : env_mgr && *env_mgr ? env_mgr : "central";
    unsigned long f1 = stats[1][6], f2 = stats[2][6];
    printf("coherence: manager %s: requests forwarded by node 0: %lu, node 1: %lu, node 2: %lu\n",
           mgr, stats[0][6], f1, f2);
    if (strcmp(mgr, "central") == 0)
        SVM_CHECK(f1 == 0 && f2 == 0,
                  "manager central%s: nodes 1 and 2 forwarded %lu and %lu requests (only node 0, "
                  "the manager, forwards): the block did not get the central manager",
                  argc > 1 ? " (by the alloc flag)" : "", f1, f2);
    else
        SVM_CHECK(f1 + f2 > 0,
                  "manager %s%s: nodes 1 and 2 forwarded no request: the block got the central "
                  "manager?",
                  mgr, argc > 1 ? " (by the alloc flag)" : "");

    int bad = 0;
    for (size_t i = 0; i < nwords; i++) {
        if (in_lock(i))
            continue;
        uint64_t got = base[i];
        if (got == expect[i])
            continue;
        long owner = -1;
        for (int w = 0; w < NWORKERS && owner < 0; w++)
            for (int j = 0; j < NCELLS; j++)
                if (cell_index(w, j) == i) {
                    owner = w;
                    break;
                }
        fprintf(stderr,
                "coherence: FAILED: final contents: word %zu (page %zu) at %p (%s %ld): "
                "expected 0x%" PRIx64 ", seen 0x%" PRIx64 "\n",
                i, i / CELLS_PER_PAGE, (void *)(base + i),
                owner >= 0 ? "cell of worker" : "not a worker's cell; counter/other", owner,
                expect[i], got);
        if (++bad >= 20)
            break;
    }
    for (int l = 0; l < NLOCKS; l++) {
        upvm_svm_lock_t *lk = lock_of(base, l);
        uint64_t holder = ((volatile upvm_svm_lock_t *)lk)->holder;
        if (holder != 0) {
            fprintf(stderr, "coherence: FAILED: lock %d at %p still held by 0x%" PRIx64 "\n", l,
                    (void *)lk, holder);
            bad++;
        }
    }
    SVM_CHECK(bad == 0, "the final contents: %d wrong word(s) or held lock(s), above", bad);
    int rc = upvm_svm_free((void *)base);
    SVM_CHECK(rc == 0, "upvm_svm_free(%p): %d", (void *)base, rc);
    free(expect);
    free(lastul);
    printf("OK\n");
    return 0;
}
