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
    char path[112];
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

/* Print the backtrace of the interrupted code in uc.  u is the ULP that
 * ran (NULL: none); its stack bounds limit the walk. */
void crash_backtrace(const ucontext_t *uc, const struct ulp *u) HIDDEN;

#endif /* UPVM_CORE_CRASH_H */
