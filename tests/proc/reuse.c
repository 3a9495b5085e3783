/*
 * reuse.c - a slot kept after its ULP ended is reused for the next ULP of
 * the same program: that ULP must still start from the program's initial
 * state (fresh .data and .bss, a fresh heap and environment, constructors
 * run again).  The master spawns a child 20 times, one after the other.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int in_bss;
static int in_data = 5;
static int constructed;
__attribute__((constructor)) static void ctor(void) { constructed++; }

int main(int argc, char **argv)
{
    if (argc > 1) { /* the child: change everything, report what it found */
        int found[4] = {in_bss, in_data, constructed, getenv("REUSE_MARK") != NULL};
        in_bss = 99;
        in_data = 99;
        setenv("REUSE_MARK", "1", 1);
        char *junk = malloc(100000);
        memset(junk, 0xab, 100000); /* left behind in the heap on purpose */
        pvm_initsend(PvmDataRaw);
        pvm_pkint(found, 4, 1);
        pvm_send(pvm_parent(), 1);
        return 0;
    }
    char *args[] = {"child", NULL};
    int bad = 0;
    for (int i = 0; i < 20; i++) {
        int tid, found[4];
        if (pvm_spawn(argv[0], args, 0, "", 1, &tid) != 1)
            return 1;
        pvm_notify(PvmTaskExit, 2, 1, &tid);
        pvm_recv(tid, 1);
        pvm_upkint(found, 4, 1);
        pvm_recv(-1, 2); /* it ended: its slot is free for the next one */
        if (found[0] != 0 || found[1] != 5 || found[2] != 1 || found[3] != 0) {
            printf("spawn %d found bss=%d data=%d constructed=%d mark=%d\n", i, found[0],
                   found[1], found[2], found[3]);
            bad++;
        }
    }
    printf(bad ? "FAIL\n" : "20 children, each from the initial state: OK\n");
    pvm_exit();
    return bad != 0;
}
