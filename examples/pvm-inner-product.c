/*
 * pvm-inner-product.c - the inner product program of the M-PVM paper
 * (section 2 and section 4), both ways, in one executable:
 *
 *   1. the PVM way: main is the master; it pvm_spawn()s three "slave"
 *      tasks by name, sends each the start of its interval, and sums the
 *      partial products they send back;
 *   2. the M-PVM way: upvm_task_spawn_func() starts the slaves as
 *      functions with ordinals 0..2, which pick their interval themselves.
 *
 * The slaves are PVM tasks running as ULPs of this process (thread mode);
 * every message is a local hand-over of a buffer reference.  Exits 1 if a
 * result is wrong.  Build and run: scripts/demo.sh, or
 *   build/examples/pvm-inner-product
 */
#include <pvm3.h>
#include <stdio.h>
#include <upvm.h>

#define TAG 1
#define NSLAVES 3
#define CHUNK 4

static int vect1[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static int vect2[12] = {4, 7, 8, 1, 3, 6, 5, 2, 9, 13, 17, 21};

static int partial_product(int start)
{
    int partial = 0;
    for (int i = start; i < start + CHUNK; i++)
        partial += vect1[i] * vect2[i];
    return partial;
}

/* PVM version: a task spawned by name ("slave"). */
static int slave(int argc, char **argv)
{
    int parent = pvm_parent();
    int start;
    pvm_recv(parent, TAG);
    pvm_upkint(&start, 1, 1);
    int partial = partial_product(start);
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&partial, 1, 1);
    pvm_send(parent, TAG);
    pvm_exit();
    return 0;
}
UPVM_TASK("slave", slave)

/* M-PVM version: a task started by function, told its ordinal. */
static void slave_by_ordinal(int ord, void *arg)
{
    int partial = partial_product(ord * CHUNK);
    pvm_initsend(PvmDataRaw);
    pvm_pkint(&partial, 1, 1);
    pvm_send(pvm_parent(), TAG);
    pvm_exit();
}

static int collect(void)
{
    int total = 0;
    for (int i = 0; i < NSLAVES; i++) {
        int num;
        pvm_recv(-1, TAG);
        pvm_upkint(&num, 1, 1);
        total += num;
    }
    return total;
}

int main(void)
{
    int tids[NSLAVES];
    int expected = 0;
    for (int i = 0; i < 12; i++)
        expected += vect1[i] * vect2[i];

    printf("master t%x\n", pvm_mytid());
    if (pvm_spawn("slave", NULL, 0, "", NSLAVES, tids) != NSLAVES) {
        fprintf(stderr, "pvm_spawn: %s\n", pvm_strerror());
        return 1;
    }
    for (int i = 0; i < NSLAVES; i++) {
        int num = i * CHUNK;
        pvm_initsend(PvmDataRaw);
        pvm_pkint(&num, 1, 1);
        pvm_send(tids[i], TAG);
    }
    int pvm_total = collect();
    printf("PVM   (pvm_spawn by name):       Inner Product = %d  (slaves t%x t%x t%x)\n",
           pvm_total, tids[0], tids[1], tids[2]);

    if (upvm_task_spawn_func(slave_by_ordinal, NULL, NSLAVES, tids) != NSLAVES)
        return 1;
    int mpvm_total = collect();
    printf("M-PVM (spawn by function, ords): Inner Product = %d  (slaves t%x t%x t%x)\n",
           mpvm_total, tids[0], tids[1], tids[2]);
    pvm_exit();

    if (pvm_total != expected || mpvm_total != expected) {
        fprintf(stderr, "wrong result: expected %d\n", expected);
        return 1;
    }
    return 0;
}
