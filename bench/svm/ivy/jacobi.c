/*
 * jacobi.c - IVY's linear equation solver on UPVM's shared virtual memory:
 * Jacobi iterations for a dense, diagonally dominant A x = b.
 *
 * IVY (Li 1988, "Experiments", Figure 5): a parallel Jacobi transformed
 * straightforwardly from the sequential one; processes partition the rows
 * of A, are synchronised at each iteration by an eventcount, and A, x and
 * b lie linearly in the shared virtual memory, accessed freely.
 *
 * Here: W workers (worker i on node i % nodes), worker i owns the rows
 * [n i / W, n (i+1) / W); it fills its rows of A and b itself (untimed
 * setup: first touch, so its rows live on its node, as the pages of a
 * partitioned program settle in IVY after the first iteration), then runs
 * -i iterations x' = (b - (A - D) x) / D, x double-buffered in shared
 * memory (two blocks of n doubles: each worker reads all of x and writes
 * its part of x', so the pages of x' are written by several nodes: IVY's
 * false sharing, kept), iterations separated by an eventcount barrier.
 * What differs: a fixed iteration count rather than a convergence test
 * (the work is the same on every run and the result can be checked
 * exactly); C doubles rather than Pascal reals; the timed part starts
 * when every worker has set up (IVY counted process creation).
 *
 *   ivy-jacobi [-n N] [-i ITERS] [-w W] [-s SEED] [-Y US]   (default 1024, 200, nodes)
 *
 * -Y US: the workers yield every US microseconds of computing (checked per
 * row), so that their node serves the others (ivy.h, ivy_poll).
 *
 * The result is checked against the same iterations done sequentially on
 * node 0 in private memory (relative difference <= 1e-9, exit 1 if not).
 */
#include <getopt.h>
#include <math.h>

#include "ivy.h"
#include "jacobi_common.h"

static int worker(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct ivy_worker w;
    ivy_worker_start(&w);
    struct ivy_ctl *c = w.c;
    long n = c->arg[0], iters = c->arg[1], lo, hi;
    uint64_t seed = (uint64_t)c->arg[2];
    double *A = c->ptr[0], *b = c->ptr[1], *X[2] = {c->ptr[2], c->ptr[3]};
    ivy_part(n, c->workers, w.me, &lo, &hi);
    for (long i = lo; i < hi; i++)
        gen_row(seed, n, i, A + i * n, &b[i]);

    ivy_worker_go(&w, 1);
    for (long k = 0; k < iters; k++) {
        jacobi_rows(A, b, X[k & 1], X[(k + 1) & 1], n, lo, hi, &w);
        ivy_barrier(&w);
    }
    ivy_worker_done(&w);
    ivy_worker_end(&w);
    return 0;
}
UPVM_TASK("ivy-jacobi", worker)

int main(int argc, char **argv)
{
    long n = 1024, iters = 200, seed = 1;
    int W = ivy_nodes(), opt;
    long yield_ns = 0;
    while ((opt = getopt(argc, argv, "n:i:w:s:Y:")) != -1) {
        switch (opt) {
        case 'Y': yield_ns = ivy_yield_arg(optarg); break;
        case 'n': n = atol(optarg); break;
        case 'i': iters = atol(optarg); break;
        case 'w': W = ivy_workers_arg(optarg); break;
        case 's': seed = atol(optarg); break;
        default:
            fprintf(stderr, "usage: ivy-jacobi [-n N] [-i ITERS] [-w WORKERS] [-s SEED] [-Y US]\n");
            return 2;
        }
    }
    if (n < W || iters < 1) {
        fprintf(stderr, "ivy-jacobi: need N >= workers and ITERS >= 1\n");
        return 2;
    }
    struct ivy_ctl *c = ivy_ctl_new(W);
    c->arg[0] = n, c->arg[1] = iters, c->arg[2] = seed, c->yield_ns = yield_ns;
    c->ptr[0] = ivy_alloc((size_t)n * (size_t)n * sizeof(double));
    c->ptr[1] = ivy_alloc((size_t)n * sizeof(double));
    c->ptr[2] = ivy_alloc((size_t)n * sizeof(double));
    c->ptr[3] = ivy_alloc((size_t)n * sizeof(double));
    ivy_spawn(c, "ivy-jacobi");
    double t = ivy_secs(ivy_phase(c, 1));
    uint64_t sum[IVY_NSTAT];
    ivy_finish(c, sum);

    /* the check: the same iterations, sequentially, in private memory */
    uint64_t t0 = upvm_now_ns();
    double *A = malloc((size_t)n * (size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
    double *X[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
    if (!A || !b || !X[0] || !X[1])
        ivy_die("malloc", -ENOMEM);
    for (long i = 0; i < n; i++)
        gen_row((uint64_t)seed, n, i, A + i * n, &b[i]);
    for (long k = 0; k < iters; k++)
        jacobi_rows(A, b, X[k & 1], X[(k + 1) & 1], n, 0, n, NULL);
    double seq = ivy_secs(upvm_now_ns() - t0);
    const double *xs = X[iters & 1], *xp = c->ptr[2 + (iters & 1)];
    int ok = 1;
    for (long i = 0; i < n && ok; i++)
        if (!(fabs(xp[i] - xs[i]) <= 1e-9 * (1 + fabs(xs[i])))) {
            fprintf(stderr, "ivy-jacobi: x[%ld] = %.17g, sequentially %.17g\n", i, xp[i], xs[i]);
            ok = 0;
        }
    char size[64];
    snprintf(size, sizeof size, "%ldx%ld", n, iters);
    return ivy_report("jacobi", size, c, t, seq, sum, ok);
}
