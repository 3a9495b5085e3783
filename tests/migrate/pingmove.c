#include <pvm3.h>
#include <upvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int *list; static int nlist;
int main(int argc, char **argv)
{
    int me = pvm_mytid();
    if (pvm_parent() == PvmNoParent) {
        int tid;
        if (pvm_spawn(argv[0], NULL, PvmTaskDefault, "", 1, &tid) != 1) { printf("spawn failed\n"); return 1; }
        printf("worker t%x on node %d\n", tid, upvm_node_of(tid));
        int nodes = upvm_nodes();
        long sum = 0;
        for (int i = 0; i < 50; i++) {
            int to = i % nodes;
            int rc = upvm_migrate(tid, to);
            if (rc) { printf("migrate %d -> %d failed %d: %s\n", i, to, rc, upvm_migrate_error()); return 1; }
            struct upvm_migrate_stats st; upvm_migrate_stats(&st);
            if (i < 4) printf("moved to %d (node_of %d) total %.1f us obtr %.1f us bytes %lu\n", to, upvm_node_of(tid), st.total_ns/1e3, st.obtrusive_ns/1e3, (unsigned long)st.bytes);
            pvm_initsend(PvmDataDefault); pvm_pkint(&i, 1, 1); pvm_send(tid, 1);
            pvm_recv(tid, 2); int v; pvm_upkint(&v, 1, 1); sum += v;
        }
        int stop = -1; pvm_initsend(PvmDataDefault); pvm_pkint(&stop, 1, 1); pvm_send(tid, 1);
        pvm_recv(tid, 3); int ok; pvm_upkint(&ok, 1, 1);
        printf("sum %ld ok %d\n", sum, ok);
        pvm_exit(); return 0;
    }
    nlist = 1000; list = malloc(nlist * sizeof *list);
    for (int i = 0; i < nlist; i++) list[i] = i * 7;
    for (;;) {
        pvm_recv(-1, 1); int i; pvm_upkint(&i, 1, 1);
        if (i < 0) break;
        int v = list[i] + i;
        pvm_initsend(PvmDataDefault); pvm_pkint(&v, 1, 1); pvm_send(pvm_parent(), 2);
    }
    int ok = 1; for (int i = 0; i < nlist; i++) ok &= list[i] == i * 7;
    pvm_initsend(PvmDataDefault); pvm_pkint(&ok, 1, 1); pvm_send(pvm_parent(), 3);
    (void)me; pvm_exit(); return 0;
}
