/*
 * launched.c - was this process started as one rank of several by an MPI
 * launcher (mpirun / mpiexec of Open MPI or MPICH, Slurm's srun)?
 *
 * Each such rank is one node of ONE job (node_job_join).  A rank that
 * cannot join (a UPVM built without MPI, a broken MPI) refuses to run
 * rather than run K independent copies of the program that each believe
 * they are the whole job: the mistake this check makes impossible.
 */
#include <errno.h>
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

/* Why the ranks could not join, in words. */
static const char *reason(int why)
{
    switch (why) {
    case -ENOSYS:
        return "this UPVM was built without its MPI transport (install libopenmpi-dev and "
               "rebuild; CMake then says \"MPI transport: yes\")";
    case -ELIBACC:
        return "UPVM's MPI transport, libupvm-mpi.so beside libupvm.so, could not be loaded "
               "(the line above says why): reinstall UPVM, or set UPVM_MPI_PLUGIN to the "
               "plugin's path";
    case -EPROTO:
        return "the MPI library UPVM was built with sees another job than the launcher made "
               "(each rank alone, as when a launcher of one MPI starts programs built with "
               "another: start it with that MPI's own mpirun)";
    default:
        return strerror(-why);
    }
}

void run_refuse_ranks(const struct run_launch *l, int why)
{
    if (l->rank == 0) {
        fprintf(stderr, "upvm: this process is rank 0 of %d started by %s (%s=%d), and its "
                        "ranks cannot join into one job: %s.\n",
                l->size, l->launcher, l->size_var, l->size, reason(why));
        fprintf(stderr, "upvm: each rank would run the whole program on its own, so none "
                        "does; start one job on one host instead: upvm run [--nodes N] "
                        "PROGRAM, or ./PROGRAM.\n");
    }
    fflush(stderr);
    exit(2);
}
