/*
 * upvm_svm.h - shared virtual memory: memory that every ULP of a job sees
 * at the same address, on every node and host, kept coherent page by page
 * (Kai Li's IVY: one writer or many readers, write-invalidate, sequential
 * consistency), with IVY's eventcounts and a lock living in it
 * (docs/svm.md).
 *
 * A program allocates shared blocks with upvm_svm_alloc and passes the
 * pointers to other ULPs in messages (pvm_pkulong, or as bytes): the block
 * is mapped on every node of the job before upvm_svm_alloc returns, so the
 * pointer is valid wherever it arrives.  A ULP that touches a page its
 * node does not hold blocks (only that ULP: the node runs its others)
 * while the page travels from the node that owns it.
 *
 * Conventions (as upvm.h): errors are negative errno values; calls are
 * made from ULPs of the job on their node's scheduler thread.  Context
 * for shared memory itself: plain loads and stores from ULP code; system
 * calls with a shared buffer follow docs/svm.md's rule (process mode: the
 * interposed read/write/... take shared buffers; otherwise call
 * upvm_svm_touch first).  C11 atomics on shared memory are atomic
 * job-wide.
 *
 * Environment (read once, at the job's start):
 *   UPVM_SVM_MANAGER  central (default) | fixed | dynamic: the page manager
 *                     of blocks allocated without a manager flag
 *   UPVM_SVM          protocol (default) | memfd: the default kind of block
 *                     (memfd: UPVM_SVM_SHARED, for jobs of one host)
 *   UPVM_SVM_FAULT    uffd | mprotect: force a fault mechanism (default:
 *                     userfaultfd in SIGBUS mode where the kernel allows
 *                     it, else mprotect + SIGSEGV)
 */
#ifndef UPVM_SVM_H
#define UPVM_SVM_H

#include <stddef.h>
#include <stdint.h>

#include "upvm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The unit of coherence. */
#define UPVM_SVM_PAGE 4096u

/* Manager of a block's pages (IVY's three algorithms), for
 * upvm_svm_alloc_flags; 0 takes UPVM_SVM_MANAGER. */
#define UPVM_SVM_CENTRAL 0x1u /* improved centralized: node 0 knows each page's owner */
#define UPVM_SVM_FIXED   0x2u /* fixed distributed: node H(page) knows its owner */
#define UPVM_SVM_DYNAMIC 0x3u /* dynamic distributed: probable-owner hints */
#define UPVM_SVM_MANAGER_MASK 0x3u
/* Nodes of one host share the block's memory physically (one memfd mapped
 * on every node: the hardware keeps it coherent, nothing faults or
 * travels; the memory model is x86-TSO, so synchronise with eventcounts,
 * the lock or C11 atomics).  Refused (EOPNOTSUPP) in a job of several
 * hosts.  UPVM_SVM=memfd makes it the default; UPVM_SVM_PROTOCOL asks for
 * the protocol all the same. */
#define UPVM_SVM_SHARED   0x4u
#define UPVM_SVM_PROTOCOL 0x8u

/*
 * upvm_svm_alloc - a shared block of at least size bytes, page-aligned,
 * zero-filled, at the same address on every node of the job; NULL with
 * errno ENOMEM (no room: the shared area is UPVM_SLOT_SIZE per chunk; a
 * block is at most one chunk), EINVAL (size 0), EPERM (not called from a
 * ULP).  May switch (the first block of a new chunk waits until every node
 * has mapped it).  The calling node is the block's home: its pages start
 * there.
 */
UPVM_API void *upvm_svm_alloc(size_t size);
UPVM_API void *upvm_svm_alloc_flags(size_t size, unsigned flags);

/*
 * upvm_svm_free - give back a block upvm_svm_alloc returned (from any
 * node).  Its pages are dropped on every node; touching them afterwards is
 * the program's bug (as with free).  0; -EINVAL: p is not the start of a
 * live shared block.
 */
UPVM_API int upvm_svm_free(void *p);

/* Access for upvm_svm_touch. */
#define UPVM_SVM_READ  0x1
#define UPVM_SVM_WRITE 0x2

/*
 * upvm_svm_touch - bring the shared pages of [p, p + len) to this node
 * with the access asked for (all requests at once), for a system call or
 * a library function that must not fault on them.  They stay until the
 * calling ULP next blocks, yields or switches.  Memory outside shared
 * blocks is ignored.  0, -EINVAL (bad access), -EHOSTDOWN (a page was lost
 * with a dead node).  May switch.
 */
UPVM_API int upvm_svm_touch(const void *p, size_t len, int access);

/* What this node's shared memory did since the job started. */
struct upvm_svm_stats {
    uint64_t read_faults;   /* faults that needed a read copy */
    uint64_t write_faults;  /* faults that needed write access */
    uint64_t pages_in;      /* pages received from other nodes */
    uint64_t pages_out;     /* pages sent to other nodes */
    uint64_t invalidations; /* read copies this node dropped on request */
    uint64_t frames;        /* protocol frames sent */
    uint64_t forwards;      /* requests forwarded (managers, hints) */
};

/* This node's counters.  0, -EINVAL (NULL). */
UPVM_API int upvm_svm_stats(struct upvm_svm_stats *out);

/* How many times the ownership of the page holding p changed as seen by
 * this node (IVY's ping-pong count of a falsely shared page); -EINVAL when
 * p is not shared memory. */
UPVM_API long upvm_svm_page_moves(const void *p);

/*
 * Eventcounts (IVY's Init, Read, Await, Advance), placed in shared memory
 * (inside a block from upvm_svm_alloc), 64 bytes, never across a page.
 * Await blocks the calling ULP, never its node; Advance wakes the ULPs of
 * every node awaiting a value it reaches.
 */
typedef struct upvm_ec {
    uint64_t value;
    uint64_t waiters; /* a bit per node with a ULP in upvm_ec_await */
    uint64_t reserved[6];
} __attribute__((aligned(64))) upvm_ec_t;

/* 0; -EINVAL when ec is not in shared memory or not 64-byte aligned. */
UPVM_API int upvm_ec_init(upvm_ec_t *ec);
/* The current value. */
UPVM_API uint64_t upvm_ec_read(upvm_ec_t *ec);
/* Block until the value is at least v.  0; -EINVAL (not shared memory),
 * -EDEADLK (called from a ULP coupled to a kernel context). */
UPVM_API int upvm_ec_await(upvm_ec_t *ec, uint64_t v);
/* Add one; returns the new value. */
UPVM_API uint64_t upvm_ec_advance(upvm_ec_t *ec);

/* A lock in shared memory: one holder at a time across the job, waiters
 * blocked as ULPs.  Zero-filled memory is an unlocked lock. */
typedef struct upvm_svm_lock {
    uint64_t holder; /* 0: free; else the holder's (node + 1) << 32 | ULP id */
    uint64_t waiters;
    uint64_t reserved[6];
} __attribute__((aligned(64))) upvm_svm_lock_t;

UPVM_API int upvm_svm_lock_init(upvm_svm_lock_t *l);
/* 0; -EINVAL (not shared memory), -EDEADLK (the caller holds it, or is coupled). */
UPVM_API int upvm_svm_lock(upvm_svm_lock_t *l);
/* 0; -EPERM: the caller does not hold it. */
UPVM_API int upvm_svm_unlock(upvm_svm_lock_t *l);

#ifdef __cplusplus
}
#endif

#endif /* UPVM_SVM_H */
