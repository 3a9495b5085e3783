/*
 * vm-service.c - a mailbox service and its client, started from separate
 * shells into one VM (tests/vm/test-vm.sh): they meet through the mailbox
 * (pvm_putinfo / pvm_recvinfo) and a group formed by programs started
 * separately (pvm_joingroup, pvm_gsize, pvm_gettid, pvm_barrier).
 *
 *   vm-service serve NAME    put NAME in the mailbox, join group NAME,
 *                            answer requests until told to stop
 *   vm-service ask NAME      find the server, join its group, ask once
 *   vm-service stop NAME     tell the server to stop
 *   vm-service wait NAME     wait for any message (until killed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pvm3.h>

enum { TAG_ASK = 1, TAG_ANSWER = 2, TAG_STOP = 3 };

static int find_server(const char *name)
{
    int bufid = pvm_recvinfo((char *)name, 0, PvmMboxDefault);
    if (bufid < 0) {
        printf("no service %s: %d\n", name, bufid);
        return -1;
    }
    int tid;
    pvm_setrbuf(bufid);
    pvm_upkint(&tid, 1, 1);
    return tid;
}

static int serve(const char *name)
{
    int me = pvm_mytid();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    if (pvm_putinfo((char *)name, pvm_getsbuf(), PvmMboxDefault) < 0) {
        printf("cannot put %s\n", name);
        return 1;
    }
    int inst = pvm_joingroup((char *)name);
    printf("serving %s as t%x, instance %d\n", name, me, inst);
    fflush(stdout);
    for (int served = 0;;) {
        int src, tag, len;
        int bufid = pvm_recv(-1, -1);
        pvm_bufinfo(bufid, &len, &tag, &src);
        if (tag == TAG_STOP)
            break;
        if (tag != TAG_ASK)
            continue;
        served++;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&served, 1, 1);
        pvm_send(src, TAG_ANSWER);
        if (pvm_barrier((char *)name, 2) < 0)
            printf("barrier failed\n");
    }
    pvm_lvgroup((char *)name);
    pvm_delinfo((char *)name, 0, PvmMboxDefault);
    printf("server stops\n");
    pvm_exit();
    return 0;
}

static int ask(const char *name)
{
    int server = find_server(name);
    if (server < 0)
        return 1;
    int inst = pvm_joingroup((char *)name);
    int size = pvm_gsize((char *)name);
    int first = pvm_gettid((char *)name, 0);
    printf("group %s: size %d, instance %d, first is %s\n", name, size, inst,
           first == server ? "the server" : "someone else");
    pvm_initsend(PvmDataDefault);
    pvm_send(server, TAG_ASK);
    int n = 0;
    pvm_recv(server, TAG_ANSWER);
    pvm_upkint(&n, 1, 1);
    int b = pvm_barrier((char *)name, 2);
    printf("answer %d, barrier %s\n", n, b == 0 ? "ok" : "failed");
    pvm_lvgroup((char *)name);
    pvm_exit();
    return size == 2 && first == server && b == 0 ? 0 : 1;
}

static int stop(const char *name)
{
    int server = find_server(name);
    if (server < 0)
        return 1;
    pvm_initsend(PvmDataDefault);
    pvm_send(server, TAG_STOP);
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: vm-service serve|ask|stop NAME\n");
        return 2;
    }
    if (!strcmp(argv[1], "serve"))
        return serve(argv[2]);
    if (!strcmp(argv[1], "ask"))
        return ask(argv[2]);
    if (!strcmp(argv[1], "stop"))
        return stop(argv[2]);
    if (!strcmp(argv[1], "wait")) {
        pvm_mytid();
        pvm_recv(-1, -1);
        pvm_exit();
        return 0;
    }
    return 2;
}
