/*
 * remote.h - the PVM layer across nodes (remote.c), and what task.c gives
 * it for the requests it serves.  In a job of one node pvm_multi() is false
 * and none of the pvm_remote_* calls is made.
 */
#ifndef UPVM_PVM_REMOTE_H
#define UPVM_PVM_REMOTE_H

#include <stdbool.h>

#include "node/job.h"
#include "node/rpc.h"
#include "pvm/frames.h"
#include "pvm/pvm.h"

/*
 * pvm_rpc - send a request frame {kind, a, id, c} with payload p1 + p2 to
 * node and block the calling ULP until the answer comes: its result, and
 * in *data (malloc'ed, NULL when empty; data may be NULL to drop it) and
 * *len what came with it.  `dead` when the node is not running or dies
 * before it answers.
 */
int pvm_rpc(int node, unsigned kind, int a, int c, const void *p1, size_t l1,
            const void *p2, size_t l2, int dead, void **data, size_t *len) HIDDEN;
/* pvm_rpc for a caller that holds nothing of its node's across the wait
 * (its buffers are in its own memory or already sent): the task may move
 * while it waits, and the answer follows it.  pvm_rpc pins the caller. */
int pvm_rpc_movable(int node, unsigned kind, int a, int c, const void *p1, size_t l1,
                    const void *p2, size_t l2, int dead, void **data, size_t *len) HIDDEN;
/* The answer to a request: node_rpc_reply (node/rpc.h). */

/* The groups' and the mailbox's servers on node 0 (groups.c, mailbox.c):
 * requests, and a node's death (its tasks leave). */
void pvm_groups_serve(int src, const struct node_frame *f, const void *p, size_t len) HIDDEN;
void pvm_groups_node_gone(int n) HIDDEN;
void pvm_mbox_serve(int src, const struct node_frame *f, const void *p, size_t len) HIDDEN;
void pvm_mbox_node_gone(int n) HIDDEN;

/*
 * A job of several nodes (src/run starts it): pvm_remote_configure reads
 * the PVM layer's settings once, before the nodes are forked;
 * pvm_remote_init, in every node once it runs, registers the PVM frames
 * and hooks with the node layer.  0 or -ENOMEM.
 */
void pvm_remote_configure(void) HIDDEN;
/* The PVM frames' handlers (pvm_remote_init calls it; so does the node's
 * PVM set-up, also in a job of one node: requests to this node itself,
 * node 0's groups and mailbox, go through them too). */
void pvm_remote_register(void) HIDDEN;
int pvm_remote_init(int node) HIDDEN NODISCARD;

bool pvm_multi(void) HIDDEN;

/* Where this node believes each tid is (flush.c and remote.c route by it). */
struct node_dir;
extern struct node_dir pvm_dir HIDDEN;
/* Notifications this node keeps on tid follow it to node (remote.c). */
void pvm_remote_watches_follow(int tid, int node) HIDDEN;

/* tid was lost in a move (its node, or the one it was moving to, died at
 * a stage where neither can run it): every node's exit watches on it
 * fire, as if it had exited (PvmTaskExit).  Said by the node that finds
 * it lost; a watch fires once however many say so. */
void pvm_task_lost(int tid) HIDDEN;

/* The node a tid's task is on (as far as this node knows), -1 if none. */
int pvm_tid_node(int tid) HIDDEN;
/*
 * Hosts are machines (docs/pvm.md, "Tids, hosts and nodes"): every node of
 * a job that runs on one machine belongs to the same PVM host, numbered
 * by the lowest node slot there (its "machine", m); the host's tid is
 * (m + 1) << 18 (0x40000 for the first).  A job of one host (no MPI) is
 * one machine, m = 0.
 */
int pvm_machine_of(int node) HIDDEN;
/* The host tid of node's machine. */
int pvm_machine_tid(int node) HIDDEN;
/* Is a node of machine m up (but node `except`, -1: none)? */
bool pvm_machine_up(int m, int except) HIDDEN;
/* The machine a host tid names: the machine of the node its host part
 * names (any node's host part names its machine), or -1. */
int pvm_host_machine(int host_tid) HIDDEN;

/* What a host name names: PVM_NAME_MACHINE (*id: the machine; ".",
 * "localhost", the host's names, a name pvm_config gives), PVM_NAME_NODE
 * (*id: one node: "node<n>", and "host:k" in a job of MPI ranks, UPVM's
 * own names), or PVM_NAME_NONE.  Whether it is up is the caller's to
 * ask. */
enum { PVM_NAME_NONE, PVM_NAME_MACHINE, PVM_NAME_NODE };
int pvm_name_lookup(const char *name, int *id) HIDDEN;
/* The name pvm_config gives machine m. */
const char *pvm_machine_name(int m) HIDDEN;

/* Placement of task i of n: *node, or PvmNoHost. */
int pvm_place(int flag, const char *where, int i, int n, int *node) HIDDEN;

/* b (header filled in) to the task dst_tid on another node; b is not
 * changed.  0 (also when there is no such node: dropped), PvmNoMem. */
int pvm_remote_send(msg_buf_t *b, int dst_tid) HIDDEN;

/* Spawn count tasks on node for t, task i under the tid given[i] (of this
 * node's, reserved: pvm_tids_reserve; this node's directory says they are
 * on node from now on); tids get tids or errors; the number started.
 * path: a program file (process mode), else name is registered. */
int pvm_remote_spawn(struct pvm_task *t, int node, int flag, const char *name,
                     const char *path, char **argv, int count, const int *given,
                     int *tids) HIDDEN;
/* n tids of this node's for the copies of one spawn into tids, taken
 * (PVM_TASK_AWAY until a task has them): consecutive when a run of n free
 * ones is left, else one by one; 0 for each that none was left for.
 * Returns how many were taken. */
int pvm_tids_reserve(int n, int *tids) HIDDEN;

/* pvm_tids_reserve on node 0, for a program that joined a VM (its tasks
 * spawned on the VM's nodes outlive it): how many (0 when node 0 could
 * not); the tids in tids, 0 for those not reserved. */
int pvm_remote_tids(int n, int *tids) HIDDEN;
/* A reserved tid no task got (its copy did not start), or one whose task
 * ended on another node: free again, forgotten by the directory. */
void pvm_tid_release(int tid) HIDDEN;
/* Node `node` is gone: this node's tids whose tasks were there are free. */
void pvm_tids_node_gone(int node) HIDDEN;
/* Task tid, of another node's (its home), ended here: forget it, and tell
 * every node (K_TASK_GONE; its home frees the tid); while its flush goes on
 * here, only once that is over (pvm_route_gone_later). */
void pvm_remote_task_gone(int tid) HIDDEN;
/* The node task tid is on: this one if it is here, else what the
 * directory knows, else (a tid of another node's, not known here) what its
 * home says (a request); its home when that cannot be asked. */
int pvm_tid_where(int tid) HIDDEN;
/* Tell the other nodes with tasks in s who their siblings are. */
void pvm_remote_sibs(struct pvm_sibs *s) HIDDEN;

int pvm_remote_notify_exit(struct pvm_task *t, int watched, int tag, bool cancel) HIDDEN;
int pvm_remote_notify_host(struct pvm_task *t, int host_tid, int tag, bool cancel) HIDDEN;
/* A PvmTaskExit notification for watcher, wherever it is. */
void pvm_remote_fire(int watcher, int watched, int tag, int ctx) HIDDEN;

/* A task of this node watches `watched`, which leaves this node: the watch
 * goes with it (its state), and this node keeps a record too, as for a
 * task watched on another node, so that the death of the node it goes to
 * fires it here (pvm_move_release; the record follows it: route_set). */
void pvm_remote_watch_keep(int watcher, int watched, int tag, int ctx) HIDDEN;
int pvm_remote_kill(int tid, int sig) HIDDEN;
int pvm_remote_pstat(int tid) HIDDEN;
int pvm_remote_tasks(struct pvm_task *t, int where, int *ntaskp,
                     struct pvmtaskinfo **tip) HIDDEN;
/* Host `name` into the VM (node_job_add_host, asked of node 0): the node
 * that joined, or -errno.  Delete node n: 0 or -errno. */
int pvm_remote_addhost(const char *name) HIDDEN;
int pvm_remote_delhost(int n) HIDDEN;

/*
 * Exit statuses across nodes, for the launcher's copies (upvm run -n N):
 * a spawn with this flag bit (never a PVM one: pvm_spawn masks it) asks
 * the nodes that run the tasks to send each one's exit status back to
 * the spawning node, where pvm_remote_wait_status waits for it.
 */
#define PVM_SPAWN_REPORT_STATUS (1 << 30)

/* pvm_spawn with internal flag bits allowed. */
int pvm_spawn_flagged(char *file, char **argv, int flag, char *where, int ntask,
                      int *tids) HIDDEN;
/* Wait until the task tid (spawned from here with PVM_SPAWN_REPORT_STATUS)
 * has ended: its exit status, or 128 + SIGKILL when its node died first.
 * Works in a job of one node too. */
int pvm_wait_status(int tid) HIDDEN;
/* The new task t's exit status goes to node (task.c, for the flag above):
 * 0 or -ENOMEM. */
int pvm_report_status(int node, struct pvm_task *t) HIDDEN;
/* Every ULP's exit (task.c's exit hook): sends its status if asked, and
 * forgets the requests it was waiting on (it was killed). */
void pvm_remote_on_exit(struct ulp *u) HIDDEN;

/* ---- task.c, for the requests remote.c serves */

struct pvm_spawn_origin {
    int ptid, ctx;
    int node;                 /* the spawner's */
    int out;                  /* its PvmOutputTid: where the children's output goes */
    struct pvm_tracer trc;    /* its child tracer: the children's own (tev.h) */
};

/* Start count tasks here (program: a file, else name is registered);
 * pending_sibs: their siblings list comes later (pvm_sibs_arrived). */
void pvm_spawn_here(const struct pvm_spawn_origin *o, int flag, const char *name,
                    const char *program, char **argv, int count, int *tids,
                    bool pending_sibs) HIDDEN;
void pvm_sibs_arrived(struct pvm_sibs *s) HIDDEN;
/* A PvmTaskExit watch by watcher on the local task watched (or cancel):
 * true if installed, false if that task is gone. */
bool pvm_watch_exit_here(int watched, int watcher, int tag, int ctx, bool cancel) HIDDEN;
void pvm_kill_here(int tid, int sig) HIDDEN;
/* Hosts (their tids) came into the VM: PvmHostAdd notifications. */
void pvm_hosts_added(const int *hosts, int n) HIDDEN;

#endif /* UPVM_PVM_REMOTE_H */
