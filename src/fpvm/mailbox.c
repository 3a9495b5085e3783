/*
 * mailbox.c - the Fortran routines for the message mailbox:
 * pvmfputinfo, pvmfrecvinfo, pvmfdelinfo, pvmfgetmboxinfo (fpvm.h has
 * the conventions).
 */
#include "fpvm/fpvm.h"

void pvmfputinfo_(const char *name, int *bufid, int *flags, int *index, size_t name_len)
{
    char n[FPVM_NAME_MAX + 1];
    *index = fpvm_cstr(n, sizeof n, name, name_len) != 0 ? PvmBadParam
                                                         : pvm_putinfo(n, *bufid, *flags);
}

void pvmfrecvinfo_(const char *name, int *index, int *flags, int *bufid, size_t name_len)
{
    char n[FPVM_NAME_MAX + 1];
    *bufid = fpvm_cstr(n, sizeof n, name, name_len) != 0 ? PvmBadParam
                                                         : pvm_recvinfo(n, *index, *flags);
}

void pvmfdelinfo_(const char *name, int *index, int *flags, int *info, size_t name_len)
{
    char n[FPVM_NAME_MAX + 1];
    *info = fpvm_cstr(n, sizeof n, name, name_len) != 0 ? PvmBadParam
                                                        : pvm_delinfo(n, *index, *flags);
}

/*
 * One class (mailbox name) per call, as PVM's: the first call asks
 * pvm_getmboxinfo(pattern) and returns its first class, each next call
 * the next; nclasses = -1 on entry starts again.  index, owner and flags
 * are arrays of at least nentries.  info: 0, PvmNotFound when nothing
 * matches, or the error.  (PVM's leaves nclasses and a success's info
 * unset; they are set here.)
 */
void pvmfgetmboxinfo_(const char *pattern, char *name, int *nclasses, int *nentries,
                      int *index, int *owner, int *flags, int *info, size_t pattern_len,
                      size_t name_len)
{
    struct fpvm_state *st = fpvm_state();
    if (!st) {
        *info = PvmSysErr;
        return;
    }
    if (st->mbox_n && *nclasses == -1)
        st->mbox_n = 0;
    if (!st->mbox_n) {
        char pat[FPVM_NAME_MAX + 1];
        if (fpvm_cstr(pat, sizeof pat, pattern, pattern_len) != 0) {
            *info = PvmBadParam;
            return;
        }
        int n = 0, cc = pvm_getmboxinfo(pat, &n, &st->mbox);
        if (cc < 0) {
            *info = cc;
            return;
        }
        if (n == 0) {
            *nclasses = 0;
            *info = PvmNotFound;
            return;
        }
        st->mbox_n = n;
        st->mbox_next = 0;
    }
    const struct pvmmboxinfo *mi = &st->mbox[st->mbox_next++];
    *nclasses = st->mbox_n;
    fpvm_fstr(name, name_len, mi->mi_name);
    *nentries = mi->mi_nentries;
    for (int i = 0; i < mi->mi_nentries; i++) {
        index[i] = mi->mi_indices[i];
        owner[i] = mi->mi_owners[i];
        flags[i] = mi->mi_flags[i];
    }
    *info = 0;
    if (st->mbox_next >= st->mbox_n)
        st->mbox_n = 0;
}
