/*
 * gs.h - the global scheduler: what each node measures, the view node 0
 * builds from the nodes' reports, and the policies that turn a view into
 * migrations (docs/balancing.md).
 *
 * Flow: every node measures all the time (core: CPU time per ULP, idle
 * time; pvm: messages and bytes between tasks); every period each node
 * sends node 0 a report (gs.c); node 0 builds a struct gs_view, asks the
 * policy for moves, and starts them with the migration protocol
 * (migrate_request_async).  A task that cannot move is skipped, its
 * reason logged.  Vacated nodes take no new tasks and are emptied.
 *
 * Policies are pure functions of a view: same view, same moves (unit
 * tests replay recorded views: tests/gs).  They live in policy.c behind
 * struct gs_policy.
 */
#ifndef UPVM_GS_H
#define UPVM_GS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/compiler.h"

#define GS_PEERS 4        /* heaviest communication partners kept per task */
#define GS_MAX_NODES 64   /* = NODE_MAX */

/* A task's traffic to one partner over the last period. */
struct gs_peer {
    int tid;              /* 0: unused entry */
    double msgs_per_s;
    double bytes_per_s;
};

/* One task as node 0 sees it. */
struct gs_task {
    int tid;
    int node;             /* where it runs */
    double load;          /* CPU it used, in cores (0.5: half of one core) */
    bool movable;         /* a process-mode task that may migrate now */
    struct gs_peer peers[GS_PEERS];
};

/* One node as node 0 sees it. */
struct gs_node {
    bool up;              /* running, and reported in the last periods */
    bool vacated;         /* upvm vacate: empty it, place nothing there */
    double capacity;      /* the CPU the node can get, in cores (1: a core of
                           * its own; 0.5: it shares its core with another
                           * user's process); measured when the node was busy */
    double load;          /* CPU its tasks used, in cores */
    double idle;          /* fraction of the period it had nothing to run */
    int runq;             /* ready ULPs at the report */
    int nulps;
};

/* A view: what the policies decide from. */
struct gs_view {
    int nnodes;                       /* nodes[0 .. nnodes) */
    struct gs_node nodes[GS_MAX_NODES];
    int ntasks;
    struct gs_task *tasks;
};

/* A decision. */
struct gs_move {
    int tid;
    int from, to;
    const char *why;      /* a constant phrase for the log: "node 1 is vacated" */
};

/* The defaults of the settings (UPVM_BALANCE_*; bench/gs-compare.sh:
 * 100 ms and 5 % beat 200 ms and 15 % on external load and skewed work,
 * with no cost on a balanced job: docs/balancing.md). */
#define GS_DEFAULT_PERIOD_MS 100
#define GS_DEFAULT_THRESHOLD 0.05
#define GS_DEFAULT_MOVES 8
#define GS_DEFAULT_MIN_LOAD 0.05

/* Settings the policies read (UPVM_BALANCE_*). */
struct gs_params {
    double threshold;     /* act when the most loaded node's load per
                           * capacity exceeds the average by this fraction
                           * (0.15: 15 %) */
    int max_moves;        /* at most this many moves per period */
    double min_load;      /* tasks lighter than this (cores) are not worth moving */
};

/*
 * A policy: decide(view, params, moves, max) writes at most max moves and
 * returns how many.  It never moves a task that is not movable, never
 * moves to a node that is down or vacated, and moves every movable task
 * off a vacated node (that comes first, whatever the policy).  Pure: no
 * clock, no randomness, ties broken by tid then node number.
 */
struct gs_policy {
    const char *name;
    const char *what;     /* a line for docs and `upvm top` */
    int (*decide)(const struct gs_view *v, const struct gs_params *p, struct gs_move *moves,
                  int max);
};

/* The policies by name: none, greedy, refine, comm, passive.  NULL when
 * unknown. */
const struct gs_policy *gs_policy_find(const char *name) HIDDEN;
/* All of them, for listings; *n set. */
const struct gs_policy *const *gs_policies(int *n) HIDDEN;

#endif /* UPVM_GS_H */
