/*
 * sync.c - IVY's eventcounts and a lock, in shared memory (design notes
 * §15.9).
 *
 * The data lies in one page, so once the page is here an operation is a
 * few instructions.  A node that has a ULP waiting sets its bit in the
 * object's waiter mask; whoever advances the eventcount (or unlocks) takes
 * the mask and sends K_SVM_WAKE to those nodes, whose waiting ULPs check
 * again.  No wake-up is lost: a waiter sets its bit and reads the value
 * while its node holds the page writable -- the atomic operation on the
 * mask faulted for write, and between it and the next load nothing can
 * take the page away (frames are handled only at polls, on this same
 * thread) -- and the advancing node reads the mask after its increment
 * under the same exclusive access.  Waiting blocks the ULP, never the node.
 */
#include <errno.h>
#include <stdint.h>

#include "svm/svm_impl.h"

static upvm_waitq_t *sync_queue(const void *obj)
{
    uintptr_t a = (uintptr_t)obj >> 6;
    return &svm.sync_q[(a ^ (a >> 6)) % 64u];
}

/* Is obj a 64-byte aligned object inside a shared region?  (Then the
 * layer is started: a region exists.) */
static bool valid(const void *obj)
{
    return ((uintptr_t)obj & 63) == 0 && svm_region_of((uintptr_t)obj);
}

/* The nodes of mask may have ULPs waiting on obj: wake them. */
static void wake_nodes(const void *obj, uint64_t mask)
{
    struct svm_region *r = svm_region_of((uintptr_t)obj);
    for (int node = 0; mask; node++, mask >>= 1) {
        if (!(mask & 1))
            continue;
        if (node == svm.self)
            upvm_wake_all(sync_queue(obj));
        else if (node_job_up(node))
            svm_send(node, K_SVM_WAKE, r->slot, (int32_t)(((uintptr_t)obj - r->base) >> 6), 0,
                     NULL, 0);
    }
}

static void wake_arrived(int src, const struct node_frame *f, const void *payload, size_t len)
{
    (void)src, (void)payload, (void)len;
    struct svm_region *r = svm_region_by_slot(f->a);
    if (r)
        upvm_wake_all(sync_queue((const void *)(r->base + ((uintptr_t)(uint32_t)f->b << 6))));
}

void svm_sync_register(void)
{
    node_on_frame(K_SVM_WAKE, wake_arrived);
}

/* ------------------------------------------------------------ eventcounts */

int upvm_ec_init(upvm_ec_t *ec)
{
    if (!valid(ec))
        return -EINVAL;
    __atomic_store_n(&ec->value, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&ec->waiters, 0, __ATOMIC_SEQ_CST);
    return 0;
}

uint64_t upvm_ec_read(upvm_ec_t *ec)
{
    return __atomic_load_n(&ec->value, __ATOMIC_SEQ_CST);
}

int upvm_ec_await(upvm_ec_t *ec, uint64_t v)
{
    if (!core_on_sched_thread_now())
        return -EDEADLK;
    if (!valid(ec))
        return -EINVAL;
    uint64_t me = 1ull << svm.self;
    while (__atomic_load_n(&ec->value, __ATOMIC_SEQ_CST) < v) {
        __atomic_fetch_or(&ec->waiters, me, __ATOMIC_SEQ_CST); /* the page is now ours */
        if (__atomic_load_n(&ec->value, __ATOMIC_SEQ_CST) >= v)
            break;
        (void)core_block(sync_queue(ec), -1);
    }
    return 0;
}

uint64_t upvm_ec_advance(upvm_ec_t *ec)
{
    uint64_t v = __atomic_add_fetch(&ec->value, 1, __ATOMIC_SEQ_CST);
    uint64_t waiting = __atomic_exchange_n(&ec->waiters, 0, __ATOMIC_SEQ_CST);
    if (waiting)
        wake_nodes(ec, waiting);
    return v;
}

/* ------------------------------------------------------------ lock */

static uint64_t holder_id(void)
{
    return (uint64_t)(svm.self + 1) << 32 | (uint32_t)upvm_self();
}

int upvm_svm_lock_init(upvm_svm_lock_t *l)
{
    if (!valid(l))
        return -EINVAL;
    __atomic_store_n(&l->holder, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&l->waiters, 0, __ATOMIC_SEQ_CST);
    return 0;
}

int upvm_svm_lock(upvm_svm_lock_t *l)
{
    if (!core_on_sched_thread_now())
        return -EDEADLK;
    if (!valid(l))
        return -EINVAL;
    uint64_t me = holder_id(), bit = 1ull << svm.self;
    for (;;) {
        uint64_t seen = 0;
        if (__atomic_compare_exchange_n(&l->holder, &seen, me, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return 0;
        if (seen == me)
            return -EDEADLK;
        __atomic_fetch_or(&l->waiters, bit, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&l->holder, __ATOMIC_SEQ_CST) == 0)
            continue;
        (void)core_block(sync_queue(l), -1);
    }
}

int upvm_svm_unlock(upvm_svm_lock_t *l)
{
    if (!valid(l))
        return -EINVAL;
    if (__atomic_load_n(&l->holder, __ATOMIC_SEQ_CST) != holder_id())
        return -EPERM;
    __atomic_store_n(&l->holder, 0, __ATOMIC_SEQ_CST);
    uint64_t waiting = __atomic_exchange_n(&l->waiters, 0, __ATOMIC_SEQ_CST);
    if (waiting)
        wake_nodes(l, waiting);
    return 0;
}
