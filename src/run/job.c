/*
 * job.c - starting a job of several nodes and wiring its layers (run.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blt/blt.h"
#include "core/core.h"
#include "gs/gs_run.h"
#include "svm/svm.h"
#include "mem/mem.h"
#include "migrate/migrate.h"
#include "net/net.h"
#include "node/control.h"
#include "node/job.h"
#include "node/vm.h"
#include "proc/proc.h"
#include "pvm/pvm.h"
#include "pvm/remote.h"
#include "run/run.h"
#include "trace/trace.h"
#include "util/output.h"

/* ------------------------------------------------------------ the control socket's ops */

/* A move asked for through the socket: migrate's answer in the socket's
 * terms (a refusal always comes with its sentence). */
struct ctl_move {
    node_ctl_moved_fn done;
    void *req;
};

static void ctl_move_done(void *ctx, const struct migrate_result *r)
{
    struct ctl_move *m = ctx;
    struct node_ctl_moved out = {
        .why = r->rc == 0 ? NULL : r->why && *r->why ? r->why : pvm_errtext(r->rc),
        .tid = r->tid, .from = r->from, .to = r->to, .total_ns = r->total_ns,
        .obtrusive_ns = r->obtrusive_ns, .bytes = r->bytes,
    };
    m->done(m->req, &out);
    free(m);
}

static int ctl_migrate(int tid, int to, bool lazy, node_ctl_moved_fn done, void *req)
{
    struct ctl_move *m = malloc(sizeof *m);
    if (!m)
        return -ENOMEM;
    *m = (struct ctl_move){done, req};
    int rc = lazy ? migrate_request_lazy(tid, to, ctl_move_done, m)
                  : migrate_request_async(tid, to, ctl_move_done, m);
    if (rc != 0)
        free(m);
    return rc;
}

static const char *program = NULL;

/* Some ULP other than main exists, or this is not main: too late to start
 * nodes (they would not have it). */
static bool other_ulps_exist(void)
{
    return core_sched.nlive > 1 || core_current() != core_sched.main;
}

void run_set_program(const char *path)
{
    program = path;
}

/* ------------------------------------------------------------ starting */

/* Every node, once it runs: the layers above node register with it. */
static int wire_node(int node)
{
    trace_node_start(node, node_job_slots(), program ? program : program_invocation_short_name);
    int rc = pvm_remote_init(node);
    if (rc != 0)
        return rc;
    migrate_init();
    svm_init();
    gs_init();
    trace_node_wire();
    return 0;
}

/* Every node of a job of MPI ranks once it runs. */
static int serve_or_go_on(int node)
{
    if (wire_node(node) != 0) {
        fprintf(stderr, "upvm: node %d: out of memory while starting\n", node);
        _exit(71);
    }
    node_job_ready();
    if (node != 0) {
        if (pvm_node_ensure() != 0)
            _exit(71);
        node_job_serve();
    }
    return node;
}

/* One rank of K an MPI launcher started: one node of a job of K (node 0 is
 * rank 0 and runs the program; the others serve), never K separate jobs:
 * a rank that cannot join says why and exits with status 2. */
static int join_ranks(const struct run_launch *launch)
{
    if (other_ulps_exist()) {
        fprintf(stderr, "upvm: rank %d of %d: the job's nodes start at the program's first "
                        "PVM call, which must come from main before any other ULP exists\n",
                launch->rank, launch->size);
        exit(2);
    }
    pvm_remote_configure();
    proc_read_settings();
    static const struct node_ctl_ops ctl_ops = {.migrate = ctl_migrate, .top = gs_top_text, .vacate = gs_vacate};
    node_ctl_set_ops(&ctl_ops, program ? program : program_invocation_short_name);
    int node = node_job_join();
    if (node < 0)
        run_refuse_ranks(launch, node);
    if (node_job_slots() != launch->size) { /* MPI and the launcher disagree */
        net_fini(); /* MPI_Finalize: the singleton leaves MPI cleanly */
        run_refuse_ranks(launch, -EPROTO);
    }
    return serve_or_go_on(node);
}

/* A program joins the VM up for this user (node/vm.h): one more node of
 * it, which goes on with the program.  -1 when it cannot (said why: the
 * program then runs on its own). */
static int join_vm(void)
{
    char why[256];
    pvm_remote_configure();
    proc_read_settings();
    int node = node_job_join_vm(why, sizeof why);
    if (node < 0) {
        fprintf(stderr, "upvm: a VM is up, but this program cannot join it: %s; it runs on "
                        "its own\n", why);
        return -1;
    }
    if (wire_node(node) != 0) {
        fprintf(stderr, "upvm: node %d: out of memory while joining the VM\n", node);
        _exit(71);
    }
    node_job_ready();
    return node;
}

int run_vm_nodes(int nnodes)
{
    out_keep_std_fds();
    proc_read_settings();
    static const struct node_ctl_ops ctl_ops = {.migrate = ctl_migrate, .top = gs_top_text, .vacate = gs_vacate};
    node_ctl_set_ops(&ctl_ops, program ? program : program_invocation_short_name);
    int node = node_job_start(nnodes, true);
    if (node < 0)
        return node;
    if (wire_node(node) != 0 || pvm_node_ensure() != 0) {
        fprintf(stderr, "upvm: node %d: out of memory while starting\n", node);
        _exit(71);
    }
    node_job_ready();
    return node;
}

/* Every UPVM_* setting a job may use, read before anything starts (and
 * before the nodes fork): a bad one ends the process here, with its line
 * and exit status 2 (util/env.h), instead of when, or if, the job first
 * needs it.  Each reader keeps what it read; reading again is cheap. */
static void read_all_settings(void)
{
    net_config_t net;
    (void)net_config_from_env(&net);
    pvm_remote_configure(); /* UPVM_PLACEMENT, UPVM_DELIVERY, UPVM_TRACE */
    proc_read_settings();   /* UPVM_MAP_LIMIT */
    mem_window_read_settings();
    blt_read_settings();    /* UPVM_KC_* */
    gs_read_settings();     /* UPVM_BALANCE* */
    svm_read_settings();    /* UPVM_SVM_* */
}

/* A job that runs as this one node (traced as node 0 of 1). */
static int run_alone(void)
{
    trace_node_start(0, 1, program ? program : program_invocation_short_name);
    return 0;
}

int run_job_start(int dflt_nodes)
{
    if (pvm_multi())
        return node_job_self();
    read_all_settings();
    struct run_launch launch;
    bool ranks = run_launched_ranks(&launch) > 1;
    (void)trace_read_settings(!ranks); /* an MPI rank converts nothing */
    if (ranks)
        return join_ranks(&launch);
    if (node_vm_up()) {
        int node = join_vm();
        if (node >= 0)
            return node;
    }
    int want = node_job_nodes_from_env(dflt_nodes);
    if (want <= 1)
        return run_alone();
    if (other_ulps_exist()) {
        fprintf(stderr, "upvm: UPVM_NODES=%d: the nodes start at the program's first PVM "
                        "call, which must come from main before any other ULP exists; "
                        "running as one node\n", want);
        return run_alone();
    }
    out_keep_std_fds(); /* before the transport takes a closed stdout's number */
    /* settings read before the fork: a bad one is said once, not by every node */
    pvm_remote_configure();
    proc_read_settings();
    static const struct node_ctl_ops ctl_ops = {.migrate = ctl_migrate, .top = gs_top_text, .vacate = gs_vacate};
    node_ctl_set_ops(&ctl_ops, program ? program : program_invocation_short_name);
    int node = node_job_start(want, false);
    if (node < 0) {
        fprintf(stderr, "upvm: cannot start %d nodes (%s); running as one node\n", want,
                strerror(-node));
        return run_alone();
    }
    return serve_or_go_on(node);
}

/* A thread-mode program starts its nodes at its first PVM call. */
__attribute__((constructor)) static void register_job_starter(void)
{
    pvm_set_job_starter(run_job_start);
}
