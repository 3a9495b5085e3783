/*
 * mutant.c - the program test-loader-mutants corrupts, built by upvmcc:
 * a constructor (an init_array entry), globals reached through RELATIVE
 * relocations, imports through GLOB_DAT and JUMP_SLOT, a thread-local
 * variable (PT_TLS, DTPMOD64/DTPOFF64).  It prints RAN (and
 * its constructor CTOR) when it runs: a refused file must print neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *words[] = {"RAN", "again"};
int counter = 5;
__thread int tls_word = 7;

__attribute__((constructor)) static void ctor(void) { puts("CTOR"); }

int main(void)
{
    char *p = malloc(16);
    strcpy(p, words[0]);
    printf("%s %d\n", p, counter);
    printf("TLS %d\n", tls_word);
    free(p);
    return 0;
}
