/*
 * false-sharing.c - one shared page written by two nodes at once, each in
 * its own half (UPVM_NODES=2): IVY's falsely shared page, which moves from
 * node to node at nearly every write (the "ping-pong" of the paper).
 *
 * main (node 0) allocates one page and spawns a "half" task on node0 and
 * one on node1; once both are there it starts them together.  Task h
 * (0 or 1) does N = 2000 rounds of a non-atomic ++ on each of the 256
 * uint64_t cells of its half (a load, then a store: each may fault), then
 * upvm_yield; it may be at most 4 rounds ahead of the other task (it
 * polls the other half's first cell, yielding, with a 60 s deadline):
 * without that, node 0's task, whose page is local, did all its rounds
 * before node 1's task started, and the page never ping-ponged.  After
 * every round its own cells must all hold the round count (a stale read,
 * or a page installed with an old copy of this half, shows here), and the
 * other half's first cell must never go back.  At the end main checks
 * that both halves hold exactly N everywhere (a lost update of one half
 * by a copy of the page made before the other's write shows here), prints
 * the page's ping-pong count as each node sees it (upvm_svm_page_moves)
 * and the nodes' upvm_svm_stats, and checks that the count each task saw
 * at its end is > 0 (the page started on node 0; node 1 had to take it,
 * and node 0 cannot finish before node 1 wrote).  Prints OK; a failed
 * check prints where and halts the job.
 * SVM_TEST_ROUNDS overrides N.
 */
#include <errno.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>
#include <upvm_svm.h>

#include "svmtest.h"

const char *svmtest_name = "false-sharing";

#define HALF (UPVM_SVM_PAGE / 8 / 2) /* cells per half */
#define LAG 4 /* rounds one task may be ahead of the other */
#define TAG_GO 81
#define TAG_DONE 82

static int half(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int parent = pvm_parent();
    SVM_CHECK(pvm_recv(parent, TAG_GO) > 0, "half: the start message");
    volatile uint64_t *page = svm_upk_ptr();
    int h = -1;
    unsigned long rounds = 0;
    SVM_CHECK(pvm_upkint(&h, 1, 1) == 0 && pvm_upkulong(&rounds, 1, 1) == 0 && (h == 0 || h == 1),
              "half: unpack the start message");
    volatile uint64_t *mine = page + (size_t)h * HALF, *other = page + (size_t)(1 - h) * HALF;
    uint64_t other_seen = 0, deadline = upvm_now_ns() + 60ull * 1000000000;
    for (unsigned long r = 0; r < rounds; r++) {
        /* at most LAG rounds ahead of the other task (polled, with a
         * deadline): the two really interleave, whatever the start */
        while (other[0] + LAG < r) {
            SVM_CHECK(upvm_now_ns() < deadline,
                      "task %d, round %lu: the other half's cell 0 at %p still says %lu after "
                      "60 s (its task cannot get the page?)",
                      h, r, (void *)other, (unsigned long)other[0]);
            upvm_yield();
        }
        for (int c = 0; c < (int)HALF; c++)
            mine[c]++;
        for (int c = 0; c < (int)HALF; c++) {
            uint64_t got = mine[c];
            SVM_CHECK(got == r + 1,
                      "task %d (node %d), round %lu: my cell %d at %p: expected %lu, seen %lu", h,
                      h, r, c, (void *)(mine + c), r + 1, (unsigned long)got);
        }
        uint64_t o = other[0];
        SVM_CHECK(o >= other_seen && o <= rounds,
                  "task %d, round %lu: the other half's cell 0 at %p: seen %lu after %lu", h, r,
                  (void *)other, (unsigned long)o, (unsigned long)other_seen);
        other_seen = o;
        upvm_yield();
    }
    long moves = upvm_svm_page_moves((const void *)page);
    unsigned long st[SVM_NSTATS];
    svm_my_stats(st);
    SVM_CHECK(pvm_initsend(SVM_ENC) > 0 && pvm_pkint(&h, 1, 1) == 0 &&
                  pvm_pklong(&moves, 1, 1) == 0 && pvm_pkulong(st, SVM_NSTATS, 1) == 0 &&
                  pvm_send(parent, TAG_DONE) == 0,
              "task %d: send the report", h);
    return 0;
}
UPVM_TASK("half", half)

int main(void)
{
    unsigned long rounds = svm_env_ul("SVM_TEST_ROUNDS", 2000);
    SVM_CHECK(pvm_mytid() > 0, "pvm_mytid (the job's nodes start here)");
    SVM_CHECK(upvm_nodes() == 2, "this test needs UPVM_NODES=2 (the job has %d nodes)",
              upvm_nodes());
    volatile uint64_t *page = upvm_svm_alloc(UPVM_SVM_PAGE);
    SVM_CHECK(page != NULL, "upvm_svm_alloc(%u): NULL (errno %d)", UPVM_SVM_PAGE, errno);
    int tids[2];
    for (int h = 0; h < 2; h++)
        tids[h] = svm_spawn_on("half", h);
    for (int h = 0; h < 2; h++) {
        SVM_CHECK(pvm_initsend(SVM_ENC) > 0, "pvm_initsend");
        svm_pk_ptr((const void *)page);
        SVM_CHECK(pvm_pkint(&h, 1, 1) == 0 && pvm_pkulong(&rounds, 1, 1) == 0 &&
                      pvm_send(tids[h], TAG_GO) == 0,
                  "start task %d", h);
    }
    long moves[2] = {-1, -1};
    for (int i = 0; i < 2; i++) {
        int h = -1;
        long m = -1;
        unsigned long st[SVM_NSTATS];
        SVM_CHECK(pvm_recv(-1, TAG_DONE) > 0 && pvm_upkint(&h, 1, 1) == 0 && (h == 0 || h == 1) &&
                      pvm_upklong(&m, 1, 1) == 0 && pvm_upkulong(st, SVM_NSTATS, 1) == 0,
                  "a task's report");
        moves[h] = m;
        char what[64];
        snprintf(what, sizeof what, "node %d's svm stats", h);
        svm_print_stats(what, st);
    }
    for (int c = 0; c < 2 * (int)HALF; c++) {
        uint64_t got = page[c];
        SVM_CHECK(got == rounds, "final contents: cell %d at %p (task %d's half): expected %lu, "
                                 "seen %lu",
                  c, (void *)(page + c), c / (int)HALF, rounds, (unsigned long)got);
    }
    long moves_main = upvm_svm_page_moves((const void *)page);
    printf("false-sharing: %lu rounds each; page moves (ping-pong count) seen by node 0: %ld, "
           "node 1: %ld; by node 0 after the final check: %ld\n",
           rounds, moves[0], moves[1], moves_main);
    SVM_CHECK(moves[0] > 0 && moves[1] > 0,
              "upvm_svm_page_moves: node 0 says %ld, node 1 %ld (both must be > 0)", moves[0],
              moves[1]);
    long bad = upvm_svm_page_moves(&rounds);
    SVM_CHECK(bad == -EINVAL, "upvm_svm_page_moves of private memory: %ld, not -EINVAL", bad);
    SVM_CHECK(upvm_svm_free((void *)page) == 0, "upvm_svm_free");
    printf("OK\n");
    return 0;
}
