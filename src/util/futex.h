/*
 * futex.h - the futex system call on a private 32-bit word (glibc has no
 * wrapper), for the threads of one process that wait for each other.
 */
#ifndef UPVM_UTIL_FUTEX_H
#define UPVM_UTIL_FUTEX_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

/* op: FUTEX_WAIT (ts relative, or NULL), FUTEX_WAIT_BITSET (ts absolute on
 * CLOCK_MONOTONIC, or NULL), FUTEX_WAKE (val: how many). */
static inline long util_futex(_Atomic uint32_t *word, int op, uint32_t val,
                              const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, val, ts, NULL,
                   FUTEX_BITSET_MATCH_ANY);
}

#endif /* UPVM_UTIL_FUTEX_H */
