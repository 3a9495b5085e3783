/*
 * task.c - the Fortran routines for tasks, options and errors: pvmfmytid
 * ... pvmfsleep (fpvm.h has the conventions).
 */
#include <stdio.h>
#include <upvm.h>

#include "fpvm/fpvm.h"

void pvmfmytid_(int *tid)
{
    *tid = pvm_mytid();
}

void pvmfparent_(int *tid)
{
    *tid = pvm_parent();
}

void pvmfexit_(int *info)
{
    *info = pvm_exit();
}

/* where: a host or architecture name; '*' (or blank) is anywhere, as in
 * PVM, where a leading '*' means "any" whatever follows. */
void pvmfspawn_(const char *task, int *flag, const char *where, int *ntask, int *tids,
                int *numt, size_t task_len, size_t where_len)
{
    char ctask[FPVM_NAME_MAX + 1], cwhere[FPVM_NAME_MAX + 1] = "";
    if (fpvm_cstr(ctask, sizeof ctask, task, task_len) != 0) {
        *numt = PvmBadParam;
        return;
    }
    if (!(where_len > 0 && where[0] == '*') &&
        fpvm_cstr(cwhere, sizeof cwhere, where, where_len) != 0) {
        *numt = PvmBadParam;
        return;
    }
    *numt = pvm_spawn(ctask, NULL, *flag, cwhere, *ntask, tids);
}

void pvmfkill_(int *tid, int *info)
{
    *info = pvm_kill(*tid);
}

void pvmfsendsig_(int *tid, int *signum, int *info)
{
    *info = pvm_sendsig(*tid, *signum);
}

void pvmfpstat_(int *tid, int *status)
{
    *status = pvm_pstat(*tid);
}

/* ntids: how many tasks pvm_spawn started together with this one; sibling:
 * the index-th of them (0-based), PvmNoTask when index is out of range. */
void pvmfsiblings_(int *ntids, int *index, int *sibling)
{
    int *tids = NULL;
    int n = pvm_siblings(&tids);
    if (ntids)
        *ntids = n;
    if (index && sibling)
        *sibling = (*index >= 0 && *index < n) ? tids[*index] : PvmNoTask;
}

/*
 * One task per call, as PVM's: the first call asks pvm_tasks and returns
 * its first task, each next call the next one; info is 1 for a task, or
 * the error.  After the last the list is asked anew; ntask = -1 on entry
 * starts again.
 */
void pvmftasks_(int *where, int *ntask, int *tid, int *ptid, int *dtid, int *flag,
                char *aout, int *info, size_t aout_len)
{
    struct fpvm_state *st = fpvm_state();
    if (!st) {
        *info = PvmSysErr;
        return;
    }
    if (st->tasks_n && *ntask == -1)
        st->tasks_n = 0;
    if (!st->tasks_n) {
        int n = 0, cc = pvm_tasks(*where, &n, &st->tasks);
        if (cc < 0) {
            *info = cc;
            return;
        }
        st->tasks_n = n;
        st->tasks_next = 0;
        if (n == 0) { /* none there: said, not left undefined as by PVM */
            *ntask = 0;
            *info = 0;
            return;
        }
    }
    if (st->tasks_next < st->tasks_n) {
        const struct pvmtaskinfo *ti = &st->tasks[st->tasks_next++];
        *ntask = st->tasks_n;
        *tid = ti->ti_tid;
        *ptid = ti->ti_ptid;
        *dtid = ti->ti_host;
        *flag = ti->ti_flag;
        fpvm_fstr(aout, aout_len, ti->ti_a_out ? ti->ti_a_out : "");
        *info = 1;
    }
    if (st->tasks_next >= st->tasks_n)
        st->tasks_n = 0;
}

void pvmftidtohost_(int *tid, int *dtid)
{
    *dtid = pvm_tidtohost(*tid);
}

/* The name PVM's man page gives it (its library has pvmftidtohost). */
void pvmftidtoh_(int *tid, int *dtid)
{
    *dtid = pvm_tidtohost(*tid);
}

void pvmfnotify_(int *what, int *msgtag, int *cnt, int *tids, int *info)
{
    *info = pvm_notify(*what, *msgtag, *cnt, tids);
}

/* onoff non-zero: children's output to this task's standard output. */
void pvmfcatchout_(int *onoff, int *info)
{
    *info = pvm_catchout(*onoff ? stdout : NULL);
}

void pvmfsetopt_(int *what, int *val, int *oldval)
{
    *oldval = pvm_setopt(*what, *val);
}

void pvmfgetopt_(int *what, int *val)
{
    *val = pvm_getopt(*what);
}

/* The message is printed as written, trailing blanks included, as PVM's
 * libfpvm prints it ("libpvm [t40001]: joingroup: : Bad parameter"). */
void pvmfperror_(const char *msg, int *info, size_t msg_len)
{
    char buf[1024];
    int n = msg_len < sizeof buf ? (int)msg_len : (int)sizeof buf - 1;
    snprintf(buf, sizeof buf, "%.*s", n, msg);
    *info = pvm_perror(buf);
}

/* Sleeps the task, not its node (PVM's libfpvm: sleep(3) of the process). */
void pvmfsleep_(int *secs)
{
    if (*secs > 0)
        (void)upvm_sleep_ns((uint64_t)*secs * 1000000000u);
}
