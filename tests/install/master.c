/*
 * master.c - the install test's PVM master (tests/install/test-install.sh):
 * spawns NSLAVES copies of "slave" (found in its own directory), sends
 * slave i the number i, and prints each answer.  Built by the installed
 * upvmcc, by pkg-config's flags and by find_package(UPVM).
 */
#include <stdio.h>
#include <pvm3.h>

#define NSLAVES 3
#define TAG_WORK 1
#define TAG_ANSWER 2

int main(void)
{
    int tids[NSLAVES];
    int n = pvm_spawn("slave", NULL, PvmTaskDefault, "", NSLAVES, tids);
    if (n != NSLAVES) {
        printf("master: pvm_spawn started %d of %d slaves (tids[0] %d)\n", n, NSLAVES, tids[0]);
        pvm_exit();
        return 1;
    }
    for (int i = 0; i < NSLAVES; i++) {
        int number = i + 1;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&number, 1, 1);
        pvm_send(tids[i], TAG_WORK);
    }
    for (int i = 0; i < NSLAVES; i++) {
        int number, square, calls;
        pvm_recv(tids[i], TAG_ANSWER);
        pvm_upkint(&number, 1, 1);
        pvm_upkint(&square, 1, 1);
        pvm_upkint(&calls, 1, 1);
        printf("master: slave %d squared %d: %d (its own globals: call %d)\n", i + 1, number,
               square, calls);
    }
    pvm_exit();
    return 0;
}
