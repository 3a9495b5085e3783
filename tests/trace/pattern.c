/*
 * pattern.c - a job whose trace is known in advance (tests/trace).
 *
 * Three tasks on two nodes (UPVM_NODES=2, cyclic placement): the first
 * (on node 0) spawns two children (node 1, then node 0), sends the first
 * 1024 bytes with tag 7 and the second 16 bytes with tag 8 (PvmDataRaw: the
 * bytes are the lengths the trace shows); each child answers with 4 bytes,
 * tag 9.  All three join group "g" and meet at one barrier of 3.
 *
 *   pattern            just that: 4 messages, 3 barriers
 *   pattern migrate    then the parent moves the first child, blocked in
 *                      pvm_recv for tag 10, to node 0 (upvm_migrate), and
 *                      sends it tag 10 (8 bytes): 5 messages, 1 migration
 *   pattern hang       then the first child waits forever (the test kills
 *                      its node): a trace cut short
 *   pattern crash      then the first child dereferences NULL: its node
 *                      crashes, its trace is closed by the crash handler
 * The first task prints "pattern ok" when every answer was right.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <upvm.h>

static void send_bytes(int tid, int tag, int n)
{
    char buf[1024];
    memset(buf, 'x', sizeof buf);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte(buf, n, 1);
    pvm_send(tid, tag);
}

static int recv_bytes(int tid, int tag)
{
    int bytes, rtag, rtid;
    int id = pvm_recv(tid, tag);
    if (id < 0 || pvm_bufinfo(id, &bytes, &rtag, &rtid) < 0)
        return -1;
    return bytes;
}

/* Wait for a message that never comes, polling (a timed receive: not a
 * deadlock the runtime would end the job for), at most 60 s. */
static void wait_forever(int tid, int tag)
{
    struct timeval tick = {0, 100000};
    for (int i = 0; i < 600 && pvm_trecv(tid, tag, &tick) == 0; i++)
        ;
}

static int meet(void)
{
    if (pvm_joingroup("g") < 0)
        return -1;
    return pvm_barrier("g", 3);
}

static int child(const char *mode)
{
    int parent = pvm_parent();
    int n = recv_bytes(parent, -1);
    send_bytes(parent, 9, 4);
    if (meet() < 0 || n <= 0)
        return 1;
    if (n == 1024 && !strcmp(mode, "migrate"))
        return recv_bytes(parent, 10) == 8 ? 0 : 1;
    if (n == 1024 && !strcmp(mode, "hang"))
        wait_forever(parent, 11); /* never sent: the test kills this node */
    if (n == 1024 && !strcmp(mode, "crash")) {
        pvm_recv(parent, 12); /* after the parent says it waits */
        *(volatile int *)NULL = 1;
    }
    pvm_lvgroup("g");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (pvm_mytid() < 0)
        return 2;
    if (pvm_parent() != PvmNoParent) {
        int rc = child(mode);
        pvm_exit();
        return rc;
    }
    char *args[] = {(char *)mode, NULL};
    int tids[2];
    if (pvm_spawn(argv[0], args, PvmTaskDefault, "", 2, tids) != 2) {
        printf("spawn failed\n");
        return 1;
    }
    send_bytes(tids[0], 7, 1024);
    send_bytes(tids[1], 8, 16);
    int a = recv_bytes(tids[0], 9), b = recv_bytes(tids[1], 9);
    int ok = a == 4 && b == 4 && meet() >= 0;
    if (ok && !strcmp(mode, "migrate")) {
        ok = upvm_migrate(tids[0], 0) == 0;
        send_bytes(tids[0], 10, 8);
    }
    if (!strcmp(mode, "hang") || !strcmp(mode, "crash")) {
        printf("pattern waiting\n");
        fflush(stdout);
        if (!strcmp(mode, "crash"))
            send_bytes(tids[0], 12, 1);
        wait_forever(-1, 11); /* node 1 is killed, or crashes, meanwhile */
    }
    printf(ok ? "pattern ok\n" : "pattern FAILED\n");
    pvm_lvgroup("g");
    pvm_exit();
    return ok ? 0 : 1;
}
