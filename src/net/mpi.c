/*
 * mpi.c - the MPI transport: every frame is one MPI point-to-point message
 * between the ranks of an MPI job, one node per rank (architecture decisions 8
 * and 11: nodes on several hosts, started by mpirun / srun).
 *
 * Communicator and tags.  net_init_mpi duplicates MPI_COMM_WORLD, so that
 * no message of the program's own (or of a library's) can ever match ours.
 * Frames go with one tag, TAG_FRAME: MPI's non-overtaking rule (messages
 * from one sender on one communicator with one tag match in the order they
 * were sent) is then net.h's pairwise FIFO.  net_wake of another node is an
 * empty message with TAG_WAKE, never handed to the callback.
 *
 * Sending never blocks: the pieces are copied into one buffer (the only
 * copy on our side; the caller may reuse its bytes at once) that goes with
 * MPI_Isend; its request is kept and tested on later calls, which free the
 * buffer.  A frame above INT_MAX bytes (MPI counts are ints) goes as one
 * message of a derived datatype made of 1 GiB blocks (frame_type).
 *
 * Flow control.  An eager send (a small message) completes as soon as MPI
 * has buffered it, so completed sends say nothing of what the receiver
 * took: a sender could bury a node that does not poll under frames, all in
 * its MPI library's memory.  So each destination has a budget
 * (net_path_budget: NET_MPI_BUDGET_FACTOR shm rings) of frames sent and
 * not known to be received, each frame counting its length + FRAME_COST.
 * Every budget / 2 of them, a frame goes with MPI_Issend instead (a
 * "marker"): it completes only once the receiver has started receiving it, and since
 * frames match in order, so has every frame before it; its completion
 * gives back all that budget.  While a marker is outstanding and the next
 * frame does not fit, or TX_MAX_PER_DST sends to that node are not
 * complete, net_send returns -EAGAIN: the contract's "path full", so the
 * callers' retry and backlog logic works unchanged; the contract's
 * backlog is just "in flight".  A frame larger than the budget is accepted
 * when nothing is outstanding, as shm accepts one larger than its ring.
 *
 * Receiving: MPI_Improbe matches the next message from any source, and
 * MPI_Imrecv receives it into a buffer that is handed to the callback.  A
 * large one (rendezvous protocol) may not complete at once: it waits in a
 * list, in match order, and so do the later frames of the same sender, so
 * that FIFO holds; other senders' frames go past.
 *
 * Idling.  MPI has no blocking wait that another thread can interrupt, and
 * its blocking calls spin.  So net_wait probes (MPI_Improbe, which also
 * moves MPI's transfers on), and between probes spins (NET_IDLE_SPIN), or
 * sleeps in FUTEX_WAIT for a tenth of the time waited so far, 20 µs to
 * 10 ms (NET_IDLE_BLOCK: ~0.6% of a core over a 2 s wait), or spins for
 * the adaptive window first (NET_IDLE_ADAPTIVE; its rules differ from
 * shm.c's, see adapt_after_sleep).  MPI moves a large message's data only
 * while both sides call it: while one is under way the sleeps stay under
 * BACKOFF_BUSY_NS, and adaptive spins instead (BUSY_SPIN_NS).  A timed
 * sleep costs much more here than a futex wake in shm.c: ~30 µs of CPU
 * and 60-150 µs of wall time on our VMs, whatever it asked for.  The
 * sleep itself waits on the process's sockets too (the doorbell, below):
 * over TCP a frame from another host ends it at once.
 *
 * net_wake of this node, from any thread, sets the futex word and wakes
 * the sleep at once; net_wake of another node is a TAG_WAKE message, which
 * only the thread that calls MPI sends (mpi_wake).
 */
#define _GNU_SOURCE
#include "net/net_impl.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <linux/futex.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/copy.h"
#include "util/env.h"

enum { TAG_FRAME = 1, TAG_WAKE = 2 };
enum { W_AWAKE = 0, W_SLEEPING = 1, W_WAKE_PENDING = 2 };

#define FRAME_COST 64        /* budget a frame takes beyond its bytes (MPI's envelope) */
#define TX_MAX_PER_DST 512   /* incomplete sends to one node: Testsome's work is linear */
#define TX_TEST_AT 16        /* net_send tests earlier sends from this many on */

/* Sleeps between probes (backoff).  Each costs ~30 µs of CPU on the VMs we
 * measure on (a timed FUTEX_WAIT and its wake-up), a probe 0.1 µs (shared
 * memory) to 7 µs (TCP).  A sleep lasts a tenth of the time the wait has
 * lasted so far, from 20 µs to 10 ms: a frame is late by at most a tenth
 * of the time it was waited for (a ping-pong whose sides both sleep stays
 * within ~10% of its own pace instead of drifting to the longest sleep),
 * and a long idle wait costs a probe per 10 ms (~0.4% of a core). */
#define BACKOFF_MIN_NS 20000u
#define BACKOFF_SHARE 10u
#define BACKOFF_LONG_NS 10000000u
#define BACKOFF_BUSY_NS 100000u  /* a transfer under way needs our calls */
#define BUSY_BYTES 16384     /* a send this large may need us (rendezvous) */
/* Adaptive: a wait spins up to this long while a large frame comes in or
 * goes out: MPI moves its data only while both sides call it, and a sleep
 * on either side stalls it (1 MiB ping-pong over shared memory: 170 µs
 * spinning, 400-900 µs sleeping between probes).  A send that the peer
 * does not take for long thus costs up to this much spinning per wait. */
#define BUSY_SPIN_NS 10000000u
#define SPIN_CHECK 8         /* probes before a spin reads the clock */
#define RX_MIN 4096          /* the receive buffer's smallest size */
#define RX_KEEP ((size_t)1 << 20) /* a larger receive buffer goes after its frame */
#define BLOCK_DEFAULT ((size_t)1 << 30)
#define FINI_NS 1000000000ull /* net_fini waits this long for sends in flight */

/* Per destination: the budget of net_send (top comment). */
struct peer {
    size_t unacked;      /* charged, not known received: up to the last marker */
    size_t since_marker; /* of which after the last marker */
    int ntx;             /* sends to it not complete */
};

/* A send not known to be complete; its request is in node_mpi.reqs. */
struct tx {
    uint8_t *buf;  /* the frame's copy (NULL: empty, or a wake) */
    size_t len;
    size_t covers; /* a marker: the budget its completion gives back */
    int dst;
};

/* A frame matched and not delivered yet (its receive not complete, or an
 * earlier frame of its sender's not delivered). */
struct rx {
    struct rx *next;
    MPI_Request req;
    uint8_t *buf;
    size_t len;
    int src;
};

static struct {
    MPI_Comm comm;
    pthread_t sched;          /* the thread that calls MPI (net_wake from others) */
    struct peer *peers;
    size_t budget;            /* per destination (top comment) */
    /* sending: reqs[i] is txs[i]'s request (MPI_Testsome wants an array) */
    MPI_Request *reqs;
    struct tx *txs;
    int *done;                /* MPI_Testsome's indices */
    int ntx, txcap;
    bool want_space;          /* a send got -EAGAIN ... */
    bool space_freed;         /* ... and a send completed since: net_wait returns */
    /* receiving */
    bool held;                /* a message matched (MPI_Improbe), not received */
    MPI_Message held_msg;
    MPI_Status held_st;
    struct rx *rx_head, **rx_tail, *rx_spare;
    int *rx_npend;            /* per source: its frames in the rx list */
    uint32_t *rx_blocked, rx_gen; /* sources with an incomplete frame, this pass */
    bool delivering;          /* deliver_queued is walking the rx list */
    uint8_t *scratch;         /* the receive buffer */
    size_t scratch_cap;
    /* waking */
    _Atomic uint32_t *word;   /* W_*: the scheduler's futex word: own_word, or in a
                                 hybrid its slot in the host's segment (use_word) */
    _Atomic uint32_t own_word;
    int futex_private;        /* FUTEX_PRIVATE_FLAG for own_word, 0 for a shared one */
    _Atomic uint8_t *wake_req; /* net_wake of another node from another thread */
    _Atomic int any_wake_req;
    uint64_t spin_win;        /* adaptive: how long a wait spins now */
    int64_t oversleep;        /* how much longer than asked the shortest sleeps last */
    bool said_error;
    /* the ranks of this host (MPI_Comm_split_type): the hybrid's (hybrid.c) */
    MPI_Comm local;
    int local_rank, local_size;
    int *local_ranks;         /* by local rank: node numbers */
} node_mpi;

static bool started_mpi; /* MPI_Init was ours (mpi_start): net_fini finalises */

/* Frames above `split` bytes go as `block`-byte blocks (net_mpi_set_block). */
static size_t frame_split = INT_MAX, frame_block = BLOCK_DEFAULT;

void net_mpi_set_block(size_t bytes)
{
    if (bytes && bytes < 4096)
        bytes = 4096; /* (a block count must fit an int) */
    frame_split = bytes && bytes < INT_MAX ? bytes : INT_MAX;
    frame_block = bytes && bytes < BLOCK_DEFAULT ? bytes : BLOCK_DEFAULT;
}

/* An MPI call failed (with node peer; -1: any): said once (the job is
 * likely broken), -EIO. */
static int mpi_failed(const char *call, int rc, int peer)
{
    if (!node_mpi.said_error) {
        char why[MPI_MAX_ERROR_STRING], with[32] = "";
        int n = 0;
        node_mpi.said_error = true;
        if (MPI_Error_string(rc, why, &n) != MPI_SUCCESS)
            snprintf(why, sizeof why, "MPI error %d", rc);
        if (peer >= 0)
            snprintf(with, sizeof with, " with node %d", peer);
        fprintf(stderr, "upvm: net (MPI transport, node %d): %s%s failed: %s; the MPI job is "
                        "probably broken (later errors are not said)\n",
                net_cur.node, call, with, why);
    }
    return -EIO;
}

/*
 * The datatype and count of a frame of len bytes: len x MPI_BYTE while len
 * fits an int; else one element of a struct type of whole blocks and the
 * rest (committed: the caller frees it once the call that uses it has
 * started, which MPI allows).  The type signature is len bytes either way,
 * so the receiver rebuilds it from the length alone.
 */
static int frame_type(size_t len, MPI_Datatype *t, int *count)
{
    if (len <= frame_split) {
        *t = MPI_BYTE;
        *count = (int)len;
        return MPI_SUCCESS;
    }
    size_t q = len / frame_block, r = len % frame_block;
    MPI_Datatype block;
    int rc = MPI_Type_contiguous((int)frame_block, MPI_BYTE, &block);
    if (rc != MPI_SUCCESS)
        return rc;
    int lens[2] = {(int)q, (int)r};
    MPI_Aint disp[2] = {0, (MPI_Aint)(q * frame_block)};
    MPI_Datatype types[2] = {block, MPI_BYTE};
    rc = MPI_Type_create_struct(r ? 2 : 1, lens, disp, types, t);
    MPI_Type_free(&block);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(t)) != MPI_SUCCESS)
        MPI_Type_free(t);
    *count = 1;
    return rc;
}

static void type_done(MPI_Datatype *t)
{
    if (*t != MPI_BYTE)
        MPI_Type_free(t);
}

/* ------------------------------------------------------------- sleeping */

/*
 * The doorbell.  MPI has no wait that a message ends, nor a descriptor to
 * wait on.  But over TCP (Open MPI's btl tcp, MPICH's tcp netmods) every
 * frame from another host arrives on a socket of this process, and a
 * socket can be waited on.  So a node that sleeps on its own word (not a
 * hybrid's) sleeps in ppoll on the process's sockets and an eventfd that
 * wake_self writes: a frame from another host ends the sleep within the
 * kernel's wake-up time, not at the end of a backoff sleep of up to 10 ms
 * (a move to an idle node of another host took 1.9 ms instead of 0.3).
 * The sleep keeps its timeout (the backoff), so over a transport without
 * sockets (shared memory, InfiniBand), or from a socket not seen yet,
 * nothing changes but the timeout's accuracy.
 *
 * Which sockets: those open when a sleep scans /proc/self/fd, at the first
 * sleep and again (at most every DOOR_RESCAN_NS) when a sleep ran out and
 * a probe then found a frame: MPI connects lazily, and a new connection is
 * a new socket.  Sockets that are not MPI's (the launcher's, PMIx's, a
 * task's own) may end a sleep for nothing; one that is still readable
 * after the probe that followed (nobody here reads it) DOOR_USELESS times
 * in a row is left out until the next scan, so a socket with data nobody
 * reads (or a hung-up one) cannot turn sleeping into spinning.
 */
#define DOOR_MAX 64                  /* sockets waited on */
#define DOOR_USELESS 4
#define DOOR_RESCAN_NS 50000000ull

enum nap_end { NAP_TIMEOUT, NAP_WOKEN, NAP_SOCKET };

static struct {
    int efd;                      /* -1: no doorbell (a hybrid's word, no eventfd) */
    struct pollfd fds[DOOR_MAX + 1]; /* [0]: efd, then the sockets */
    uint8_t useless[DOOR_MAX + 1];
    int n;                        /* sockets */
    bool scan;                    /* scan before the next sleep */
    uint64_t scanned_at;
} door = {.efd = -1};

static void door_open(void)
{
    door.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    door.n = 0;
    door.scan = true;
    door.scanned_at = 0;
}

static void door_close(void)
{
    if (door.efd >= 0)
        close(door.efd);
    door.efd = -1;
    door.n = 0;
}

/* The process's sockets, from /proc/self/fd. */
static void door_scan(void)
{
    DIR *d = opendir("/proc/self/fd");
    door.scan = false;
    door.scanned_at = net_now_ns();
    if (!d)
        return; /* no /proc: timed sleeps only */
    int n = 0;
    for (struct dirent *e; n < DOOR_MAX && (e = readdir(d));) {
        struct stat st;
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == dirfd(d) || fd == door.efd)
            continue;
        if (fstat((int)fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
            door.fds[1 + n] = (struct pollfd){.fd = (int)fd, .events = POLLIN};
            door.useless[1 + n++] = 0;
        }
    }
    closedir(d);
    door.n = n;
}

/* Sleeps in ppoll on the doorbell for at most ts. */
static enum nap_end door_sleep(const struct timespec *ts)
{
    if (door.scan)
        door_scan();
    door.fds[0] = (struct pollfd){.fd = door.efd, .events = POLLIN};
    int r = ppoll(door.fds, (nfds_t)(1 + door.n), ts, NULL);
    if (r > 0 && door.fds[0].revents) {
        uint64_t v;
        (void)!read(door.efd, &v, sizeof v); /* the wake is in the word */
    }
    for (int i = 1; r > 0 && i <= door.n; i++)
        if (door.fds[i].revents & POLLNVAL) { /* closed since the scan */
            door.fds[i--] = door.fds[door.n--];
            door.scan = true;
        }
    return r > 0 ? NAP_SOCKET : NAP_TIMEOUT;
}

/* After a sleep that a socket ended and a look (found: it found
 * something; busy: a transfer under way, whose sockets fire before its
 * frame is whole).  A socket MPI read is fine even when the look found
 * nothing (MPI's own traffic: a rendezvous' handshake, a marker's
 * answer); one still readable after the look is read by nobody here. */
static void door_verdict(bool found, bool busy)
{
    struct pollfd again[DOOR_MAX];
    int idx[DOOR_MAX], n = 0;
    for (int i = 1; i <= door.n; i++) {
        if (!door.fds[i].revents)
            continue;
        if (found || busy) {
            door.useless[i] = 0;
            continue;
        }
        again[n] = (struct pollfd){.fd = door.fds[i].fd, .events = POLLIN};
        idx[n++] = i;
    }
    if (!n || poll(again, (nfds_t)n, 0) <= 0) {
        for (int k = 0; k < n; k++)
            door.useless[idx[k]] = 0;
        return;
    }
    for (int k = n - 1; k >= 0; k--) { /* from the end: removal moves the last one */
        int i = idx[k];
        if (!again[k].revents) {
            door.useless[i] = 0;
        } else if (++door.useless[i] >= DOOR_USELESS) {
            door.useless[i] = door.useless[door.n];
            door.fds[i] = door.fds[door.n--];
        }
    }
}

/* A sleep ran out and a frame was there after all: perhaps it came on a
 * socket opened since the scan. */
static void door_missed(void)
{
    if (door.efd >= 0 && net_now_ns() - door.scanned_at >= DOOR_RESCAN_NS)
        door.scan = true;
}

static void futex_wake_word(void)
{
    syscall(SYS_futex, (uint32_t *)node_mpi.word, FUTEX_WAKE | node_mpi.futex_private, 1, NULL,
            NULL, 0);
}

/* Sleeps at most ns unless woken (net_wake: NAP_WOKEN) or, with the
 * doorbell, a socket has data (NAP_SOCKET). */
static enum nap_end nap(uint64_t ns)
{
    _Atomic uint32_t *w = node_mpi.word;
    if (atomic_exchange(w, W_SLEEPING) == W_WAKE_PENDING) {
        atomic_store(w, W_AWAKE);
        return NAP_WOKEN;
    }
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    enum nap_end end = NAP_TIMEOUT;
    if (door.efd >= 0)
        end = door_sleep(&ts);
    else
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT | node_mpi.futex_private, W_SLEEPING, &ts,
                NULL, 0);
    /* Anything but SLEEPING means someone woke us. */
    return atomic_exchange(w, W_AWAKE) != W_SLEEPING ? NAP_WOKEN : end;
}

static void wake_self(void)
{
    if (atomic_exchange(node_mpi.word, W_WAKE_PENDING) != W_SLEEPING)
        return;
    if (door.efd >= 0) {
        uint64_t one = 1;
        (void)!write(door.efd, &one, sizeof one);
    } else {
        futex_wake_word();
    }
}

static bool take_pending_wake(void)
{
    _Atomic uint32_t *w = node_mpi.word;
    uint32_t v = W_WAKE_PENDING;
    return atomic_load_explicit(w, memory_order_relaxed) == W_WAKE_PENDING &&
           atomic_compare_exchange_strong(w, &v, W_AWAKE);
}

/* -------------------------------------------------------------- sending */

/* Room for one more send; false: no memory. */
static bool tx_room(void)
{
    if (node_mpi.ntx < node_mpi.txcap)
        return true;
    int cap = node_mpi.txcap ? 2 * node_mpi.txcap : 64;
    MPI_Request *reqs = realloc(node_mpi.reqs, (size_t)cap * sizeof *reqs);
    if (reqs)
        node_mpi.reqs = reqs;
    struct tx *txs = realloc(node_mpi.txs, (size_t)cap * sizeof *txs);
    if (txs)
        node_mpi.txs = txs;
    int *done = realloc(node_mpi.done, (size_t)cap * sizeof *done);
    if (done)
        node_mpi.done = done;
    if (!reqs || !txs || !done)
        return false;
    node_mpi.txcap = cap;
    return true;
}

static void tx_add(MPI_Request req, uint8_t *buf, size_t len, int dst, size_t covers)
{
    node_mpi.reqs[node_mpi.ntx] = req;
    node_mpi.txs[node_mpi.ntx++] = (struct tx){buf, len, covers, dst};
    node_mpi.peers[dst].ntx++;
}

/* MPI_Testsome of every send.  MPICH declares its statuses as an array, and
 * GCC 12 takes MPICH's MPI_STATUSES_IGNORE, (MPI_Status *)1, for one of
 * size 0 that MPI would write to. */
static int test_sends(int *n)
{
#if defined(__GNUC__) && !defined(__clang__) /* clang has no such warning */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
    return MPI_Testsome(node_mpi.ntx, node_mpi.reqs, n, node_mpi.done, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

/* Completed sends: their buffers go, markers give their budget back.
 * True when any completed. */
static bool progress_tx(void)
{
    int n = 0;
    if (!node_mpi.ntx)
        return false;
    int rc = test_sends(&n);
    if (rc != MPI_SUCCESS) {
        mpi_failed("MPI_Testsome", rc, -1);
        return false;
    }
    if (n == MPI_UNDEFINED || n == 0)
        return false;
    if (node_mpi.want_space)
        node_mpi.space_freed = true;
    for (int k = 0; k < n; k++) {
        struct tx *t = &node_mpi.txs[node_mpi.done[k]];
        struct peer *p = &node_mpi.peers[t->dst];
        p->ntx--;
        p->unacked -= t->covers;
        free(t->buf);
    }
    int j = 0; /* completed requests are MPI_REQUEST_NULL now */
    for (int i = 0; i < node_mpi.ntx; i++)
        if (node_mpi.reqs[i] != MPI_REQUEST_NULL) {
            node_mpi.reqs[j] = node_mpi.reqs[i];
            node_mpi.txs[j++] = node_mpi.txs[i];
        }
    node_mpi.ntx = j;
    return true;
}

/* The path to p is full: too many sends not complete, or a marker
 * outstanding and no budget left for charge more. */
static bool path_full(const struct peer *p, size_t charge)
{
    return p->ntx >= TX_MAX_PER_DST ||
           (p->unacked > p->since_marker && p->unacked + charge > node_mpi.budget);
}

static int mpi_sendv(int dst, const struct iovec *iov, int iovcnt, size_t len)
{
    struct peer *p = &node_mpi.peers[dst];
    size_t charge = len + FRAME_COST;
    if (node_mpi.ntx >= TX_TEST_AT || path_full(p, charge))
        progress_tx();
    if (path_full(p, charge)) {
        node_mpi.want_space = true;
        node_mpi.space_freed = false;
        return -EAGAIN;
    }
    uint8_t *buf = NULL;
    if (len && !(buf = malloc(len)))
        return -ENOMEM;
    if (!tx_room()) {
        free(buf);
        return -ENOMEM;
    }
    for (size_t off = 0; iovcnt > 0; iov++, iovcnt--) {
        if (iov->iov_len) /* an empty piece may have no address at all */
            util_copy(buf + off, iov->iov_base, iov->iov_len);
        off += iov->iov_len;
    }
    bool marker = p->since_marker + charge >= node_mpi.budget / 2;
    MPI_Datatype t;
    int count;
    MPI_Request req;
    int rc = frame_type(len, &t, &count);
    if (rc == MPI_SUCCESS) {
        rc = (marker ? MPI_Issend : MPI_Isend)(buf, count, t, dst, TAG_FRAME, node_mpi.comm,
                                                &req);
        type_done(&t);
    }
    if (rc != MPI_SUCCESS) {
        free(buf);
        return mpi_failed("MPI_Isend", rc, dst);
    }
    p->unacked += charge;
    p->since_marker += charge;
    tx_add(req, buf, len, dst, marker ? p->since_marker : 0);
    if (marker)
        p->since_marker = 0;
    return 0;
}

/* An empty TAG_WAKE message to dst (the scheduler thread only). */
static void send_wake(int dst)
{
    MPI_Request req;
    if (!tx_room()) {
        atomic_store(&node_mpi.wake_req[dst], 1); /* no memory now: at a later call */
        atomic_store(&node_mpi.any_wake_req, 1);
        return;
    }
    int rc = MPI_Isend(NULL, 0, MPI_BYTE, dst, TAG_WAKE, node_mpi.comm, &req);
    if (rc != MPI_SUCCESS) {
        mpi_failed("MPI_Isend (wake)", rc, dst);
        return;
    }
    tx_add(req, NULL, 0, dst, 0);
}

/* Wakes that other threads asked for (mpi_wake), sent by the scheduler. */
static void send_asked_wakes(void)
{
    if (likely(!atomic_load_explicit(&node_mpi.any_wake_req, memory_order_acquire)))
        return;
    atomic_exchange(&node_mpi.any_wake_req, 0);
    for (int n = 0; n < net_cur.nnodes; n++)
        if (atomic_load_explicit(&node_mpi.wake_req[n], memory_order_relaxed) &&
            atomic_exchange(&node_mpi.wake_req[n], 0))
            send_wake(n);
}

static void mpi_wake(int node)
{
    if (node == net_cur.node) {
        wake_self();
    } else if (pthread_equal(pthread_self(), node_mpi.sched)) {
        send_wake(node);
    } else { /* MPI is the scheduler thread's: it sends the wake */
        atomic_store(&node_mpi.wake_req[node], 1);
        atomic_store_explicit(&node_mpi.any_wake_req, 1, memory_order_release);
        wake_self();
    }
}

static int mpi_flush(void)
{
    send_asked_wakes();
    progress_tx();
    return node_mpi.ntx ? -EAGAIN : 0;
}

/* ------------------------------------------------------------ receiving */

enum { PROBE_NONE, PROBE_FRAME, PROBE_WAKE };

/* Matches the next message: a frame is held for take_held, a wake is
 * received (it carries nothing). */
static int probe(void)
{
    int flag = 0;
    MPI_Message m;
    MPI_Status st;
    if (node_mpi.held)
        return PROBE_FRAME;
    int rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, node_mpi.comm, &flag, &m, &st);
    if (rc != MPI_SUCCESS) {
        mpi_failed("MPI_Improbe", rc, -1);
        return PROBE_NONE;
    }
    if (!flag)
        return PROBE_NONE;
    if (st.MPI_TAG == TAG_WAKE) {
        MPI_Mrecv(NULL, 0, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        return PROBE_WAKE;
    }
    node_mpi.held = true;
    node_mpi.held_msg = m;
    node_mpi.held_st = st;
    return PROBE_FRAME;
}

/* The receive buffer, at least len bytes; NULL: no memory. */
static uint8_t *rx_space(size_t len)
{
    if (node_mpi.scratch && len <= node_mpi.scratch_cap)
        return node_mpi.scratch;
    size_t cap = len > RX_MIN ? len : RX_MIN;
    uint8_t *b = malloc(cap);
    if (!b)
        return NULL;
    free(node_mpi.scratch);
    node_mpi.scratch = b;
    node_mpi.scratch_cap = cap;
    return b;
}

static void rx_space_done(void)
{
    if (node_mpi.scratch_cap > RX_KEEP) {
        free(node_mpi.scratch);
        node_mpi.scratch = NULL;
        node_mpi.scratch_cap = 0;
    }
}

/* Starts receiving the held frame.  1: delivered at once; 0: queued (not
 * complete yet, or its sender has an earlier frame queued); <0: error
 * (-ENOMEM: it stays held). */
static int take_held(net_handler_fn fn, void *ctx)
{
    int src = node_mpi.held_st.MPI_SOURCE;
    MPI_Count n = 0;
    MPI_Get_elements_x(&node_mpi.held_st, MPI_BYTE, &n);
    size_t len = n > 0 ? (size_t)n : 0;
    uint8_t *buf = rx_space(len);
    if (!node_mpi.rx_spare)
        node_mpi.rx_spare = malloc(sizeof *node_mpi.rx_spare);
    if (!buf || !node_mpi.rx_spare)
        return -ENOMEM;
    MPI_Datatype t;
    int count, done = 0;
    MPI_Request req;
    int rc = frame_type(len, &t, &count);
    if (rc != MPI_SUCCESS)
        return -ENOMEM; /* MPI's memory for the type: it stays held */
    rc = MPI_Imrecv(buf, count, t, &node_mpi.held_msg, &req);
    type_done(&t);
    node_mpi.held = false;
    if (rc != MPI_SUCCESS)
        return mpi_failed("MPI_Imrecv", rc, src);
    if (!node_mpi.rx_npend[src])
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) {
        fn(ctx, src, buf, len);
        rx_space_done();
        return 1;
    }
    struct rx *r = node_mpi.rx_spare;
    node_mpi.rx_spare = NULL;
    *r = (struct rx){.req = req, .buf = buf, .len = len, .src = src};
    node_mpi.scratch = NULL; /* the frame's now */
    node_mpi.scratch_cap = 0;
    *node_mpi.rx_tail = r;
    node_mpi.rx_tail = &r->next;
    node_mpi.rx_npend[src]++;
    return 0;
}

/* A fresh pass over the rx list: no source blocked yet. */
static void rx_pass(void)
{
    if (++node_mpi.rx_gen == 0) { /* wrapped: old marks could match */
        memset(node_mpi.rx_blocked, 0, (size_t)net_cur.nnodes * sizeof *node_mpi.rx_blocked);
        node_mpi.rx_gen = 1;
    }
}

/* Whether r is complete and first of its sender's (else its sender is
 * blocked for the rest of this pass). */
static bool rx_ready(struct rx *r)
{
    int done = 0;
    if (node_mpi.rx_blocked[r->src] == node_mpi.rx_gen)
        return false;
    MPI_Test(&r->req, &done, MPI_STATUS_IGNORE); /* MPI_REQUEST_NULL tests done */
    if (!done)
        node_mpi.rx_blocked[r->src] = node_mpi.rx_gen;
    return done;
}

/* Delivers queued frames that are complete, each sender's in order. */
static int deliver_queued(net_handler_fn fn, void *ctx, int max)
{
    int n = 0;
    rx_pass();
    node_mpi.delivering = true;
    for (struct rx **pp = &node_mpi.rx_head; *pp && n < max;) {
        struct rx *r = *pp;
        if (!rx_ready(r)) {
            pp = &r->next;
            continue;
        }
        *pp = r->next; /* unlinked before the callback, which may send */
        if (!*pp)
            node_mpi.rx_tail = pp;
        node_mpi.rx_npend[r->src]--;
        fn(ctx, r->src, r->buf, r->len);
        n++;
        free(r->buf);
        free(r);
    }
    node_mpi.delivering = false;
    return n;
}

/* Whether a queued frame can be delivered now.  Not from a callback of
 * deliver_queued (a net_wait there): a pass of its own would undo the
 * walk's marks. */
static bool rx_deliverable(void)
{
    if (node_mpi.delivering)
        return false;
    rx_pass();
    for (struct rx *r = node_mpi.rx_head; r; r = r->next)
        if (rx_ready(r))
            return true;
    return false;
}

static int mpi_poll(net_handler_fn fn, void *ctx, int max)
{
    int n = 0;
    send_asked_wakes();
    progress_tx();
    if (node_mpi.rx_head)
        n = deliver_queued(fn, ctx, max);
    while (n < max) {
        int what = probe();
        if (what == PROBE_NONE)
            break;
        if (what == PROBE_WAKE) { /* for the next net_wait */
            atomic_store(node_mpi.word, W_WAKE_PENDING);
            continue;
        }
        int rc = take_held(fn, ctx);
        if (rc < 0)
            return n ? n : rc;
        n += rc;
    }
    return n;
}

/* ------------------------------------------------------------- idleness */

/* Anything for the caller: a frame, a wake, a completed send it waits for. */
static bool ready(void)
{
    send_asked_wakes();
    progress_tx();
    if (node_mpi.space_freed) { /* (perhaps by a net_poll before this wait) */
        node_mpi.want_space = node_mpi.space_freed = false;
        return true;
    }
    if (node_mpi.rx_head && rx_deliverable())
        return true;
    return probe() != PROBE_NONE;
}

/* A transfer MPI moves only while we call it: a queued receive, a send
 * that may use the rendezvous protocol. */
static bool busy(void)
{
    if (node_mpi.rx_head)
        return true;
    for (int i = 0; i < node_mpi.ntx; i++)
        if (node_mpi.txs[i].len >= BUSY_BYTES)
            return true;
    return false;
}

/* Spins until something is ready (true) or ns passed (false); the clock
 * is read lazily (net_impl.h). */
static bool spin_for(struct net_wait_clock *c, uint64_t ns)
{
    for (unsigned i = 1;; i++) {
        if (take_pending_wake() || ready())
            return true;
        if (i % SPIN_CHECK == 0 && net_clock_since(c) >= ns)
            return false;
        __builtin_ia32_pause();
    }
}

/* The next sleep of a wait that began at t0. */
static uint64_t nap_ns(uint64_t now, uint64_t t0)
{
    uint64_t ns = (now - t0) / BACKOFF_SHARE, cap = busy() ? BACKOFF_BUSY_NS : BACKOFF_LONG_NS;
    return ns < BACKOFF_MIN_NS ? BACKOFF_MIN_NS : ns > cap ? cap : ns;
}

/* A sleep of asked ns that nobody woke took `took`: how much longer than
 * asked the shortest sleep takes (oversleep, adapt_after_sleep). */
static void slept(uint64_t asked, uint64_t took)
{
    if (asked == BACKOFF_MIN_NS)
        node_mpi.oversleep += ((int64_t)(took - asked) - node_mpi.oversleep) / 8;
}

/* Sleeps between probes until something is ready (1) or deadline (0:
 * none) passed (0). */
static int backoff(uint64_t t0, uint64_t deadline)
{
    for (;;) {
        uint64_t now = net_now_ns(), d = nap_ns(now, t0);
        if (deadline) {
            if (now >= deadline)
                return 0;
            if (deadline - now < d)
                d = deadline - now;
        }
        /* MPI_Improbe matches before it moves MPI on: a frame its progress
         * took off a socket is matched only by the next probe, and the
         * socket no longer says it is there.  So one more before a sleep
         * on the sockets. */
        if (door.efd >= 0 && probe() != PROBE_NONE)
            return 1;
        enum nap_end end = nap(d);
        if (end == NAP_WOKEN)
            return 1;
        if (end == NAP_TIMEOUT)
            slept(d, net_now_ns() - now);
        bool found = ready();
        if (end == NAP_SOCKET)
            door_verdict(found, busy());
        else if (found)
            door_missed();
        if (found)
            return 1;
    }
}

/*
 * The adaptive window.  shm.c grows it (spin_ns to spin_max_ns) when a
 * sleep was answered soon and shrinks it when spins end early; that does
 * not carry over.  Here a sleep ends only at a probe, and even the
 * shortest lasts 60-150 µs on our VMs (the timer's slack, the wake-up:
 * oversleep measures it).  Two nodes that answer each other at once but
 * have both begun to sleep each find the other's frame only after a sleep,
 * and stay so unless one of them spins longer than the other sleeps.  So:
 *   - a wait that slept and was answered within SOON_NS ("soon": finer
 *     cannot be told) sets the window to spin_max_ns, or to twice the
 *     shortest sleep's real length if that is more;
 *   - only a longer one brings it back to spin_ns;
 *   - spins that end early do not shrink it: that costs nothing (a spin
 *     ends when the frame comes), a window too short costs a sleep on
 *     each side.
 * (With shm.c's rules: 50-200 µs per 0 B hand-off instead of 1 µs over
 * shared memory; with spin_max_ns alone, 25 µs instead of 11 over TCP.)
 */
#define SOON_NS 1000000u

static void adapt_after_sleep(uint64_t gap)
{
    uint64_t hi = net_cur.cfg.spin_max_ns, two = 2 * (BACKOFF_MIN_NS + node_mpi.oversleep);
    if (node_mpi.oversleep > 0 && two > hi)
        hi = two;
    node_mpi.spin_win = gap < SOON_NS ? hi : net_cur.cfg.spin_ns;
}

static int wait_idle(int64_t timeout_ns)
{
    if (take_pending_wake() || ready())
        return 1;
    if (timeout_ns == 0)
        return 0;
    uint64_t limit = net_wait_limit(timeout_ns);
    struct net_wait_clock c = {0};
    net_idle_t idle = net_cur.cfg.idle;
    uint64_t spin = net_policy_spin(limit, node_mpi.spin_win);
    if (idle == NET_IDLE_ADAPTIVE && spin < BUSY_SPIN_NS && busy())
        spin = BUSY_SPIN_NS;
    spin = net_spin_window(spin, limit);
    if (spin && spin_for(&c, spin))
        return 1;
    if (spin == limit)
        return 0;
    (void)net_clock_since(&c); /* the start, for the deadline and the gap */
    int woke = backoff(c.t0, timeout_ns < 0 ? 0 : c.t0 + limit);
    if (woke && idle == NET_IDLE_ADAPTIVE)
        adapt_after_sleep(net_clock_since(&c));
    return woke;
}

static int mpi_wait(int64_t timeout_ns)
{
    int woke = wait_idle(timeout_ns);
    send_asked_wakes(); /* one may be why we woke */
    return woke;
}

/* ------------------------------------------------------------ lifecycle */

/* Frames that came and will never be delivered: received and dropped, so
 * that their senders' transfers end. */
static void drop_incoming(void)
{
    if (node_mpi.held || probe() == PROBE_FRAME) {
        int src = node_mpi.held_st.MPI_SOURCE;
        MPI_Count n = 0;
        MPI_Get_elements_x(&node_mpi.held_st, MPI_BYTE, &n);
        struct rx *r = malloc(sizeof *r);
        uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
        MPI_Datatype t;
        int count;
        if (!r || !buf || frame_type((size_t)n, &t, &count) != MPI_SUCCESS) {
            free(r);
            free(buf);
            return;
        }
        *r = (struct rx){.buf = buf, .len = (size_t)n, .src = src};
        MPI_Imrecv(buf, count, t, &node_mpi.held_msg, &r->req);
        type_done(&t);
        node_mpi.held = false;
        *node_mpi.rx_tail = r;
        node_mpi.rx_tail = &r->next;
    }
    for (struct rx **pp = &node_mpi.rx_head; *pp;) {
        struct rx *r = *pp;
        int done = 0;
        MPI_Test(&r->req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        if (!*pp)
            node_mpi.rx_tail = pp;
        free(r->buf);
        free(r);
    }
}

/* Sends in flight get up to FINI_NS to complete (peers that still poll
 * take them); what came for us is dropped.  What remains after that is
 * left to MPI (MPI_Request_free) and its buffers are never freed: MPI may
 * still read or write them. */
static void settle(void)
{
    uint64_t deadline = net_now_ns() + FINI_NS;
    for (unsigned i = 0;; i++) {
        progress_tx();
        drop_incoming();
        if ((!node_mpi.ntx && !node_mpi.rx_head && !node_mpi.held) || net_now_ns() > deadline)
            break;
        if (i > 100)
            nap(BACKOFF_MIN_NS);
    }
    for (int i = 0; i < node_mpi.ntx; i++)
        MPI_Request_free(&node_mpi.reqs[i]);
    for (struct rx *r = node_mpi.rx_head, *next; r; r = next) {
        next = r->next;
        MPI_Request_free(&r->req);
        free(r);
    }
}

/* Every array of node_mpi freed, and node_mpi zeroed. */
static void free_state(void)
{
    free(node_mpi.peers);
    free(node_mpi.reqs);
    free(node_mpi.txs);
    free(node_mpi.done);
    free(node_mpi.rx_npend);
    free(node_mpi.rx_blocked);
    free(node_mpi.rx_spare);
    free(node_mpi.scratch);
    free((void *)node_mpi.wake_req);
    free(node_mpi.local_ranks);
    memset(&node_mpi, 0, sizeof node_mpi);
}

static void mpi_fini(void)
{
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (!finalized) { /* else MPI took everything down already */
        settle();
        if (node_mpi.local != MPI_COMM_NULL)
            MPI_Comm_free(&node_mpi.local);
        MPI_Comm_free(&node_mpi.comm);
        if (started_mpi)
            MPI_Finalize(); /* waits for every rank to finalise */
    }
    started_mpi = false;
    free_state();
    door_close();
}

static int mpi_path(int node)
{
    (void)node;
    return NET_PATH_MPI;
}

static const struct net_ops mpi_ops = {
    .sendv = mpi_sendv, .poll = mpi_poll, .wait = mpi_wait,
    .wake = mpi_wake, .flush = mpi_flush, .fini = mpi_fini, .path = mpi_path,
    /* no membership ops: every rank is UP (net.h) */
};

/* MPI is up, will stay up, and lets this thread call it. */
static bool mpi_usable(void)
{
    int inited = 0, finalized = 1, level = MPI_THREAD_SINGLE, is_main = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return false;
    MPI_Query_thread(&level);
    MPI_Is_thread_main(&is_main);
    return level >= MPI_THREAD_FUNNELED && (is_main || level >= MPI_THREAD_SERIALIZED);
}

static int alloc_state(int n)
{
    node_mpi.peers = calloc((size_t)n, sizeof *node_mpi.peers);
    node_mpi.rx_npend = calloc((size_t)n, sizeof *node_mpi.rx_npend);
    node_mpi.rx_blocked = calloc((size_t)n, sizeof *node_mpi.rx_blocked);
    node_mpi.wake_req = calloc((size_t)n, sizeof *node_mpi.wake_req);
    node_mpi.local_ranks = calloc((size_t)n, sizeof *node_mpi.local_ranks);
    if (node_mpi.peers && node_mpi.rx_npend && node_mpi.rx_blocked && node_mpi.wake_req &&
        node_mpi.local_ranks)
        return 0;
    free_state();
    return -ENOMEM;
}

/*
 * Tests only: UPVM_TEST_NET_HOSTS="0,0,1" puts rank i on pretend host
 * number i of the list (ranks past its end: on the last one), within what
 * MPI says is one host.  A test on one machine thus makes ranks "remote"
 * (here rank 2): the MPI library still sees one host, and MPI's info keys
 * for MPI_Comm_split_type (Open MPI's OMPI_COMM_TYPE_*, MPI 4's
 * "mpi_hw_subdomain_type") can only split by hardware, not by rank.
 */
int net_mpi_test_host(int rank)
{
    const char *s;
    if (env_string("UPVM_TEST_NET_HOSTS", &s) > 0 && s[strspn(s, "0123456789,")] != '\0')
        (void)env_reject("UPVM_TEST_NET_HOSTS", "not a list of host numbers such as 0,0,1");
    int host = 0;
    for (int i = 0; s && *s; i++) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s)
            break;
        host = (int)v;
        if (i == rank || *end != ',')
            break;
        s = end + 1;
    }
    return host;
}

/* The ranks of this host (net_mpi_part): MPI's notion, never ours (hosts
 * emulated on one machine, in their own namespaces, are told apart by
 * Open MPI by their node names; the kernel is the same). */
static int find_local(int rank)
{
    MPI_Comm shared;
    if (MPI_Comm_split_type(node_mpi.comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                            &shared) != MPI_SUCCESS)
        return -EIO;
    int rc = MPI_Comm_split(shared, net_mpi_test_host(rank), rank, &node_mpi.local);
    MPI_Comm_free(&shared);
    if (rc != MPI_SUCCESS)
        return -EIO;
    MPI_Comm_set_errhandler(node_mpi.local, MPI_ERRORS_RETURN);
    MPI_Comm_rank(node_mpi.local, &node_mpi.local_rank);
    MPI_Comm_size(node_mpi.local, &node_mpi.local_size);
    if (MPI_Allgather(&rank, 1, MPI_INT, node_mpi.local_ranks, 1, MPI_INT, node_mpi.local) !=
        MPI_SUCCESS)
        return -EIO;
    return 0;
}

/* Joins the job as node `rank` of MPI_COMM_WORLD (net_init_mpi, with cfg
 * resolved). */
static int mpi_join(const net_config_t *cfg)
{
    int rank, size;
    MPI_Comm comm;
    if (net_cur.ops)
        return -EBUSY;
    if (!mpi_usable())
        return -EINVAL;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
        return -EIO;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); /* errors come back as -EIO */
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(&node_mpi, 0, sizeof node_mpi);
    if (alloc_state(size) < 0) {
        MPI_Comm_free(&comm);
        return -ENOMEM;
    }
    node_mpi.comm = comm;
    node_mpi.local = MPI_COMM_NULL;
    if (find_local(rank) < 0) {
        if (node_mpi.local != MPI_COMM_NULL)
            MPI_Comm_free(&node_mpi.local);
        MPI_Comm_free(&comm);
        free_state();
        return -EIO;
    }
    node_mpi.word = &node_mpi.own_word;
    node_mpi.futex_private = FUTEX_PRIVATE_FLAG;
    door_open();
    node_mpi.sched = pthread_self();
    node_mpi.rx_tail = &node_mpi.rx_head;
    net_cur.cfg = *cfg;
    if (net_cur.cfg.ring_bytes < NET_RING_MIN)
        net_cur.cfg.ring_bytes = NET_RING_MIN;
    node_mpi.budget = net_cur.cfg.ring_bytes * NET_MPI_BUDGET_FACTOR;
    if (net_cur.cfg.spin_max_ns < net_cur.cfg.spin_ns)
        net_cur.cfg.spin_max_ns = net_cur.cfg.spin_ns; /* a fixed window */
    node_mpi.spin_win = net_cur.cfg.spin_ns;
    node_mpi.oversleep = 50000; /* a guess, measured from the first sleeps on */
    net_cur.node = rank;
    net_cur.nnodes = size;
    net_cur.events = NULL;
    net_cur.once = NULL;
    net_cur.ops = &mpi_ops;
    return 0;
}

/* net_start_mpi: MPI initialised here when nobody did, finalised by
 * net_fini (mpi_fini) then. */
static int mpi_start(const net_config_t *cfg)
{
    int inited = 0, provided = MPI_THREAD_SINGLE;
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return -EIO;
        started_mpi = true;
    }
    int rc = mpi_join(cfg);
    if (rc != 0 && started_mpi) {
        MPI_Finalize();
        started_mpi = false;
    }
    return rc;
}

/* -------------------------------------------------- what the hybrid uses */

static int local_bcast(void *buf, int len, int root)
{
    int rc = MPI_Bcast(buf, len, MPI_BYTE, root, node_mpi.local);
    return rc == MPI_SUCCESS ? 0 : mpi_failed("MPI_Bcast", rc, -1);
}

static int local_max(int *v)
{
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MAX, node_mpi.local);
    return rc == MPI_SUCCESS ? 0 : mpi_failed("MPI_Allreduce", rc, -1);
}

/* The hybrid sleeps on its futex word in the host's segment: wakes of this
 * node (net_wake from another thread, a TAG_WAKE taken by a poll) go there
 * too, with a futex call that reaches another process's view of it. */
static void use_word(_Atomic uint32_t *w)
{
    node_mpi.word = w ? w : &node_mpi.own_word;
    node_mpi.futex_private = w ? 0 : FUTEX_PRIVATE_FLAG;
    if (w)
        door_close(); /* a local sender wakes the word's futex */
    else if (door.efd < 0)
        door_open();
}

static bool look(void)
{
    return take_pending_wake() || ready();
}

static uint64_t busy_spin(void)
{
    return busy() ? BUSY_SPIN_NS : 0;
}

static uint64_t spin_after_sleep(uint64_t gap)
{
    adapt_after_sleep(gap);
    return node_mpi.spin_win;
}

/* net_start_mpi (start) or net_init_mpi, and what the hybrid needs. */
static int enter(int start, const net_config_t *cfg, struct net_mpi_part *part)
{
    if (!part || part->size != sizeof *part)
        return -ENOSYS; /* libupvm of another build */
    int rc = start ? mpi_start(cfg) : mpi_join(cfg);
    if (rc != 0)
        return rc;
    *part = (struct net_mpi_part){
        .size = sizeof *part, .ops = &mpi_ops,
        .local_rank = node_mpi.local_rank, .local_size = node_mpi.local_size,
        .local_ranks = node_mpi.local_ranks,
        .local_bcast = local_bcast, .local_max = local_max,
        .use_word = use_word, .look = look, .busy_spin = busy_spin, .nap_ns = nap_ns,
        .slept = slept, .spin_after_sleep = spin_after_sleep,
    };
    return 0;
}

#ifdef UPVM_NET_MPI_PLUGIN
struct net_running *net_plugin_cur;

int upvm_net_mpi_plugin_v2(struct net_running *cur, int start, const net_config_t *cfg,
                           struct net_mpi_part *part)
{
    net_plugin_cur = cur;
    return enter(start, cfg, part);
}
#else
/* Linked straight into what uses it (tests, benchmarks): hybrid.c's
 * net_init_mpi / net_start_mpi call this instead of the plugin. */
int net_mpi_enter(int start, const net_config_t *cfg, struct net_mpi_part *part)
{
    return enter(start, cfg, part);
}
#endif
