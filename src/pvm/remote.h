/*
 * remote.h - the PVM layer across nodes (remote.c), and what task.c gives
 * it for the requests it serves.  In a job of one node pvm_multi() is false
 * and none of the pvm_remote_* calls is made.
 */
#ifndef UPVM_PVM_REMOTE_H
#define UPVM_PVM_REMOTE_H

#include <stdbool.h>

#include "node/job.h"
#include "pvm/pvm.h"

/*
 * The PVM layer's frames between nodes (node/job.h: kind and three
 * integers, then a payload).  Requests that need an answer carry an id
 * in `b` and get a K_REPLY {a: id, b: result; payload: data} back.
 */
enum pvm_frame_kind {
    K_MSG = NODE_KIND_USER, /* a: dst tid; payload: serialised message */
    K_REPLY,                /* a: request id, b: result; payload: data */
    K_SPAWN,                /* b: id, c: count; payload: struct spawn_spec + strings */
    K_SIBS,                 /* c: n; payload: n tids */
    K_NOTIFY,               /* a: watched tid, b: id, c: watcher; payload: ctx, cancel, tag */
    K_NOTIFY_FIRE,          /* a: watcher, b: watched tid, c: tag; payload: ctx */
    K_KILL,                 /* a: tid, b: signal */
    K_PSTAT,                /* a: tid, b: id */
    K_TASKS,                /* a: where, b: id; reply: struct wire_task records */
    K_ADDHOST,              /* b: id (to node 0); reply: the new node */
    K_DELHOST,              /* a: node, b: id (to node 0) */
    K_STATUS,               /* a: tid, b: its exit status (PVM_SPAWN_REPORT_STATUS) */
    K_GROUP,                /* to node 0, a: op, b: id, c: arg; payload: tid, name (groups.c) */
    K_MBOX,                 /* to node 0, a: op, b: id; payload: mailbox.c's request */
    /* migration: routing (pvm/move.h) */
    K_MIG_MOVED,            /* a: tid, b: its new node */
    K_MIG_MARK,             /* a: tid, b: the node that sent it (routed like a message) */
    /* migration: the protocol (src/migrate) */
    K_MIG_REQ,              /* a: tid, b: request id, c: to; payload: int32 origin (routed) */
    K_MIG_DONE,             /* a: request id, b: rc; payload: struct + why */
    K_MIG_PREP,             /* a: tid; payload: proc_move + layout */
    K_MIG_PREP_ACK,         /* a: tid, b: rc; payload: why */
    K_MIG_STATE,            /* a: tid; payload: core, request, PVM state */
    K_MIG_DATA,             /* a: tid, c: last; payload: uint64 address, bytes */
    K_MIG_ACK,              /* a: tid; payload: uint64 bytes received so far */
    K_REPLY_TID,            /* a: tid, b: result, c: request id; payload: data (an answer
                             * that follows its task, routed like a message) */
};

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
/* The answer to request id from node (a K_REPLY). */
void pvm_rpc_reply(int node, int id, int result, const void *p, size_t len) HIDDEN;

/* The groups' and the mailbox's servers on node 0 (groups.c, mailbox.c):
 * requests, and a node's death (its tasks leave). */
void pvm_groups_serve(int src, const struct node_frame *f, const void *p, size_t len) HIDDEN;
void pvm_groups_node_gone(int n) HIDDEN;
void pvm_mbox_serve(int src, const struct node_frame *f, const void *p, size_t len) HIDDEN;
void pvm_mbox_node_gone(int n) HIDDEN;

/*
 * Start the job's nodes (UPVM_NODES, else dflt_nodes) if this is a job of
 * several; the calling (main) ULP goes on as node 0.  Other nodes never
 * return: they serve.  Returns this node (0).
 */
int pvm_job_start(int dflt_nodes) HIDDEN;

bool pvm_multi(void) HIDDEN;

/* The node a tid's task is on (as far as this node knows), -1 if none. */
int pvm_tid_node(int tid) HIDDEN;
/* The running node a host tid names, or -1. */
int pvm_host_node(int host_tid) HIDDEN;
/* The running node called name (node<n>; ".", "localhost" and the host
 * name mean this node), or -1. */
int pvm_node_by_name(const char *name) HIDDEN;
const char *pvm_node_name(int n, char *buf, size_t len) HIDDEN;

/* Placement of task i of n: *node, or PvmNoHost. */
int pvm_place(int flag, const char *where, int i, int n, int *node) HIDDEN;

/* b (header filled in) to the task dst_tid on another node; b is not
 * changed.  0 (also when there is no such node: dropped), PvmNoMem. */
int pvm_remote_send(msg_buf_t *b, int dst_tid) HIDDEN;

/* Spawn count tasks on node for t; tids get tids or errors; the number
 * started.  path: a program file (process mode), else name is registered. */
int pvm_remote_spawn(struct pvm_task *t, int node, int flag, const char *name,
                     const char *path, char **argv, int count, int *tids) HIDDEN;
/* Tell the other nodes with tasks in s who their siblings are. */
void pvm_remote_sibs(struct pvm_sibs *s) HIDDEN;

int pvm_remote_notify_exit(struct pvm_task *t, int watched, int tag, bool cancel) HIDDEN;
int pvm_remote_notify_host(struct pvm_task *t, int host_tid, int tag, bool cancel) HIDDEN;
/* A PvmTaskExit notification for watcher, wherever it is. */
void pvm_remote_fire(int watcher, int watched, int tag, int ctx) HIDDEN;
int pvm_remote_kill(int tid, int sig) HIDDEN;
int pvm_remote_pstat(int tid) HIDDEN;
int pvm_remote_tasks(struct pvm_task *t, int where, int *ntaskp,
                     struct pvmtaskinfo **tip) HIDDEN;
/* A new node: its number (up), or -errno.  Delete node n: 0 or -errno. */
int pvm_remote_addhost(void) HIDDEN;
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
/* Nodes came up: PvmHostAdd notifications. */
void pvm_hosts_added(const int *nodes, int n) HIDDEN;

#endif /* UPVM_PVM_REMOTE_H */
