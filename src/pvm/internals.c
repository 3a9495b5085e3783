/*
 * internals.c - libpvm3 internals that some PVM programs use although
 * pvm3.h does not declare them (Debian's pvm-examples do: bwtest, mbox,
 * trsg call pvmsleep; bwtest pvmgetclock; task0/task1/rme lpvmerr;
 * mhf_server pvmdisplaymhfinfo; ptest pvmdebmask).  Same names, same
 * meaning, so those programs link and run unchanged.
 */
#include <stdio.h>
#include <sys/time.h>

#include "pvm/pvm.h"

/* libpvm's debug mask (PvmDebugMask); UPVM prints no debug output. */
UPVM_API int pvmdebmask;

UPVM_API int pvmsleep(int secs);
UPVM_API int pvmgetclock(struct timeval *tm);
UPVM_API int lpvmerr(const char *fn, int code);
UPVM_API void pvmdisplaymhfinfo(const char *who, const char *msg, int tid);

/* Sleep secs seconds; the task's node runs its other tasks meanwhile. */
int pvmsleep(int secs)
{
    if (secs > 0)
        (void)upvm_sleep_ns((uint64_t)secs * 1000000000u);
    return 0;
}

/* The time of day, as libpvm reads it for its timings. */
int pvmgetclock(struct timeval *tm)
{
    return tm ? gettimeofday(tm, NULL) : 0;
}

/* libpvm's error reporter behind PvmAutoErr: "libpvm [t40001]: fn():
 * text", per the task's PvmAutoErr; returns code. */
int lpvmerr(const char *fn, int code)
{
    struct pvm_task *t = pvm_current();
    return pvm_fail(t, fn ? fn : "?", code);
}

/* libpvm's dump of the message-handler table: a header line, then one line
 * per handler of the calling task. */
void pvmdisplaymhfinfo(const char *who, const char *msg, int tid)
{
    struct pvm_task *t = pvm_current();
    printf("%s t%x: %s\n", who ? who : "", (unsigned)tid, msg ? msg : "");
    for (int i = 0; t && i < t->nmhfs; i++)
        if (t->mhfs[i].used)
            printf("  mhid %d: src %d tag %d ctx %d\n", PVM_MHF_FIRST + i, t->mhfs[i].src,
                   t->mhfs[i].tag, t->mhfs[i].ctx);
}
