/*
 * host.c - the virtual machine as a task sees it: one host (this node),
 * libpvm's options, and the calls that in PVM talk to the pvmd about hosts,
 * output, the environment, tracing and the daemons themselves.
 *
 * Where a call has a meaning here it keeps it (pvm_config describes this
 * node; pvm_halt ends every task); where its meaning is tied to processes
 * or pvmd internals it answers with the documented error code, and
 * docs/compat.md says which and why.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "node/job.h"
#include "pvm/pvm.h"
#include "pvm/remote.h"
#include "pvm/tev.h"

/* The architecture name and data signature PVM gives this platform. */
#define ARCH_NAME "LINUX64"

void pvm_host_init(void)
{
    if (gethostname(pvm_node.hostname, sizeof pvm_node.hostname - 1) != 0 ||
        !pvm_node.hostname[0])
        strcpy(pvm_node.hostname, "localhost");
    char *dot = strchr(pvm_node.hostname, '.');
    if (dot) /* PVM names hosts by their short name */
        *dot = '\0';
}

char *pvm_version(void)
{
    return PVM_VER;
}

/* ------------------------------------------------------------ options */

void pvm_opts_init(struct pvm_task *t)
{
    t->opt[PvmRoute] = PvmAllowDirect;
    t->opt[PvmAutoErr] = 1;
    t->opt[PvmFragSize] = 4080;
    t->opt[PvmShowTids] = 1;
}

static bool opt_valid(int what)
{
    return what >= 1 && what < PVM_NOPTS && what != PvmPollType && what != PvmPollTime;
}

static int getopt_body(struct pvm_task *t, int what)
{
    if (!opt_valid(what))
        return pvm_fail(t, "pvm_getopt", PvmBadParam);
    bool trace;
    int val = pvm_tev_getopt(t, what, &trace); /* the trace options: tev.c */
    return trace ? val : t->opt[what];
}

int pvm_getopt(int what)
{
    TASK_OR_FAIL(t, "pvm_getopt");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_GETOPT)) {
        pvm_tev_int(t, TEV_DID_OPT, what);
        pvm_tev_end(t);
    }
    return pvm_api_leave_int(t, &a, TEV_DID_OPV, getopt_body(t, what));
}

/* Is val acceptable for option what?  0, or the error PVM gives. */
static int opt_check(struct pvm_task *t, int what, int val)
{
    switch (what) {
    case PvmRoute:
        return val >= PvmDontRoute && val <= PvmRouteDirect ? 0 : PvmBadParam;
    case PvmFragSize: /* a fragment header plus one int, up to 1 MiB */
        return val >= 28 && val <= 1048576 ? 0 : PvmBadParam;
    case PvmOutputTid: /* PVM: 0, the task itself, or its own self tid */
        return val == 0 || val == t->tid || val == t->opt[PvmSelfOutputTid] ? 0 : PvmBadParam;
    case PvmSelfOutputContext:
    case PvmPollType:
    case PvmPollTime:
        return PvmNotImpl;
    }
    return 0;
}

static int setopt_body(struct pvm_task *t, int what, int val)
{
    if (what < 1 || what >= PVM_NOPTS)
        return pvm_fail(t, "pvm_setopt", PvmBadParam);
    int rc = opt_check(t, what, val);
    if (rc)
        return pvm_fail(t, "pvm_setopt", rc);
    /* PVM 3.4.6 reports "Error 0" for these without a self output/trace
     * destination, keeps the old value and returns 0; kept as it is. */
    bool trace;
    if ((what == PvmSelfOutputCode && !t->opt[PvmSelfOutputTid]) ||
        (what == PvmSelfTraceCode && pvm_tev_getopt(t, PvmSelfTraceTid, &trace) <= 0))
        return pvm_fail(t, "pvm_setopt", 0);
    int old;
    rc = pvm_tev_setopt(t, what, val, &old); /* the trace options: tev.c */
    if (rc <= 0)
        return rc < 0 ? pvm_fail(t, "pvm_setopt", rc) : old;
    old = t->opt[what];
    t->opt[what] = val;
    return old;
}

int pvm_setopt(int what, int val)
{
    TASK_OR_FAIL(t, "pvm_setopt");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_SETOPT)) {
        pvm_tev_int(t, TEV_DID_OPT, what);
        pvm_tev_int(t, TEV_DID_OPV, val);
        pvm_tev_end(t);
    }
    return pvm_api_leave_int(t, &a, TEV_DID_OPV, setopt_body(t, what, val));
}

/* ------------------------------------------------------------ hosts */

static struct pvmhostinfo host_infos[NODE_MAX];
static char host_names[NODE_MAX][NODE_HOST_MAX + 16];

/*
 * One entry per host, and a host is a machine (docs/pvm.md, "Tids, hosts
 * and nodes"): a job of one host is one entry however many nodes it runs
 * (hi_tid 0x40000, hi_name the host's name, as PVM shows its one host); a
 * job of MPI ranks has one per machine with a node in the VM, its hi_tid
 * that of the lowest node there.
 */
static int config_body(int *nhost, int *narch, struct pvmhostinfo **hostp)
{
    TASK_OR_FAIL(t, "pvm_config");
    int n = 0;
    for (int k = 0; k < (pvm_multi() ? node_job_slots() : 1); k++) {
        if (pvm_machine_of(k) != k || !pvm_machine_up(k, -1))
            continue;
        snprintf(host_names[k], sizeof host_names[k], "%s", pvm_machine_name(k));
        host_infos[n++] = (struct pvmhostinfo){
            .hi_tid = (k + 1) << PVM_TID_HOST_SHIFT,
            .hi_name = host_names[k],
            .hi_arch = ARCH_NAME,
            .hi_speed = 1000,
            .hi_dsig = msg_native_dsig(),
        };
    }
    if (nhost)
        *nhost = n;
    if (narch)
        *narch = 1;
    if (hostp)
        *hostp = host_infos;
    return 0;
}

int pvm_config(int *nhost, int *narch, struct pvmhostinfo **hostp)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t)
        pvm_api_enter_bare(t, &a, TEV_CONFIG);
    int nh = 0, na = 0, *nhp = nhost ? nhost : &nh, *nap = narch ? narch : &na;
    int cc = config_body(nhp, nap, hostp);
    if (t && pvm_api_leave(t, &a)) {
        pvm_tev_int(t, TEV_DID_NH, *nhp);
        pvm_tev_int(t, TEV_DID_NA, *nap);
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_end(t);
    }
    return cc;
}

/* The host (machine) the task runs on: in PVM bit arithmetic (a tid's host
 * part names its host); here a tid's host part names the node that made
 * it, and the task may run on another node (spawned there, or moved), so
 * the answer is the host tid of the machine where it is.  A value that
 * names no node of the job: its host bits, unchecked, as in PVM. */
int pvm_tidtohost(int tid)
{
    if (!pvm_multi() || !pvm_is_task_tid(tid) || pvm_host_machine(tid & PVM_TID_HOST_MASK) < 0)
        return tid & PVM_TID_HOST_MASK;
    if (!node_job_host(0))
        return 1 << PVM_TID_HOST_SHIFT; /* one host: every node is on it */
    int node = pvm_tid_where(tid);
    return node >= 0 ? pvm_machine_tid(node) : tid & PVM_TID_HOST_MASK;
}

static int archcode_body(char *arch)
{
    TASK_OR_FAIL(t, "pvm_archcode");
    if (!arch)
        return pvm_fail(t, "pvm_archcode", PvmBadParam);
    if (strcmp(arch, ARCH_NAME) == 0)
        return msg_native_dsig();
    return pvm_fail(t, "pvm_archcode", PvmNotFound); /* only archs in the VM */
}

int pvm_archcode(char *arch)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_ARCHCODE)) {
        pvm_tev_str(t, TEV_DID_AN, arch);
        pvm_tev_end(t);
    }
    int cc = archcode_body(arch);
    return t ? pvm_api_leave_int(t, &a, TEV_DID_AC, cc) : cc;
}

static bool is_this_host(const char *name)
{
    return strcmp(name, pvm_node.hostname) == 0 || strcmp(name, "localhost") == 0 ||
           strcmp(name, ".") == 0;
}

/* Is the host (a machine) or node (node<n>) called name in the VM? */
static bool name_up(const char *name)
{
    int id, kind = pvm_name_lookup(name, &id);
    return kind == PVM_NAME_MACHINE ? pvm_machine_up(id, -1)
           : kind == PVM_NAME_NODE  ? node_job_up(id)
                                    : false;
}

static int mstat_body(char *host)
{
    TASK_OR_FAIL(t, "pvm_mstat");
    if (!host || !*host)
        return pvm_fail(t, "pvm_mstat", PvmBadParam);
    if (pvm_multi())
        return name_up(host) ? PvmOk : PvmNoHost;
    return is_this_host(host) ? PvmOk : PvmNoHost; /* silent, errno untouched */
}

int pvm_mstat(char *host)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_MSTAT)) {
        pvm_tev_str(t, TEV_DID_HN, host);
        pvm_tev_end(t);
    }
    int cc = mstat_body(host);
    return t ? pvm_api_leave_int(t, &a, TEV_DID_HS, cc) : cc;
}

/* Why host `name` could not be added, on stderr: PVM's infos code says
 * only that it could not start. */
static void say_cannot_add(const char *name, int why)
{
    const char *reason =
        why == -EOPNOTSUPP ? "this job runs on one host (it was not started by mpirun); start "
                             "it on several hosts with upvm run --hosts or --hostfile"
        : why == -ENOENT   ? "it is not one of this MPI job's hosts, which mpirun fixes when "
                             "it starts the job; name it in the hostfile, with & before it to "
                             "keep it out of the virtual machine until pvm_addhosts"
        : why == -EEXIST   ? "its nodes were deleted from the job, and an MPI rank cannot "
                             "start again"
                           : strerror(-why);
    fprintf(stderr, "upvm: pvm_addhosts: cannot add host %s: %s (docs/hosts.md)\n", name,
            reason);
}

/*
 * A host is in the VM when one of the job's nodes runs there: in a job of
 * MPI ranks (several hosts), adding one brings in a node that mpirun
 * started there and the hostfile kept out of the VM ("&host"); its name
 * in pvm_config is the host's.  In a job of one host there is no other
 * host to add: PvmCantStart, said why, and PvmDupHost for this one.
 */
int pvm_addhosts(char **hosts, int nhost, int *infos)
{
    TASK_OR_FAIL(t, "pvm_addhosts");
    if (nhost < 1 || !hosts)
        return pvm_fail(t, "pvm_addhosts", PvmBadParam);
    int added = 0;
    for (int i = 0; i < nhost; i++) {
        int info;
        if (!hosts[i] || !*hosts[i])
            info = PvmBadParam;
        else if (!pvm_multi() && is_this_host(hosts[i]))
            info = PvmDupHost;
        else if (!pvm_multi()) {
            say_cannot_add(hosts[i], -EOPNOTSUPP);
            info = PvmCantStart;
        } else if (name_up(hosts[i]))
            info = PvmDupHost;
        else {
            /* every node mpirun started on that machine comes in */
            int n = pvm_remote_addhost(hosts[i]);
            if (n < 0)
                say_cannot_add(hosts[i], n);
            for (int more = n; more >= 0;)
                more = pvm_remote_addhost(hosts[i]);
            info = n >= 0 ? pvm_machine_tid(n) : PvmCantStart;
        }
        added += info > 0;
        if (infos)
            infos[i] = info;
    }
    return added;
}

int pvm_delhosts(char **hosts, int nhost, int *infos)
{
    TASK_OR_FAIL(t, "pvm_delhosts");
    if (nhost < 1 || !hosts)
        return pvm_fail(t, "pvm_delhosts", PvmBadParam);
    int deleted = 0;
    for (int i = 0; i < nhost; i++) {
        int info, id = -1;
        int kind = pvm_multi() && hosts[i] ? pvm_name_lookup(hosts[i], &id) : PVM_NAME_NONE;
        if (!hosts[i])
            info = PvmBadParam;
        else if (!pvm_multi())
            info = is_this_host(hosts[i]) ? PvmBadParam : PvmNoHost;
        else if (!name_up(hosts[i]))
            info = PvmNoHost;
        else if (kind == PVM_NAME_NODE) /* one node (UPVM's node<n>): not node 0 */
            info = id == 0 ? PvmBadParam : pvm_remote_delhost(id) == 0 ? 0 : PvmNoHost;
        else if (id == pvm_machine_of(0))
            info = PvmBadParam; /* the master host stays, as in PVM */
        else { /* a host: every node of it */
            info = PvmNoHost;
            for (int n = id; n < node_job_slots(); n++)
                if (node_job_up(n) && pvm_machine_of(n) == id && pvm_remote_delhost(n) == 0)
                    info = 0;
        }
        deleted += info == 0;
        if (infos)
            infos[i] = info;
    }
    return deleted;
}

int pvm_hostsync(int host, struct timeval *clk, struct timeval *delta)
{
    TASK_OR_FAIL(t, "pvm_hostsync");
    bool mine = pvm_multi() ? pvm_host_machine(host & PVM_TID_HOST_MASK) ==
                                  pvm_machine_of(node_job_self())
                            : (host & PVM_TID_HOST_MASK) == pvm_node.host_tid;
    if (host == 0 || !mine)
        return pvm_fail(t, "pvm_host_sync", PvmNoHost); /* PVM's name for it */
    struct timeval now;
    gettimeofday(&now, NULL);
    if (clk)
        *clk = now;
    if (delta)
        *delta = (struct timeval){0, 0};
    return 0;
}

/* ------------------------------------------------------------ output, env */

/* pvm_catchout: catchout.c. */

/* PVM_EXPORT is a ':'-separated list of variable names. */
static int export_edit(const char *name, bool add)
{
    const char *cur = getenv("PVM_EXPORT");
    size_t nlen = strlen(name);
    size_t cap = (cur ? strlen(cur) : 0) + nlen + 2;
    char *out = malloc(cap);
    if (!out)
        return PvmNoMem;
    out[0] = '\0';
    bool present = false;
    for (const char *p = cur; p && *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        bool same = len == nlen && strncmp(p, name, len) == 0;
        present |= same;
        if (len && !(same && !add)) {
            if (out[0])
                strcat(out, ":");
            strncat(out, p, len);
        }
        p = end ? end + 1 : p + len;
    }
    if (add && !present) {
        if (out[0])
            strcat(out, ":");
        strcat(out, name);
    }
    int rc = setenv("PVM_EXPORT", out, 1) == 0 ? 0 : PvmNoMem;
    free(out);
    return rc;
}

int pvm_export(char *name)
{
    TASK_OR_FAIL(t, "pvm_export");
    if (!name || !*name)
        return 0;
    int rc = export_edit(name, true);
    return rc ? pvm_fail(t, "pvm_export", rc) : 0;
}

int pvm_unexport(char *name)
{
    TASK_OR_FAIL(t, "pvm_unexport");
    if (!name || !*name)
        return 0;
    int rc = export_edit(name, false);
    return rc ? pvm_fail(t, "pvm_unexport", rc) : 0;
}

char *pvmgettmp(void)
{
    const char *d = getenv("PVM_TMP");
    return (char *)(d && *d ? d : "/tmp");
}

char *pvmgetrsh(void)
{
    const char *r = getenv("PVM_RSH");
    return (char *)(r && *r ? r : "ssh");
}

char *pvmtmpnam(char *buf)
{
    static char own[PVMTMPNAMLEN];
    static unsigned n;
    char *out = buf ? buf : own;
    snprintf(out, PVMTMPNAMLEN, "%s/pvmtmp%06d.%u", pvmgettmp(), (int)getpid(), n++);
    return out;
}

/* ------------------------------------------------------------ the machine */

/* End every task but the caller; then the caller gets SIGTERM, as PVM's
 * pvmd sends it to everyone: the process ends (after a line saying why),
 * unless a handler of the program's is installed (handled): it runs, and
 * this returns 0. */
static int halt_here(struct pvm_task *t, bool handled)
{
    for (list_link_t *l = pvm_node.tasks.next, *next; l != &pvm_node.tasks; l = next) {
        next = l->next;
        struct pvm_task *k = list_entry(l, struct pvm_task, node_link);
        if (k == t || k->ulp == core_sched.main)
            continue;
        core_ulp_kill(k->ulp, 128 + SIGTERM); /* first: it may wait on k */
        pvm_task_leave(k);
    }
    int n;
    struct pvmtaskinfo *ti;
    if (pvm_multi() && pvm_remote_tasks(t, 0, &n, &ti) == 0) /* the other nodes' */
        for (int i = 0; i < n; i++)
            if (!pvm_task_by_tid(ti[i].ti_tid)) /* another node's */
                (void)pvm_remote_kill(ti[i].ti_tid, SIGTERM);
    if (!handled) {
        fprintf(stderr, "upvm: the job was halted by t%x (pvm_halt)\n", (unsigned)t->tid);
        fflush(NULL); /* SIGTERM ends the process: what it wrote goes out first */
    }
    raise(SIGTERM);
    return 0;
}

/* The whole virtual machine ends, every task of every node (PVM's halt).
 * In a job of several nodes on one host its launcher ends every node, this
 * one too (node_job_halt does not return), unless the program handles
 * SIGTERM (thread mode): PVM's caller then lives on, so this process ends
 * the others' tasks itself, as in a job of one node or of MPI ranks. */
int pvm_halt(void)
{
    TASK_OR_FAIL(t, "pvm_halt");
    struct sigaction sa;
    bool handled = sigaction(SIGTERM, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL;
    if (!handled)
        (void)node_job_halt(t->tid);
    return halt_here(t, handled);
}

/* A call that has no meaning here: its documented error, reported. */
static int refuse(const char *fn, int code)
{
    return pvm_fail(pvm_current(), fn, code);
}

static pvm_vm_starter_fn vm_starter;

void pvm_set_vm_starter(pvm_vm_starter_fn fn)
{
    vm_starter = fn;
}

/* Before the program's first PVM call: start this user's VM when none is
 * up (the first call then joins it), as PVM starts a pvmd.  PvmDupHost
 * when one runs, or this program already runs as a job of its own. */
int pvm_start_pvmd(int argc, char **argv, int block)
{
    (void)argc, (void)argv, (void)block;
    if (pvm_node.ready || !vm_starter)
        return refuse("pvm_start_pvmd", PvmDupHost); /* this node is running */
    int rc = vm_starter();
    if (rc == 1)
        return refuse("pvm_start_pvmd", PvmDupHost);
    return rc == 0 ? PvmOk : refuse("pvm_start_pvmd", PvmCantStart);
}

int pvm_getfds(int **fds)
{
    return refuse("pvm_getfds", PvmNotImpl); /* messages use no sockets */
}

int pvm_getnoresets(int **tids, int *ntids)
{
    TASK_OR_FAIL(t, "pvm_getnoresets");
    int *list = pvm_task_result(t, PVM_RESULT_NORESETS, (size_t)pvm_node.ntasks, sizeof *list);
    if (!list)
        return pvm_fail(t, "pvm_getnoresets", PvmNoMem);
    int n = 0;
    list_for_each(l, &pvm_node.tasks) {
        struct pvm_task *k = list_entry(l, struct pvm_task, node_link);
        if (k->opt[PvmNoReset])
            list[n++] = k->tid;
    }
    if (tids)
        *tids = list;
    if (ntids)
        *ntids = n;
    return 0;
}

/* The pvmd's helper roles (hoster, tasker, resource manager) and its
 * debugging hook: there is no pvmd that would call on them.  The tracer's
 * role is kept job-wide (tracer.c). */
int pvm_reg_hoster(void)
{
    return refuse("pvm_reg_hoster", PvmNotImpl);
}

int pvm_reg_tasker(void)
{
    return refuse("pvm_reg_tasker", PvmNotImpl);
}

int pvm_reg_rm(struct pvmhostinfo **hip)
{
    return refuse("pvm_reg_rm", PvmNotImpl);
}

/* libpvm's pvm_reg_tracer: register the caller as the tracer of the
 * tasks that start without one of their own (then unregister it, at its
 * next call); a failure is printed. */
int pvm_reg_tracer(int tctx, int ttag, int octx, int otag, char *tmask, int tbuf,
                   int topt)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_REG_TRACER)) {
        pvm_tev_int(t, TEV_DID_TRC, tctx);
        pvm_tev_int(t, TEV_DID_TRT, ttag);
        pvm_tev_int(t, TEV_DID_TRX, octx);
        pvm_tev_int(t, TEV_DID_TRO, otag);
        pvm_tev_str(t, TEV_DID_TRM, tmask);
        pvm_tev_int(t, TEV_DID_TRB, tbuf);
        pvm_tev_int(t, TEV_DID_TRL, topt);
        pvm_tev_end(t);
    }
    if (!t)
        return pvm_fail(NULL, "pvm_reg_tracer", PvmSysErr);
    int cc = pvm_tracer_register(t, tctx, ttag, octx, otag, tmask, tbuf, topt);
    (void)pvm_api_leave_int(t, &a, TEV_DID_CC, cc);
    return cc < 0 ? pvm_fail(t, "pvm_reg_tracer", cc) : cc;
}

int pvm_tickle(int narg, int *argp, int *nres, int *resp)
{
    return refuse("pvm_tickle", PvmNotImpl);
}

/* pvm_gettmask, pvm_settmask: tev.c. */
