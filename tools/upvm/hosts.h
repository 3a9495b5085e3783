/*
 * hosts.h - `upvm run --hosts LIST` and `--hostfile FILE`: the hosts of a
 * job, and the mpirun that starts it on them.
 *
 * UPVM has no launcher of its own between hosts: a job of several hosts is
 * one MPI job (docs/hosts.md), and these options only spare the user from
 * writing the mpirun line.  They turn the hosts into an Open MPI hostfile
 * (or MPICH's), print the command they run, and run it: every rank runs
 * this same `upvm run` with the same program, and the ranks join into one
 * job (node 0 = rank 0 runs the program).
 */
#ifndef UPVM_TOOLS_HOSTS_H
#define UPVM_TOOLS_HOSTS_H

#include <stdbool.h>
#include <stddef.h>

struct upvm_host {
    char *name;
    int slots;     /* nodes to run there; 0: one per CPU (mpirun finds out) */
    bool standby;  /* PVM's "&host": known, started, not in the VM until
                      pvm_addhosts names it */
    char *ep;      /* PVM's ep=: where spawn looks for programs there, or NULL */
};

struct upvm_hosts {
    struct upvm_host *v;
    int n;
};

/* "a,b:4,c": names, each with an optional node count.  0, or -1 with the
 * reason in err. */
int hosts_parse_list(const char *list, struct upvm_hosts *h, char *err, size_t len);

/*
 * A hostfile in PVM's syntax (a host per line, "name [option=value ...]",
 * "&name" for a host added later by pvm_addhosts, "*" lines of defaults,
 * '#' comments) or Open MPI's ("name slots=N [max_slots=M]"); both may
 * mix.  ep= (the host's search path for spawned programs, also from a
 * "*" line) is kept; PVM options that mean nothing here (lo=, so=, dx=,
 * ...) are said once on stderr and ignored.  0, or -1 with the reason (file:line) in err.
 */
int hosts_parse_file(const char *path, struct upvm_hosts *h, char *err, size_t len);

void hosts_free(struct upvm_hosts *h);

/*
 * Run the job on hosts h: mpirun (the one this UPVM was built with, or
 * $UPVM_MPIRUN: a command and its options, split at blanks) with a
 * hostfile made of h, nranks ranks (0: one per slot),
 * each running argv (this upvm run, without the host options).  Says the
 * command on stderr first.  Returns mpirun's exit status, or 1 when it
 * could not be started (said why).
 */
int hosts_launch(const struct upvm_hosts *h, int nranks, char **argv);

#endif /* UPVM_TOOLS_HOSTS_H */
