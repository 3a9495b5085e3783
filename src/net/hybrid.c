/*
 * hybrid.c - net_init_mpi / net_start_mpi: a job of MPI ranks whose ranks
 * on one host reach one another through shared memory (shm.c) and the
 * others by MPI (mpi.c).  Each node picks the path per destination, once,
 * at start: frames of one (src, dst) pair always take the same path, so
 * each path's pairwise FIFO is the job's.
 *
 * Where it lives.  In libupvm, beside shm.c and net.c, not in the MPI
 * plugin (libupvm-mpi.so, mpi_load.c): the hot path of a local frame is
 * shm.c's, called directly after one table lookup, and shm.c stays in
 * libupvm for the nodes a launcher forks.  The plugin gives this file what
 * it needs of MPI in one struct (struct net_mpi_part, net_impl.h): mpi.c's
 * ops, the ranks MPI says share this host, two collective calls in that
 * group, and the pieces of mpi.c's idle policy.  Without a plugin (tests,
 * benchmarks) mpi.c is linked in and fills the same struct.
 *
 * Setup (collective, every rank of a host's group):
 *   1. the group is MPI's notion of a host (MPI_Comm_split_type, shared
 *      memory), never our own probing: hosts emulated on one machine
 *      (their own network, UTS and mount namespaces, one kernel) must not
 *      share memory, and Open MPI tells them apart by node name;
 *   2. its lowest rank creates the segment (net_shm_create: a memfd, with
 *      a ring per ordered pair of the group's ranks, in local numbers) and
 *      broadcasts its pid and the fd; the others open /proc/<pid>/fd/<fd>
 *      (same user, same host), map it and close what they opened;
 *   3. an allreduce (also the barrier the creator waits for) says whether
 *      all succeeded; then the creator closes its fd.  No file is left
 *      anywhere, whatever way the processes die: the memfd lives while
 *      some process maps it.  If any rank failed (a hardened /proc, no
 *      memfd), the whole group keeps MPI for everything, and one of them
 *      says so on stderr, once.
 * UPVM_NET_LOCAL=mpi (net_config_t.local) skips the shared segment: every
 * frame goes by MPI, as between hosts.  A rank alone on its host has no
 * segment either: mpi.c's ops stay installed as they are.
 *
 * Waiting.  A node sleeps on its futex word in the segment, so a local
 * sender wakes it at once (shm.c's protocol, unchanged); mpi.c is told to
 * use that word too (use_word), so net_wake of this node from another
 * thread and a wake message taken by a poll land there.  MPI frames cannot
 * wake a sleeper: as in mpi.c, the sleep has a timeout that follows its
 * backoff rule (a tenth of the time waited, 20 µs to 10 ms, 100 µs while
 * a large transfer needs us), and MPI is probed after each.  Before that
 * the wait spins for the adaptive window, looking at both; the window
 * follows shm.c's rules when a local frame or wake ended the wait, mpi.c's
 * when MPI did.  A node whose job has no rank on another host never
 * touches MPI after the setup: it polls, spins and sleeps as shm.c does.
 */
#define _GNU_SOURCE
#include "net/net_impl.h"
#include "util/env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SEEN_NONE, SEEN_SHM, SEEN_MPI };

static struct {
    struct net_mpi_part mpi;
    int *local_of;     /* by node: its local rank when frames to it go by shm, else -1 */
    int *node_of;      /* by local rank: the node */
    int nremote;       /* nodes reached by MPI */
    uint64_t spin_win; /* adaptive: how long a wait spins now */
    bool mpi_first;    /* net_poll: which part first (they take turns) */
    /* probing MPI between local frames (mpi_due) */
    bool favour_mpi;   /* MPI brought the last frame, or a transfer needs its calls */
    uint64_t probe_at; /* TSC: when the next probe is due */
    uint64_t probe_cost; /* TSC ticks an empty probe takes (a running average) */
} hy;

/*
 * Probing MPI between local frames.  An empty probe costs 0.1 µs over
 * shared memory (vader) but 4 µs over TCP (opal_progress polls the
 * sockets, measured here): probing at every poll and every look of a
 * spin made a local 0 B hand-off take 12 µs instead of 0.1 (0.24 with
 * what follows; bench_net_mpi, 3 ranks, one remote).  So while
 * local frames are what comes, MPI is probed a quarter of the time at
 * most: the next probe is due three empty probes' cost after the last
 * (the TSC counts: one instruction, no unit needed for a ratio).  While
 * MPI frames are what comes (the last frame taken was remote), or a large
 * transfer needs MPI's calls, it is probed at every look, as mpi.c does.
 */
#define PROBE_COST_MAX 30000u /* ticks (~10 µs): a probe that took longer is not the norm */

static bool mpi_due(void)
{
    return hy.favour_mpi || __builtin_ia32_rdtsc() >= hy.probe_at;
}

/* After a probe begun at t0 that found something (seen) or not. */
static void probed(uint64_t t0, bool seen)
{
    uint64_t t1 = __builtin_ia32_rdtsc();
    if (seen) {
        hy.favour_mpi = true;
    } else if (t1 > t0) {
        uint64_t d = t1 - t0 < PROBE_COST_MAX ? t1 - t0 : PROBE_COST_MAX;
        hy.probe_cost += ((int64_t)d - (int64_t)hy.probe_cost) / 8;
    }
    hy.probe_at = t1 + 3 * hy.probe_cost;
}

static int poll_mpi(net_handler_fn fn, void *ctx, int max)
{
    uint64_t t0 = __builtin_ia32_rdtsc();
    int rc = hy.mpi.ops->poll(fn, ctx, max);
    probed(t0, rc > 0);
    return rc;
}

static bool look_mpi(void)
{
    uint64_t t0 = __builtin_ia32_rdtsc();
    bool seen = hy.mpi.look();
    probed(t0, seen);
    return seen;
}

/* -------------------------------------------------------------- the ops */

/* A local peer's frames: shm.c's, after one lookup. */
static int hy_sendv(int dst, const struct iovec *iov, int iovcnt, size_t len)
{
    int l = hy.local_of[dst];
    if (likely(l >= 0))
        return shm_sendv(l, iov, iovcnt, len);
    return hy.mpi.ops->sendv(dst, iov, iovcnt, len);
}

/* shm.c's frames carry local ranks: the caller's callback gets nodes. */
struct from_local {
    net_handler_fn fn;
    void *ctx;
};

static void from_local(void *arg, int src, const void *data, size_t len)
{
    struct from_local *f = arg;
    f->fn(f->ctx, hy.node_of[src], data, len);
}

static int hy_poll(net_handler_fn fn, void *ctx, int max)
{
    struct from_local f = {fn, ctx};
    int n = 0, err = 0;
    bool mpi_first = hy.mpi_first;
    hy.mpi_first = !hy.mpi_first;
    for (int k = 0; k < 2 && n < max; k++) {
        int rc;
        if ((k == 0) == mpi_first) {
            if (!hy.nremote || !mpi_due())
                continue;
            rc = poll_mpi(fn, ctx, max - n);
        } else if ((rc = shm_poll(from_local, &f, max - n)) > 0) {
            hy.favour_mpi = false;
        }
        if (rc < 0)
            err = rc;
        else
            n += rc;
    }
    return n ? n : err;
}

static void hy_wake(int node)
{
    int l = hy.local_of[node]; /* this node's own: shm.c's word, which mpi.c uses too */
    if (l >= 0)
        shm_wake(l);
    else
        hy.mpi.ops->wake(node);
}

static int hy_flush(void)
{
    int a = shm_flush(), b = hy.nremote ? hy.mpi.ops->flush() : 0;
    return a || b ? -EAGAIN : 0;
}

static int hy_path(int node)
{
    return hy.local_of[node] >= 0 ? NET_PATH_SHM : NET_PATH_MPI;
}

/* ------------------------------------------------------------- idleness */

/* Anything to do (SEEN_*): shm first, it costs a few loads; MPI when a
 * probe is due. */
static int look(void)
{
    if (shm_look()) {
        hy.favour_mpi = false;
        return SEEN_SHM;
    }
    if (hy.nremote && mpi_due() && look_mpi())
        return SEEN_MPI;
    return SEEN_NONE;
}

/* Spins until something is seen or ns passed (SEEN_NONE); the clock is
 * read every 8 looks with MPI in them (mpi.c's rate), 64 without
 * (shm.c's). */
static int spin_for(struct net_wait_clock *c, uint64_t ns)
{
    unsigned mask = hy.nremote ? 7 : 63;
    for (unsigned i = 1;; i++) {
        int seen = look();
        if (seen)
            return seen;
        if (!(i & mask) && net_clock_since(c) >= ns)
            return SEEN_NONE;
        __builtin_ia32_pause();
    }
}

/* Sleeps on the futex word until something is seen or deadline (0: none)
 * passed: woken by a local sender, a wake, or (remote frames) found at a
 * probe after a sleep of mpi.c's backoff. */
static int sleep_until(uint64_t t0, uint64_t deadline)
{
    if (!hy.nremote)
        return shm_sleep_until(deadline) ? SEEN_SHM : SEEN_NONE;
    for (;;) {
        uint64_t now = net_now_ns(), d = hy.mpi.nap_ns(now, t0);
        if (deadline) {
            if (now >= deadline)
                return SEEN_NONE;
            if (deadline - now < d)
                d = deadline - now;
        }
        if (shm_sleep_until(now + d)) {
            (void)hy.mpi.ops->flush(); /* a wake another thread asked for may be why */
            return SEEN_SHM;
        }
        hy.mpi.slept(d, net_now_ns() - now);
        if (look_mpi())
            return SEEN_MPI;
    }
}

static int hy_wait(int64_t timeout_ns)
{
    if (look())
        return 1;
    if (timeout_ns == 0)
        return 0;
    uint64_t limit = net_wait_limit(timeout_ns);
    struct net_wait_clock c = {0};
    net_idle_t idle = net_cur.cfg.idle;
    uint64_t spin = net_policy_spin(limit, hy.spin_win);
    if (hy.nremote) {
        uint64_t busy = hy.mpi.busy_spin();
        if (busy)
            hy.favour_mpi = true; /* its transfer moves only while we call it */
        if (idle == NET_IDLE_ADAPTIVE && spin < busy)
            spin = busy;
    }
    spin = net_spin_window(spin, limit);
    int seen = spin ? spin_for(&c, spin) : SEEN_NONE;
    if (seen) {
        if (idle == NET_IDLE_ADAPTIVE && seen == SEEN_SHM) /* mpi.c: no shrinking */
            hy.spin_win = shm_adapt_after_spin(hy.spin_win, &c);
        return 1;
    }
    if (spin == limit)
        return 0;
    (void)net_clock_since(&c); /* the start, for the deadline and the gap */
    seen = sleep_until(c.t0, timeout_ns < 0 ? 0 : c.t0 + limit);
    if (seen && idle == NET_IDLE_ADAPTIVE) {
        uint64_t gap = net_clock_since(&c);
        hy.spin_win = seen == SEEN_SHM ? shm_adapt_after_sleep(hy.spin_win, gap)
                                       : hy.mpi.spin_after_sleep(gap);
    }
    return seen != SEEN_NONE;
}

/* ------------------------------------------------------------ lifecycle */

static void free_tables(void)
{
    free(hy.local_of);
    free(hy.node_of);
    hy.local_of = hy.node_of = NULL;
}

/* shm.c's part first, MPI last (mpi.c's fini finalises it when ours). */
static void hy_fini(void)
{
    const struct net_ops *mpi = hy.mpi.ops;
    hy.mpi.use_word(NULL); /* the segment goes */
    shm_fini();
    free_tables();
    memset(&hy, 0, sizeof hy);
    mpi->fini();
}

static const struct net_ops hybrid_ops = {
    .sendv = hy_sendv, .poll = hy_poll, .wait = hy_wait, .wake = hy_wake,
    .flush = hy_flush, .fini = hy_fini, .path = hy_path,
    /* no membership ops: every rank is UP, as with MPI alone (net.h) */
};

/*
 * What each rank of the group says of the segment, reduced with MAX so
 * that all learn the worst: 0 mapped; 1 not wanted (UPVM_NET_LOCAL=mpi);
 * 2 + errno: failed.  Shifted left by 12 bits, the low ones hold 4095 -
 * its local rank: the lowest rank with the worst status says why (one
 * line per host).
 */
#define ST_OK 0
#define ST_UNWANTED 1
#define ST_FAILED(err) (2 + (err))
#define ST_SHIFT 12

/* Tests only: the joiners act as if /proc refused them (the fallback). */
static bool test_no_proc(void)
{
    return env_flag("UPVM_TEST_NET_NO_PROC");
}

/* Where the group's ranks find the creator's segment, and what it is: a
 * pid names another process in another pid namespace, and the file found
 * must be the one offered. */
struct offer {
    int32_t pid, fd;
    uint64_t dev, ino;
};

/* Opens the offered segment and becomes node `node` of it. */
static int join_segment(const struct offer *o, const char *path, int node)
{
    struct stat st;
    int fd = test_no_proc() ? (errno = EACCES, -1) : open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    if (rc == 0 && ((uint64_t)st.st_dev != o->dev || (uint64_t)st.st_ino != o->ino))
        rc = -ESTALE; /* another file */
    if (rc == 0)
        rc = shm_part_init_fd(fd, node);
    close(fd); /* the mapping stays */
    return rc;
}

/* Steps 2 and 3 of the top comment; true when every rank of the group
 * mapped the segment (and the tables are made). */
static bool share_segment(const struct net_mpi_part *m)
{
    struct offer o = {(int32_t)getpid(), -1, 0, 0};
    struct stat st;
    net_shm_seg_t *seg = NULL;
    bool creator = m->local_rank == 0, attached = false;
    int status = net_cur.cfg.local == NET_LOCAL_SHM ? ST_OK : ST_UNWANTED, rc;
    char what[64] = "the shared segment";
    hy.local_of = malloc((size_t)net_cur.nnodes * sizeof *hy.local_of);
    hy.node_of = malloc((size_t)m->local_size * sizeof *hy.node_of);
    if (status == ST_OK && (!hy.local_of || !hy.node_of))
        status = ST_FAILED(ENOMEM);
    if (creator && status == ST_OK) {
        rc = net_shm_create(m->local_size, &net_cur.cfg, &seg);
        if (rc == 0 && net_shm_fd(seg) < 0) { /* an anonymous mapping: not to share */
            net_shm_destroy(seg);
            seg = NULL;
            rc = -ENOSYS;
            snprintf(what, sizeof what, "memfd_create");
        }
        if (rc == 0 && fstat(net_shm_fd(seg), &st) < 0)
            rc = -errno;
        if (rc == 0)
            rc = shm_part_init(seg, 0);
        if (rc < 0 && seg) {
            net_shm_destroy(seg);
            seg = NULL;
        }
        if (rc < 0) {
            status = ST_FAILED(-rc);
        } else {
            o.fd = net_shm_fd(seg);
            o.dev = (uint64_t)st.st_dev;
            o.ino = (uint64_t)st.st_ino;
        }
        attached = rc == 0;
    }
    if (m->local_bcast(&o, (int)sizeof o, 0) < 0)
        status = ST_FAILED(EIO);
    if (!creator && status == ST_OK && o.fd >= 0) {
        snprintf(what, sizeof what, "/proc/%d/fd/%d", (int)o.pid, (int)o.fd);
        rc = join_segment(&o, what, m->local_rank);
        if (rc < 0)
            status = ST_FAILED(-rc);
        attached = rc == 0;
    }
    int all = status << ST_SHIFT | (m->local_rank < 4096 ? 4095 - m->local_rank : 0);
    if (m->local_max(&all) < 0)
        all = ST_FAILED(EIO) << ST_SHIFT;
    if (seg) /* the others have mapped it, or given up: our fd goes */
        net_shm_drop_handle(seg);
    if (all >> ST_SHIFT == ST_OK)
        return true;
    if (attached)
        shm_fini();
    free_tables();
    if (all >> ST_SHIFT >= ST_FAILED(0) && 4095 - (all & 4095) == m->local_rank)
        fprintf(stderr,
                "upvm: net: node %d cannot share memory with the other nodes of its host (%s: "
                "%s): all their frames go by MPI\n",
                net_cur.node, what, strerror((all >> ST_SHIFT) - ST_FAILED(0)));
    return false;
}

/* MPI is up, mpi.c's ops installed: with other ranks on this host, the
 * hybrid takes over when the segment is shared. */
static void go_hybrid(const struct net_mpi_part *m)
{
    if (m->local_size < 2 || !share_segment(m))
        return;
    for (int n = 0; n < net_cur.nnodes; n++)
        hy.local_of[n] = -1;
    for (int l = 0; l < m->local_size; l++) {
        hy.node_of[l] = m->local_ranks[l];
        hy.local_of[m->local_ranks[l]] = l;
    }
    hy.mpi = *m;
    hy.nremote = net_cur.nnodes - m->local_size;
    hy.spin_win = net_cur.cfg.spin_ns;
    m->use_word(shm_word());
    net_cur.ops = &hybrid_ops;
}

static int up(int start, const net_config_t *cfg)
{
    net_config_t c;
    if (!cfg) {
        (void)net_config_from_env(&c);
        cfg = &c;
    }
    struct net_mpi_part m = {.size = sizeof m};
    int rc = net_mpi_enter(start, cfg, &m);
    if (rc == 0)
        go_hybrid(&m);
    return rc;
}

int net_init_mpi(const net_config_t *cfg)
{
    return up(0, cfg);
}

int net_start_mpi(const net_config_t *cfg)
{
    return up(1, cfg);
}
