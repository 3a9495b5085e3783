/*
 * console_trace.h - the console's PVM tracing (docs/console.md "Tracing"):
 * the `trace` command (the mask, buffering and option of the tasks the
 * console spawns) and the tracer of `spawn -@` jobs, whose events it
 * prints as PVM 3.4.6's console prints them (its libpvmtrc's SDDF text).
 *
 * The console is the tracer of a traced job's tasks: their events come to
 * it as PVM messages with the job's own tag (ctrace_tag), which
 * ctrace_poll receives and prints, "[T<job>:t<tid>] " before each line.
 * Single-threaded, as the console is.
 */
#ifndef UPVM_CONSOLE_TRACE_H
#define UPVM_CONSOLE_TRACE_H

#include <stdbool.h>
#include <stdio.h>

/* The console joined the VM as mytid: its children's trace settings start
 * as PVM's console sets them (full events, unbuffered, `trace xpvm`'s
 * mask). */
void ctrace_init(int mytid);

/* `trace [+|-] name ... | * | xpvm | buf [n] | opt [full|time|count]`:
 * PVM's console's outputs and messages.  0. */
int ctrace_command(int ac, char **av);

/* spawn -@: job `job`'s tasks are about to be spawned; the console becomes
 * their tracer (PvmTraceTid, PvmTraceCode = the job's tag, the children's
 * mask, buffering and option as `trace` set them) and writes the trace
 * file's head and the hosts to out (stdout, or -@file's file).  false:
 * no room for another traced job (said).  ctrace_spawned: the spawn
 * returned, nstarted tasks started (the console is no task's tracer any
 * more; the job is finished when their endtasks have come). */
bool ctrace_spawning(int job, FILE *out);
void ctrace_spawned(int nstarted);

/* A line of a traced job's task's output (from pvm_catchout: "BEGIN" and
 * "EOF" mark its start and end), written as the trace's "output" event,
 * as libpvmtrc writes the output it collects.  false: tid is in no traced
 * job. */
bool ctrace_output(int job, int tid, const char *line);

/* Receive and print the trace messages that came.  True when one came. */
bool ctrace_poll(void);

/* Some traced job has a task whose endtask has not come yet. */
bool ctrace_busy(void);

#endif /* UPVM_CONSOLE_TRACE_H */
