/*
 * spmd-ring.c - an ordinary SPMD PVM program (nothing UPVM-specific): N
 * copies pass a token around a ring built from pvm_siblings(), each adding
 * its own copy of a global.  Built with upvmcc and started with
 *
 *   build/tools/upvmcc/upvmcc -o spmd-ring examples/spmd-ring.c
 *   build/tools/upvm/upvm run -n 8 ./spmd-ring
 *
 * every copy is a process-mode ULP: its own globals, its own heap.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>

static int my_share; /* a global: one per copy */

int main(void)
{
    int *tids, me = pvm_mytid();
    int n = pvm_siblings(&tids);
    int pos = 0;
    while (pos < n && tids[pos] != me)
        pos++;
    my_share = pos + 1;
    int *scratch = malloc(1000 * sizeof *scratch); /* from this copy's heap */
    scratch[0] = my_share;
    int token = 0;
    if (pos == 0) {
        token = scratch[0];
        pvm_initsend(PvmDataRaw);
        pvm_pkint(&token, 1, 1);
        pvm_send(tids[(pos + 1) % n], 1);
        pvm_recv(tids[n - 1], 1);
        pvm_upkint(&token, 1, 1);
        printf("ring of %d process-mode ULPs: token %d (expected %d)\n", n, token,
               n * (n + 1) / 2);
    } else {
        pvm_recv(tids[pos - 1], 1);
        pvm_upkint(&token, 1, 1);
        token += scratch[0];
        pvm_initsend(PvmDataRaw);
        pvm_pkint(&token, 1, 1);
        pvm_send(tids[(pos + 1) % n], 1);
    }
    free(scratch);
    pvm_exit();
    return pos == 0 && token != n * (n + 1) / 2;
}
