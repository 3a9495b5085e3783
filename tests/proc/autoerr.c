/*
 * autoerr.c - PvmAutoErr 2 in a process-mode task: PVM prints the error,
 * then pvm_exit() and exit(code): the task's atexit handlers run and the
 * status is the error code (PvmNoSuchBuf -16 -> 240).
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>

static void handler(void)
{
    printf("atexit handler ran\n");
}

int main(void)
{
    atexit(handler);
    pvm_setopt(PvmAutoErr, 2);
    pvm_freebuf(9999);
    printf("not reached\n");
    return 0;
}
