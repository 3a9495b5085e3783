/* trace-hello.c - the task the console traces in test-vm.sh's
 * console-trace (spawn -@): a few traced calls, a message to its parent
 * (the console) and a line of output. */
#include <stdio.h>
#include <pvm3.h>

int main(void)
{
    int me = pvm_mytid(), parent = pvm_parent();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    if (parent > 0)
        pvm_send(parent, 5);
    printf("hello from t%x\n", me);
    pvm_exit();
    return 0;
}
