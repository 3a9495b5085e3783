/*
 * hosts.c - the Fortran routines for the virtual machine: pvmfconfig,
 * pvmfaddhost, pvmfdelhost, pvmfmstat, pvmfhalt, pvmfarchcode,
 * pvmfhostsync, pvmfstartpvmd (fpvm.h has the conventions).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "fpvm/fpvm.h"

/*
 * One host per call, as PVM's: the first call asks pvm_config and returns
 * its first host, each next call the next one; info is 1 for a host, or
 * the error.  After the last, the next call asks anew; nhost = -1 on
 * entry starts again.  The list is asked on every call (pvm_config's
 * array is the node's, shared by its tasks), its length kept.
 */
void pvmfconfig_(int *nhost, int *narch, int *dtid, char *name, char *arch, int *speed,
                 int *info, size_t name_len, size_t arch_len)
{
    struct fpvm_state *st = fpvm_state();
    if (!st) {
        *info = PvmSysErr;
        return;
    }
    if (st->config_n && *nhost == -1)
        st->config_n = 0;
    struct pvmhostinfo *hosts = NULL;
    int n = 0, na = 0, cc = pvm_config(&n, &na, &hosts);
    if (cc < 0) {
        *info = cc;
        return;
    }
    if (!st->config_n) {
        st->config_n = n;
        st->config_next = 0;
        if (n == 0) {
            *nhost = 0;
            *info = 0;
            return;
        }
    }
    if (st->config_next < st->config_n && st->config_next < n) {
        const struct pvmhostinfo *hi = &hosts[st->config_next++];
        *nhost = st->config_n;
        *narch = na;
        *dtid = hi->hi_tid;
        fpvm_fstr(name, name_len, hi->hi_name);
        fpvm_fstr(arch, arch_len, hi->hi_arch);
        *speed = hi->hi_speed;
        *info = 1;
    } else {
        *info = PvmNoHost; /* a host went away while the list was read */
    }
    if (st->config_next >= st->config_n || st->config_next >= n)
        st->config_n = 0;
}

/* info: the new host's dtid, or the error (the call's or the host's). */
static int one_host(int (*call)(char **, int, int *), const char *host, size_t len)
{
    char chost[FPVM_NAME_MAX + 1];
    if (fpvm_cstr(chost, sizeof chost, host, len) != 0)
        return PvmBadParam;
    char *hosts[1] = {chost};
    int status = 0, cc = call(hosts, 1, &status);
    return cc < 0 ? cc : status;
}

void pvmfaddhost_(const char *host, int *info, size_t host_len)
{
    *info = one_host(pvm_addhosts, host, host_len);
}

void pvmfdelhost_(const char *host, int *info, size_t host_len)
{
    *info = one_host(pvm_delhosts, host, host_len);
}

void pvmfmstat_(const char *host, int *mstat, size_t host_len)
{
    char chost[FPVM_NAME_MAX + 1];
    *mstat = fpvm_cstr(chost, sizeof chost, host, host_len) != 0 ? PvmBadParam
                                                                  : pvm_mstat(chost);
}

void pvmfhalt_(int *info)
{
    *info = pvm_halt();
}

void pvmfarchcode_(const char *arch, int *cod, size_t arch_len)
{
    char carch[FPVM_NAME_MAX + 1];
    *cod = fpvm_cstr(carch, sizeof carch, arch, arch_len) != 0 ? PvmBadParam
                                                               : pvm_archcode(carch);
}

void pvmfhostsync_(int *host, int *clksec, int *clkusec, int *deltasec, int *deltausec,
                   int *info)
{
    struct timeval clk = {0, 0}, delta = {0, 0};
    *info = pvm_hostsync(*host, &clk, &delta);
    *clksec = (int)clk.tv_sec;
    *clkusec = (int)clk.tv_usec;
    *deltasec = (int)delta.tv_sec;
    *deltausec = (int)delta.tv_usec;
}

/* args: the pvmd's arguments in one string, split at blanks (PVM's). */
void pvmfstartpvmd_(const char *args, int *block, int *info, size_t args_len)
{
    char *copy = malloc(args_len + 1);
    char **argv = malloc((args_len / 2 + 2) * sizeof *argv);
    if (!copy || !argv) {
        free(copy);
        free(argv);
        *info = PvmNoMem;
        return;
    }
    memcpy(copy, args, args_len);
    copy[args_len] = '\0';
    int argc = 0;
    for (char *save = NULL, *w = strtok_r(copy, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save))
        argv[argc++] = w;
    argv[argc] = NULL;
    *info = pvm_start_pvmd(argc, argc ? argv : NULL, *block);
    free(argv);
    free(copy);
}
