/*
 * fpvm.h - the Fortran binding of the PVM 3 API (PVM's libfpvm3): the
 * pvmf* routines a Fortran program calls, as gfortran calls them, and the
 * helpers their files share.
 *
 * Conventions (those of PVM 3.4.6's libfpvm, docs/fortran.md):
 *   - Names: lower case with a trailing underscore (CALL PVMFMYTID(TID)
 *     calls pvmfmytid_), as gfortran names external procedures.
 *   - Every argument by reference (int * for INTEGER, void * for a buffer
 *     of any type).  A CHARACTER argument is its address, plus a hidden
 *     length (size_t, gfortran 8 and later) appended after all the
 *     arguments, in the order of the CHARACTER arguments.
 *   - A CHARACTER given to PVM is taken without its trailing blanks; one
 *     longer than PVM's libfpvm accepts (FPVM_NAME_MAX, FPVM_GROUP_MAX
 *     characters after trimming) gives PvmBadParam.  A CHARACTER PVM
 *     returns into is filled and padded with blanks (cut if too short).
 *   - The result of the C call (a count, an id, or a negative Pvm* error
 *     code) goes to the last argument (info, bufid, tid, ...).
 *   - The type codes (STRING, BYTE1, INTEGER2, INTEGER4, REAL4, COMPLEX8,
 *     REAL8, COMPLEX16, INTEGER8 of fpvm3.h) are the PVM_* codes of
 *     pvm3.h, so they are passed to pvm_psend, pvm_reduce, ... unchanged.
 *
 * This layer calls only the PVM API (pvm3.h) and, for the state a routine
 * keeps between calls (pvmfconfig's and pvmftasks' place in their lists),
 * pvm_task_binding: per task, in the task's memory, so that the tasks of
 * a node (which share this library) never see each other's, and the
 * state moves with a migrating task.
 */
#ifndef UPVM_FPVM_H
#define UPVM_FPVM_H

#include <stddef.h>
#include <pvm3.h>

/* PVM's limits on a name after its trailing blanks are dropped: task,
 * host, architecture, mailbox names (MAX_PROC_NAME, MAX_HOST_NAME,
 * MAX_MBOX_NAME: 256) and group names (MAX_GRP_NAME: 31). */
#define FPVM_NAME_MAX  256
#define FPVM_GROUP_MAX 31

/* The helpers are the library's own (hidden). */
#pragma GCC visibility push(hidden)

/* The C string of a Fortran CHARACTER argument (address s, hidden length
 * len) without its trailing blanks, into buf of cap bytes (room for the
 * NUL included).  0, or -1 when it does not fit (the caller returns
 * PvmBadParam, as PVM's ftocstr does). */
int fpvm_cstr(char *buf, size_t cap, const char *s, size_t len);

/* Copy C string c into the Fortran CHARACTER (s, len): cut when longer,
 * padded with blanks when shorter (PVM's ctofstr). */
void fpvm_fstr(char *s, size_t len, const char *c);

/* What a task's routines remember between calls. */
struct fpvm_state {
    int config_n, config_next;        /* pvmfconfig: hosts, the next one */
    int tasks_n, tasks_next;          /* pvmftasks */
    struct pvmtaskinfo *tasks;        /*   pvm_tasks' array (the task's) */
    int mbox_n, mbox_next;            /* pvmfgetmboxinfo */
    struct pvmmboxinfo *mbox;         /*   pvm_getmboxinfo's array */
};

/* The calling task's state (zeroed at first), or NULL when it is no task
 * and cannot become one (the caller returns PvmSysErr). */
struct fpvm_state *fpvm_state(void);

#pragma GCC visibility pop

/* ---------------------------------------------------------- the routines
 * Grouped by file; argument names are those of PVM's man pages.  They
 * leave libupvm (the library is built with hidden visibility). */
#pragma GCC visibility push(default)

/* task.c: tasks, options, errors */
void pvmfmytid_(int *tid);
void pvmfparent_(int *tid);
void pvmfexit_(int *info);
void pvmfspawn_(const char *task, int *flag, const char *where, int *ntask, int *tids,
                int *numt, size_t task_len, size_t where_len);
void pvmfkill_(int *tid, int *info);
void pvmfsendsig_(int *tid, int *signum, int *info);
void pvmfpstat_(int *tid, int *status);
void pvmfsiblings_(int *ntids, int *index, int *sibling);
void pvmftasks_(int *where, int *ntask, int *tid, int *ptid, int *dtid, int *flag,
                char *aout, int *info, size_t aout_len);
void pvmftidtohost_(int *tid, int *dtid);
void pvmftidtoh_(int *tid, int *dtid);
void pvmfnotify_(int *what, int *msgtag, int *cnt, int *tids, int *info);
void pvmfcatchout_(int *onoff, int *info);
void pvmfsetopt_(int *what, int *val, int *oldval);
void pvmfgetopt_(int *what, int *val);
void pvmfperror_(const char *msg, int *info, size_t msg_len);
void pvmfsleep_(int *secs);

/* hosts.c: the virtual machine */
void pvmfconfig_(int *nhost, int *narch, int *dtid, char *name, char *arch, int *speed,
                 int *info, size_t name_len, size_t arch_len);
void pvmfaddhost_(const char *host, int *info, size_t host_len);
void pvmfdelhost_(const char *host, int *info, size_t host_len);
void pvmfmstat_(const char *host, int *mstat, size_t host_len);
void pvmfhalt_(int *info);
void pvmfarchcode_(const char *arch, int *cod, size_t arch_len);
void pvmfhostsync_(int *host, int *clksec, int *clkusec, int *deltasec, int *deltausec,
                   int *info);
void pvmfstartpvmd_(const char *args, int *block, int *info, size_t args_len);

/* buffers.c: buffers, packing */
void pvmfinitsend_(int *encoding, int *bufid);
void pvmfmkbuf_(int *encoding, int *bufid);
void pvmffreebuf_(int *bufid, int *info);
void pvmfgetsbuf_(int *bufid);
void pvmfgetrbuf_(int *bufid);
void pvmfsetsbuf_(int *bufid, int *oldbuf);
void pvmfsetrbuf_(int *bufid, int *oldbuf);
void pvmfbufinfo_(int *bufid, int *bytes, int *msgtag, int *tid, int *info);
void pvmfpack_(int *what, void *xp, int *nitem, int *stride, int *info);
void pvmfunpack_(int *what, void *xp, int *nitem, int *stride, int *info);

/* messages.c: sending, receiving, contexts, handlers */
void pvmfsend_(int *tid, int *msgtag, int *info);
void pvmfmcast_(int *ntask, int *tids, int *msgtag, int *info);
void pvmfrecv_(int *tid, int *msgtag, int *bufid);
void pvmfnrecv_(int *tid, int *msgtag, int *bufid);
void pvmftrecv_(int *tid, int *msgtag, int *sec, int *usec, int *bufid);
void pvmfprobe_(int *tid, int *msgtag, int *bufid);
void pvmfpsend_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *info);
void pvmfprecv_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *atid,
                int *atag, int *alen, int *info);
void pvmfnewcontext_(int *ctx);
void pvmfsetcontext_(int *ctx, int *oldctx);
void pvmfgetcontext_(int *ctx);
void pvmffreecontext_(int *ctx, int *info);
void pvmfaddmhf_(int *src, int *tag, int *ctx, int *unused, int (*func)(int *bufid),
                 int *info);
void pvmfdelmhf_(int *mhid, int *info);

/* groups.c: dynamic groups, collective operations, reduce functions */
void pvmfjoingroup_(const char *group, int *inum, size_t group_len);
void pvmflvgroup_(const char *group, int *info, size_t group_len);
void pvmfgettid_(const char *group, int *inum, int *tid, size_t group_len);
void pvmfgetinst_(const char *group, int *tid, int *inum, size_t group_len);
void pvmfgsize_(const char *group, int *size, size_t group_len);
void pvmffreezegroup_(const char *group, int *size, int *info, size_t group_len);
void pvmfbarrier_(const char *group, int *count, int *info, size_t group_len);
void pvmfbcast_(const char *group, int *msgtag, int *info, size_t group_len);
typedef void fpvm_reduce_fn(int *datatype, void *x, void *y, int *num, int *info);
void pvmfreduce_(fpvm_reduce_fn *func, void *data, int *count, int *datatype, int *msgtag,
                 const char *group, int *rootginst, int *info, size_t group_len);
void pvmfgather_(void *result, void *data, int *count, int *datatype, int *msgtag,
                 const char *group, int *rootginst, int *info, size_t group_len);
void pvmfscatter_(void *result, void *data, int *count, int *datatype, int *msgtag,
                  const char *group, int *rootginst, int *info, size_t group_len);
fpvm_reduce_fn pvmsum_, pvmproduct_, pvmmax_, pvmmin_;

/* mailbox.c: the message mailbox */
void pvmfputinfo_(const char *name, int *bufid, int *flags, int *index, size_t name_len);
void pvmfrecvinfo_(const char *name, int *index, int *flags, int *bufid, size_t name_len);
void pvmfdelinfo_(const char *name, int *index, int *flags, int *info, size_t name_len);
void pvmfgetmboxinfo_(const char *pattern, char *name, int *nclasses, int *nentries,
                      int *index, int *owner, int *flags, int *info, size_t pattern_len,
                      size_t name_len);

#pragma GCC visibility pop

#endif /* UPVM_FPVM_H */
