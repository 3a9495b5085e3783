/*
 * limits.c - an ordinary PVM program (built with upvmcc) that runs into
 * process mode's limits, for test-proc.sh:
 *
 *   limits spawn N     spawns N copies of itself (one pvm_spawn, spread
 *                      over the job's nodes), prints "started K of N",
 *                      lets them end, exits 0
 *   limits idle        a copy: waits for its parent's word, ends
 *   limits heap MIB    allocates MIB MiB at a time until malloc returns
 *                      NULL, prints "malloc NULL after M MiB", frees it
 *                      all, does it again (the hint is said once), exits 0
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_GO = 1 };

static int spawn(int n)
{
    int *tids = malloc((size_t)n * sizeof *tids);
    if (!tids || pvm_mytid() < 0)
        return 1;
    int k = pvm_spawn("limits", (char *[]){"idle", NULL}, PvmTaskDefault, "", n, tids);
    printf("started %d of %d\n", k, n);
    fflush(stdout);
    int *ok = malloc((size_t)n * sizeof *ok), m = 0;
    for (int i = 0; ok && i < n; i++)
        if (tids[i] > 0)
            ok[m++] = tids[i];
    pvm_initsend(PvmDataDefault);
    if (m > 0 && pvm_mcast(ok, m, TAG_GO) < 0)
        return 1;
    pvm_exit();
    return 0;
}

/* Blocks of mib MiB until malloc fails; their count. */
static size_t fill(void **blocks, size_t max, size_t mib)
{
    size_t n = 0;
    while (n < max && (blocks[n] = malloc(mib << 20)))
        memset(blocks[n++], 1, 4096); /* touch a page, not all */
    return n;
}

static int heap(size_t mib)
{
    static void *blocks[1 << 16];
    for (int round = 0; round < 2; round++) {
        size_t n = fill(blocks, sizeof blocks / sizeof *blocks, mib);
        printf("malloc NULL after %zu MiB\n", n * mib);
        fflush(stdout);
        while (n > 0)
            free(blocks[--n]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "idle")) {
        int ok = pvm_recv(pvm_parent(), TAG_GO) > 0;
        pvm_exit();
        return ok ? 0 : 1;
    }
    if (argc > 2 && !strcmp(argv[1], "spawn"))
        return spawn(atoi(argv[2]));
    if (argc > 2 && !strcmp(argv[1], "heap"))
        return heap((size_t)atoi(argv[2]));
    fprintf(stderr, "usage: limits spawn N | idle | heap MIB\n");
    return 2;
}
