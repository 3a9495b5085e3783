/*
 * mpi_pingpong.c - half round trip between two MPI ranks, the Open MPI
 * column of bench/nodes-compare.sh (the same exchange as the PVM
 * baseline's pingpong.c: one message there, one back, data checked once).
 *
 *   mpirun -np 2 ... mpi_pingpong [-b blocks] [-i iters_scale] [-T min_ms]
 *                                 [-w warmup] [-v] [size ...]
 *
 * Rank 0 sends SIZE bytes (MPI_Send of MPI_BYTE) to rank 1 and waits for
 * them back (MPI_Recv into a second array); rank 1 receives them and sends
 * them back.  For every size: one checked warm-up exchange (rank 0 compares
 * what came back with what it sent), 50 warm-up round trips (-w), then
 * `blocks` timed blocks; the value printed is the median over the blocks of
 * block time / (2 * round trips) = half a round trip, in microseconds.
 *
 * Round trips per block: the baseline pingpong.c's counts (1000 up to
 * 1000 B, 500 up to 10000 B, 100 up to 100000 B, 20 above), times -i; with
 * -T, more if needed so that a block lasts at least min_ms (calibrated on
 * the warm-up, so that sub-microsecond exchanges are not timed over a
 * fraction of a millisecond).  Sizes up to 1 GiB; the buffers are as large
 * as the largest size asked for.
 *
 * Output, one line per size (rank 0 only):
 *   RESULT mpi_pingpong size=1000 iters=1000 blocks=5 half_rtt_us=0.412 min_us=0.405 ranks_cpus=0,1
 *
 * ranks_cpus: the cpu each rank was on when it started timing (sched_getcpu),
 * to check that the ranks ran on two cores.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_CTRL 10
#define TAG_PING 11
#define TAG_PONG 12
#define MAXSIZE (1024 * 1024 * 1024) /* the largest size accepted; buffers fit the largest asked */
#define MAXSIZES 64

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int iters_for(int size, double scale)
{
    int n;
    if (size <= 1000)
        n = 1000;
    else if (size <= 10000)
        n = 500;
    else if (size <= 100000)
        n = 100;
    else
        n = 20;
    n = (int)(n * scale);
    return n < 5 ? 5 : n;
}

static void fill(char *buf, int size, int seed)
{
    for (int i = 0; i < size; i++)
        buf[i] = (char)((i * 31 + seed) & 0xff);
}

static void roundtrip(char *sbuf, char *rbuf, int size)
{
    MPI_Send(sbuf, size, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
    MPI_Recv(rbuf, size, MPI_BYTE, 1, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* rank 1: echo every ping of the announced size until the size is -1 */
static void echo(char *buf)
{
    int size;
    for (;;) {
        MPI_Recv(&size, 1, MPI_INT, 0, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (size < 0)
            return;
        for (;;) {
            MPI_Status st;
            int got;
            MPI_Recv(buf, size, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG != TAG_PING)
                break; /* TAG_CTRL with no data: end of this size */
            MPI_Get_count(&st, MPI_BYTE, &got);
            MPI_Send(buf, got, MPI_BYTE, 0, TAG_PONG, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    int rank, nranks, blocks = 5, warmup = 50, verbose = 0, nsizes = 0, sizes[MAXSIZES];
    int cpus[2], mycpu, maxsize = 1;
    double scale = 1.0, min_ms = 0;
    char *sbuf, *rbuf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_pingpong: wants exactly 2 ranks (mpirun -np 2), got %d\n", nranks);
        MPI_Finalize();
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-b") && i + 1 < argc)
            blocks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            scale = atof(argv[++i]);
        else if (!strcmp(argv[i], "-T") && i + 1 < argc)
            min_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (nsizes < MAXSIZES) {
            char *end;
            long sz = strtol(argv[i], &end, 10);
            if (*argv[i] == '\0' || *end != '\0' || sz < 0 || sz > MAXSIZE) {
                if (rank == 0)
                    fprintf(stderr, "mpi_pingpong: bad size or option '%s'\n", argv[i]);
                MPI_Finalize();
                return 2;
            }
            sizes[nsizes++] = (int)sz;
        }
    }
    if (nsizes == 0) {
        static const int d[] = {0, 8, 1000, 10000, 100000};
        for (int i = 0; i < (int)(sizeof d / sizeof d[0]); i++)
            sizes[nsizes++] = d[i];
    }
    if (blocks < 1)
        blocks = 1;
    if (warmup < 1)
        warmup = 1;
    for (int k = 0; k < nsizes; k++)
        if (sizes[k] > maxsize)
            maxsize = sizes[k];

    sbuf = malloc((size_t)maxsize);
    rbuf = malloc((size_t)maxsize);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "mpi_pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 0, (size_t)maxsize);
    memset(rbuf, 0, (size_t)maxsize);

    mycpu = sched_getcpu();
    MPI_Gather(&mycpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, MPI_COMM_WORLD);

    if (rank == 1) {
        echo(rbuf);
        free(sbuf);
        free(rbuf);
        MPI_Finalize();
        return 0;
    }

    for (int k = 0; k < nsizes; k++) {
        int size = sizes[k], iters = iters_for(size, scale);
        double t[256], mn, med, t0;

        if (blocks > 256)
            blocks = 256;
        MPI_Send(&size, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD);

        /* checked warm-up exchange */
        fill(sbuf, size, k + 1);
        memset(rbuf, 0, (size_t)size);
        roundtrip(sbuf, rbuf, size);
        if (size > 0 && memcmp(sbuf, rbuf, (size_t)size)) {
            fprintf(stderr, "mpi_pingpong: data mismatch at size %d\n", size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        t0 = now_us();
        for (int i = 0; i < warmup; i++)
            roundtrip(sbuf, rbuf, size);
        if (min_ms > 0) { /* blocks of at least min_ms: from the warm-up's rate */
            double per = (now_us() - t0) / warmup;
            double want = min_ms * 1000.0 / (per > 0.001 ? per : 0.001);
            if (want > iters)
                iters = want > 1e8 ? 100000000 : (int)want;
        }
        for (int b = 0; b < blocks; b++) {
            t0 = now_us();
            for (int i = 0; i < iters; i++)
                roundtrip(sbuf, rbuf, size);
            t[b] = (now_us() - t0) / (2.0 * iters);
            if (verbose)
                fprintf(stderr, "  block %d size %d: %.3f us\n", b, size, t[b]);
        }
        /* end of this size: an empty message with the control tag */
        MPI_Send(sbuf, 0, MPI_BYTE, 1, TAG_CTRL, MPI_COMM_WORLD);

        mn = t[0];
        for (int b = 1; b < blocks; b++)
            if (t[b] < mn)
                mn = t[b];
        med = median(t, blocks);
        printf("RESULT mpi_pingpong size=%d iters=%d blocks=%d half_rtt_us=%.3f "
               "min_us=%.3f ranks_cpus=%d,%d\n",
               size, iters, blocks, med, mn, cpus[0], cpus[1]);
        fflush(stdout);
    }
    {
        int stop = -1;
        MPI_Send(&stop, 1, MPI_INT, 1, TAG_CTRL, MPI_COMM_WORLD);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
