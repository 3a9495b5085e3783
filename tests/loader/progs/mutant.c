/*
 * mutant.c - the program test-loader-mutants corrupts, built by upvmcc:
 * a constructor (an init_array entry), globals reached through RELATIVE
 * relocations, imports through GLOB_DAT and JUMP_SLOT.  It prints RAN (and
 * its constructor CTOR) when it runs: a refused file must print neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *words[] = {"RAN", "again"};
int counter = 5;

__attribute__((constructor)) static void ctor(void) { puts("CTOR"); }

int main(void)
{
    char *p = malloc(16);
    strcpy(p, words[0]);
    printf("%s %d\n", p, counter);
    free(p);
    return 0;
}
