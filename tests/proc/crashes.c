/*
 * crashes.c - crashes of a process-mode program, for the crash report
 * (test-proc.sh, scenarios crash-*): "crashes CASE" with CASE one of
 *   bad-call   a call through a pointer to an address nothing is mapped at
 *   null-call  a call through a NULL function pointer
 *   overflow   endless recursion: the ULP's stack overflows
 *   bad-chain  the frame-pointer chain is corrupt when it faults
 * The functions are not static so that the report can name them.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void bad_caller(void (*fn)(void));
void chain_breaker(int *p);
void chain_middle(int *p);
int recurse(int depth);

static volatile int calls_returned; /* work after each call: no tail jumps */
static volatile int never_stop = -1;

__attribute__((noinline)) void bad_caller(void (*fn)(void))
{
    __asm__("" : "+r"(fn)); /* hide the constant from the optimiser */
    fn();
    calls_returned++;
}

__attribute__((noinline)) int recurse(int depth)
{
    volatile char pad[64];
    pad[0] = (char)depth;
    if (depth == never_stop)
        return 0;
    return recurse(depth + 1) + pad[0];
}

/* Overwrite the saved frame pointer of this frame with an unmapped
 * address, then fault. */
__attribute__((noinline)) void chain_breaker(int *p)
{
    uintptr_t *record = __builtin_frame_address(0);
    record[0] = (uintptr_t)0x1fff00000000UL;
    __asm__("" : "+r"(p));
    *p = 1;
    calls_returned++;
}

__attribute__((noinline)) void chain_middle(int *p)
{
    chain_breaker(p);
    calls_returned++;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "bad-call"))
        bad_caller((void (*)(void))0x1fff000010c0UL);
    else if (!strcmp(what, "null-call"))
        bad_caller(NULL);
    else if (!strcmp(what, "overflow"))
        printf("%d\n", recurse(0));
    else if (!strcmp(what, "bad-chain"))
        chain_middle((int *)16);
    else
        fprintf(stderr, "usage: crashes bad-call|null-call|overflow|bad-chain\n");
    return 2;
}
