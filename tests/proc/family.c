/*
 * family.c - an ordinary PVM program (built with upvmcc, nothing UPVM-
 * specific in it) that checks what process mode promises, run by
 * test-proc.sh:
 *
 *   family             the master: spawns 3 copies of itself ("child N")
 *                      and checks what they report
 *   family child N     a child: bumps its globals, allocates, uses getopt,
 *                      getenv, atexit, and reports to its parent
 *
 * Every process-mode ULP has its own globals, heap, argv, getopt state and
 * atexit list; exit() ends only the ULP that calls it.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int counter;                 /* .bss: private per ULP */
static int initialised = 42;        /* .data: private per ULP */
static char *heap_block;
static int constructed;

__attribute__((constructor)) static void ctor(void) { constructed++; }

static void at_exit_handler(void)
{
    /* runs in the ULP that registered it, when that ULP exits */
    printf("child %d: atexit handler ran\n", initialised);
    fflush(stdout);
}

static int child(int n, int argc, char **argv)
{
    int parent = pvm_parent();
    counter++;
    initialised += n;
    heap_block = malloc(1000);
    memset(heap_block, n, 1000);
    int opt, seen_x = 0;
    while ((opt = getopt(argc, argv, "x")) != -1)
        seen_x += opt == 'x';
    atexit(at_exit_handler);
    char value[16];
    snprintf(value, sizeof value, "%d", n);
    setenv("FAMILY_CHILD", value, 1); /* this ULP's environment only */
    seen_x += 10 * (strcmp(getenv("FAMILY_CHILD"), value) != 0);
    pvm_initsend(PvmDataRaw); /* raw: an address does not fit an XDR long */
    int report[5] = {n, counter, initialised, constructed, seen_x};
    pvm_pkint(report, 5, 1);
    long addr = (long)heap_block;
    pvm_pklong(&addr, 1, 1);
    pvm_send(parent, 1);
    sleep(0); /* the ULP sleeps, the others run */
    free(heap_block);
    if (n == 2)
        exit(7); /* ends this ULP only */
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "child") == 0) {
        int n = atoi(argv[2]);
        return child(n, argc - 2, argv + 2);
    }
    int tids[3];
    char *args[3][4] = {{"child", "0", "-x", NULL}, {"child", "1", NULL},
                        {"child", "2", "-x", NULL}};
    for (int i = 0; i < 3; i++)
        if (pvm_spawn(argv[0], args[i], PvmTaskDefault, "", 1, &tids[i]) != 1) {
            printf("FAIL: spawn %d: %d\n", i, tids[i]);
            return 1;
        }
    pvm_notify(PvmTaskExit, 9, 3, tids);
    long addrs[3];
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        int r[5];
        long a;
        pvm_recv(-1, 1);
        pvm_upkint(r, 5, 1);
        pvm_upklong(&a, 1, 1);
        addrs[r[0]] = a;
        printf("child %d: counter=%d initialised=%d constructed=%d -x=%d\n", r[0], r[1],
               r[2], r[3], r[4]);
        if (r[1] != 1 || r[2] != 42 + r[0] || r[3] != 1 || r[4] != (r[0] != 1))
            bad++;
    }
    for (int i = 0; i < 3; i++) { /* every child ended: its notification */
        pvm_recv(-1, 9);
    }
    bad += addrs[0] == addrs[1] || addrs[1] == addrs[2];
    printf("master: counter=%d initialised=%d (untouched by the children)\n", counter,
           initialised);
    bad += counter != 0 || initialised != 42;
    if (getenv("FAMILY_CHILD")) {
        printf("master sees a child's environment\n");
        bad++;
    }
    printf(bad ? "FAIL\n" : "OK\n");
    pvm_exit();
    return bad ? 1 : 0;
}
