/*
 * job.h - this process as one node of a job of several: frames to and
 * from the other nodes, the scheduler's idle integration, membership
 * (nodes added, deleted or dead), and the job's end (docs/design-notes.md
 * §8).
 *
 * A frame is a node_frame header (kind and three integers whose meaning
 * the kind gives) and a payload.  Layers above register a handler per
 * kind; handlers run on the scheduler thread from the transport poll (in
 * the idle loop or every few switches), so they must never block: they
 * may make ULPs ready, create ULPs and send frames.
 *
 * node_send never fails for a full path: the frame then waits in a
 * per-destination queue that keeps the pairwise order and is flushed at
 * every poll.  A frame to a node that is gone is dropped (-EHOSTDOWN).
 *
 * The end of a job is found by node 0 with waves of probes (the
 * four-counter method): every node answers with whether it is idle (no
 * ready ULP, no timer), how many ULPs it still has, and how many frames it
 * has sent and received.  Two consecutive waves with every node idle,
 * frames sent == frames received and the same totals mean nothing can
 * change any more: the job is done (no ULP left) or stuck (ULPs all
 * blocked on each other: reported, like a one-node deadlock).
 *
 * A node that dies (the launcher marks it GONE in the segment and wakes
 * every node) is noticed by each node at its next poll: the peer_gone hook
 * delivers the notifications asked for there, and each node tells node 0
 * how many.  Node 0 then decides: if some task was told, or the dead node
 * ran no task, the job goes on (a line says so); otherwise the job ends
 * with a report naming the node, its pid and its tasks (read from its
 * board, board.h), and the node's exit status (128 + signal).  This holds
 * after main has returned too.
 */
#ifndef UPVM_NODE_JOB_H
#define UPVM_NODE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/compiler.h"

/* The most nodes in one job (added ones included). */
#define NODE_MAX 64

struct node_frame {
    uint32_t kind;
    int32_t a, b, c;
};

/*
 * Frame kinds, one range per layer (docs/architecture.md): each layer
 * numbers its kinds from its base, privately, and registers a handler per
 * kind with node_on_frame.  A new layer takes the next free range.
 */
#define NODE_KINDS_NODE    0  /* node: probes, goodbyes, votes, request replies */
#define NODE_KINDS_PVM     16 /* pvm: messages, spawn, notify, groups, ... */
#define NODE_KINDS_MIGRATE 40 /* migrate: the protocol's steps */
#define NODE_KINDS_GS      48 /* gs: load reports, vacate */
#define NODE_KINDS_SVM     52 /* svm: shared virtual memory pages, regions, wake-ups */
#define NODE_KINDS_TRACE   60 /* trace: clock offsets between hosts */
#define NODE_KIND_MAX      64

typedef void (*node_frame_fn)(int src, const struct node_frame *f, const void *payload,
                              size_t len);

/* ------------------------------------------------------------ starting */

/*
 * node_job_start - the job's nodes: with nnodes > 1, this process becomes
 * the launcher of nnodes forked node processes (launch.h) and this call
 * returns in each node with its number; 1 returns 0 and starts nothing.
 * Negative errno if the nodes could not be started (the caller goes on as
 * a job of one node).  Call it once, before any ULP but the caller exists.
 */
int node_job_start(int nnodes, bool vm) HIDDEN;

/*
 * A persistent VM (vm.h).  node_job_start(n, true) starts one: n nodes of
 * its own that never finish (their main ULPs serve until the VM is
 * halted), no deadlock judged, a node's loss said in the VM's log and never
 * ending it, and room for programs that join (NODE_VM_JOINED_MAX).
 * node_job_join_vm: this process joins the VM up for this user, as a node
 * of its own; its number, or -errno with why (a sentence).  Such a node's
 * end (its process's exit) is its own: the VM goes on.
 */
int node_job_join_vm(char *why, size_t len) HIDDEN;
bool node_job_persistent(void) HIDDEN;
bool node_job_joined(void) HIDDEN;
/* A program that joined a VM: how many programs its slot held before it
 * (0 for every other node). */
unsigned node_job_generation(void) HIDDEN;

/* May tasks be placed on node n by default (pvm_spawn with no host)?  A
 * node up; in a VM, one of its own, not a program's that joined (whose
 * process ends when that program does) -- but a program that may use one
 * CPU only keeps its tasks in its own process (node n is itself). */
bool node_job_places(int n) HIDDEN;

/* Node n is vacated (upvm vacate; the balancer, src/gs, tells every
 * node): node_job_places says no for it until it is restored. */
void node_job_set_vacated(int n, bool on) HIDDEN;

/*
 * node_job_join - this process is one rank of K that an MPI launcher
 * (mpirun, mpiexec, srun) started: it joins the others as node `rank` of a
 * job of K nodes, over the MPI transport (net_start_mpi: MPI is
 * initialised here and finalised when the node ends).  Node 0 (rank 0)
 * goes on, the others serve (node_job_serve), once node_job_ready.  The job's nodes are fixed:
 * nodes are not added, and a rank that dies ends the job (MPI's rule).
 * Returns the node number, or negative errno: -ENOSYS (no MPI transport
 * in this build), -ELIBACC (its plugin could not be loaded: said on
 * stderr), -E2BIG (more
 * than NODE_MAX ranks), MPI's errors (net.h).
 */
int node_job_join(void) HIDDEN;

/* Every node, once every layer has registered its frames and hooks: a job
 * of MPI ranks waits until every other node has too (they tell one
 * another their host names, node_job_host), since a frame that comes
 * before its handler is lost.  Nothing in other jobs. */
void node_job_ready(void) HIDDEN;

/* The number of nodes asked for: UPVM_NODES (a count, or "cores"), else
 * dflt.  A bad value ends the process (util/env.h). */
int node_job_nodes_from_env(int dflt) HIDDEN;
/* One node per CPU this process may use (util/cpus.h: affinity, cgroup
 * quota), at most NODE_MAX / 2 (room to add nodes). */
int node_job_cores(void) HIDDEN;

/* True in a node of a job of more than one node. */
bool node_job_multi(void) HIDDEN;
/* This node (0 in a job of one) and the number of node slots. */
int node_job_self(void) HIDDEN;
int node_job_slots(void) HIDDEN;
/* Is node n running (false for one gone, not started, out of range)? */
bool node_job_up(int n) HIDDEN;

/* node_job_up after taking in the membership changes the transport has
 * seen (a death not handled yet is handled now, its hooks called): for a
 * step that must not start towards a node that died a moment ago. */
bool node_job_alive(int n) HIDDEN;

/* The name PVM's calls give node n (pvm_config, PvmTaskHost): "node<n>"
 * in a job of one host; in a job of MPI ranks its host's name, or
 * "host:<k>" when k + 1 or more of the job's nodes run there. */
const char *node_job_name(int n, char *buf, size_t len) HIDDEN;

/* A job of MPI ranks: the short host name node n runs on; NULL else. */
#define NODE_HOST_MAX 64
const char *node_job_host(int n) HIDDEN;

/* A job of MPI ranks: does node n run on the host called name (its short
 * or full name, or one of its addresses)?  False in other jobs. */
bool node_job_on_host(int n, const char *name) HIDDEN;

/*
 * Node 0, a job of MPI ranks: bring the next standby node on host `name`
 * into the VM (one whose host the hostfile marked "&": its rank runs, its
 * node serves nothing until then).  Every node learns of it (peer_up
 * hooks).  Its number; -ENOENT: no rank of the job runs on that host (an
 * MPI job's hosts are fixed when mpirun starts it); -EEXIST: every node
 * there is in the VM already, or was deleted (a rank cannot be started
 * again); -EOPNOTSUPP: a job of one host (no MPI), -EINVAL: not node 0.
 */
int node_job_add_host(const char *name) HIDDEN;

/* ------------------------------------------------------------ frames */

void node_on_frame(unsigned kind, node_frame_fn fn) HIDDEN;

/* fn() every period_ns on the scheduler thread, from the node's transport
 * poll (so not while a ULP computes without yielding), an idle node woken
 * for it.  One registration (the balancer's, src/gs); a job of several
 * nodes only. */
void node_on_tick(void (*fn)(void), uint64_t period_ns) HIDDEN;

/* fn() at the start of every transport poll, on the scheduler thread,
 * before any frame of that poll: work a layer put off until the ULPs it
 * woke in an earlier poll have run (src/svm: requests for a page that has
 * just arrived).  At most NODE_POLL_FNS registrations; 0 or -ENOSPC. */
#define NODE_POLL_FNS 4
int node_on_poll(void (*fn)(void)) HIDDEN;

/*
 * Urgent polls: a layer whose frames must be answered while the node runs
 * a ULP that computes without polling (src/svm: page requests, which IVY
 * served at interrupt level) marks their kinds urgent, and calls
 * node_poll_urgent from a signal handler on the scheduler thread that
 * interrupted a ULP's own code (not UPVM's, not libc's: nothing of the
 * node is half-changed then).  Frames of urgent kinds are handled there;
 * the others are kept, in order, for the next ordinary poll.  Returns the
 * frames taken.  Handlers of urgent kinds must therefore also be safe in
 * that context: no malloc'd state of a ULP's program, no blocking.
 */
void node_set_urgent(unsigned kind) HIDDEN;
int node_poll_urgent(void) HIDDEN;

/* Hand a frame that was kept aside (a migration's flush holds some) or
 * made here (a request to this node itself) to its kind's handler, as if
 * it had just come from src.  False when the kind has no handler. */
bool node_dispatch(int src, const struct node_frame *f, const void *payload, size_t len) HIDDEN;

/* Send frame hdr (kind in hdr->kind) with the payload p1 + p2 to dst.
 * 0; -EHOSTDOWN: dst is not running (the caller decides what that means:
 * see node_post); -EINVAL: a bad argument; -EMSGSIZE: larger than the
 * transport carries.  A frame is never dropped otherwise: when neither the
 * transport nor the queue can take it (no memory, a broken MPI job), this
 * node says why and ends (its death is then handled as any node's). */
int node_send(int dst, const struct node_frame *hdr, const void *p1, size_t l1,
              const void *p2, size_t l2) HIDDEN __attribute__((warn_unused_result));

/* The most payload pieces of one node_sendv. */
#define NODE_IOV_MAX 6

/* node_send with the payload in n pieces (0..NODE_IOV_MAX), in order.
 * The header and the pieces are copied straight into the transport's ring
 * (no intermediate buffer), or, when the path is full, into the queue. */
int node_sendv(int dst, const struct node_frame *hdr, const struct iovec *iov, int n) HIDDEN
    __attribute__((warn_unused_result));

/* node_send / node_sendv of a frame that a node gone (or going) may simply
 * miss: an answer, a notice, a forwarded message whose task died with its
 * node.  What its death means is handled where the death is seen (the
 * node_job_hooks peer_gone hooks), not by the sender.  Any other failure
 * is a bug in the caller, said on stderr. */
void node_post(int dst, const struct node_frame *hdr, const void *p1, size_t l1, const void *p2,
               size_t l2) HIDDEN;
void node_postv(int dst, const struct node_frame *hdr, const struct iovec *iov, int n) HIDDEN;

/* ------------------------------------------------------------ membership */

struct node_job_hooks {
    /* Node n is gone (status: its exit status or 128 + signal; deleted:
     * by node_job_delete).  Returns how many notifications it delivered
     * (tasks that asked to be told). */
    int (*peer_gone)(int n, int status, bool deleted);
    /* Node n came up (added at run time). */
    void (*peer_up)(int n);
    /* Every node, the job ends stuck: print this node's blocked tasks. */
    void (*describe_stuck)(void);
};

/* Register h (kept, not copied) after those registered before: every
 * layer that keeps state per node (pvm's watches, migrate's moves) learns
 * of a peer's death this way.  peer_gone results add up.  0 or -ENOSPC. */
#define NODE_HOOKS_MAX 8
int node_job_add_hooks(const struct node_job_hooks *h) HIDDEN;

/* Called with the exit status when this node ends through the node layer
 * (a shutdown, a lost job), just before the process exits (the trace
 * closes its file).  One; NULL: none. */
void node_job_set_ending_hook(void (*fn)(int code)) HIDDEN;

/* Node 0 of a job of one host: start a new node in a free slot.  Its
 * number, or -ENOSPC (-EINVAL in a job of MPI ranks, whose ranks are
 * fixed). The node is up when node_job_up says so (a frame to it waits
 * until then). */
int node_job_add(void) HIDDEN;

/*
 * pvm_halt from task tid: the whole job ends.  In a job of one host, its
 * launcher is told (NODE_SIG_HALT): it says "upvm: the job was halted by
 * t<tid>" and ends every node with SIGTERM, this one too, so this does not
 * return.  -ENOTSUP in a job of one node or of MPI ranks (no launcher);
 * -errno if the launcher could not be told.
 */
int node_job_halt(int tid) HIDDEN;

/* Node 0: end node n (its ULPs end with it).  0, -EINVAL.  In a job of
 * MPI ranks, n's process leaves (it waits in MPI_Finalize for the job's
 * end) and every node learns of it from node 0. */
int node_job_delete(int n) HIDDEN;

/* Block the calling ULP until this node has seen node n end (after
 * node_job_delete, here or on node 0), at most timeout_ns.  0, -EINVAL,
 * -ETIMEDOUT. */
int node_job_wait_gone(int n, int64_t timeout_ns) HIDDEN;

/* ------------------------------------------------------------ running, ending */

/* Nodes other than 0 (and every node of a VM), on their main ULP: serve
 * the job until it ends; then the process exits. */
_Noreturn void node_job_serve(void) HIDDEN;

/*
 * Node 0, its main ULP done (main returned or called exit): wait until
 * the whole job is done, or stuck (its ULPs all wait for messages no one
 * sends: reported, as one node reports the tasks main leaves behind), end
 * every node, and return status.
 */
int node_job_finish(int status) HIDDEN;

#endif /* UPVM_NODE_JOB_H */
