! fpvm3.h - the PVM 3 constants for Fortran programs, as UPVM
! provides them.
!
! INCLUDE 'fpvm3.h' (or '../include/fpvm3.h', as PVM's examples do:
! with -I<UPVM>/include both are found) in every program unit that
! calls the pvmf* routines.  Every name and value is that of PVM
! 3.4.6's fpvm3.h, so a Fortran PVM program compiles against UPVM
! unchanged; the values are those of <pvm3.h> (tests/fortran checks
! both).  The routines are in libupvm: docs/fortran.md lists them and
! their conventions.
!
! This file is valid fixed-form and free-form source: comments start
! with '!' in column 1, statements in column 7, no line is continued
! or longer than 72 columns.  The reduction functions are not declared
! here: a program names them itself, as with PVM:  EXTERNAL PvmSum
!
      integer PVMTASKDEFAULT, PVMTASKHOST, PVMTASKARCH, PVMTASKDEBUG
      integer PVMTASKTRACE, PVMMPPFRONT, PVMHOSTCOMPL, PVMNOSPAWNPARENT
      integer PVMHOST, PVMARCH, PVMDEBUG, PVMTRACE
      integer PVMDATADEFAULT, PVMDATARAW, PVMDATAINPLACE, PVMDATATRACE
      integer PVMDEFAULT, PVMRAW, PVMINPLACE
      integer PVMTASKEXIT, PVMHOSTDELETE, PVMHOSTADD, PVMROUTEADD
      integer PVMROUTEDELETE, PVMNOTIFYCANCEL
      integer STRING, BYTE1, INTEGER2, INTEGER4, INTEGER8
      integer REAL4, COMPLEX8, REAL8, COMPLEX16
      integer PVMROUTE, PVMDEBUGMASK, PVMAUTOERR
      integer PVMOUTPUTTID, PVMOUTPUTCODE, PVMTRACETID, PVMTRACECODE
      integer PVMTRACEBUFFER, PVMTRACEOPTIONS, PVMFRAGSIZE, PVMRESVTIDS
      integer PVMSOUTPUTTID, PVMSOUTPUTCODE, PVMSTRACETID
      integer PVMSTRACECODE, PVMSTRACEBUFFER, PVMSTRACEOPTIONS
      integer PVMSHOWTIDS, PVMPOLLTYPE, PVMPOLLTIME
      integer PVMOUTPUTCTX, PVMTRACECTX, PVMSOUTPUTCTX, PVMSTRACECTX
      integer PVMNORESET
      integer PVMTRACEFULL, PVMTRACETIME, PVMTRACECOUNT
      integer PVMPOLLCONSTANT, PVMPOLLSLEEP
      integer PVMMBOXDEFAULT, PVMMBOXPERSISTENT, PVMMBOXMULTIINSTANCE
      integer PVMMBOXOVERWRITABLE, PVMMBOXFIRSTAVAIL
      integer PVMMBOXREADANDDELETE, PVMMBOXWAITFORINFO
      integer PVMDONTROUTE, PVMALLOWDIRECT, PVMROUTEDIRECT
      integer PvmOk, PvmBadParam, PvmMismatch, PvmOverflow, PvmNoData
      integer PvmNoHost, PvmNoFile, PvmDenied, PvmNoMem, PvmBadMsg
      integer PvmSysErr, PvmNoBuf, PvmNoSuchBuf, PvmNullGroup
      integer PvmDupGroup, PvmNoGroup, PvmNotInGroup, PvmNoInst
      integer PvmHostFail, PvmNoParent, PvmNotImpl, PvmDSysErr
      integer PvmBadVersion, PvmOutOfRes, PvmDupHost, PvmCantStart
      integer PvmAlready, PvmNoTask, PvmNotFound, PvmExists
      integer PvmHostrNMstr, PvmParentNotSet, PvmIPLoopback
      integer PvmNoEntry, PvmDupEntry
!
! pvmfspawn's flag (PvmTask* of pvm3.h), and their old names
      parameter (PVMTASKDEFAULT = 0)
      parameter (PVMTASKHOST = 1)
      parameter (PVMTASKARCH = 2)
      parameter (PVMTASKDEBUG = 4)
      parameter (PVMTASKTRACE = 8)
      parameter (PVMMPPFRONT = 16)
      parameter (PVMHOSTCOMPL = 32)
      parameter (PVMNOSPAWNPARENT = 64)
      parameter (PVMHOST = 1)
      parameter (PVMARCH = 2)
      parameter (PVMDEBUG = 4)
      parameter (PVMTRACE = 8)
!
! pvmfinitsend's and pvmfmkbuf's encoding (PvmData*), and the old names
      parameter (PVMDATADEFAULT = 0)
      parameter (PVMDATARAW = 1)
      parameter (PVMDATAINPLACE = 2)
      parameter (PVMDATATRACE = 4)
      parameter (PVMDEFAULT = 0)
      parameter (PVMRAW = 1)
      parameter (PVMINPLACE = 2)
!
! pvmfnotify's what
      parameter (PVMTASKEXIT = 1)
      parameter (PVMHOSTDELETE = 2)
      parameter (PVMHOSTADD = 3)
      parameter (PVMROUTEADD = 4)
      parameter (PVMROUTEDELETE = 5)
      parameter (PVMNOTIFYCANCEL = 256)
!
! the type codes of pvmfpack, pvmfunpack, pvmfpsend, pvmfprecv,
! pvmfreduce, pvmfgather, pvmfscatter (the PVM_* codes of pvm3.h)
      parameter (STRING = 0)
      parameter (BYTE1 = 1)
      parameter (INTEGER2 = 2)
      parameter (INTEGER4 = 3)
      parameter (REAL4 = 4)
      parameter (COMPLEX8 = 5)
      parameter (REAL8 = 6)
      parameter (COMPLEX16 = 7)
      parameter (INTEGER8 = 8)
!
! pvmfsetopt's and pvmfgetopt's what
      parameter (PVMROUTE = 1)
      parameter (PVMDEBUGMASK = 2)
      parameter (PVMAUTOERR = 3)
      parameter (PVMOUTPUTTID = 4)
      parameter (PVMOUTPUTCODE = 5)
      parameter (PVMTRACETID = 6)
      parameter (PVMTRACECODE = 7)
      parameter (PVMTRACEBUFFER = 8)
      parameter (PVMTRACEOPTIONS = 9)
      parameter (PVMFRAGSIZE = 10)
      parameter (PVMRESVTIDS = 11)
      parameter (PVMSOUTPUTTID = 12)
      parameter (PVMSOUTPUTCODE = 13)
      parameter (PVMSTRACETID = 14)
      parameter (PVMSTRACECODE = 15)
      parameter (PVMSTRACEBUFFER = 16)
      parameter (PVMSTRACEOPTIONS = 17)
      parameter (PVMSHOWTIDS = 18)
      parameter (PVMPOLLTYPE = 19)
      parameter (PVMPOLLTIME = 20)
      parameter (PVMOUTPUTCTX = 21)
      parameter (PVMTRACECTX = 22)
      parameter (PVMSOUTPUTCTX = 23)
      parameter (PVMSTRACECTX = 24)
      parameter (PVMNORESET = 25)
!
! values of PVMTRACEOPTIONS (tracing), PVMPOLLTYPE and PVMROUTE
      parameter (PVMTRACEFULL = 1)
      parameter (PVMTRACETIME = 2)
      parameter (PVMTRACECOUNT = 3)
      parameter (PVMPOLLCONSTANT = 1)
      parameter (PVMPOLLSLEEP = 2)
      parameter (PVMDONTROUTE = 1)
      parameter (PVMALLOWDIRECT = 2)
      parameter (PVMROUTEDIRECT = 3)
!
! the mailbox's flags (pvmfputinfo, pvmfrecvinfo, pvmfdelinfo)
      parameter (PVMMBOXDEFAULT = 0)
      parameter (PVMMBOXPERSISTENT = 1)
      parameter (PVMMBOXMULTIINSTANCE = 2)
      parameter (PVMMBOXOVERWRITABLE = 4)
      parameter (PVMMBOXFIRSTAVAIL = 8)
      parameter (PVMMBOXREADANDDELETE = 16)
      parameter (PVMMBOXWAITFORINFO = 32)
!
! the error codes returned in info (and in a result argument)
      parameter (PvmOk = 0)
      parameter (PvmBadParam = -2)
      parameter (PvmMismatch = -3)
      parameter (PvmOverflow = -4)
      parameter (PvmNoData = -5)
      parameter (PvmNoHost = -6)
      parameter (PvmNoFile = -7)
      parameter (PvmDenied = -8)
      parameter (PvmNoMem = -10)
      parameter (PvmBadMsg = -12)
      parameter (PvmSysErr = -14)
      parameter (PvmNoBuf = -15)
      parameter (PvmNoSuchBuf = -16)
      parameter (PvmNullGroup = -17)
      parameter (PvmDupGroup = -18)
      parameter (PvmNoGroup = -19)
      parameter (PvmNotInGroup = -20)
      parameter (PvmNoInst = -21)
      parameter (PvmHostFail = -22)
      parameter (PvmNoParent = -23)
      parameter (PvmNotImpl = -24)
      parameter (PvmDSysErr = -25)
      parameter (PvmBadVersion = -26)
      parameter (PvmOutOfRes = -27)
      parameter (PvmDupHost = -28)
      parameter (PvmCantStart = -29)
      parameter (PvmAlready = -30)
      parameter (PvmNoTask = -31)
      parameter (PvmNotFound = -32)
      parameter (PvmExists = -33)
      parameter (PvmHostrNMstr = -34)
      parameter (PvmParentNotSet = -35)
      parameter (PvmIPLoopback = -36)
!
! old names (PVM 3.3's) of PvmNotFound and PvmExists, as in PVM's
! fpvm3.h (its pvm3.h, and ours, make PvmDupEntry PvmDenied, -8)
      parameter (PvmNoEntry = -32)
      parameter (PvmDupEntry = -33)
