/*
 * title.h - how a node process is named in ps and top.
 *
 * A process a job's launcher forks as a node shows as
 *
 *   comm     upvm-node1                 (top, ps -o comm, pgrep NAME)
 *   cmdline  upvm: node 1 of job 4711 (./master -v data)    (ps, pgrep -f)
 *
 * where 4711 is the job's pid (its launcher: the process the user
 * started, which keeps its own name; `upvm jobs` lists that pid) and the
 * parentheses hold the program's command line, so that `pgrep -f master`
 * still finds every process of the job.
 *
 * The program's argv and environ are not touched: the title is written to
 * a page of its own and the kernel is told that this page is the command
 * line (prctl PR_SET_MM_MAP, unprivileged without changing the executable;
 * kernels built with CONFIG_CHECKPOINT_RESTORE, as distributions' are).
 * So pointers a thread-mode program kept into its argv or environment
 * (getenv's results, argv[1] saved before its first PVM call) stay valid
 * in every node.  A kernel that refuses leaves the command line as it was;
 * comm is set in any case.
 */
#ifndef UPVM_NODE_TITLE_H
#define UPVM_NODE_TITLE_H

#include <sys/types.h>

#include "util/compiler.h"

/* Name this process node `node` of the job whose launcher is `job`.  0, or
 * -errno when the command line could not be changed (comm was). */
int node_set_title(int node, pid_t job) HIDDEN;

#endif /* UPVM_NODE_TITLE_H */
