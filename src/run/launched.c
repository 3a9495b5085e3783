/*
 * launched.c - was this process started as one rank of several by an MPI
 * launcher (mpirun / mpiexec of Open MPI or MPICH, Slurm's srun)?
 *
 * Each such rank is meant to be one node of ONE job.  A UPVM that cannot
 * join them into one job (this one: a job lives on one host so far; the
 * MPI transport, src/net/mpi.c, is not wired into the node layer yet) must
 * refuse to run rather than run K independent copies of the program that
 * each believe they are the whole job: the mistake this check makes
 * impossible.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"

/* One launcher's variables: the job's size and this process's rank. */
struct launcher_env {
    const char *launcher, *size, *rank;
};

static const struct launcher_env launchers[] = {
    {"Open MPI's mpirun", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
    {"an MPICH / PMI launcher (mpiexec)", "PMI_SIZE", "PMI_RANK"},
    {"Slurm's srun", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID"},
};

/* A positive decimal number, or -1. */
static long number(const char *s)
{
    char *end;
    if (!s || !*s)
        return -1;
    long v = strtol(s, &end, 10);
    return *end || v < 0 ? -1 : v;
}

int run_launched_ranks(struct run_launch *out)
{
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        const struct launcher_env *l = &launchers[i];
        long size = number(getenv(l->size)), rank = number(getenv(l->rank));
        if (size < 2 || rank < 0 || rank >= size)
            continue;
        *out = (struct run_launch){.launcher = l->launcher, .size_var = l->size,
                                   .size = (int)size, .rank = (int)rank};
        return (int)size;
    }
    return 0;
}

void run_refuse_ranks(const struct run_launch *l)
{
    if (l->rank == 0)
        fprintf(stderr,
                "upvm: this process is rank 0 of %d started by %s (%s=%d), but this UPVM "
                "runs a job on one host only: its ranks cannot join into one job, and each "
                "would run the whole program on its own.\n"
                "upvm: start one job instead, on one host: upvm run [--nodes N] PROGRAM, or "
                "./PROGRAM (its nodes use the host's CPUs).\n",
                l->size, l->launcher, l->size_var, l->size);
    fflush(stderr);
    exit(2);
}
