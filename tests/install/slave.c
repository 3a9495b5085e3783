/*
 * slave.c - the install test's PVM slave: squares the number its parent
 * sends and answers with how many times it ran, counted in a global (1 in
 * every slave: each process-mode task has its own globals).
 */
#include <pvm3.h>

static int calls;

int main(void)
{
    int number, square;
    pvm_recv(pvm_parent(), 1);
    pvm_upkint(&number, 1, 1);
    calls++;
    square = number * number;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&number, 1, 1);
    pvm_pkint(&square, 1, 1);
    pvm_pkint(&calls, 1, 1);
    pvm_send(pvm_parent(), 2);
    pvm_exit();
    return 0;
}
