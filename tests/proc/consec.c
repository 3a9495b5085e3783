/*
 * consec.c - a master started from the shell (process mode) spawns N
 * copies of itself in one pvm_spawn, run by test-proc.sh (consecutive):
 * their tids are consecutive (index = tid - tids[0], as PVM gives them on
 * one host), they are spread over the job's nodes all the same, every one
 * is on the one host pvm_config lists (pvm_tidtohost), and each one knows
 * its index from its tid.  Prints "tids T0..TN-1 on K nodes, 1 host"; "OK".
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upvm.h>

enum { N = 8 };

int main(int argc, char **argv)
{
    int me = pvm_mytid();
    if (argc > 1 && strcmp(argv[1], "copy") == 0) {
        int *sibs, n = pvm_siblings(&sibs);
        int v[4] = {me - sibs[0], upvm_node_of(0), pvm_tidtohost(me), n};
        pvm_initsend(PvmDataDefault);
        pvm_pkint(v, 4, 1);
        pvm_send(pvm_parent(), 1);
        pvm_exit();
        return 0;
    }
    int tids[N];
    if (pvm_spawn(argv[0], (char *[]){"copy", NULL}, PvmTaskDefault, "", N, tids) != N)
        return 2;
    int nhost;
    struct pvmhostinfo *hi;
    pvm_config(&nhost, NULL, &hi);
    int used[64] = {0}, nodes = 0, bad = nhost != 1;
    for (int i = 0; i < N; i++) {
        int v[4];
        bad |= tids[i] != tids[0] + i;
        pvm_recv(tids[i], 1);
        pvm_upkint(v, 4, 1);
        bad |= v[0] != i || v[2] != hi[0].hi_tid || v[3] != N;
        bad |= pvm_tidtohost(tids[i]) != hi[0].hi_tid;
        if (v[1] >= 0 && v[1] < 64 && !used[v[1]]++)
            nodes++;
    }
    printf("tids t%x..t%x on %d nodes, %d host\n", (unsigned)tids[0], (unsigned)tids[N - 1],
           nodes, nhost);
    puts(bad ? "WRONG" : "OK");
    pvm_exit();
    return bad;
}
