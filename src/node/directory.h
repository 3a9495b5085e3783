/*
 * directory.h - where each task of a job is: the per-node tid -> node
 * directory that keeps tids location-independent (architecture decision 2, docs/architecture.md).
 *
 * A tid carries the host part of the node that created it (one spawn's
 * copies get consecutive tids of the spawner's, as from one PVM host), but
 * a task may live elsewhere (the spawner put it on another node, or it
 * migrated); pvm_tidtohost answers with the machine where it is
 * (docs/pvm.md, "Tids, hosts and nodes").  Every node keeps a cache of
 * what it learned; the creating node of a tid (its "home") always knows
 * where the task is.  Routing a message for tid:
 *   - the task is on this node: deliver;
 *   - the cache has an entry: send there;
 *   - otherwise: send to the tid's home node, which forwards.
 * A node that receives a message for a task that is not there forwards it
 * the same way (migrate: every node hears of every move).  Pairwise FIFO
 * holds because forwarding queues behind earlier traffic on each hop.
 *
 * Nodes are numbered 0 .. nnodes-1; node n's host part is (n + 1) << 18,
 * as PVM numbers hosts from 1.  One directory per node, used on its
 * scheduler thread only: no locks.
 */
#ifndef UPVM_NODE_DIRECTORY_H
#define UPVM_NODE_DIRECTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "util/compiler.h"

struct node_dir {
    int self;          /* this node */
    int nnodes;
    uint32_t cap;      /* slots, a power of two (0: empty) */
    uint32_t used;     /* live entries */
    uint32_t tombs;    /* deleted entries still in probe chains */
    struct node_dir_entry {
        int32_t tid;   /* 0: empty, -1: deleted */
        int32_t node;
    } *slots;
};

/* An empty directory for node self of nnodes.  0 or -EINVAL. */
int node_dir_init(struct node_dir *d, int self, int nnodes) HIDDEN NODISCARD;
void node_dir_fini(struct node_dir *d) HIDDEN;

/* The node a tid's host part names (its home), or -1 for a tid that names
 * no node of this job. */
int node_dir_home(const struct node_dir *d, int tid) HIDDEN;

/* The node to send a message for tid to: the known location, else its
 * home; -1 when tid names no node of this job. */
int node_dir_route(const struct node_dir *d, int tid) HIDDEN;

/* Record that tid is on node (learned from a spawn, a migration notice or
 * a message's source).  0, -EINVAL (bad node or tid), -ENOMEM. */
int node_dir_set(struct node_dir *d, int tid, int node) HIDDEN NODISCARD;

/* tid ended: forget it (a later message for it goes to its home, which
 * drops it as PVM drops messages to tasks that are gone). */
void node_dir_forget(struct node_dir *d, int tid) HIDDEN;

/* Where a message for tid that arrived from node `from` goes next from this
 * node: this node (deliver), another node (forward, possibly back to
 * `from`: a migration's flush marker travels the old route and back), or
 * -1 (tid is not in this job: drop).  Entries are kept current by the
 * migration protocol (every node hears of every move), so a route is never
 * stale for long. */
int node_dir_next_hop(struct node_dir *d, int tid, int from) HIDDEN;

#endif /* UPVM_NODE_DIRECTORY_H */
