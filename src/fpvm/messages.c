/*
 * messages.c - the Fortran routines for sending and receiving, contexts
 * and message handlers (fpvm.h has the conventions).
 */
#include <sys/time.h>

#include "fpvm/fpvm.h"
#include "pvm/pvm.h"

void pvmfsend_(int *tid, int *msgtag, int *info)
{
    *info = pvm_send(*tid, *msgtag);
}

void pvmfmcast_(int *ntask, int *tids, int *msgtag, int *info)
{
    *info = pvm_mcast(tids, *ntask, *msgtag);
}

void pvmfrecv_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_recv(*tid, *msgtag);
}

void pvmfnrecv_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_nrecv(*tid, *msgtag);
}

/* sec = -1: wait as long as it takes (pvm_recv); else at most sec
 * seconds and usec microseconds (0 and 0: pvm_nrecv).  bufid 0: none
 * came in that time. */
void pvmftrecv_(int *tid, int *msgtag, int *sec, int *usec, int *bufid)
{
    struct timeval tmout = {.tv_sec = *sec, .tv_usec = *usec};
    *bufid = pvm_trecv(*tid, *msgtag, *sec == -1 ? NULL : &tmout);
}

void pvmfprobe_(int *tid, int *msgtag, int *bufid)
{
    *bufid = pvm_probe(*tid, *msgtag);
}

/* len items of type datatype (a type code of fpvm3.h) from buf. */
void pvmfpsend_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *info)
{
    *info = pvm_psend(*tid, *msgtag, buf, *len, *datatype);
}

void pvmfprecv_(int *tid, int *msgtag, void *buf, int *len, int *datatype, int *atid,
                int *atag, int *alen, int *info)
{
    *info = pvm_precv(*tid, *msgtag, buf, *len, *datatype, atid, atag, alen);
}

void pvmfnewcontext_(int *ctx)
{
    *ctx = pvm_newcontext();
}

void pvmfsetcontext_(int *ctx, int *oldctx)
{
    *oldctx = pvm_setcontext(*ctx);
}

void pvmfgetcontext_(int *ctx)
{
    *ctx = pvm_getcontext();
}

void pvmffreecontext_(int *ctx, int *info)
{
    *info = pvm_freecontext(*ctx);
}

/*
 * func: an INTEGER FUNCTION f(bufid) of the program, called with the id
 * by reference, as Fortran passes it.  (PVM's libfpvm hands it to
 * pvm_addmhf as it is, which calls it with the id's value.)  The fourth
 * argument is not used, as in PVM's; info: the handler's id or the error.
 */
void pvmfaddmhf_(int *src, int *tag, int *ctx, int *unused, int (*func)(int *bufid),
                 int *info)
{
    (void)unused;
    *info = pvm_addmhf_byref(*src, *tag, *ctx, func);
}

void pvmfdelmhf_(int *mhid, int *info)
{
    *info = pvm_delmhf(*mhid);
}
