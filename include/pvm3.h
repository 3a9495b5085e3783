/*
 * pvm3.h - the PVM 3 programming interface, as UPVM provides it.
 *
 * Source-compatible with the header of PVM 3.4.6: every function, constant,
 * structure and macro a PVM program can use is here, with the same name,
 * type and value, so a PVM program compiles against UPVM unchanged
 * (tests/msg/test-pvm3h-compat.c and tests/msg/check-pvm3h.py hold this
 * header to that contract).  UPVM's own extensions live in <upvm.h>.
 *
 * Conventions (those of PVM):
 *   - Functions return a status: >= 0 (PvmOk or a count, id, tid) on
 *     success, a negative Pvm* error code on failure.  The last error is
 *     also left in pvm_errno.
 *   - Task ids (tids), message tags and contexts are plain ints.
 */
#ifndef UPVM_PVM3_H
#define UPVM_PVM3_H

#include <stdio.h>    /* FILE for pvm_catchout(); PvmMboxDirectIndex() */
#include <sys/time.h> /* struct timeval for pvm_trecv(), pvm_hostsync() */

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols of the UPVM runtime that programs may use (same text as in
 * <upvm.h>, so the two headers can be included in either order). */
#ifndef UPVM_API
#if defined(__GNUC__)
#define UPVM_API __attribute__((visibility("default")))
#else
#define UPVM_API
#endif
#endif

/* ------------------------------------------------------------ version */

/* The PVM release this interface matches. */
#define PVM_VER           "3.4.6"
#define PVM_MAJOR_VERSION 3
#define PVM_MINOR_VERSION 4
#define PVM_PATCH_VERSION 6

/* ------------------------------------------ encodings for pvm_initsend */

#define PvmDataDefault 0              /* XDR: portable, big-endian */
#define PvmDataRaw     1              /* native bytes, no conversion */
#define PvmDataInPlace 2              /* data read from user memory at send */
#define PvmDataFoo     PvmDataDefault /* old alias */
#define PvmDataTrace   4              /* user-defined trace events */

/* ------------------------------------------------- pvm_spawn flags */

#define PvmTaskDefault   0  /* anywhere */
#define PvmTaskHost      1  /* "where" names a host */
#define PvmTaskArch      2  /* "where" names an architecture */
#define PvmTaskDebug     4  /* start under a debugger */
#define PvmTaskTrace     8  /* the task produces trace data */
#define PvmMppFront      16 /* on the front end of an MPP */
#define PvmHostCompl     32 /* the complement of the host set */
#define PvmNoSpawnParent 64 /* the child has no parent */

/* ------------------------------------------------ pvm_notify kinds */

#define PvmTaskExit    1 /* a task exited */
#define PvmHostDelete  2 /* a host was deleted or failed */
#define PvmHostAdd     3 /* a host was added */
#define PvmRouteAdd    4 /* a direct task-task route opened */
#define PvmRouteDelete 5 /* a direct task-task route closed */

#define PvmNotifyCancel 256 /* or-ed into a kind: cancel those notifies */

/* ---------------------------------- options for pvm_setopt/pvm_getopt */

#define PvmRoute             1  /* routing policy, one of: */
#define PvmDontRoute         1  /*   no direct task-task links */
#define PvmAllowDirect       2  /*   accept direct links, ask for none */
#define PvmRouteDirect       3  /*   ask for direct links */
#define PvmDebugMask         2  /* debug mask */
#define PvmAutoErr           3  /* print errors automatically */
#define PvmOutputTid         4  /* where children's stdout goes */
#define PvmOutputCode        5  /*   with this message tag */
#define PvmTraceTid          6  /* where children's trace data goes */
#define PvmTraceCode         7  /*   with this message tag */
#define PvmTraceBuffer       8  /* children's trace buffering */
#define PvmTraceOptions      9  /* children's trace options, one of: */
#define PvmTraceFull         1  /*   every event */
#define PvmTraceTime         2  /*   timings of PVM calls only */
#define PvmTraceCount        3  /*   call counts only */
#define PvmFragSize          10 /* message fragment size */
#define PvmResvTids          11 /* allow reserved tids and tags */
#define PvmSelfOutputTid     12 /* where this task's stdout goes */
#define PvmSelfOutputCode    13 /*   with this message tag */
#define PvmSelfTraceTid      14 /* where this task's trace data goes */
#define PvmSelfTraceCode     15 /*   with this message tag */
#define PvmSelfTraceBuffer   16 /* this task's trace buffering */
#define PvmSelfTraceOptions  17 /* this task's trace options */
#define PvmShowTids          18 /* pvm_catchout prefixes lines with tids */
#define PvmPollType          19 /* how to wait on shared memory, one of: */
#define PvmPollConstant      1  /*   spin */
#define PvmPollSleep         2  /*   spin, then sleep */
#define PvmPollTime          20 /* spin time before sleeping */
#define PvmOutputContext     21 /* context of children's stdout messages */
#define PvmTraceContext      22 /* context of children's trace messages */
#define PvmSelfOutputContext 23 /* context of this task's stdout messages */
#define PvmSelfTraceContext  24 /* context of this task's trace messages */
#define PvmNoReset           25 /* survive a reset of the machine */

/* ----------------------------------------- pvm_settmask/pvm_gettmask */

#define PvmTaskSelf  0 /* this task */
#define PvmTaskChild 1 /* tasks it spawns */

/* ------------------------------------------------------------ contexts */

#define PvmBaseContext 0 /* the context of a task that never sets one */

/* --------------------------------- mailbox: pvm_putinfo/pvm_recvinfo */

#define PvmMboxDefault       0   /* one locked entry; get the first */
#define PvmMboxPersistent    1   /* stays after its owner exits */
#define PvmMboxMultiInstance 2   /* several entries under one name */
#define PvmMboxOverWritable  4   /* others may overwrite the entry */
#define PvmMboxFirstAvail    8   /* first index >= the one given */
#define PvmMboxReadAndDelete 16  /* read and delete in one step */
#define PvmMboxWaitForInfo   32  /* pvm_recvinfo blocks until it exists */
#define PvmMboxMaxFlag       512 /* highest flag bit */

/* An entry index can also travel in the upper bits of the flags. */
#define PvmMboxDirectIndexShift 10 /* log2(PvmMboxMaxFlag) + 1 */
#define PvmMboxMaxDirectIndex \
    ((unsigned)1 << (31 - PvmMboxDirectIndexShift))
#define PvmMboxDirectIndexOf(_flags)                                       \
    (((_flags) & ((PvmMboxMaxDirectIndex - 1) << PvmMboxDirectIndexShift)) \
     >> PvmMboxDirectIndexShift)
#define PvmMboxDirectIndex(_index)                                      \
    (((_index) >= PvmMboxMaxDirectIndex)                                \
         ? (fprintf(stderr, "Mbox Direct Index Too Large: %d >= %d\n", \
                    (_index), PvmMboxMaxDirectIndex),                   \
            0)                                                          \
         : ((_index) << PvmMboxDirectIndexShift))

/* Mailbox classes the system itself uses. */
#define PVMNORESETCLASS "###_PVM_NO_RESET_###"
#define PVMHOSTERCLASS  "###_PVM_HOSTER_###"
#define PVMTASKERCLASS  "###_PVM_TASKER_###"
#define PVMTRACERCLASS  "###_PVM_TRACER_###"
#define PVMRMCLASS      "###_PVM_RM_###"

/* --------------------------------------------------------- error codes */

#define PvmOk           0   /* Success */
#define PvmBadParam     -2  /* Bad parameter */
#define PvmMismatch     -3  /* Parameter mismatch */
#define PvmOverflow     -4  /* Value too large */
#define PvmNoData       -5  /* End of buffer */
#define PvmNoHost       -6  /* No such host */
#define PvmNoFile       -7  /* No such file */
#define PvmDenied       -8  /* Permission denied */
#define PvmNoMem        -10 /* Malloc failed */
#define PvmBadMsg       -12 /* Can't decode message */
#define PvmSysErr       -14 /* Can't contact local daemon */
#define PvmNoBuf        -15 /* No current buffer */
#define PvmNoSuchBuf    -16 /* No such buffer */
#define PvmNullGroup    -17 /* Null group name */
#define PvmDupGroup     -18 /* Already in group */
#define PvmNoGroup      -19 /* No such group */
#define PvmNotInGroup   -20 /* Not in group */
#define PvmNoInst       -21 /* No such instance */
#define PvmHostFail     -22 /* Host failed */
#define PvmNoParent     -23 /* No parent task */
#define PvmNotImpl      -24 /* Not implemented */
#define PvmDSysErr      -25 /* Pvmd system error */
#define PvmBadVersion   -26 /* Version mismatch */
#define PvmOutOfRes     -27 /* Out of resources */
#define PvmDupHost      -28 /* Duplicate host */
#define PvmCantStart    -29 /* Can't start pvmd */
#define PvmAlready      -30 /* Already in progress */
#define PvmNoTask       -31 /* No such task */
#define PvmNotFound     -32 /* Not found */
#define PvmExists       -33 /* Already exists */
#define PvmHostrNMstr   -34 /* Hoster run on non-master host */
#define PvmParentNotSet -35 /* Spawning parent set PvmNoSpawnParent */
#define PvmIPLoopback   -36 /* Master host's IP is loopback */

/* Names kept from PVM 3.3. */
#define PvmNoEntry  PvmNotFound
#define PvmDupEntry PvmDenied

/*
 * The last error of this task, and the text of each error: the text of
 * code c (c <= 0, c > -pvm_nerr) is pvm_errlist[-c].  PVM's libpvm defines
 * these three symbols without declaring them in its header; programs that
 * declare them themselves (extern int pvm_errno; ...) still compile.
 * Under UPVM pvm_errno belongs to the running task: the runtime keeps one
 * value per task and swaps it when it switches tasks.
 */
extern UPVM_API int pvm_errno;
extern UPVM_API int pvm_nerr;
extern UPVM_API char *pvm_errlist[];

/* ---------------------- data types for pvm_psend/pvm_precv/pvm_reduce */

#define PVM_STR    0  /* string */
#define PVM_BYTE   1  /* char */
#define PVM_SHORT  2  /* short */
#define PVM_INT    3  /* int */
#define PVM_FLOAT  4  /* float */
#define PVM_CPLX   5  /* complex: two floats */
#define PVM_DOUBLE 6  /* double */
#define PVM_DCPLX  7  /* double complex: two doubles */
#define PVM_LONG   8  /* long */
#define PVM_USHORT 9  /* unsigned short */
#define PVM_UINT   10 /* unsigned int */
#define PVM_ULONG  11 /* unsigned long */

/* ----------------------------------------------------------- structures */

/* One host of the virtual machine (pvm_config). */
struct pvmhostinfo {
    int hi_tid;    /* tid of its pvmd */
    char *hi_name; /* host name */
    char *hi_arch; /* architecture name */
    int hi_speed;  /* relative speed */
    int hi_dsig;   /* data signature (byte order, sizes) */
};

/* One task (pvm_tasks). */
struct pvmtaskinfo {
    int ti_tid;      /* task id */
    int ti_ptid;     /* parent's tid */
    int ti_host;     /* tid of its host's pvmd */
    int ti_flag;     /* status flags */
    char *ti_a_out;  /* program name */
    int ti_pid;      /* operating-system process id */
};

/* A message buffer's header (pvm_getminfo, pvm_setminfo). */
struct pvmminfo {
    int len; /* length in bytes */
    int ctx; /* context */
    int tag; /* message tag */
    int wid; /* wait id */
    int enc; /* encoding (data signature) */
    int crc; /* checksum */
    int src; /* source tid */
    int dst; /* destination tid */
};

/* One mailbox class (pvm_getmboxinfo). */
struct pvmmboxinfo {
    char *mi_name;    /* class name */
    int mi_nentries;  /* number of entries */
    int *mi_indices;  /* their indices */
    int *mi_owners;   /* their owners' tids */
    int *mi_flags;    /* their flags */
};

/* --------------------------------------------- temporary file names */

#ifdef NOTMPNAM
#define PVMTMPNAMFUN(x) pvmtmpnam(x)
#define PVMTMPNAMLEN    128
#else
#define PVMTMPNAMFUN(x) tmpnam(x)
#ifdef L_tmpnam
#define PVMTMPNAMLEN L_tmpnam
#else
#define PVMTMPNAMLEN 128
#endif
#endif

/* ------------------------------------------------------------ functions */

#ifdef NOTMPNAM
UPVM_API char *pvmtmpnam(char *buf);
#endif
UPVM_API char *pvmgetrsh(void);
UPVM_API char *pvmgettmp(void);

/* errors and version */
UPVM_API char *pvm_strerror(void);
UPVM_API int pvm_perror(char *msg);
UPVM_API char *pvm_version(void);

/* tasks: identity, spawn, signals, status */
UPVM_API int pvm_mytid(void);
UPVM_API int pvm_parent(void);
UPVM_API int pvm_siblings(int **tids);
UPVM_API int pvm_exit(void);
UPVM_API int pvm_spawn(char *task, char **argv, int flag, char *where,
                       int ntask, int *tids);
UPVM_API int pvm_kill(int tid);
UPVM_API int pvm_sendsig(int tid, int signum);
UPVM_API int pvm_pstat(int tid);
UPVM_API int pvm_tasks(int where, int *ntask, struct pvmtaskinfo **taskp);
UPVM_API int pvm_tidtohost(int tid);
UPVM_API int pvm_notify(int what, int msgtag, int cnt, int *tids);
UPVM_API int pvm_catchout(FILE *ff);
UPVM_API int pvm_getfds(int **fds);
UPVM_API int pvm_export(char *name);
UPVM_API int pvm_unexport(char *name);

/* the virtual machine: hosts */
UPVM_API int pvm_addhosts(char **hosts, int nhost, int *infos);
UPVM_API int pvm_delhosts(char **hosts, int nhost, int *infos);
UPVM_API int pvm_config(int *nhost, int *narch, struct pvmhostinfo **hostp);
UPVM_API int pvm_mstat(char *host);
UPVM_API int pvm_halt(void);
UPVM_API int pvm_start_pvmd(int argc, char **argv, int block);
UPVM_API int pvm_archcode(char *arch);
UPVM_API int pvm_hostsync(int host, struct timeval *clk,
                          struct timeval *delta);
UPVM_API int pvm_tickle(int narg, int *argp, int *nres, int *resp);

/* options */
UPVM_API int pvm_setopt(int what, int val);
UPVM_API int pvm_getopt(int what);

/* message buffers */
UPVM_API int pvm_mkbuf(int encoding);
UPVM_API int pvm_initsend(int encoding);
UPVM_API int pvm_freebuf(int bufid);
UPVM_API int pvm_getsbuf(void);
UPVM_API int pvm_setsbuf(int bufid);
UPVM_API int pvm_getrbuf(void);
UPVM_API int pvm_setrbuf(int bufid);
UPVM_API int pvm_bufinfo(int bufid, int *bytes, int *msgtag, int *tid);
UPVM_API int pvm_getminfo(int bufid, struct pvmminfo *info);
UPVM_API int pvm_setminfo(int bufid, struct pvmminfo *info);

/* packing into the active send buffer */
UPVM_API int pvm_packf(const char *fmt, ...);
UPVM_API int pvm_pkbyte(char *xp, int nitem, int stride);
UPVM_API int pvm_pkcplx(float *cp, int nitem, int stride);
UPVM_API int pvm_pkdcplx(double *zp, int nitem, int stride);
UPVM_API int pvm_pkdouble(double *dp, int nitem, int stride);
UPVM_API int pvm_pkfloat(float *fp, int nitem, int stride);
UPVM_API int pvm_pkint(int *ip, int nitem, int stride);
UPVM_API int pvm_pklong(long *ip, int nitem, int stride);
UPVM_API int pvm_pkshort(short *jp, int nitem, int stride);
UPVM_API int pvm_pkstr(char *sp);
UPVM_API int pvm_pkuint(unsigned int *ip, int nitem, int stride);
UPVM_API int pvm_pkulong(unsigned long *ip, int nitem, int stride);
UPVM_API int pvm_pkushort(unsigned short *ip, int nitem, int stride);
UPVM_API int pvm_pkmesg(int bufid);
UPVM_API int pvm_pkmesgbody(int bufid);

/* unpacking from the active receive buffer */
UPVM_API int pvm_unpackf(const char *fmt, ...);
UPVM_API int pvm_upkbyte(char *xp, int nitem, int stride);
UPVM_API int pvm_upkcplx(float *cp, int nitem, int stride);
UPVM_API int pvm_upkdcplx(double *zp, int nitem, int stride);
UPVM_API int pvm_upkdouble(double *dp, int nitem, int stride);
UPVM_API int pvm_upkfloat(float *fp, int nitem, int stride);
UPVM_API int pvm_upkint(int *ip, int nitem, int stride);
UPVM_API int pvm_upklong(long *ip, int nitem, int stride);
UPVM_API int pvm_upkshort(short *jp, int nitem, int stride);
UPVM_API int pvm_upkstr(char *sp);
UPVM_API int pvm_upkuint(unsigned int *ip, int nitem, int stride);
UPVM_API int pvm_upkulong(unsigned long *ip, int nitem, int stride);
UPVM_API int pvm_upkushort(unsigned short *ip, int nitem, int stride);
UPVM_API int pvm_upkmesg(void);

/* sending and receiving */
UPVM_API int pvm_send(int tid, int msgtag);
UPVM_API int pvm_mcast(int *tids, int ntask, int msgtag);
UPVM_API int pvm_psend(int tid, int msgtag, void *buf, int len, int datatype);
UPVM_API int pvm_recv(int tid, int msgtag);
UPVM_API int pvm_nrecv(int tid, int msgtag);
UPVM_API int pvm_trecv(int tid, int msgtag, struct timeval *tmout);
UPVM_API int pvm_probe(int tid, int msgtag);
UPVM_API int pvm_precv(int tid, int msgtag, void *buf, int len,
                       int datatype, int *atid, int *atag, int *alen);
/* pvm_recvf(new) installs new as the message matching function and
 * returns the previous one.  The declared return type is PVM 3.4.6's own,
 * odd as it is (a function taking a matching function); programs keep the
 * result in an unprototyped pointer, int (*old)(), which fits both. */
UPVM_API int (*pvm_recvf(int (*newf)(int bufid, int tid, int tag)))(
    int (*)(int, int, int));

/* contexts */
UPVM_API int pvm_newcontext(void);
UPVM_API int pvm_setcontext(int ctx);
UPVM_API int pvm_getcontext(void);
UPVM_API int pvm_freecontext(int ctx);

/* message handlers */
UPVM_API int pvm_addmhf(int src, int tag, int ctx, int (*f)(int bufid));
UPVM_API int pvm_delmhf(int mhid);

/* groups */
UPVM_API int pvm_joingroup(char *group);
UPVM_API int pvm_lvgroup(char *group);
UPVM_API int pvm_gettid(char *group, int inum);
UPVM_API int pvm_getinst(char *group, int tid);
UPVM_API int pvm_gsize(char *group);
UPVM_API int pvm_freezegroup(char *group, int size);
UPVM_API int pvm_barrier(char *group, int count);
UPVM_API int pvm_bcast(char *group, int msgtag);
UPVM_API int pvm_gather(void *result, void *data, int count, int datatype,
                        int msgtag, char *group, int rootginst);
UPVM_API int pvm_scatter(void *result, void *data, int count, int datatype,
                         int msgtag, char *group, int rootginst);
UPVM_API int pvm_reduce(void (*func)(int *datatype, void *x, void *y,
                                     int *num, int *info),
                        void *data, int count, int datatype, int msgtag,
                        char *group, int rootginst);

/* the reduce functions PVM provides for pvm_reduce */
UPVM_API void PvmMax(int *datatype, void *x, void *y, int *num, int *info);
UPVM_API void PvmMin(int *datatype, void *x, void *y, int *num, int *info);
UPVM_API void PvmSum(int *datatype, void *x, void *y, int *num, int *info);
UPVM_API void PvmProduct(int *datatype, void *x, void *y, int *num,
                         int *info);

/* mailbox */
UPVM_API int pvm_putinfo(char *name, int bufid, int flags);
UPVM_API int pvm_recvinfo(char *name, int index, int flags);
UPVM_API int pvm_delinfo(char *name, int index, int flags);
UPVM_API int pvm_getmboxinfo(char *pattern, int *nclasses,
                             struct pvmmboxinfo **classes);
UPVM_API int pvm_getnoresets(int **tids, int *ntids);

/* PVM 3.3 names, now built on the mailbox */
UPVM_API int pvm_insert(char *name, int req, int data);
UPVM_API int pvm_lookup(char *name, int req, int *datap);
UPVM_API int pvm_delete(char *name, int req);

/* PVM 3.3 wait ids (only with PVM33COMPAT) */
#ifdef PVM33COMPAT
UPVM_API int pvm_getmwid(int bufid);
UPVM_API int pvm_setmwid(int bufid, int waitid);
#endif

/* resource manager, hoster, tasker and tracer registration */
UPVM_API int pvm_reg_hoster(void);
UPVM_API int pvm_reg_rm(struct pvmhostinfo **hip);
UPVM_API int pvm_reg_tasker(void);
UPVM_API int pvm_reg_tracer(int tctx, int ttag, int octx, int otag,
                            char *tmask, int tbuf, int topt);

#ifdef __cplusplus
}
#endif
#endif /* UPVM_PVM3_H */
