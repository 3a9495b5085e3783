/*
 * board.h - what a node runs, written where it outlives the node.
 *
 * When a node process dies (kill -9, a crash), its memory goes with it,
 * yet the report of the loss must say which tasks were lost.  So every node
 * keeps a table of its live tasks (tid, program name) on its board in the
 * job's shared segment (net_board, net.h): the node alone writes it, node 0
 * reads a dead node's board for the lost-node report, and the launcher reads
 * node 0's when node 0 dies.
 *
 * Cost: a task's start and end each write one 32-byte entry (a hash by tid
 * into a fixed table, a few probes at most): no system call, no lock, and
 * nothing on the message path.  The table lists up to NODE_BOARD_TASKS
 * tasks; a task that finds no free entry is only counted (the report then
 * says how many more there were).  The node's own pid and task count are on
 * the board too.
 *
 * Consistency: the writer stores an entry's name before its tid (release),
 * and readers look only at boards of nodes that are gone, so a node killed
 * in the middle of a write leaves at worst one task unlisted, never a torn
 * one.
 *
 * Context: the node's scheduler thread (writers); the reader functions are
 * plain functions of the board's bytes (any process that maps it).
 */
#ifndef UPVM_NODE_BOARD_H
#define UPVM_NODE_BOARD_H

#include <stdbool.h>
#include <stdio.h>

#include "util/compiler.h"

/* Entries in one board's task table. */
#define NODE_BOARD_TASKS 255

/* This node's board (NULL: none, e.g. a job of one node: every call below
 * is then a no-op).  Records the calling process's pid on it. */
void node_board_open(void *board) HIDDEN;

/* This node's board (NULL: none): in a job of MPI ranks, which shares no
 * segment, it lies in the node's own memory, and node 0 asks for copies
 * (control_server.c). */
const void *node_board_own(void) HIDDEN;

/* A task of this node started / ended.  name may be NULL or "" (listed
 * without one); it is copied (up to 27 bytes). */
void node_board_add(int tid, const char *name) HIDDEN;
void node_board_remove(int tid) HIDDEN;

/* A board's node pid (0 if it never ran) and live task count. */
int node_board_pid(const void *board) HIDDEN;
int node_board_ntasks(const void *board) HIDDEN;

/* This node is ending: did its output get written (out_check)?  If not,
 * the reason goes on its board, where the launcher finds it and says it
 * once for the whole job.  True when it was not written. */
bool node_board_note_output(void) HIDDEN;
/* A board's reason: 0 (all written), an errno value, -1 (not known). */
int node_board_output_error(const void *board) HIDDEN;

/*
 * Print a board's tasks to f, in tid order, as lines that start with
 * prefix: " t80001/sleeper t80002/sleeper ..." (a few per line; at most
 * 60 tasks, then "... and N more").  Prints nothing for a board with no
 * task.  Returns the task count (node_board_ntasks).
 */
int node_board_print(FILE *f, const void *board, const char *prefix) HIDDEN;

#endif /* UPVM_NODE_BOARD_H */
