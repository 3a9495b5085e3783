/*
 * crash.h - what the crash reporter's parts share (src/core only): output
 * that allocates nothing, memory reads that cannot fault, the mapping an
 * address lies in, and the backtrace.
 *
 * Everything here runs inside a crash handler, on the alternate signal
 * stack, about a process whose memory may be corrupt: no allocation, no
 * lock of ours, and no read of memory the report has not first checked.
 */
#ifndef UPVM_CORE_CRASH_H
#define UPVM_CORE_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "core/core.h"

/* printf to stderr through a stack buffer and write(2). */
void crash_say(const char *fmt, ...) __attribute__((format(printf, 1, 2))) HIDDEN;

/* The executable mapping that holds addr: its bounds, its file offset and
 * the file's name ("" for anonymous memory). */
struct crash_mapping {
    uintptr_t lo, hi;
    uintptr_t offset;
    char path[200];
};

/* Whether addr lies in an executable mapping (*m filled), from
 * /proc/self/maps.  False for unmapped, non-executable, or unknown. */
bool crash_exec_mapping(uintptr_t addr, struct crash_mapping *m) HIDDEN;

/* "symbol+0x1d (object+0x3a4d)" for the code at pc into buf.  innermost:
 * pc is where the code was interrupted, not a return address; outermost:
 * the frame that starts a ULP. */
void crash_locate(char *buf, size_t len, uintptr_t pc, bool innermost, bool outermost) HIDDEN;

/* After a jump to an address that holds no code: the return address on
 * the top of the stack (*ra), if that is one (the jump was a call). */
bool crash_came_from(const ucontext_t *uc, uintptr_t *ra) HIDDEN;

/* One line of a backtrace, kept until the frames are all known: a frame
 * ("    #1  0x4011d9 main+0x1d (prog+0x11d9)", then `tail`: "  (scanned)"
 * and the like) whose source line is looked up in `object` (an absolute
 * path, "" when unknown) at `vaddr` (an address of its ELF file), or a
 * note about the walk (object "", vaddr 0). */
struct crash_line {
    char head[280];
    char tail[64];
    char object[200];
    uintptr_t vaddr;
    char source[160]; /* " at file.c:12", and " (inlined in f at g.c:3)", or "" */
};

/* Fill each line's `source` from the debug information of its object:
 * addr2line (binutils), run once per object with a pipe and a deadline
 * of deadline_ms for all of them together; a line it cannot place keeps
 * "".  Returns the number of lines placed, or -1 when addr2line could not
 * be run (not installed).  Allocates nothing; a child that does not answer
 * in time is killed. */
int crash_source_lines(struct crash_line *lines, int n, int deadline_ms) HIDDEN;

/* Print the backtrace of the interrupted code in uc.  u is the ULP that
 * ran (NULL: none); its stack bounds limit the walk. */
void crash_backtrace(const ucontext_t *uc, const struct ulp *u) HIDDEN;

#endif /* UPVM_CORE_CRASH_H */
