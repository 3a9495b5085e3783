/*
 * blt.h - bi-level threads: a ULP's user context coupled with a kernel
 * context (a thread of the node's pool) for a blocking call or a series of
 * them, while the node's scheduler runs the other ULPs (ULP-PiP's couple
 * and decouple).  The public face is upvm_couple, upvm_decouple and
 * upvm_blocking (upvm.h); process mode couples around the system calls that
 * may block (src/proc/blocking.c).
 *
 * Kernel contexts (KCs) are created lazily, up to UPVM_KC_MAX per node,
 * and reused; a ULP that finds them all busy waits for one (it blocks like
 * any ULP: the others run).  An idle KC waits for its next ULP as
 * UPVM_KC_WAIT says: spin, block (futex), or adaptive (spin a while, then
 * block: the default where the process may use more than one CPU; block
 * where it may use one).
 *
 * While coupled, a ULP is ULP_COUPLED: listed by upvm ulps and the crash
 * reports, not a deadlock, not migrated (it moves after it decouples).
 * Its code runs on its own stack, with its own errno; the scheduler's
 * calls (upvm_*, pvm_*) are not for a coupled ULP: they answer as on a
 * thread that is not the node's (-EPERM, PvmSysErr).  A coupled ULP that
 * is killed gets its blocking call interrupted (EINTR) and ends when it
 * comes back.
 */
#ifndef UPVM_BLT_H
#define UPVM_BLT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"

/* Read the settings; called by the first couple, or earlier by the node
 * (so that a bad value is said once for a job). */
void blt_read_settings(void) HIDDEN;

/* True on a kernel context (the caller is a coupled ULP). */
static inline bool blt_coupled(void)
{
    return !core_on_sched_thread && core_kc_ulp != NULL;
}

/*
 * blt_enter - before a call that may block (what names it in reports:
 * "read()"): couple the current ULP and return true, or return false when it runs where it is (already coupled,
 * or not a ULP of this node, or no KC can be had: then it is said once).
 * blt_leave(true) decouples again; errno survives both.
 */
bool blt_enter(const char *what) HIDDEN;
void blt_leave(bool coupled) HIDDEN;

/* Transfers of this many bytes or more (UPVM_KC_IO_MIN, default 64 KiB)
 * are coupled even when they would not block, so that their copy runs
 * beside the other ULPs; SIZE_MAX where the node may use one CPU only. */
extern size_t blt_offload_bytes HIDDEN; /* 0 until the settings are read */
size_t blt_offload_min_slow(void) HIDDEN;
static inline size_t blt_offload_min(void)
{
    size_t v = blt_offload_bytes;
    return likely(v != 0) ? v : blt_offload_min_slow();
}

/* The ULP's coupling depth: 0 on the scheduler, >= 1 on a KC. */
int blt_depth(void) HIDDEN;

/* Statistics of this node's pool (benchmarks, upvm ulps). */
struct blt_stats {
    int kcs;          /* created */
    int idle;         /* waiting for a ULP */
    unsigned long couples;
    unsigned long waits; /* couples that had to wait for a free KC */
};
void blt_stats(struct blt_stats *out) HIDDEN;

#endif /* UPVM_BLT_H */
