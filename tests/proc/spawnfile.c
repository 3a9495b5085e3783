/*
 * spawnfile.c - spawns the program named by argv[1] (one copy) and prints
 * what pvm_spawn returned and the tid slot, run by test-proc.sh
 * (bad-files): "spawn RC TID".  A copy started with argv[1] "child" only
 * says "RAN" (a program that must not run would print it).
 */
#include <pvm3.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        puts("RAN");
        return 0;
    }
    if (argc < 2)
        return 2;
    int tid = 0x5555;
    int rc = pvm_spawn(argv[1], (char *[]){"child", NULL}, PvmTaskDefault, "", 1, &tid);
    printf("spawn %d %d\n", rc, tid);
    pvm_exit();
    return 0;
}
