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

#include <stdatomic.h>
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
    int (*path)(int node);     /* net_path: NET_PATH_*, node in range, not this one */
    /* slots used again (optional: NULL where slots are never reused) */
    void (*forget)(int node);
    int (*request_recycle)(int node);
    void (*reset)(int node);
};

struct net_running {
    const struct net_ops *ops; /* NULL: no transport up */
    int node, nnodes;
    net_config_t cfg;
    uint64_t spin_until;       /* net_spin_until */
    /* net_events' counter (a pointer, not an op: it is read on every
     * scheduler round, where one load must do); NULL: never changes */
    const _Atomic uint32_t *events;
    _Atomic uint32_t *once;    /* net_job_once's bits, job-wide; NULL: none */
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

/*
 * What the MPI transport (mpi.c) gives the hybrid (hybrid.c), which
 * libupvm runs above it: mpi.c is a plugin there (mpi_load.c), and this is
 * the whole of what crosses between them besides net_cur.  Filled by the
 * plugin's entry once MPI is up and mpi.c's ops are installed in net_cur
 * (every frame by MPI); valid until net_fini.
 */
struct net_mpi_part {
    uint32_t size;                  /* in: sizeof, so that a mismatched plugin refuses */
    const struct net_ops *ops;      /* mpi.c's, in net_cur.ops now */
    /* The ranks of this host, as the MPI library tells them apart
     * (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED, on the transport's
     * communicator): local rank i of local_size is node local_ranks[i],
     * in ascending order. */
    int local_rank, local_size;
    const int *local_ranks;
    /* Collective in that group (every rank of it calls); 0 or -EIO. */
    int (*local_bcast)(void *buf, int len, int root); /* root: a local rank */
    int (*local_max)(int *v);       /* an allreduce (MAX) in place; a barrier too */
    /* For a composite's net_wait, which sleeps itself: */
    void (*use_word)(_Atomic uint32_t *w); /* wake this node on w (a futex word in a
                                              shared mapping; NULL: mpi.c's own) */
    bool (*look)(void);             /* a pending wake, freed space, a frame: one probe */
    uint64_t (*busy_spin)(void);    /* adaptive: spin at least this long (a transfer needs us) */
    uint64_t (*nap_ns)(uint64_t now, uint64_t t0); /* the next sleep of a wait begun at t0 */
    void (*slept)(uint64_t asked, uint64_t took);  /* a sleep nobody woke (its real length) */
    uint64_t (*spin_after_sleep)(uint64_t gap);    /* adaptive: the window after a sleep that
                                                      a probe ended after gap ns */
};

/* The MPI plugin's one entry (mpi_load.c loads it, mpi.c defines it):
 * libupvm's state, start (net_start_mpi) or join (net_init_mpi), cfg
 * resolved; on success *part is filled.  The name carries the version of
 * this interface: a plugin of another build is not loaded. */
typedef int net_mpi_plugin_fn(struct net_running *cur, int start, const net_config_t *cfg,
                              struct net_mpi_part *part);
#define NET_MPI_PLUGIN_ENTRY "upvm_net_mpi_plugin_v2"
#ifdef UPVM_NET_MPI_PLUGIN
__attribute__((visibility("default"))) net_mpi_plugin_fn upvm_net_mpi_plugin_v2;
#else
/* The same without a plugin: mpi_load.c in libupvm (it loads the plugin),
 * mpi.c where it is linked in (tests, benchmarks). */
HIDDEN int net_mpi_enter(int start, const net_config_t *cfg, struct net_mpi_part *part);
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

/* A wait's limit in ns (UINT64_MAX: none) from its timeout (< 0: none). */
static inline uint64_t net_wait_limit(int64_t timeout_ns)
{
    return timeout_ns < 0 ? UINT64_MAX : (uint64_t)timeout_ns;
}

/* How long the idle policy spins before a wait sleeps: spin, all of it;
 * adaptive, the transport's window win; block, not at all. */
static inline uint64_t net_policy_spin(uint64_t limit, uint64_t win)
{
    net_idle_t idle = net_cur.cfg.idle;
    return idle == NET_IDLE_SPIN ? limit : idle == NET_IDLE_ADAPTIVE ? win : 0;
}

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

/*
 * shm.c inside the hybrid (hybrid.c): one instance per process, as for
 * net_init_shm, in the segment's own node numbers (local ranks 0..n-1),
 * which the hybrid translates; it installs no ops and leaves net_cur
 * alone (the configuration is net_cur.cfg).  The ops are shm.c's own,
 * called directly.
 */
HIDDEN int shm_part_init(net_shm_seg_t *seg, int node); /* the mapping becomes shm.c's */
HIDDEN int shm_part_init_fd(int fd, int node);           /* maps it (fd stays open) */
HIDDEN int shm_sendv(int dst, const struct iovec *iov, int iovcnt, size_t len);
HIDDEN int shm_poll(net_handler_fn fn, void *ctx, int max);
HIDDEN int shm_flush(void);
HIDDEN void shm_wake(int node);
HIDDEN void shm_fini(void);                              /* unmaps */
HIDDEN bool shm_look(void);              /* a pending wake, a frame, freed space */
HIDDEN int shm_sleep_until(uint64_t deadline); /* FUTEX_WAIT (deadline 0: none); 1: woken */
HIDDEN _Atomic uint32_t *shm_word(void); /* this node's futex word, in the segment */
HIDDEN uint64_t shm_adapt_after_spin(uint64_t win, struct net_wait_clock *c);
HIDDEN uint64_t shm_adapt_after_sleep(uint64_t win, uint64_t gap);

#endif
