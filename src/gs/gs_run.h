/*
 * gs_run.h - the global scheduler's running part (gs.c), as the
 * composition root (src/run) wires it: every node of a job of several calls
 * gs_init once it runs; node 0's control requests call gs_top_text and
 * gs_vacate (`upvm top`, `upvm vacate`, `upvm restore`).
 */
#ifndef UPVM_GS_RUN_H
#define UPVM_GS_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "util/compiler.h"

/* Read UPVM_BALANCE* and UPVM_TRACE (a bad one ends the process, as
 * util/env.h says): before the nodes fork, so that it is said once. */
void gs_read_settings(void) HIDDEN;

/* Read UPVM_BALANCE*, register the reports' frames and the periodic tick.
 * Nothing in a job of one node. */
void gs_init(void) HIDDEN;

/* Node 0: `upvm top`'s table (malloc'd text; NULL: no memory). */
char *gs_top_text(void) HIDDEN;

/* Node 0: vacate (on) or restore (off) node; a one-line answer in reply.
 * 0, or -ENOSYS (no balancer: a job of one node, not node 0), -EINVAL (no
 * such running node). */
int gs_vacate(int node, bool on, char *reply, size_t len) HIDDEN;

#endif /* UPVM_GS_RUN_H */
