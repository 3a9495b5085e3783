/*
 * test-pvm3h-compat.c - include/pvm3.h against PVM 3.4.6's pvm3.h.
 *
 * The numbers and types below were taken from PVM 3.4.6's header
 * (/usr/include/pvm3.h of Debian's pvm-dev 3.4.6-5): they are the
 * compatibility contract, checked at compile time; the strings and the
 * direct-index macro are checked by the two cases at the end.  Nothing
 * here calls a PVM function, so the test needs no PVM runtime.  tests/msg/check-pvm3h.py
 * compares with the real header directly when one is installed.
 */
#define NOTMPNAM    /* declare pvmtmpnam() too */
#define PVM33COMPAT /* and pvm_getmwid/pvm_setmwid */
#include <pvm3.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define CONST(name, value) \
    _Static_assert((name) == (value), #name " is " #value " in PVM 3.4.6")
#define FUNC(name, type)                                            \
    _Static_assert(__builtin_types_compatible_p(__typeof__(name), type), \
                   #name " has PVM 3.4.6's type")

/* constants: name, value in PVM 3.4.6 */
CONST(PVM_BYTE, 1);
CONST(PVM_CPLX, 5);
CONST(PVM_DCPLX, 7);
CONST(PVM_DOUBLE, 6);
CONST(PVM_FLOAT, 4);
CONST(PVM_INT, 3);
CONST(PVM_LONG, 8);
CONST(PVM_MAJOR_VERSION, 3);
CONST(PVM_MINOR_VERSION, 4);
CONST(PVM_PATCH_VERSION, 6);
CONST(PVM_SHORT, 2);
CONST(PVM_STR, 0);
CONST(PVM_UINT, 10);
CONST(PVM_ULONG, 11);
CONST(PVM_USHORT, 9);
CONST(PvmAllowDirect, 2);
CONST(PvmAlready, -30);
CONST(PvmAutoErr, 3);
CONST(PvmBadMsg, -12);
CONST(PvmBadParam, -2);
CONST(PvmBadVersion, -26);
CONST(PvmBaseContext, 0);
CONST(PvmCantStart, -29);
CONST(PvmDSysErr, -25);
CONST(PvmDataDefault, 0);
CONST(PvmDataFoo, 0);
CONST(PvmDataInPlace, 2);
CONST(PvmDataRaw, 1);
CONST(PvmDataTrace, 4);
CONST(PvmDebugMask, 2);
CONST(PvmDenied, -8);
CONST(PvmDontRoute, 1);
CONST(PvmDupEntry, -8);
CONST(PvmDupGroup, -18);
CONST(PvmDupHost, -28);
CONST(PvmExists, -33);
CONST(PvmFragSize, 10);
CONST(PvmHostAdd, 3);
CONST(PvmHostCompl, 32);
CONST(PvmHostDelete, 2);
CONST(PvmHostFail, -22);
CONST(PvmHostrNMstr, -34);
CONST(PvmIPLoopback, -36);
CONST(PvmMboxDefault, 0);
CONST(PvmMboxDirectIndexShift, 10);
CONST(PvmMboxFirstAvail, 8);
CONST(PvmMboxMaxDirectIndex, 2097152);
CONST(PvmMboxMaxFlag, 512);
CONST(PvmMboxMultiInstance, 2);
CONST(PvmMboxOverWritable, 4);
CONST(PvmMboxPersistent, 1);
CONST(PvmMboxReadAndDelete, 16);
CONST(PvmMboxWaitForInfo, 32);
CONST(PvmMismatch, -3);
CONST(PvmMppFront, 16);
CONST(PvmNoBuf, -15);
CONST(PvmNoData, -5);
CONST(PvmNoEntry, -32);
CONST(PvmNoFile, -7);
CONST(PvmNoGroup, -19);
CONST(PvmNoHost, -6);
CONST(PvmNoInst, -21);
CONST(PvmNoMem, -10);
CONST(PvmNoParent, -23);
CONST(PvmNoReset, 25);
CONST(PvmNoSpawnParent, 64);
CONST(PvmNoSuchBuf, -16);
CONST(PvmNoTask, -31);
CONST(PvmNotFound, -32);
CONST(PvmNotImpl, -24);
CONST(PvmNotInGroup, -20);
CONST(PvmNotifyCancel, 256);
CONST(PvmNullGroup, -17);
CONST(PvmOk, 0);
CONST(PvmOutOfRes, -27);
CONST(PvmOutputCode, 5);
CONST(PvmOutputContext, 21);
CONST(PvmOutputTid, 4);
CONST(PvmOverflow, -4);
CONST(PvmParentNotSet, -35);
CONST(PvmPollConstant, 1);
CONST(PvmPollSleep, 2);
CONST(PvmPollTime, 20);
CONST(PvmPollType, 19);
CONST(PvmResvTids, 11);
CONST(PvmRoute, 1);
CONST(PvmRouteAdd, 4);
CONST(PvmRouteDelete, 5);
CONST(PvmRouteDirect, 3);
CONST(PvmSelfOutputCode, 13);
CONST(PvmSelfOutputContext, 23);
CONST(PvmSelfOutputTid, 12);
CONST(PvmSelfTraceBuffer, 16);
CONST(PvmSelfTraceCode, 15);
CONST(PvmSelfTraceContext, 24);
CONST(PvmSelfTraceOptions, 17);
CONST(PvmSelfTraceTid, 14);
CONST(PvmShowTids, 18);
CONST(PvmSysErr, -14);
CONST(PvmTaskArch, 2);
CONST(PvmTaskChild, 1);
CONST(PvmTaskDebug, 4);
CONST(PvmTaskDefault, 0);
CONST(PvmTaskExit, 1);
CONST(PvmTaskHost, 1);
CONST(PvmTaskSelf, 0);
CONST(PvmTaskTrace, 8);
CONST(PvmTraceBuffer, 8);
CONST(PvmTraceCode, 7);
CONST(PvmTraceContext, 22);
CONST(PvmTraceCount, 3);
CONST(PvmTraceFull, 1);
CONST(PvmTraceOptions, 9);
CONST(PvmTraceTid, 6);
CONST(PvmTraceTime, 2);

/* functions: name, type in PVM 3.4.6 */
FUNC(PvmMax, void (int *, void *, void *, int *, int *));
FUNC(PvmMin, void (int *, void *, void *, int *, int *));
FUNC(PvmProduct, void (int *, void *, void *, int *, int *));
FUNC(PvmSum, void (int *, void *, void *, int *, int *));
FUNC(pvm_recvf, int (*(int (*)(int, int, int)))(int (*)(int, int, int)));
FUNC(pvm_addhosts, int (char **, int, int *));
FUNC(pvm_addmhf, int (int, int, int, int (*) (int)));
FUNC(pvm_archcode, int (char *));
FUNC(pvm_barrier, int (char *, int));
FUNC(pvm_bcast, int (char *, int));
FUNC(pvm_bufinfo, int (int, int *, int *, int *));
FUNC(pvm_catchout, int (FILE *));
FUNC(pvm_config, int (int *, int *, struct pvmhostinfo **));
FUNC(pvm_delete, int (char *, int));
FUNC(pvm_delhosts, int (char **, int, int *));
FUNC(pvm_delinfo, int (char *, int, int));
FUNC(pvm_delmhf, int (int));
FUNC(pvm_exit, int (void));
FUNC(pvm_export, int (char *));
FUNC(pvm_freebuf, int (int));
FUNC(pvm_freecontext, int (int));
FUNC(pvm_freezegroup, int (char *, int));
FUNC(pvm_gather, int (void *, void *, int, int, int, char *, int));
FUNC(pvm_getcontext, int (void));
FUNC(pvm_getfds, int (int **));
FUNC(pvm_getinst, int (char *, int));
FUNC(pvm_getmboxinfo, int (char *, int *, struct pvmmboxinfo **));
FUNC(pvm_getminfo, int (int, struct pvmminfo *));
FUNC(pvm_getmwid, int (int));
FUNC(pvm_getnoresets, int (int **, int *));
FUNC(pvm_getopt, int (int));
FUNC(pvm_getrbuf, int (void));
FUNC(pvm_getsbuf, int (void));
FUNC(pvm_gettid, int (char *, int));
FUNC(pvm_gsize, int (char *));
FUNC(pvm_halt, int (void));
FUNC(pvm_hostsync, int (int, struct timeval *, struct timeval *));
FUNC(pvm_initsend, int (int));
FUNC(pvm_insert, int (char *, int, int));
FUNC(pvm_joingroup, int (char *));
FUNC(pvm_kill, int (int));
FUNC(pvm_lookup, int (char *, int, int *));
FUNC(pvm_lvgroup, int (char *));
FUNC(pvm_mcast, int (int *, int, int));
FUNC(pvm_mkbuf, int (int));
FUNC(pvm_mstat, int (char *));
FUNC(pvm_mytid, int (void));
FUNC(pvm_newcontext, int (void));
FUNC(pvm_notify, int (int, int, int, int *));
FUNC(pvm_nrecv, int (int, int));
FUNC(pvm_packf, int (const char *, ...));
FUNC(pvm_parent, int (void));
FUNC(pvm_perror, int (char *));
FUNC(pvm_pkbyte, int (char *, int, int));
FUNC(pvm_pkcplx, int (float *, int, int));
FUNC(pvm_pkdcplx, int (double *, int, int));
FUNC(pvm_pkdouble, int (double *, int, int));
FUNC(pvm_pkfloat, int (float *, int, int));
FUNC(pvm_pkint, int (int *, int, int));
FUNC(pvm_pklong, int (long int *, int, int));
FUNC(pvm_pkmesg, int (int));
FUNC(pvm_pkmesgbody, int (int));
FUNC(pvm_pkshort, int (short int *, int, int));
FUNC(pvm_pkstr, int (char *));
FUNC(pvm_pkuint, int (unsigned int *, int, int));
FUNC(pvm_pkulong, int (long unsigned int *, int, int));
FUNC(pvm_pkushort, int (short unsigned int *, int, int));
FUNC(pvm_precv, int (int, int, void *, int, int, int *, int *, int *));
FUNC(pvm_probe, int (int, int));
FUNC(pvm_psend, int (int, int, void *, int, int));
FUNC(pvm_pstat, int (int));
FUNC(pvm_putinfo, int (char *, int, int));
FUNC(pvm_recv, int (int, int));
FUNC(pvm_recvinfo, int (char *, int, int));
FUNC(pvm_reduce, int (void (*) (int *, void *, void *, int *, int *), void *, int, int, int, char *, int));
FUNC(pvm_reg_hoster, int (void));
FUNC(pvm_reg_rm, int (struct pvmhostinfo **));
FUNC(pvm_reg_tasker, int (void));
FUNC(pvm_reg_tracer, int (int, int, int, int, char *, int, int));
FUNC(pvm_scatter, int (void *, void *, int, int, int, char *, int));
FUNC(pvm_send, int (int, int));
FUNC(pvm_sendsig, int (int, int));
FUNC(pvm_setcontext, int (int));
FUNC(pvm_setminfo, int (int, struct pvmminfo *));
FUNC(pvm_setmwid, int (int, int));
FUNC(pvm_setopt, int (int, int));
FUNC(pvm_setrbuf, int (int));
FUNC(pvm_setsbuf, int (int));
FUNC(pvm_siblings, int (int **));
FUNC(pvm_spawn, int (char *, char **, int, char *, int, int *));
FUNC(pvm_start_pvmd, int (int, char **, int));
FUNC(pvm_strerror, char *(void));
FUNC(pvm_tasks, int (int, int *, struct pvmtaskinfo **));
FUNC(pvm_tickle, int (int, int *, int *, int *));
FUNC(pvm_tidtohost, int (int));
FUNC(pvm_trecv, int (int, int, struct timeval *));
FUNC(pvm_unexport, int (char *));
FUNC(pvm_unpackf, int (const char *, ...));
FUNC(pvm_upkbyte, int (char *, int, int));
FUNC(pvm_upkcplx, int (float *, int, int));
FUNC(pvm_upkdcplx, int (double *, int, int));
FUNC(pvm_upkdouble, int (double *, int, int));
FUNC(pvm_upkfloat, int (float *, int, int));
FUNC(pvm_upkint, int (int *, int, int));
FUNC(pvm_upklong, int (long int *, int, int));
FUNC(pvm_upkmesg, int (void));
FUNC(pvm_upkshort, int (short int *, int, int));
FUNC(pvm_upkstr, int (char *));
FUNC(pvm_upkuint, int (unsigned int *, int, int));
FUNC(pvm_upkulong, int (long unsigned int *, int, int));
FUNC(pvm_upkushort, int (short unsigned int *, int, int));
FUNC(pvm_version, char *(void));
FUNC(pvmgetrsh, char *(void));
FUNC(pvmgettmp, char *(void));
FUNC(pvmtmpnam, char *(char *));

CONST(PVMTMPNAMLEN, 128); /* with NOTMPNAM; else L_tmpnam */

/* PvmMboxMaxDirectIndex is unsigned, as in PVM */
_Static_assert(__builtin_types_compatible_p(__typeof__(PvmMboxMaxDirectIndex),
                                            unsigned),
               "PvmMboxMaxDirectIndex is unsigned");
CONST(PvmMboxDirectIndexOf(0x7fffffff), 2097151);
CONST(PvmMboxDirectIndexOf(5 << 10 | 0x3ff), 5);

/* The variables libpvm exports (declarations only). */
_Static_assert(__builtin_types_compatible_p(__typeof__(pvm_errno), int), "");
_Static_assert(__builtin_types_compatible_p(__typeof__(pvm_nerr), int), "");
_Static_assert(__builtin_types_compatible_p(__typeof__(pvm_errlist), char *[]),
               "");

/* Structures: the same members, with the same types, in the same order. */
#define MEMBER(s, m, type, after)                                          \
    _Static_assert(__builtin_types_compatible_p(__typeof__(((s *)0)->m),   \
                                                type),                     \
                   #s "." #m " is " #type);                                \
    _Static_assert(offsetof(s, m) >= (after), #s "." #m " in order")
#define END(s, last, type)                                                 \
    _Static_assert(sizeof(s) == (((offsetof(s, last) + sizeof(type)) +    \
                                  _Alignof(s) - 1) / _Alignof(s) *         \
                                 _Alignof(s)),                             \
                   #s " has nothing after " #last)
#define NEXT(s, m, type) (offsetof(s, m) + sizeof(type))

MEMBER(struct pvmhostinfo, hi_tid, int, 0);
MEMBER(struct pvmhostinfo, hi_name, char *, NEXT(struct pvmhostinfo, hi_tid, int));
MEMBER(struct pvmhostinfo, hi_arch, char *, NEXT(struct pvmhostinfo, hi_name, char *));
MEMBER(struct pvmhostinfo, hi_speed, int, NEXT(struct pvmhostinfo, hi_arch, char *));
MEMBER(struct pvmhostinfo, hi_dsig, int, NEXT(struct pvmhostinfo, hi_speed, int));
END(struct pvmhostinfo, hi_dsig, int);

MEMBER(struct pvmtaskinfo, ti_tid, int, 0);
MEMBER(struct pvmtaskinfo, ti_ptid, int, NEXT(struct pvmtaskinfo, ti_tid, int));
MEMBER(struct pvmtaskinfo, ti_host, int, NEXT(struct pvmtaskinfo, ti_ptid, int));
MEMBER(struct pvmtaskinfo, ti_flag, int, NEXT(struct pvmtaskinfo, ti_host, int));
MEMBER(struct pvmtaskinfo, ti_a_out, char *, NEXT(struct pvmtaskinfo, ti_flag, int));
MEMBER(struct pvmtaskinfo, ti_pid, int, NEXT(struct pvmtaskinfo, ti_a_out, char *));
END(struct pvmtaskinfo, ti_pid, int);

MEMBER(struct pvmminfo, len, int, 0);
MEMBER(struct pvmminfo, ctx, int, 4);
MEMBER(struct pvmminfo, tag, int, 8);
MEMBER(struct pvmminfo, wid, int, 12);
MEMBER(struct pvmminfo, enc, int, 16);
MEMBER(struct pvmminfo, crc, int, 20);
MEMBER(struct pvmminfo, src, int, 24);
MEMBER(struct pvmminfo, dst, int, 28);
END(struct pvmminfo, dst, int);

MEMBER(struct pvmmboxinfo, mi_name, char *, 0);
MEMBER(struct pvmmboxinfo, mi_nentries, int, NEXT(struct pvmmboxinfo, mi_name, char *));
MEMBER(struct pvmmboxinfo, mi_indices, int *, NEXT(struct pvmmboxinfo, mi_nentries, int));
MEMBER(struct pvmmboxinfo, mi_owners, int *, NEXT(struct pvmmboxinfo, mi_indices, int *));
MEMBER(struct pvmmboxinfo, mi_flags, int *, NEXT(struct pvmmboxinfo, mi_owners, int *));
END(struct pvmmboxinfo, mi_flags, int *);

/* The header compiles on its own and with <upvm.h>, in either order. */
#include <upvm.h>
#include <pvm3.h>

/* Every string is compared, so that one run names all that differ. */
TEST(class_names_and_version)
{
    int bad = 0;
#define STR(name, value)                                                   \
    do {                                                                   \
        if (strcmp((name), (value)) != 0) {                                \
            fprintf(stderr, "%s is \"%s\", PVM 3.4.6 has \"%s\"\n", #name, \
                    (name), (value));                                      \
            bad = 1;                                                       \
        }                                                                  \
    } while (0)
    STR(PVMHOSTERCLASS, "###_PVM_HOSTER_###");
    STR(PVMNORESETCLASS, "###_PVM_NO_RESET_###");
    STR(PVMRMCLASS, "###_PVM_RM_###");
    STR(PVMTASKERCLASS, "###_PVM_TASKER_###");
    STR(PVMTRACERCLASS, "###_PVM_TRACER_###");
    STR(PVM_VER, "3.4.6");
    CHECK(!bad);
}

/* the direct-index macro, in range (out of range it prints and gives 0) */
TEST(direct_index_macro) { CHECK_EQ(PvmMboxDirectIndex(3), 3 << 10); }

HARNESS_MAIN()
