/*
 * run.h - the composition root: the one place that knows every layer.
 *
 * A job is started here, and only here: the nodes (src/node), then, in
 * every node, the PVM layer's frames and hooks (src/pvm), the migration
 * protocol's (src/migrate), and the control socket's requests, wired to
 * migration (node_ctl_ops).  Lower layers learn of one another only
 * through what is registered here (docs/architecture.md).
 *
 * Two ways in: upvm_run_program (start.c: `upvm run`, and a program built
 * with upvmcc started from the shell), and a thread-mode program's first
 * PVM call with UPVM_NODES set (the PVM layer calls the starter this
 * library registers when it loads).
 */
#ifndef UPVM_RUN_H
#define UPVM_RUN_H

#include "util/compiler.h"

/*
 * Start the job's nodes (UPVM_NODES, else dflt_nodes) if this is a job of
 * several; the calling (main) ULP goes on as node 0.  While a VM is up for
 * this user (node/vm.h), the program joins it instead, as a node of its
 * own, and goes on there (its number is returned).  Other nodes never
 * return: they serve.  Returns this node (0); a job that cannot have its
 * nodes runs as one (said on stderr).
 */
int run_job_start(int dflt_nodes) HIDDEN;

/* The VM's nodes (node/vm.h), in the process that becomes its launcher:
 * returns in each node with its number, wired, or -errno (said). */
int run_vm_nodes(int nnodes) HIDDEN;

/* The program's name the control socket shows (`upvm jobs`); before
 * run_job_start.  Default: this process's name. */
void run_set_program(const char *path) HIDDEN;

/* How an MPI launcher started this process (launched.c). */
struct run_launch {
    const char *launcher;   /* "Open MPI's mpirun", ... */
    const char *size_var;   /* the variable that says the size */
    int size, rank;
};

/* K > 1 when a launcher started this process as one of K ranks (*out
 * says which), else 0: read from the launchers' environment variables
 * (Open MPI, MPICH/PMI, Slurm's srun), so it needs no MPI library. */
int run_launched_ranks(struct run_launch *out) HIDDEN;

/* Started as one rank of several that could not join into one job (why:
 * node_job_join's error): say so (rank 0) and exit with status 2 in every
 * rank, rather than run K separate jobs. */
_Noreturn void run_refuse_ranks(const struct run_launch *l, int why) HIDDEN;

#endif /* UPVM_RUN_H */
