/*
 * net_impl.h - what a transport implementation provides to net.c: one ops
 * table, installed by its net_init_* and called through net_cur.  net.c
 * checks arguments that every transport checks alike (dst range, size), so
 * the implementations get only valid calls.
 */
#ifndef UPVM_NET_NET_IMPL_H
#define UPVM_NET_NET_IMPL_H

#include "net/net.h"

struct net_ops {
    /* iovcnt pieces (1..NET_IOV_MAX) of len bytes in all, len checked */
    int (*sendv)(int dst, const struct iovec *iov, int iovcnt, size_t len);
    int (*poll)(net_handler_fn fn, void *ctx, int max);
    int (*wait)(int64_t timeout_ns);
    void (*wake)(int node);
    int (*flush)(void);
    void (*fini)(void);
};

struct net_cur {
    const struct net_ops *ops; /* NULL: no transport up */
    int node, nnodes;
    net_config_t cfg;
    uint64_t spin_until;       /* net_spin_until */
};

HIDDEN extern struct net_cur net_cur;

/* Monotonic clock in ns. */
HIDDEN uint64_t net_now_ns(void);

#endif
