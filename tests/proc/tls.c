/*
 * tls.c [N] - thread-local variables in process-mode programs: a master
 * (from the shell) spawns N copies of itself (default 1000); each has its
 * own __thread variables (an initialised one: .tdata; an int and a 1 KiB
 * array: .tbss; a static one: local-dynamic access), writes values of its
 * own, yields, checks them, checks them again coupled to a kernel context
 * (same address, same value), migrates to the next node (when the job has
 * more than one) and checks them there.  Each copy sends the master the
 * number of checks that failed; the master prints "tls N copies OK, M moved" and
 * "OK".  Run by test-proc.sh (tls).
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>

enum { ARR = 256 };

__thread int tls_initialised = 12345;
__thread int tls_value;
__thread unsigned tls_array[ARR];
static __thread long tls_static;

static void fill(int i)
{
    tls_value = i * 7 + 1;
    for (int k = 0; k < ARR; k++)
        tls_array[k] = (unsigned)(i * 1000 + k);
    tls_static = -(long)i;
}

/* Failed checks of the values copy i wrote. */
static int check(int i)
{
    int bad = tls_value != i * 7 + 1;
    for (int k = 0; k < ARR; k++)
        bad += tls_array[k] != (unsigned)(i * 1000 + k);
    return bad + (tls_static != -(long)i) + (tls_initialised != 12345 + i);
}

static int moved;

static int copy(int i)
{
    int bad = tls_initialised != 12345 || tls_value != 0 || tls_array[ARR - 1] != 0;
    tls_initialised += i;
    fill(i);
    upvm_yield();
    bad += check(i);
    int *addr = &tls_value;
    if (upvm_couple() != 0)
        return bad + 1000;
    bad += !upvm_coupled() + check(i) + (&tls_value != addr);
    if (upvm_decouple() != 0)
        return bad + 1000;
    int nodes = upvm_nodes();
    if (nodes > 1) {
        int to = (upvm_node_of(0) + 1) % nodes;
        if (upvm_migrate(0, to) != 0) {
            fprintf(stderr, "copy %d cannot move: %s\n", i, upvm_migrate_error());
            return bad + 1000;
        }
        bad += upvm_node_of(0) != to;
        moved = 1;
    }
    upvm_yield();
    return bad + check(i) + (&tls_value != addr);
}

int main(int argc, char **argv)
{
    int me = pvm_mytid();
    if (argc > 1 && strcmp(argv[1], "copy") == 0) {
        int *sibs;
        pvm_siblings(&sibs);
        int i = me - sibs[0], bad = copy(i);
        if (bad)
            fprintf(stderr, "copy %d: %d checks failed\n", i, bad);
        pvm_initsend(PvmDataDefault);
        int v[2] = {bad, moved};
        pvm_pkint(v, 2, 1);
        pvm_send(pvm_parent(), 1);
        pvm_exit();
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    fill(n);
    int *tids = calloc((size_t)n, sizeof *tids);
    if (!tids || pvm_spawn(argv[0], (char *[]){"copy", NULL}, PvmTaskDefault, "", n, tids) != n) {
        printf("spawn failed\n");
        return 2;
    }
    int bad = 0, nmoved = 0;
    for (int i = 0; i < n; i++) {
        int v[2];
        pvm_recv(-1, 1);
        pvm_upkint(v, 2, 1);
        bad += v[0];
        nmoved += v[1];
    }
    tls_initialised += n;
    bad += check(n);
    printf("tls %d copies %s, %d moved\n", n, bad ? "FAILED" : "OK", nmoved);
    pvm_exit();
    if (bad)
        return 1;
    puts("OK");
    return 0;
}
