/*
 * bench_net_mpi.c - the transport of a job of MPI ranks (net_init_mpi)
 * against the MPI library under it, in one run: 0 B and 8 B half round
 * trips and 1 MiB (half round trip, and a one-way stream), through
 * net_send / net_poll / net_wait beside MPI_Send / MPI_Recv ping-pong on
 * MPI_COMM_WORLD.  Two ranks of one host go through the hybrid's shared
 * memory by default (src/net/hybrid.c), by MPI with UPVM_NET_LOCAL=mpi
 * (mpi.c alone); the header says which.
 *
 *   mpirun -np 2 [--mca btl tcp,self] [-x UPVM_NET_LOCAL=mpi] bench_net_mpi [-r runs]
 *          [-p policy] [-q]
 *   mpirun -np 2 bench_net_mpi --idle
 *
 * More ranks: ranks 2 and up only wait in net_wait for the end (with
 * UPVM_TEST_NET_HOSTS=0,0,1, on a pretend host of their own: the hybrid's
 * local ping-pong then has a remote peer, and probes MPI).
 *
 * Each run measures every row once for both, the two interleaved (net,
 * then MPI, per row), so a noisy moment hits both; the values printed are
 * the medians over the runs (p10..p90 beside them) and the ratio net /
 * MPI.  -p: the idle policy of net_wait (spin, the default: MPI's own
 * blocking calls spin too; block; adaptive).  -q: fewer iterations.
 *
 * --idle: the CPU a node uses in net_wait(2 s) with nothing coming, per
 * idle policy (getrusage: the whole process, MPI's threads included).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_stats.h"
#include "net/net.h"

#define MB ((size_t)1 << 20)
#define STREAM_FRAMES 64
#define MAX_RUNS 64

static int me, runs = 7, quick;
static MPI_Comm pair; /* ranks 0 and 1 */
static net_idle_t policy = NET_IDLE_SPIN;
static uint8_t *buf;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ----------------------------------------------------------- net side */

static void count(void *ctx, int src, const void *data, size_t len)
{
    (*(int *)ctx)++;
}

static void net_put(int dst, size_t len)
{
    int got = 0, rc;
    while ((rc = net_send(dst, buf, len)) == -EAGAIN)
        if (net_poll(count, &got, 0) == 0)
            net_wait(-1);
    if (rc != 0 || got) {
        fprintf(stderr, "bench_net_mpi: net_send: %d (or a frame out of turn)\n", rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Waits for n frames. */
static void net_get(int n)
{
    int got = 0;
    while (got < n)
        if (net_poll(count, &got, 0) == 0)
            net_wait(-1);
}

/* A frame larger than what a shared ring holds leaves its tail in the
 * sender's backlog, which only net_* calls push: before MPI's turn. */
static void net_done(void)
{
    while (net_flush() != 0)
        net_wait(1000000);
}

/* Half round trip in µs: iters exchanges of len bytes. */
static double net_pingpong(size_t len, int iters)
{
    int peer = 1 - me;
    MPI_Barrier(pair);
    double t0 = now_us();
    for (int i = 0; i < iters; i++) {
        if (me == 0) {
            net_put(peer, len);
            net_get(1);
        } else {
            net_get(1);
            net_put(peer, len);
        }
    }
    double t = (now_us() - t0) / (2.0 * iters);
    net_done();
    return t;
}

/* MB/s of STREAM_FRAMES frames of 1 MiB one way, then a 0 B answer. */
static double net_stream(void)
{
    MPI_Barrier(pair);
    double t0 = now_us();
    if (me == 0) {
        for (int i = 0; i < STREAM_FRAMES; i++)
            net_put(1, MB);
        net_get(1);
    } else {
        net_get(STREAM_FRAMES);
        net_put(0, 0);
    }
    double rate = (double)(STREAM_FRAMES * MB) / (now_us() - t0);
    net_done();
    return rate;
}

/* ----------------------------------------------------------- MPI side */

static double mpi_pingpong(size_t len, int iters)
{
    int peer = 1 - me;
    MPI_Barrier(pair);
    double t0 = now_us();
    for (int i = 0; i < iters; i++) {
        if (me == 0) {
            MPI_Send(buf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    return (now_us() - t0) / (2.0 * iters);
}

static double mpi_stream(void)
{
    MPI_Barrier(pair);
    double t0 = now_us();
    if (me == 0) {
        for (int i = 0; i < STREAM_FRAMES; i++)
            MPI_Send(buf, (int)MB, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        MPI_Recv(buf, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int i = 0; i < STREAM_FRAMES; i++)
            MPI_Recv(buf, (int)MB, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    }
    return (double)(STREAM_FRAMES * MB) / (now_us() - t0);
}

/* ---------------------------------------------------------------- rows */

enum { R_0B, R_8B, R_1MB, R_STREAM, NROWS };
static const char *const row_name[] = {"0 B half round trip (us)", "8 B half round trip (us)",
                                       "1 MiB half round trip (us)", "1 MiB stream (MB/s)"};

static double measure(int row, bool net)
{
    int small = quick ? 2000 : 20000, big = quick ? 20 : 200;
    switch (row) {
    case R_0B:
        return net ? net_pingpong(0, small) : mpi_pingpong(0, small);
    case R_8B:
        return net ? net_pingpong(8, small) : mpi_pingpong(8, small);
    case R_1MB:
        return net ? net_pingpong(MB, big) : mpi_pingpong(MB, big);
    default:
        return net ? net_stream() : mpi_stream();
    }
}

static void bench(void)
{
    static double v[2][NROWS][MAX_RUNS];
    static const char *const pol[] = {"spin", "block", "adaptive"};
    for (int row = 0; row < NROWS; row++) { /* warm-up: connections, buffers */
        measure(row, true);
        measure(row, false);
    }
    for (int r = 0; r < runs; r++)
        for (int row = 0; row < NROWS; row++) {
            v[0][row][r] = measure(row, true);
            v[1][row][r] = measure(row, false);
        }
    if (me != 0)
        return;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int b = 2; b < size; b++)
        net_put(b, 0); /* the bystanders' end */
    printf("net (idle policy %s) against MPI_Send/MPI_Recv, medians of %d runs [p10..p90]\n",
           pol[policy], runs);
    printf("%-28s %22s %22s %7s\n", "",
           net_path(1) == NET_PATH_SHM ? "UPVM net (shm)" : "UPVM net (MPI)", "MPI", "ratio");
    for (int row = 0; row < NROWS; row++) {
        struct stats n = summarize(v[0][row], runs), m = summarize(v[1][row], runs);
        printf("%-28s %8.2f [%5.2f..%5.2f] %8.2f [%5.2f..%5.2f] %7.2f\n", row_name[row],
               n.median, n.p10, n.p90, m.median, m.p10, m.p90, n.median / m.median);
    }
}

/* ---------------------------------------------------------------- idle */

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The defaults but the policy; UPVM_NET_LOCAL from the environment. */
static net_config_t config(net_idle_t idle)
{
    net_config_t cfg;
    (void)net_config_from_env(&cfg);
    cfg.ring_bytes = NET_RING_DEFAULT;
    cfg.idle = idle;
    cfg.spin_ns = NET_SPIN_NS_DEFAULT;
    cfg.spin_max_ns = NET_SPIN_MAX_NS_DEFAULT;
    return cfg;
}

static void idle(void)
{
    static const net_idle_t idles[] = {NET_IDLE_SPIN, NET_IDLE_BLOCK, NET_IDLE_ADAPTIVE};
    static const char *const names[] = {"spin", "block", "adaptive"};
    for (int i = 0; i < 3; i++) {
        net_config_t cfg = config(idles[i]);
        if (net_init_mpi(&cfg) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        double c0 = cpu_s(), t0 = now_us();
        int rc = net_wait(2000000000);
        double cpu = cpu_s() - c0, wall = (now_us() - t0) / 1e6;
        printf("idle node %d (%s), %-8s: net_wait(2 s) = %d after %.2f s, CPU %.3f s = %.2f%% "
               "of a core\n",
               me, net_path(me ? 0 : 1) == NET_PATH_SHM ? "shm" : "MPI", names[i], rc, wall, cpu,
               100 * cpu / wall);
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
        net_fini();
    }
}

int main(int argc, char **argv)
{
    int level, n, do_idle = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-r") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
            const char *p = argv[++i];
            policy = !strcmp(p, "block") ? NET_IDLE_BLOCK
                     : !strcmp(p, "adaptive") ? NET_IDLE_ADAPTIVE : NET_IDLE_SPIN;
        } else if (!strcmp(argv[i], "-q"))
            quick = 1;
        else if (!strcmp(argv[i], "--idle"))
            do_idle = 1;
    }
    if (n < 2 || level < MPI_THREAD_FUNNELED || runs < 1 || runs > MAX_RUNS) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np 2 bench_net_mpi [-r 1..%d] [-p spin|block|"
                            "adaptive] [-q] [--idle]\n", MAX_RUNS);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, &pair);
    if (do_idle) {
        idle();
        MPI_Finalize();
        return 0;
    }
    buf = calloc(1, MB);
    net_config_t cfg = config(policy);
    if (!buf || net_init_mpi(&cfg) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (me < 2)
        bench();
    else
        net_get(1); /* a bystander: until node 0 says the end */
    while (net_flush() != 0)
        net_wait(1000000);
    MPI_Barrier(MPI_COMM_WORLD);
    net_fini();
    free(buf);
    MPI_Finalize();
    return 0;
}
