/*
 * errors.c - pvm_errno, the error texts, PvmAutoErr reports, and PVM codes
 * from errno.
 *
 * pvm_errno is one global int, as in PVM's ABI, but every ULP sees its own
 * value: the core saves and restores it on each switch like errno
 * (core_set_swapped_word, registered by pvm_node_init).
 *
 * Texts and report formats are those of PVM 3.4.6 (docs/reference,
 * section 17): "libpvm [t40001]: pvm_send(): Bad parameter".
 *
 * pvm_code_from_errno is the one translation of the runtime's errno results
 * into PVM codes (the layers below pvm return negative errno).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proc/proc.h"
#include "pvm/pvm.h"

int pvm_errno;

/* Indexed by -code; the gaps are codes PVM never assigned. */
char *pvm_errlist[] = {
    "Error 0",
    "Error 1",
    "Bad parameter",
    "Parameter mismatch",
    "Value too large",
    "End of buffer",
    "No such host",
    "No such file",
    "Permission denied",
    "Error 9",
    "Malloc failed",
    "Error 11",
    "Can't decode message",
    "Error 13",
    "Can't contact local daemon",
    "No current buffer",
    "No such buffer",
    "Null group name",
    "Already in group",
    "No such group",
    "Not in group",
    "No such instance",
    "Host failed",
    "No parent task",
    "Not implemented",
    "Pvmd system error",
    "Version mismatch",
    "Out of resources",
    "Duplicate host",
    "Can't start pvmd",
    "Already in progress",
    "No such task",
    "Not Found",
    "Already Exists",
    "Hoster must run on master host",
    "Spawning parent set PvmNoParent",
    "Master Host IP Address is Loopback! (See pvm3/Readme)",
};

int pvm_nerr = (int)ARRAY_SIZE(pvm_errlist);

const char *pvm_errtext(int code)
{
    if (code > 0 || -code >= pvm_nerr)
        return "Unknown Error";
    return pvm_errlist[-code];
}

const char *pvm_whoami(char *buf, size_t len)
{
    struct pvm_task *t = NULL;
    if (core_on_sched_thread)
        t = core_current()->ext[ULP_EXT_PVM];
    if (t)
        snprintf(buf, len, "t%x", (unsigned)t->tid);
    else
        snprintf(buf, len, "pid%d", (int)getpid());
    return buf;
}

int pvm_fail(struct pvm_task *t, const char *fn, int code)
{
    pvm_errno = code;
    int level = t ? t->opt[PvmAutoErr] : 1;
    if (level == 0)
        return code;
    char who[32];
    fprintf(stderr, "libpvm [%s]: %s(): %s\n", pvm_whoami(who, sizeof who), fn,
            pvm_errtext(code));
    if (level == 2 && t) {
        /* PVM: pvm_exit() and exit(code).  exit() of a process-mode task
         * runs its atexit handlers and finalisers; a thread-mode task (a
         * function, no handlers of its own) just ends. */
        (void)pvm_exit();
        struct proc *p = proc_current();
        if (p)
            proc_exit(p, code & 0xff, false);
        upvm_exit(code & 0xff);
    }
    if (level == 3) /* PVM: exactly 3; higher levels only print */
        abort();
    return code;
}

/* One errno per PVM code, so that the code can be told from the errno. */
static const struct {
    int err, code;
} from_errno[] = {
    {EINVAL, PvmBadParam}, {EOVERFLOW, PvmOverflow}, {ENODATA, PvmNoData},
    {ENOMEM, PvmNoMem},    {EBADMSG, PvmBadMsg},     {EBADF, PvmNoBuf},
    {ENOSYS, PvmNotImpl},  {ESRCH, PvmNoTask},       {EHOSTDOWN, PvmHostFail},
    {ENOSPC, PvmOutOfRes},
};

int pvm_code_from_errno(int rc)
{
    if (rc >= 0)
        return rc;
    for (size_t i = 0; i < ARRAY_SIZE(from_errno); i++)
        if (-rc == from_errno[i].err)
            return from_errno[i].code;
    return PvmSysErr;
}

char *pvm_strerror(void)
{
    return (char *)pvm_errtext(pvm_errno);
}

int pvm_perror(char *msg)
{
    char who[32];
    fprintf(stderr, "libpvm [%s]: %s: %s\n", pvm_whoami(who, sizeof who),
            msg ? msg : "(null)", pvm_errtext(pvm_errno));
    return 0;
}
