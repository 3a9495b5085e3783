/* starter.c - a thread-mode program that starts the VM with pvm_start_pvmd
 * and joins it at its first PVM call (tests/vm/test-vm.sh start-pvmd). */
#include <stdio.h>
#include <pvm3.h>

int main(void)
{
    int rc = pvm_start_pvmd(0, NULL, 1);
    printf("start %d, t%x\n", rc, pvm_mytid());
    pvm_exit();
    return 0;
}
