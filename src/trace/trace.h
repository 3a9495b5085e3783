/*
 * trace.h - the UPVM trace's recording side: each node's raw file
 * (rawfile.h), the clocks, and the conversion started when the job ends
 * (docs/tracing.md).
 *
 * The composition root (src/run) calls, in this order:
 *   trace_read_settings   before the nodes fork (the launcher, or the only
 *                         node): UPVM_TRACE_FILE and the rest; makes
 *                         FILE.raw/ and registers the conversion at the
 *                         job's end;
 *   trace_node_start      in every node, once it knows its number: its
 *                         file is made and mapped, recording starts;
 *   trace_node_wire       in every node of a job of several, with the
 *                         frames: the host clock offsets.
 * Recording then goes on from every layer through util/trace.h, and ends
 * when the node ends (an exit, the node layer's end, a crash: the header
 * says which); a node killed outright leaves its records and an open
 * header.
 */
#ifndef UPVM_TRACE_TRACE_H
#define UPVM_TRACE_TRACE_H

#include <stdbool.h>

#include "util/compiler.h"

/* Read UPVM_TRACE_FILE, _BUF, _CLOCK (a bad value ends the process, as for
 * every setting).  launcher: this process starts the job (not one MPI rank
 * of several): it empties FILE.raw/ of an earlier run's files and converts
 * the trace when the job ends.  Returns whether the job is traced. */
bool trace_read_settings(bool launcher) HIDDEN;

/* This process is node `node` of a job of `nodes`: make and map its file,
 * start recording.  Once per process; nothing when the job is not traced.
 * Says why on stderr and goes on untraced when the file cannot be made. */
void trace_node_start(int node, int nodes, const char *program) HIDDEN;

/* A node of a job of several, after trace_node_start: register the clock
 * frames and, on the first node of a host other than node 0's, measure
 * the offset to node 0's clock. */
void trace_node_wire(void) HIDDEN;

/* The job's launcher or only node, every node gone: convert the trace
 * (UPVM_TRACE_TOOL, else the upvm command installed beside libupvm). */
void trace_job_ended(int status) HIDDEN;

#endif /* UPVM_TRACE_TRACE_H */
