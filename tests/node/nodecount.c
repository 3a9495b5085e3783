/* nodecount.c - prints how many nodes its job started with (upvmcc). */
#include <pvm3.h>
#include <stdio.h>
#include <upvm.h>

int main(void)
{
    pvm_mytid();
    printf("nodes %d\n", upvm_nodes());
    pvm_exit();
    return 0;
}
