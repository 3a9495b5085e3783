/*
 * control.h - the job's control socket: how `upvm migrate`, `jobs`,
 * `tasks`, `top`, `vacate` and `restore` reach a running job from outside
 * (docs/usage.md, "Migrating from outside" and "Watching and steering the
 * balancer"; paths and protocol words: control_path.h).
 *
 * Who does what:
 *   - the launcher (launch.c) names the socket before it forks the nodes
 *     (node_ctl_prepare), and removes it when the job is over, however it
 *     ended (node_ctl_cleanup): it outlives every node, node 0 killed by
 *     SIGKILL included;
 *   - node 0 (job.c) creates the socket and starts one kernel thread that
 *     serves it (node_ctl_start).  The thread reads requests, hands each to
 *     the scheduler thread through a mutex-protected queue (setting
 *     node_ctl_pending and waking node 0 with net_wake), and writes the
 *     replies.  The scheduler thread drains the queue from its transport
 *     poll (node_ctl_serve), starts migrations, and hands replies back; it
 *     never waits for a client and never does socket I/O.
 *
 * A socket left by a job whose launcher was killed with SIGKILL is removed
 * by the next job's node 0 (any socket of this user's directory that nobody
 * listens on).
 */
#ifndef UPVM_NODE_CONTROL_H
#define UPVM_NODE_CONTROL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "node/control_path.h"
#include "util/compiler.h"

/* This job's socket: set by node_ctl_prepare in the launcher, inherited by
 * the nodes it forks.  path[0] == '\0': none (no directory name fits). */
struct node_ctl_where {
    long pid;                   /* the launcher's */
    char dir[CTL_PATH_MAX];
    char path[CTL_PATH_MAX];    /* dir/job-<pid>.sock */
    char tmp[CTL_PATH_MAX];     /* dir/.job-<pid>.new: bound, then renamed to path */
};
extern struct node_ctl_where node_ctl_where HIDDEN;

/* The launcher, before it forks the nodes: name the socket (nothing is
 * created here). */
void node_ctl_prepare(pid_t launcher) HIDDEN;

/* Node 0 of a job with no launcher of ours (MPI ranks: mpirun ends them
 * with SIGTERM): SIGINT, SIGTERM, SIGHUP and SIGQUIT remove the socket
 * before they end the process.  (SIGKILL cannot: the next job's node 0
 * removes what it leaves.) */
void node_ctl_remove_on_signals(void) HIDDEN;

/* Every node of a job of several: the control requests' frames (node 0
 * asks the others for their boards when they are not in a shared
 * segment). */
void node_ctl_register_frames(void) HIDDEN;

/* The launcher, when every node is gone: remove the socket (and its
 * directory if it is empty now).  Safe to call when there is none. */
void node_ctl_cleanup(void) HIDDEN;

/* What a finished move reports to the socket's client. */
struct node_ctl_moved {
    const char *why;          /* NULL: it moved; else the refusal, a sentence */
    int tid, from, to;        /* from: the node it left (-1 if unknown) */
    uint64_t total_ns, obtrusive_ns, bytes;
};
typedef void (*node_ctl_moved_fn)(void *req, const struct node_ctl_moved *m);

/* What the socket's requests call: registered by the layers above (src/run
 * wires in src/migrate), since the node layer does not move tasks itself. */
struct node_ctl_ops {
    /* Move task tid to the running node `to`: done(req, m) is called
     * once, later, on the scheduler thread.  0; or -ESRCH (no such task),
     * -ENOSYS, -ENOMEM, and done is not called. */
    int (*migrate)(int tid, int to, bool lazy, node_ctl_moved_fn done, void *req);
    /* `upvm top`: the balancer's table, lines of text ending in '\n'
     * (malloc'd: the caller frees it), or NULL (no memory). */
    char *(*top)(void);
    /* `upvm vacate NODE` (on) and `upvm restore NODE` (off): node 0 marks
     * the node and the balancer empties it / lets placements return.  A
     * one-line answer in reply (len bytes, no newline); 0 or -errno. */
    int (*vacate)(int node, bool on, char *reply, size_t len);
};

/* Before the job starts: the requests' ops and the program's name that
 * `upvm jobs` shows (its directory is dropped).  Without ops, a migrate
 * request is answered "not implemented"; without top or vacate, top,
 * vacate and restore "error: this job has no balancer" (a job of one node:
 * "... of one node has no balancer").  vacate and restore name a node or a
 * host: node 0 calls vacate for each node of the job on that host, and
 * joins their answers with "; ", failures first. */
void node_ctl_set_ops(const struct node_ctl_ops *ops, const char *program) HIDDEN;

/* Node 0 of a job of several, once, on the scheduler thread: create the
 * socket and start serving it.  A failure is said on stderr (the job runs
 * on, unreachable from outside). */
void node_ctl_start(void) HIDDEN;

/* Node 0 at the job's end: stop serving (clients get no answer), join the
 * thread, close everything, remove the socket.  No-op if not started. */
void node_ctl_stop(void) HIDDEN;

/* Set by the server thread when a request waits for the scheduler thread;
 * node 0's transport poll then calls node_ctl_serve. */
extern atomic_int node_ctl_pending HIDDEN;

/* The scheduler thread: start the requests that wait. */
void node_ctl_serve(void) HIDDEN;

#endif /* UPVM_NODE_CONTROL_H */
