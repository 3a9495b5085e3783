/*
 * stall.c - what a page request costs when the node that owns the page is
 * computing: the effect behind most of the IVY programs' poor speedups
 * here (ivy.h, ivy_poll).  A node handles frames only when its scheduler
 * runs: while one of its ULPs computes without blocking, faulting on a
 * remote page or yielding, no request to it is answered.
 *
 * main (node 0) writes a shared page, spawns a reader on node 1 and a
 * spinner on node 0 (which computes for -s MS without any call, or, with
 * -Y US, calls upvm_yield() every US microseconds), and blocks; the reader
 * waits 100 ms (the spinner is running by then) and reads the page: one
 * read fault served by node 0.  Prints the fault's time.  IVY served
 * remote requests at interrupt level: there the fault costs a page
 * transfer whatever node 0 is doing.
 *
 *   UPVM_NODES=2 ivy-stall [-s MS] [-Y US]     (default 1000 ms, no yield)
 */
#include <getopt.h>

#include "ivy.h"

#define TAG_PTR 7300
#define TAG_END 7301

static int reader(int argc, char **argv)
{
    (void)argc, (void)argv;
    unsigned long p = 0;
    if (pvm_recv(-1, TAG_PTR) < 0 || pvm_upkulong(&p, 1, 1))
        ivy_die("receiving the page's address", 0);
    upvm_sleep_ns(100 * 1000 * 1000); /* node 0's spinner runs by now */
    uint64_t t0 = upvm_now_ns();
    long v = *(volatile long *)p; /* the read fault */
    double ms = (double)(upvm_now_ns() - t0) / 1e6;
    if (pvm_initsend(PvmDataRaw) < 0 || pvm_pkdouble(&ms, 1, 1) || pvm_pklong(&v, 1, 1) ||
        pvm_send(pvm_parent(), TAG_END) < 0)
        ivy_die("sending the result", 0);
    return 0;
}
UPVM_TASK("ivy-stall-reader", reader)

static int spinner(int argc, char **argv)
{
    long ms = atol(argv[1]), yield_ns = atol(argv[2]) * 1000;
    uint64_t t0 = upvm_now_ns(), last = t0;
    volatile double s = 0;
    for (;;) {
        for (int i = 0; i < 1000; i++) /* ~2.5 us of computing, no call */
            s += 1e-9;
        uint64_t now = upvm_now_ns();
        if (now - t0 >= (uint64_t)ms * 1000000)
            break;
        if (yield_ns && now - last >= (uint64_t)yield_ns) {
            upvm_yield();
            last = upvm_now_ns();
        }
    }
    (void)s;
    return 0;
}
UPVM_TASK("ivy-stall-spinner", spinner)

int main(int argc, char **argv)
{
    long ms = 1000, yield_us = 0;
    int opt, rtid, stid;
    while ((opt = getopt(argc, argv, "s:Y:")) != -1) {
        switch (opt) {
        case 's': ms = atol(optarg); break;
        case 'Y': yield_us = ivy_yield_arg(optarg) / 1000; break;
        default:
            fprintf(stderr, "usage: UPVM_NODES=2 ivy-stall [-s MS] [-Y US]\n");
            return 2;
        }
    }
    if (ivy_nodes() < 2) {
        fprintf(stderr, "ivy-stall: needs UPVM_NODES=2 (or more)\n");
        return 2;
    }
    long *x = ivy_alloc(UPVM_SVM_PAGE);
    *x = 42;
    int rc = pvm_spawn("ivy-stall-reader", NULL, PvmTaskHost, "node1", 1, &rtid);
    if (rc != 1)
        ivy_die("pvm_spawn", rtid);
    unsigned long p = (unsigned long)x;
    if (pvm_initsend(PvmDataRaw) < 0 || pvm_pkulong(&p, 1, 1) || pvm_send(rtid, TAG_PTR) < 0)
        ivy_die("sending the page's address", 0);
    char a1[32], a2[32], *args[] = {a1, a2, NULL};
    snprintf(a1, sizeof a1, "%ld", ms);
    snprintf(a2, sizeof a2, "%ld", yield_us);
    /* on this node: it runs once main blocks */
    if ((rc = pvm_spawn("ivy-stall-spinner", args, PvmTaskHost, "node0", 1, &stid)) != 1)
        ivy_die("pvm_spawn", stid);
    double fault_ms = 0;
    long v = 0;
    if (pvm_recv(rtid, TAG_END) < 0 || pvm_upkdouble(&fault_ms, 1, 1) || pvm_upklong(&v, 1, 1))
        ivy_die("receiving the result", 0);
    printf("ivy-stall manager=%s spin_ms=%ld yield_us=%ld read_fault_ms=%.3f check=%s\n", ivy_manager(),
           ms, yield_us, fault_ms, v == 42 ? "ok" : "WRONG");
    return v == 42 ? 0 : 1;
}
