/*
 * faults.c - what one shared-memory fault costs (issue 22's benchmark):
 * a read fault served by another node, and a write fault that must first
 * invalidate k = 0, 1, 2, 4 read copies, for the manager and the fault
 * mechanism the environment picks (UPVM_SVM_MANAGER, UPVM_SVM_FAULT); and
 * a fault resolved on the node itself (a page of its own, first touched).
 * bench/svm-faults.sh runs it for every manager and mechanism beside the
 * floors of bench/svm/fault-floor.c, in the same run.
 *
 * The job has 7 nodes: node 0 (main: the central manager and the blocks'
 * home), node 1 (the writer that owns each page before the timed access),
 * node 2 (the faulter, which times each access), nodes 3-6 (readers that
 * take copies).  Phases, each on fresh
 * pages and separated by messages, so that only faults are timed:
 *   read    node 1 writes the pages; node 2 reads each one;
 *   write k node 1 writes the pages; k readers read each; node 2 writes each;
 *   local   node 2 writes pages of a block it allocated itself.
 * Prints one line per phase: the median, p10 and p90 in microseconds.
 *   UPVM_NODES=7 faults [-p PAGES]
 */
#include <pvm3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <upvm.h>
#include <upvm_svm.h>

#define PAGE 4096
enum { TAG_GO = 1, TAG_DONE = 2, TAG_TIMES = 3 };
enum { OP_WRITE, OP_READ, OP_WRITE_TIMED, OP_READ_TIMED, OP_LOCAL_TIMED, OP_QUIT };

static int npages = 1000;

static void send_op(int tid, int op, unsigned long base)
{
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&op, 1, 1);
    pvm_pkulong(&base, 1, 1);
    pvm_send(tid, TAG_GO);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every task: do what main says on the pages at base, answer when done
 * (with the per-page times of a timed operation). */
static int agent(int argc, char **argv)
{
    uint64_t *ns = malloc((size_t)npages * sizeof *ns);
    for (;;) {
        int op;
        unsigned long base;
        pvm_recv(pvm_parent(), TAG_GO);
        pvm_upkint(&op, 1, 1);
        pvm_upkulong(&base, 1, 1);
        if (op == OP_QUIT)
            break;
        volatile char *p = (volatile char *)base;
        if (op == OP_LOCAL_TIMED)
            p = upvm_svm_alloc((size_t)npages * PAGE);
        for (int i = 0; i < npages; i++) {
            uint64_t t0 = upvm_now_ns();
            if (op == OP_READ || op == OP_READ_TIMED)
                (void)p[(size_t)i * PAGE];
            else
                p[(size_t)i * PAGE] = (char)i;
            ns[i] = upvm_now_ns() - t0;
        }
        pvm_initsend(PvmDataRaw);
        if (op >= OP_WRITE_TIMED)
            pvm_pkbyte((char *)ns, npages * (int)sizeof *ns, 1);
        pvm_send(pvm_parent(), TAG_DONE);
    }
    free(ns);
    return 0;
}
UPVM_TASK("agent", agent)

static int tids[7];

static void wait_done(int tid, uint64_t *ns)
{
    pvm_recv(tid, TAG_DONE);
    if (ns)
        pvm_upkbyte((char *)ns, npages * (int)sizeof *ns, 1);
}

static void report(const char *what, uint64_t *ns)
{
    qsort(ns, (size_t)npages, sizeof *ns, cmp_u64);
    printf("%-10s median %7.2f us  p10 %7.2f  p90 %7.2f  (%d faults)\n", what,
           ns[npages / 2] / 1e3, ns[npages / 10] / 1e3, ns[npages * 9 / 10] / 1e3, npages);
}

/* Fresh pages (node 0 is their home). */
static unsigned long fresh_block(void)
{
    static char *next, *end;
    if (next == end) {
        next = upvm_svm_alloc((size_t)npages * PAGE * 6);
        end = next + (size_t)npages * PAGE * 6;
    }
    char *b = next;
    next += (size_t)npages * PAGE;
    return (unsigned long)b;
}

int main(int argc, char **argv)
{
    int opt;
    while ((opt = getopt(argc, argv, "p:")) != -1)
        if (opt == 'p')
            npages = atoi(optarg);
    pvm_mytid();
    if (upvm_nodes() < 7) {
        fprintf(stderr, "faults: run with UPVM_NODES=7 (this job has %d nodes)\n", upvm_nodes());
        return 2;
    }
    for (int n = 1; n < 7; n++) {
        char host[16];
        snprintf(host, sizeof host, "node%d", n);
        if (pvm_spawn("agent", NULL, PvmTaskHost, host, 1, &tids[n]) != 1)
            return fprintf(stderr, "faults: cannot spawn on %s\n", host), 1;
    }
    uint64_t *ns = malloc((size_t)npages * sizeof *ns);
    /* read served by a peer */
    unsigned long b = fresh_block();
    send_op(tids[1], OP_WRITE, b), wait_done(tids[1], NULL);
    send_op(tids[2], OP_READ_TIMED, b), wait_done(tids[2], ns);
    report("read", ns);
    static const int ks[] = {0, 1, 2, 4};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        b = fresh_block();
        send_op(tids[1], OP_WRITE, b), wait_done(tids[1], NULL);
        for (int r = 0; r < ks[i]; r++)
            send_op(tids[3 + r], OP_READ, b), wait_done(tids[3 + r], NULL);
        send_op(tids[2], OP_WRITE_TIMED, b), wait_done(tids[2], ns);
        char what[16];
        snprintf(what, sizeof what, "write k=%d", ks[i]);
        report(what, ns);
    }
    send_op(tids[2], OP_LOCAL_TIMED, 0), wait_done(tids[2], ns);
    report("local", ns);
    for (int n = 1; n < 7; n++)
        send_op(tids[n], OP_QUIT, 0);
    free(ns);
    pvm_exit();
    return 0;
}
