/*
 * aborts.c - abort() in a process-mode task ends that task with status
 * 134 and a line naming it; the rest of the job goes on (the master gets
 * the child's PvmTaskExit and ends normally).
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        abort();
    char *args[] = {"child", NULL};
    int tid;
    if (pvm_spawn(argv[0], args, 0, "", 1, &tid) != 1)
        return 1;
    pvm_notify(PvmTaskExit, 7, 1, &tid);
    pvm_recv(-1, 7);
    printf("master goes on after the child's abort\n");
    pvm_exit();
    return 0;
}
