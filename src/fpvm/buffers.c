/*
 * buffers.c - the Fortran routines for message buffers and packing:
 * pvmfinitsend ... pvmfunpack (fpvm.h has the conventions).
 */
#include "fpvm/fpvm.h"

void pvmfinitsend_(int *encoding, int *bufid)
{
    *bufid = pvm_initsend(*encoding);
}

void pvmfmkbuf_(int *encoding, int *bufid)
{
    *bufid = pvm_mkbuf(*encoding);
}

void pvmffreebuf_(int *bufid, int *info)
{
    *info = pvm_freebuf(*bufid);
}

void pvmfgetsbuf_(int *bufid)
{
    *bufid = pvm_getsbuf();
}

void pvmfgetrbuf_(int *bufid)
{
    *bufid = pvm_getrbuf();
}

void pvmfsetsbuf_(int *bufid, int *oldbuf)
{
    *oldbuf = pvm_setsbuf(*bufid);
}

void pvmfsetrbuf_(int *bufid, int *oldbuf)
{
    *oldbuf = pvm_setrbuf(*bufid);
}

void pvmfbufinfo_(int *bufid, int *bytes, int *msgtag, int *tid, int *info)
{
    *info = pvm_bufinfo(*bufid, bytes, msgtag, tid);
}

/*
 * what: a type code of fpvm3.h.  nitem items of it, every stride-th
 * from xp.  STRING is nitem characters, packed as bytes (as PVM's libfpvm
 * does: the CHARACTER's own length is not used, so it unpacks into any
 * CHARACTER of at least nitem; a C pvm_upkstr cannot read it).  An
 * unknown code: PvmBadParam, nothing packed.
 */
void pvmfpack_(int *what, void *xp, int *nitem, int *stride, int *info)
{
    int n = *nitem, s = *stride;
    switch (*what) {
    case PVM_STR:
    case PVM_BYTE: *info = pvm_pkbyte(xp, n, s); break;
    case PVM_SHORT: *info = pvm_pkshort(xp, n, s); break;
    case PVM_INT: *info = pvm_pkint(xp, n, s); break;
    case PVM_LONG: *info = pvm_pklong(xp, n, s); break;
    case PVM_FLOAT: *info = pvm_pkfloat(xp, n, s); break;
    case PVM_CPLX: *info = pvm_pkcplx(xp, n, s); break;
    case PVM_DOUBLE: *info = pvm_pkdouble(xp, n, s); break;
    case PVM_DCPLX: *info = pvm_pkdcplx(xp, n, s); break;
    default: *info = PvmBadParam; break;
    }
}

void pvmfunpack_(int *what, void *xp, int *nitem, int *stride, int *info)
{
    int n = *nitem, s = *stride;
    switch (*what) {
    case PVM_STR:
    case PVM_BYTE: *info = pvm_upkbyte(xp, n, s); break;
    case PVM_SHORT: *info = pvm_upkshort(xp, n, s); break;
    case PVM_INT: *info = pvm_upkint(xp, n, s); break;
    case PVM_LONG: *info = pvm_upklong(xp, n, s); break;
    case PVM_FLOAT: *info = pvm_upkfloat(xp, n, s); break;
    case PVM_CPLX: *info = pvm_upkcplx(xp, n, s); break;
    case PVM_DOUBLE: *info = pvm_upkdouble(xp, n, s); break;
    case PVM_DCPLX: *info = pvm_upkdcplx(xp, n, s); break;
    default: *info = PvmBadParam; break;
    }
}
