/*
 * output.h - did the job's output get written?  (docs/usage.md, "Output
 * that cannot be written")
 *
 * The job's output is this process's standard output, file descriptor 1:
 * what tasks write through stdio's stdout, and the tagged lines of
 * process-mode tasks (proc/output.c), which go to the descriptor directly.
 * A write there can fail: a full disk (ENOSPC, `> /dev/full`), a closed
 * descriptor (EBADF, `>&-`), an I/O error.  As coreutils do, such a loss is
 * not silent: it is said once, on stderr, and the job's exit status is not
 * 0.  A reader that went away (EPIPE) is not an error of this kind: SIGPIPE
 * ends the node, as it ends any program (node/launch.c).
 *
 * stdio keeps no reason for a failed write (its error flag only), so the
 * reason is the first one recorded (out_failed), else that of a last flush,
 * else what a write of no bytes to descriptor 1 says now (EBADF and a full
 * /dev/full answer it; a full disk does not: the line then has no reason).
 *
 * Calls libc only; any thread (the record is one atomic).
 */
#ifndef UPVM_UTIL_OUTPUT_H
#define UPVM_UTIL_OUTPUT_H

#include "util/compiler.h"

/* A write to descriptor 1 failed with err (an errno value): kept if it is
 * the first. */
void out_failed(int err) HIDDEN;

/*
 * Flush stdout and say whether everything written to descriptor 1 got
 * there: 0 yes; else the reason, an errno value > 0, or -1 when it is not
 * known (stdio's error flag is set, and nothing says why).
 */
int out_check(void) HIDDEN;

/* The one line for a failure out_check found (err != 0), on stderr:
 * "upvm: writing the job's output failed: No space left on device". */
void out_report(int err) HIDDEN;

/* Descriptors 0, 1 and 2 closed when the process started (`>&-`) are
 * kept taken by /dev/null opened the wrong way round (1 and 2 read-only, 0
 * write-only): a write to stdout still fails with EBADF, as it would have,
 * and no file this process opens later (the transport, a socket, the
 * program being loaded) gets one of those numbers and the output meant
 * for the terminal. */
void out_keep_std_fds(void) HIDDEN;

#endif /* UPVM_UTIL_OUTPUT_H */
