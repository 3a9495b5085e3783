/*
 * groups.c - the Fortran routines for dynamic groups and collective
 * operations (libgpvm3's), and the reduce functions PvmSum, PvmProduct,
 * PvmMax, PvmMin for Fortran (EXTERNAL PvmSum): fpvm.h has the
 * conventions.
 */
#include "fpvm/fpvm.h"

/* The group name as a C string in buf; false when longer than PVM's
 * libfpvm takes (the caller returns PvmBadParam). */
static int group_name(char buf[FPVM_GROUP_MAX + 1], const char *group, size_t len)
{
    return fpvm_cstr(buf, FPVM_GROUP_MAX + 1, group, len) == 0;
}

void pvmfjoingroup_(const char *group, int *inum, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *inum = group_name(g, group, group_len) ? pvm_joingroup(g) : PvmBadParam;
}

void pvmflvgroup_(const char *group, int *info, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *info = group_name(g, group, group_len) ? pvm_lvgroup(g) : PvmBadParam;
}

void pvmfgettid_(const char *group, int *inum, int *tid, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *tid = group_name(g, group, group_len) ? pvm_gettid(g, *inum) : PvmBadParam;
}

void pvmfgetinst_(const char *group, int *tid, int *inum, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *inum = group_name(g, group, group_len) ? pvm_getinst(g, *tid) : PvmBadParam;
}

void pvmfgsize_(const char *group, int *size, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *size = group_name(g, group, group_len) ? pvm_gsize(g) : PvmBadParam;
}

void pvmffreezegroup_(const char *group, int *size, int *info, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *info = group_name(g, group, group_len) ? pvm_freezegroup(g, *size) : PvmBadParam;
}

void pvmfbarrier_(const char *group, int *count, int *info, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *info = group_name(g, group, group_len) ? pvm_barrier(g, *count) : PvmBadParam;
}

void pvmfbcast_(const char *group, int *msgtag, int *info, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *info = group_name(g, group, group_len) ? pvm_bcast(g, *msgtag) : PvmBadParam;
}

/*
 * func: PvmSum, PvmProduct, PvmMax, PvmMin (the routines below) or a
 * SUBROUTINE f(datatype, x, y, num, info) of the program: both take every
 * argument by reference, as pvm_reduce calls its function, so it is
 * passed on as it is.  datatype: a type code of fpvm3.h (the PVM_* code).
 */
void pvmfreduce_(fpvm_reduce_fn *func, void *data, int *count, int *datatype, int *msgtag,
                 const char *group, int *rootginst, int *info, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *info = group_name(g, group, group_len)
                ? pvm_reduce(func, data, *count, *datatype, *msgtag, g, *rootginst)
                : PvmBadParam;
}

void pvmfgather_(void *result, void *data, int *count, int *datatype, int *msgtag,
                 const char *group, int *rootginst, int *info, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *info = group_name(g, group, group_len)
                ? pvm_gather(result, data, *count, *datatype, *msgtag, g, *rootginst)
                : PvmBadParam;
}

void pvmfscatter_(void *result, void *data, int *count, int *datatype, int *msgtag,
                  const char *group, int *rootginst, int *info, size_t group_len)
{
    char g[FPVM_GROUP_MAX + 1];
    *info = group_name(g, group, group_len)
                ? pvm_scatter(result, data, *count, *datatype, *msgtag, g, *rootginst)
                : PvmBadParam;
}

/* The Fortran names of the reduce functions (EXTERNAL PvmSum in a program
 * is pvmsum_); a program may also call them (CALL PvmProduct(...)). */
void pvmsum_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmSum(datatype, x, y, num, info);
}

void pvmproduct_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmProduct(datatype, x, y, num, info);
}

void pvmmax_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmMax(datatype, x, y, num, info);
}

void pvmmin_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmMin(datatype, x, y, num, info);
}
