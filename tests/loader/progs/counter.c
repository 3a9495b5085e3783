/*
 * counter.c - the loader tests' main program: globals to show that each
 * instance has its own, a constructor and a destructor that count, a
 * multi-page .bss, imports the resolver may interpose (malloc, optind,
 * stdout, environ) and a weak import that only a resolver provides.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern char **environ;
extern int loader_test_hook(int) __attribute__((weak));

int counter = 5;      /* .data */
int big[8192];        /* .bss: 32 KiB, several pages */
int init_runs;
int fini_runs;
int atexit_runs;  /* atexit handlers belong to the instance (__dso_handle) */
int hook_result;
void *last_alloc;

static void count_atexit(void) { atexit_runs++; }

__attribute__((constructor)) static void count_init(void)
{
    init_runs++;
    atexit(count_atexit);
}
__attribute__((destructor)) static void count_fini(void) { fini_runs++; }

/* Defined here: a test makes the import loader_test_hook bind to this. */
int prog_own(int x) { return x + 1000; }

int get_optind(void) { return optind; }
FILE *get_stdout(void) { return stdout; }
char **get_environ(void) { return environ; }

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    counter++;
    free(last_alloc);
    last_alloc = malloc(24);
    hook_result = loader_test_hook ? loader_test_hook(counter) : -1;
    return counter;
}
