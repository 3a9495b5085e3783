/*
 * remote.h - the PVM layer across nodes (remote.c), and what task.c gives
 * it for the requests it serves.  In a job of one node pvm_multi() is false
 * and none of the pvm_remote_* calls is made.
 */
#ifndef UPVM_PVM_REMOTE_H
#define UPVM_PVM_REMOTE_H

#include <stdbool.h>

#include "pvm/pvm.h"

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

/* ---- task.c, for the requests remote.c serves */

struct pvm_spawn_origin {
    int ptid, ctx;
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
