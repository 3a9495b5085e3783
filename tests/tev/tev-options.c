/*
 * tev-options.c - the trace masks and options as a program sees them:
 * defaults, what pvm_setopt accepts and refuses (and returns), and what
 * the pvmd sends a task that makes itself its own tracer (the data-id
 * table, spntask, newtask; endtask to the old tracer when the code
 * changes).  Written against PVM's API only: built against libpvm3 it
 * prints what genuine PVM 3.4.6 does, which tev-options.expected holds;
 * ctest compares UPVM's output with it (tids printed as "me+k").
 */
#include <pvm3.h>
#include <pvmtev.h>
#include <stdio.h>
#include <string.h>

extern int pvm_errno; /* libpvm3 exports it, Debian's pvm3.h does not declare it */

static int me;

static void show(const char *what, int r)
{
    if (r < 0)
        printf("%-40s = %d (pvm_errno %d)\n", what, r, pvm_errno);
    else if (me > 0 && r >= me && r < me + 16)
        printf("%-40s = me+%d\n", what, r - me);
    else
        printf("%-40s = %d\n", what, r);
}

#define P(x) show(#x, (x))

int main(void)
{
    me = pvm_mytid();
    pvm_setopt(PvmAutoErr, 0);
    Pvmtmask m, b;
    TEV_MASK_INIT(m);
    P(pvm_gettmask(PvmTaskSelf, b));
    printf("mask \"%s\", %zu characters\n", b, strlen(b));
    P(pvm_gettmask(2, b));
    P(pvm_settmask(5, m));
    P(pvm_getopt(PvmTraceTid));
    P(pvm_getopt(PvmTraceCode));
    P(pvm_getopt(PvmTraceBuffer));
    P(pvm_getopt(PvmTraceOptions));
    P(pvm_getopt(PvmTraceContext));
    P(pvm_getopt(PvmSelfTraceContext));
    P(pvm_getopt(PvmSelfTraceTid));
    P(pvm_getopt(PvmSelfTraceOptions));
    P(pvm_setopt(PvmTraceTid, me + 1));
    P(pvm_setopt(PvmTraceTid, me));
    P(pvm_setopt(PvmTraceContext, 5));
    P(pvm_setopt(PvmTraceCode, 77));
    P(pvm_setopt(PvmTraceOptions, 4));
    P(pvm_setopt(PvmTraceOptions, 3));
    P(pvm_setopt(PvmTraceOptions, 1));
    P(pvm_setopt(PvmTraceBuffer, -3));
    P(pvm_setopt(PvmSelfTraceCode, 9));
    P(pvm_getopt(PvmSelfTraceCode));
    P(pvm_setopt(PvmSelfTraceOptions, 0));
    P(pvm_setopt(PvmSelfTraceContext, 5));
    P(pvm_setopt(PvmSelfTraceBuffer, 100));
    P(pvm_setopt(PvmSelfTraceTid, me));
    P(pvm_getopt(PvmTraceTid));
    P(pvm_getopt(PvmTraceCode));
    P(pvm_getopt(PvmTraceContext));
    P(pvm_setopt(PvmSelfTraceCode, 9));
    P(pvm_getopt(PvmTraceCode));
    P(pvm_setopt(PvmTraceTid, me + 1));
    P(pvm_setopt(PvmTraceContext, 5));
    /* what the pvmd sent: its first two ints, the size and tag */
    struct timeval tv = {1, 0};
    int id;
    while ((id = pvm_trecv(-1, -1, &tv)) > 0) {
        int bytes, tag, src, mark, kind;
        pvm_bufinfo(id, &bytes, &tag, &src);
        pvm_upkint(&mark, 1, 1);
        pvm_upkint(&kind, 1, 1);
        printf("from %s, tag %d, %d bytes: %d %d\n", src == (int)0x80000000 ? "the pvmd" : "a task",
               tag, bytes, mark, kind);
    }
    pvm_exit();
    return 0;
}
