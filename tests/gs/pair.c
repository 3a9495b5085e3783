/*
 * pair.c - a 2-task ping-pong started with the defaults (the partner is
 * spawned where UPVM_PLACEMENT puts it: the other node) plays until the
 * balancer has put both on one node (upvm_node_of, polled with a 20 s
 * deadline), then a while longer.  Prints the half round trip before and
 * after, then "together", or "apart" when the deadline passed.
 */
#include <pvm3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <upvm.h>

enum { TAG_PING = 1, TAG_STOP };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void partner(void)
{
    int parent = pvm_parent();
    for (;;) {
        int id = pvm_recv(parent, -1), bytes, tag, src;
        pvm_bufinfo(id, &bytes, &tag, &src);
        if (tag == TAG_STOP)
            break;
        pvm_initsend(PvmDataDefault);
        pvm_send(parent, TAG_PING);
    }
}

/* n round trips; the half round trip in µs. */
static double play(int t, int n)
{
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_send(t, TAG_PING);
        pvm_recv(t, TAG_PING);
    }
    return (now_s() - t0) / n / 2 * 1e6;
}

int main(int argc, char **argv)
{
    pvm_mytid();
    if (argc > 1 && !strcmp(argv[1], "partner")) {
        partner();
        pvm_exit();
        return 0;
    }
    int t;
    if (pvm_spawn(argv[0], (char *[]){"partner", NULL}, PvmTaskDefault, "", 1, &t) != 1)
        return 1;
    printf("start: master on node %d, partner on node %d, %.2f us\n", upvm_node_of(0),
           upvm_node_of(t), play(t, 2000));
    double deadline = now_s() + 20;
    int together = 0;
    while (now_s() < deadline && !(together = upvm_node_of(0) == upvm_node_of(t)))
        play(t, 2000);
    if (together)
        printf("after: both on node %d, %.2f us\n", upvm_node_of(0), play(t, 20000));
    puts(together ? "together" : "apart");
    pvm_initsend(PvmDataDefault);
    pvm_send(t, TAG_STOP);
    pvm_exit();
    return 0;
}
