/*
 * net_impl.h - what a transport implementation provides to net.c: one ops
 * table, installed by its net_init_* and called through net_cur.  net.c
 * checks arguments that every transport checks alike (dst range, size, a
 * node in range for the membership calls), so the implementations get only
 * valid calls.
 *
 * Membership (net_peer_state and the rest) belongs to a transport that has
 * a launcher and a shared segment (shm): one without leaves those ops NULL
 * and net.events NULL, and every node of the job is then UP, with no
 * board and no events (MPI: the job is MPI_COMM_WORLD, fixed at start).
 */
#ifndef UPVM_NET_NET_IMPL_H
#define UPVM_NET_NET_IMPL_H

#include <time.h>

#include "net/net.h"

struct net_ops {
    /* iovcnt pieces (1..NET_IOV_MAX) of len bytes in all, len checked */
    int (*sendv)(int dst, const struct iovec *iov, int iovcnt, size_t len);
    int (*poll)(net_handler_fn fn, void *ctx, int max);
    int (*wait)(int64_t timeout_ns);
    void (*wake)(int node);
    int (*flush)(void);
    void (*fini)(void);
    /* membership, optional (NULL: every node UP, no board); node in range */
    enum net_peer_state (*peer_state)(int node);
    int (*peer_status)(int node);
    int (*request_start)(int node);
    void *(*board)(int node);
};

struct net_running {
    const struct net_ops *ops; /* NULL: no transport up */
    int node, nnodes;
    net_config_t cfg;
    uint64_t spin_until;       /* net_spin_until */
    /* net_events' counter (a pointer, not an op: it is read on every
     * scheduler round, where one load must do); NULL: never changes */
    const _Atomic uint32_t *events;
};

#ifdef UPVM_NET_MPI_PLUGIN
/* mpi.c built as the plugin libupvm loads under mpirun (mpi_load.c): the
 * running transport is libupvm's, reached through the pointer the plugin's
 * entry receives (mpi.c). */
HIDDEN extern struct net_running *net_plugin_cur;
#define net_cur (*net_plugin_cur)
#else
HIDDEN extern struct net_running net_cur;
#endif

/* The MPI plugin's one entry (mpi_load.c loads it, mpi.c defines it):
 * libupvm's state, start (net_start_mpi) or join (net_init_mpi), cfg
 * resolved. */
typedef int net_mpi_plugin_fn(struct net_running *cur, int start, const net_config_t *cfg);
#define NET_MPI_PLUGIN_ENTRY "upvm_net_mpi_plugin"
#ifdef UPVM_NET_MPI_PLUGIN
__attribute__((visibility("default"))) net_mpi_plugin_fn upvm_net_mpi_plugin;
#endif

/* Monotonic clock in ns. */
static inline uint64_t net_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A wait's clock, read lazily: started at the first look after some rounds
 * of polling, so that a frame that comes at once (a ping-pong partner's
 * answer) costs no clock read (~30 ns on these VMs) before it is seen. */
struct net_wait_clock {
    uint64_t t0; /* 0: not read yet */
};

/* How long a wait spins: its policy's window, longer while net_spin_until
 * asks (an expired request is cleared), never past the wait's limit. */
static inline uint64_t net_spin_window(uint64_t spin, uint64_t limit)
{
    if (unlikely(net_cur.spin_until)) {
        uint64_t now = net_now_ns();
        if (now < net_cur.spin_until && net_cur.spin_until - now > spin)
            spin = net_cur.spin_until - now;
        else if (now >= net_cur.spin_until)
            net_cur.spin_until = 0;
    }
    return spin < limit ? spin : limit;
}

/* ns since the wait's first clock read (which this may be). */
static inline uint64_t net_clock_since(struct net_wait_clock *c)
{
    uint64_t now = net_now_ns();
    if (!c->t0)
        c->t0 = now;
    return now - c->t0;
}

#endif
