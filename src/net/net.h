/*
 * net.h - the node-to-node transport: byte frames between the node
 * processes of one job.
 *
 * A job has N nodes, numbered 0..N-1; each node is one OS process with one
 * scheduler thread (architecture decision 1, docs/architecture.md), so a process has at most one
 * transport and the calls below take no handle and no lock.  The layer
 * knows nothing of messages or tids: callers hand it byte strings (a
 * message's serialised form, msg_buf_serialize) and get byte strings back.
 *
 * The interface is the same for every implementation; which one runs is
 * chosen once, at net_init_*: the shared-memory one for the nodes a
 * launcher forks on one host (shm.c, net_init_shm), or, for the ranks of an
 * MPI job on several hosts (net_init_mpi; architecture decisions 8 and 11),
 * MPI point-to-point between hosts (mpi.c) and the same shared memory
 * between the ranks of one host (hybrid.c), the path chosen per
 * destination.  Callers of net_send / net_poll / net_wait do not change.
 *
 * Contract, for every implementation:
 *   - net_send copies the frame: the caller may reuse its bytes at once.
 *     net_sendv is net_send of the concatenation of its pieces, copied
 *     from where they lie straight into the path (no intermediate buffer):
 *     a frame header and a message's data need not be put together first.
 *     It never blocks.  -EAGAIN means the path to dst is full: poll (the
 *     peer may be waiting for us to drain its frames), wait, retry.
 *   - Frames of any size up to NET_FRAME_MAX are carried.  A frame larger
 *     than what the path holds is accepted whole and its tail is kept in a
 *     per-destination backlog (one frame at most) that the transport pushes
 *     from every net_send / net_poll / net_wait / net_flush; while a backlog
 *     is pending, sends to that destination return -EAGAIN.
 *   - Frames from one sender are delivered in the order they were sent
 *     (pairwise FIFO), each exactly once, intact.  No order holds between
 *     different senders.
 *   - net_poll hands each frame to a callback; the bytes are valid only
 *     until it returns (they may lie in the shared ring itself).  The
 *     callback may call net_send, not net_poll.
 *   - net_wait puts an idle node to sleep following the idle policy; a
 *     frame sent to it, ring space freed for its backlog, or net_wake
 *     wakes it.  A send to an awake node costs no system call.
 *   - A dead peer is not detected here: frames to it pile up until its path
 *     is full (-EAGAIN), frames to the others keep flowing.  Noticing the
 *     death (waitpid, pvm_notify) belongs to the node layer.
 *
 * Errors are negative errno values.
 */
#ifndef UPVM_NET_NET_H
#define UPVM_NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/compiler.h"

/* The largest frame carried (a PVM message's serialised form is smaller). */
#define NET_FRAME_MAX ((size_t)1 << 31)

/* How an idle node waits in net_wait. */
typedef enum net_idle {
    NET_IDLE_SPIN,      /* poll until something comes: lowest latency, a core */
    NET_IDLE_BLOCK,     /* sleep in the kernel at once: no CPU while idle */
    NET_IDLE_ADAPTIVE,  /* spin a while, then sleep (the default) */
} net_idle_t;

/* How the ranks of one host reach each other in a job of MPI ranks. */
typedef enum net_local {
    NET_LOCAL_SHM,      /* shared memory, as nodes forked by one launcher (the default) */
    NET_LOCAL_MPI,      /* MPI, as ranks on different hosts */
} net_local_t;

typedef struct net_config {
    size_t ring_bytes;  /* shm: bytes of ring per ordered node pair; MPI: a quarter
                           of the bytes in flight to one node (net_path_budget) */
    net_idle_t idle;
    uint64_t spin_ns;   /* adaptive: how long to spin before sleeping, at least */
    uint64_t spin_max_ns; /* adaptive: at most (below spin_ns: spin_ns) */
    net_local_t local;  /* net_init_mpi / net_start_mpi: ranks of one host (0: shm) */
} net_config_t;

#define NET_RING_DEFAULT   ((size_t)1 << 20)
#define NET_RING_MIN       ((size_t)4096)
#define NET_RING_MAX       ((size_t)1 << 30)
#define NET_SPIN_NS_DEFAULT 5000u
#define NET_SPIN_MAX_NS_DEFAULT 100000u

/*
 * The defaults, overridden by the environment: UPVM_NET_RING (a size,
 * "1M"), UPVM_NET_IDLE (spin, block, adaptive), UPVM_NET_SPIN_NS,
 * UPVM_NET_SPIN_MAX_NS, UPVM_NET_LOCAL (shm, mpi).  A bad value of any
 * ends the process (util/env.h); net_config_from_env returns -EINVAL only
 * in tests (env_test_keep_going).
 *
 * adaptive: a wait spins for a window of spin_ns (5 µs) to spin_max_ns
 * (100 µs), then sleeps.  The window follows the traffic: when a sleep
 * ended soon (the answer came within spin_max_ns / 2, as with large
 * messages, which take long to copy), it grows to twice that gap, so that
 * such waits spin through; a long sleep or short gaps shrink it again.
 * Read through util/env.h: -EINVAL for a value that does not parse or is
 * out of range (said once on stderr; c still gets the defaults), which
 * the launcher takes as a reason not to start the nodes.
 */
HIDDEN int net_config_from_env(net_config_t *c);

/* ------------------------------------------------ shared memory, one host */

typedef struct net_shm_seg net_shm_seg_t;

/*
 * net_shm_create - the launcher, before it forks the nodes: one shared
 * segment holding every ring of a job of nnodes nodes (ring size from
 * cfg, NULL = net_config_from_env).  The segment is a memfd (an anonymous
 * MAP_SHARED mapping where memfd_create is refused): it has no name in any
 * file system, so nothing is left behind, whatever way the processes die.
 * Errors: -EINVAL (nnodes < 1 or above 4096, bad size), -ENOMEM, errno of
 * memfd_create / ftruncate / mmap.
 */
HIDDEN int net_shm_create(int nnodes, const net_config_t *cfg, net_shm_seg_t **out);

/* The segment's fd (close-on-exec; -1 for the anonymous fallback), for a
 * node that execs: it passes the fd on and calls net_init_shm_fd. */
HIDDEN int net_shm_fd(const net_shm_seg_t *seg);

/* A node forked by the launcher, after net_init_shm: the handle goes, the
 * mapping (the transport's) stays. */
HIDDEN void net_shm_drop_handle(net_shm_seg_t *seg);

/* The launcher's handle goes: unmaps and closes in this process only. */
HIDDEN void net_shm_destroy(net_shm_seg_t *seg);

/*
 * net_init_shm - this process becomes node `node` of seg's job (a forked
 * child: the mapping is inherited).  cfg gives the idle policy (NULL =
 * environment); the ring size is the segment's.  -EBUSY if a transport is
 * already up, -EINVAL for a bad node.
 */
HIDDEN int net_init_shm(net_shm_seg_t *seg, int node, const net_config_t *cfg);

/* The same after exec: maps the segment from fd (which stays open). */
HIDDEN int net_init_shm_fd(int fd, int node, const net_config_t *cfg);

/* ------------------------------------------------------ MPI, several hosts */

/*
 * net_init_mpi - this process becomes node `rank` of a job of `size` nodes,
 * its rank and size in MPI_COMM_WORLD.  Frames to the ranks of other hosts
 * go by MPI point-to-point (mpi.c); frames to the ranks of this host
 * through a shared-memory ring, as between forked nodes (shm.c, in
 * hybrid.c), unless cfg->local is NET_LOCAL_MPI (UPVM_NET_LOCAL=mpi): then
 * every frame goes by MPI.  The ranks of one host are those the MPI
 * library puts together (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED): hosts
 * emulated on one machine stay apart.  The lowest of them creates the
 * segment (a memfd), the others open it through /proc/<pid>/fd/<fd>; where
 * one of them cannot (a hardened /proc, no memfd), every frame of that
 * host goes by MPI and one line on stderr says why.  Each pair of nodes
 * uses one path for good (net_path says which), so pairwise FIFO holds.
 * src/net/README.md says how each path meets the contract.  cfg as for
 * net_init_shm (NULL = environment): ring_bytes is the size of a shared
 * ring, and by MPI bounds the bytes in flight to one destination (sent,
 * not yet known to be received); the idle policy says how net_wait waits.
 *
 * The caller initialises MPI first (MPI_Init_thread with at least
 * MPI_THREAD_FUNNELED) and calls MPI_Finalize after net_fini; every rank of
 * MPI_COMM_WORLD calls net_init_mpi (it duplicates MPI_COMM_WORLD, a
 * collective call, so that the transport's tags never meet anyone else's
 * messages) and net_fini.  With MPI_THREAD_FUNNELED the net_* calls, but
 * net_wake of this node, come from the thread that initialised MPI (the
 * scheduler thread); with SERIALIZED or MULTIPLE, from one thread at a time.
 *
 * net_wake(this node) may come from any thread, as with shm, and so may
 * net_wake of a node of this host reached through shared memory.  net_wake
 * of a node reached by MPI sends it a message, so it belongs to the
 * scheduler thread; from another thread it is handed to the scheduler
 * thread (which is woken) and sent at its next net_* call.
 *
 * Through shared memory the contract holds as with net_init_shm.  By MPI,
 * with what MPI makes of three of its words: a send costs what an
 * MPI_Isend costs (a system call over TCP); net_sendv copies its pieces
 * once, into the buffer MPI sends from; a dead rank is MPI's to handle
 * (Open MPI ends the job; otherwise calls return -EIO).  And MPI cannot
 * wake a sleeping node: with block and adaptive, net_wait sleeps between
 * probes (up to a tenth of the time waited, 10 ms at most), so a frame
 * from another host to a sleeping node waits for its next probe (a frame
 * from this host wakes it at once: it sleeps on its futex word in the
 * shared segment).  An idle node thus costs well under 1% of a core.
 *
 * Membership with MPI: the job is MPI_COMM_WORLD, fixed at start.  Every
 * rank is NET_PEER_UP, net_events never changes (0), net_board is NULL
 * (the shared segment of a host has none), net_request_start answers
 * -EBUSY (no absent slot to start; -EINVAL out of range) and
 * net_peer_status 0.
 *
 * Errors: -EBUSY (a transport is up), -EINVAL (MPI not initialised, already
 * finalised, or below MPI_THREAD_FUNNELED, or not called from the main
 * thread under FUNNELED), -ENOMEM, -EIO (MPI_Comm_dup or the split of the
 * ranks by host failed), -ENOSYS
 * (this build has no MPI transport: no MPI library was found, or
 * UPVM_WITH_MPI=OFF).  Once up, net_send / net_poll may also return -EIO
 * when MPI reports an error (said once on stderr).
 */
HIDDEN int net_init_mpi(const net_config_t *cfg);

/*
 * net_start_mpi - net_init_mpi for a process an MPI launcher started (one
 * rank of `mpirun -np K`): initialises MPI first when nobody has
 * (MPI_THREAD_FUNNELED, from the calling thread, which becomes the one that
 * calls MPI), and net_fini then finalises it (MPI_Finalize waits for every
 * rank to finalise).  In libupvm the transport is a plugin,
 * libupvm-mpi.so beside libupvm.so (mpi_load.c), that this call loads:
 * a program that never runs under a launcher never loads MPI (linking it
 * made a job start twice as slowly).  The errors of net_init_mpi, and
 * -ELIBACC when the plugin cannot be loaded (said on stderr, with
 * dlopen's reason); -EIO when MPI_Init_thread fails.
 */
HIDDEN int net_start_mpi(const net_config_t *cfg);

/* Did net_start_mpi / net_init_mpi load the object at path (the plugin,
 * MPI's libraries, the components MPI_Init opened)?  Such objects are the
 * transport's: no ULP code uses them, and hosts may load different ones
 * (migration compares the others' layouts).  False without MPI. */
HIDDEN bool net_mpi_loaded_object(const char *path);

/* Tests only: frames above `bytes` go as one MPI message of a derived
 * datatype made of `bytes`-byte blocks, as frames above INT_MAX bytes (MPI
 * counts are ints) always do (in blocks of 1 GiB); 0 restores that.  Lets
 * a test exercise that path with frames that fit in a test's memory. */
HIDDEN void net_mpi_set_block(size_t bytes);

/* Tests only: rank's pretend host number from UPVM_TEST_NET_HOSTS
 * ("0,0,1": rank 2 on a host of its own; ranks past the list's end on its
 * last one; unset: 0), which mpi.c applies within what MPI says is one
 * host (a test on one machine makes ranks "remote" so). */
HIDDEN int net_mpi_test_host(int rank);

/* ------------------------------------------------------------ membership */

/* Membership is shm's: a launcher forks the nodes and writes their states
 * into the segment.  With MPI every node is UP for good (net_init_mpi),
 * those of one host sharing memory included. */

/* What the launcher says of a node: not started (yet), asked for by a node
 * (net_request_start), running, gone (it ended or died; its slot is never
 * reused: its rings may hold leftovers). */
enum net_peer_state { NET_PEER_ABSENT, NET_PEER_STARTING, NET_PEER_UP, NET_PEER_GONE };

/* The launcher: record node's state (and, for GONE, its exit status or
 * 128 + signal) and wake every node, so that each sees the change at its
 * next poll or wait (net_events changes). */
HIDDEN void net_shm_set_state(net_shm_seg_t *seg, int node, enum net_peer_state state,
                              int status);
/* The launcher, before it forks: it keeps every slot's state (UP before a
 * node runs there, ABSENT for a slot never used or used again), so a node
 * looks only at the rings of slots that are not ABSENT (a persistent VM
 * has dozens of empty ones).  Without it, every slot's rings are looked
 * at, whatever its state says. */
HIDDEN void net_shm_keep_states(net_shm_seg_t *seg);

/* The launcher: a node's state; the number of node slots. */
HIDDEN enum net_peer_state net_shm_state(net_shm_seg_t *seg, int node);
HIDDEN int net_shm_nslots(net_shm_seg_t *seg);

/* A node: ask for the ABSENT slot `node` to be started (the caller then
 * tells the launcher).  0, -EBUSY (not absent), -EINVAL. */
HIDDEN int net_request_start(int node);
/*
 * Slots used again (a persistent VM, where programs join and leave as
 * nodes: node/vm.h).  A slot that is GONE may be given to a new node once
 * no node touches its rings any more:
 *   1. every node, having delivered what the gone node had sent it, calls
 *      net_peer_forget(node): nothing more is read from it or kept for it;
 *   2. when all have (node 0 counts them), node 0 calls
 *      net_request_recycle(node) and tells the launcher (SIGUSR1);
 *   3. the launcher, net_shm_recycle: zeroes the slot's rings both ways
 *      and its board, and marks it ABSENT (every node is woken);
 *   4. every node that sees the slot ABSENT again calls net_peer_reset:
 *      its side of those rings starts afresh, as for a slot never used.
 * The MPI transport never reuses a rank: there these do nothing
 * (net_request_recycle: -EOPNOTSUPP).  net_shm_recycle: 0, -EINVAL, -EBUSY
 * (not GONE, or recycling not asked for).
 */
HIDDEN void net_peer_forget(int node);
HIDDEN int net_request_recycle(int node);
HIDDEN void net_peer_reset(int node);
HIDDEN int net_shm_recycle(net_shm_seg_t *seg, int node);
HIDDEN bool net_shm_recycle_asked(net_shm_seg_t *seg, int node);

/* A node: a GONE node's exit status (128 + signal when killed). */
HIDDEN int net_peer_status(int node);

/* A node: the state of node (ABSENT before init or out of range; UP with
 * MPI), and a
 * counter that changes whenever any node's state does (one cheap load:
 * compare with the last value seen, poll the states when it differs). */
HIDDEN enum net_peer_state net_peer_state(int node);
HIDDEN uint32_t net_events(void);

/*
 * A warning every node of a job may meet (a limit they share), said once
 * per job: net_job_once(what) is true for the first caller of the job with
 * that `what`, false for every later one, on any node.  The bits live in
 * the shared segment of nodes forked by one launcher; without one (a job
 * of one node before the transport, MPI ranks) they are this process's.
 */
enum net_once {
    NET_ONCE_MAP_LIMIT,   /* proc: the kernel's mapping limit (vm.max_map_count) */
};
HIDDEN bool net_job_once(enum net_once what);

/*
 * Boards: NET_BOARD_BYTES of the segment per node slot, zero at first,
 * that the transport itself never touches.  By convention node n alone
 * writes board n; anyone may read it, and it outlives node n (the segment
 * lives while any process of the job maps it), so it holds what the
 * others must still know after n dies (node/board.h).  net_board: a node's
 * view (NULL before init, out of range, or with no shared segment);
 * net_shm_board: the launcher's.
 */
#define NET_BOARD_BYTES ((size_t)8192)
HIDDEN void *net_board(int node);
HIDDEN void *net_shm_board(net_shm_seg_t *seg, int node);

/* ------------------------------------------------------------ every one */

/* Tears the transport down (pending backlogs are dropped). */
HIDDEN void net_fini(void);

/* This node's number and the job's node count (-1 / 0 before init). */
HIDDEN int net_node(void);
HIDDEN int net_nnodes(void);

/*
 * net_send - queue one frame of len bytes (len may be 0) for node dst.
 * 0: accepted (all of it, or the start of it and the rest in the backlog).
 * -EAGAIN: nothing accepted, the path is full.  -EINVAL: dst is not a
 * peer (out of range or this node).  -EMSGSIZE: len > NET_FRAME_MAX.
 * -ENOMEM: no memory for the backlog.
 */
HIDDEN int net_send(int dst, const void *data, size_t len);

/* The most pieces of one net_sendv frame. */
#define NET_IOV_MAX 8

/*
 * net_sendv - net_send of one frame made of iovcnt pieces (1..NET_IOV_MAX,
 * any of them empty), in order: the receiver gets one frame of their
 * total length, exactly as if they had been concatenated and sent with
 * net_send (the same FIFO, -EAGAIN and backlog rules; frames sent with
 * either call keep their order).  Each byte is copied once, from its piece
 * into the path (bytes that go to the backlog: into the backlog).
 * -EINVAL also for iovcnt out of range; -EMSGSIZE when the total exceeds
 * NET_FRAME_MAX.
 */
HIDDEN int net_sendv(int dst, const struct iovec *iov, int iovcnt);

/* Called once per received frame; data is valid until it returns. */
typedef void (*net_handler_fn)(void *ctx, int src, const void *data, size_t len);

/*
 * net_poll - deliver up to max received frames (max <= 0: all there are),
 * and push pending backlogs.  Returns the number delivered, or -ENOMEM
 * (no memory to reassemble a fragmented frame; it stays queued).
 */
HIDDEN int net_poll(net_handler_fn fn, void *ctx, int max);

/*
 * net_wait - idle until a frame may be there, backlog space may have
 * freed, net_wake was called for this node, or timeout_ns passed (< 0:
 * no limit; 0: just look).  Returns 1 when woken (a hint: poll, then wait
 * again if nothing came), 0 on timeout.
 */
HIDDEN int net_wait(int64_t timeout_ns);

/*
 * net_spin_until - until deadline_ns (CLOCK_MONOTONIC), net_wait spins
 * instead of sleeping, whatever the idle policy: for an exchange whose
 * next frame is due within microseconds (a migration's round trips),
 * where a sleep and a wake-up on each side cost more than the work.
 */
HIDDEN void net_spin_until(uint64_t deadline_ns);

/* Wake node `node` from net_wait (or make its next net_wait return at
 * once).  It may be this node (from a signal handler, say). */
HIDDEN void net_wake(int node);

/* Push pending backlogs: 0 when none is left, -EAGAIN otherwise. */
HIDDEN int net_flush(void);

/* How frames to node dst go: through a shared-memory ring, or by MPI (for
 * tests and diagnostics).  -EINVAL: dst is not a peer; -ENOTCONN: no
 * transport up. */
enum net_path { NET_PATH_SHM = 1, NET_PATH_MPI = 2 };
HIDDEN int net_path(int dst);

/* How many bytes of frames to dst may be on their way (sent, not yet known
 * taken) before net_send says the path is full: what a sender that wants
 * its stream to flow (a migration's window) may keep outstanding.  A shm
 * ring: its size.  By MPI: NET_MPI_BUDGET_FACTOR times that: a network's
 * round trip is 10-100 times a ring's, and 1 MiB in flight kept a move
 * between hosts at half the link's speed (bench/hosts-compare.sh).  0: dst
 * is not a peer, or no transport is up. */
#define NET_MPI_BUDGET_FACTOR 4u
HIDDEN size_t net_path_budget(int dst);

#endif /* UPVM_NET_NET_H */
