/*
 * launch.h - starting the node processes of one job on this host and
 * ending them: step 1 of docs/design-notes.md §8.
 *
 * node_launch creates the job's shared-memory transport segment, forks
 * nnodes node processes (each joins the transport as its node number and
 * runs node_main), and waits for them.  The launcher never leaves a node
 * behind: when one node dies of a signal, or the launcher gets SIGINT,
 * SIGTERM, SIGHUP or SIGQUIT, every node still running gets SIGTERM, then SIGKILL after a
 * grace period; the segment is a memfd, so nothing remains in /dev/shm or
 * /tmp.  A node whose launcher dies gets SIGKILL from the kernel
 * (PR_SET_PDEATHSIG), so no node outlives its job; nor does a process a
 * node started (node_end_strays).
 */
#ifndef UPVM_NODE_LAUNCH_H
#define UPVM_NODE_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "util/compiler.h"

/* What became of one node. */
struct node_exit {
    pid_t pid;
    int status; /* exit status, or 128 + signal */
    int signal; /* the signal that ended it, 0 if it exited */
};

/*
 * Run node_main(node, arg) in nnodes (1..64) forked node processes joined
 * by the shared-memory transport (net.h: net_node() is the node's number).
 * A node's exit status is node_main's return value.  Returns the job's
 * status: 0 if every node returned 0, else the first failing node's status
 * (or 128 + signal); out (may be NULL, nnodes entries) gets each node's
 * fate.  When a node dies of a signal the others are ended, and a line
 * says which node, its pid and the signal.  -EINVAL / -ENOMEM / -errno when
 * the job could not start (nothing is left running then).
 */
int node_launch(int nnodes, int (*node_main)(int node, void *arg), void *arg,
                struct node_exit *out) HIDDEN;

/*
 * node_job_fork - make the calling process the launcher of a job of nnodes
 * node processes (capacity >= nnodes slots, the rest for nodes added at
 * run time).  Returns, in each forked node, its number (the transport is
 * up: net_node()); the launcher itself never returns: it reaps the nodes,
 * marks each node that ends as NET_PEER_GONE (the others decide what that
 * means), starts the nodes asked for with net_request_start + SIGUSR1,
 * ends them all on SIGINT, SIGTERM, SIGHUP or SIGQUIT (exit status 128 +
 * the signal), on NODE_SIG_HALT (143), when a node dies of SIGPIPE (141,
 * quietly: the output's reader went away) or when node 0 ends, and exits
 * with node 0's status (128 + signal for a signal), or 1 when the job's
 * output could not be written (said once, from the nodes' boards).
 * Negative errno when the job could not start (nothing runs then; the
 * caller goes on alone).
 *
 * vm_map_fd >= 0: the job is a persistent VM (vm.h), and that is the
 * memfd of the job's slot bitmap (mem.h), which joiners get with the
 * segment's: the launcher also listens on the
 * VM's socket (-EEXIST, said, when a VM is up already), gives the slots
 * past the first nnodes to programs that join, marks them GONE when they
 * leave and recycles them when node 0 asks (net.h); halting the VM ends
 * the joined programs too (SIGTERM).
 */
int node_job_fork(int nnodes, int capacity, int vm_map_fd) HIDDEN;

/* What a node of such a job sends its launcher (sigqueue, the value: the
 * calling task's tid) when a task calls pvm_halt (node_job_halt): the
 * launcher says so and ends every node. */
#define NODE_SIG_HALT SIGUSR2

/*
 * Processes a job's nodes leave behind ("strays": a fork that got past
 * process mode's refusals, a daemon a thread-mode node started) must not
 * outlive the job: they would keep its output open (a shell's $(...) would
 * not end) and run on.  The process at the top of the job on this host (the
 * launcher of node_job_fork, or the only node of a one-node process-mode
 * job; node_launch, for tests, leaves its caller alone) makes itself
 * a child subreaper (node_contain_strays: PR_SET_CHILD_SUBREAPER), so that
 * whatever the nodes leave is re-parented to it when its parent ends, at
 * any depth and whether or not it left its session (setsid); a process
 * group or a session would not hold them.  At the job's end, with every
 * node gone, node_end_strays kills its children (SIGKILL) and reaps them,
 * again as more come back to it, until none is left (at most a few
 * seconds: one line says so if some will not die).  A job of MPI ranks
 * leaves that to the MPI launcher.
 */
void node_contain_strays(void) HIDDEN;

/* The launcher of node_job_fork, every node gone and their strays ended,
 * calls fn(the job's exit status) just before it exits (the trace converts
 * the nodes' files).  One; set before node_job_fork. */
void node_launcher_at_end(void (*fn)(int status)) HIDDEN;
void node_end_strays(void) HIDDEN;

#endif /* UPVM_NODE_LAUNCH_H */
