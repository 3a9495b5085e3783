/*
 * pde.c - IVY's 3D PDE solver on UPVM's shared virtual memory: Jacobi
 * relaxation of a Poisson problem on an n x n x n grid (the 7-point
 * stencil, fixed boundary values).
 *
 * IVY (Li 1988, "Experiments", Figures 4 and 5): the linear equation
 * solver's parallel Jacobi with a sparse A "coded into the program" (never
 * stored), the vectors x and b stored linearly in the shared virtual
 * memory; 50^3 unknowns gave super-linear speedups (the problem did not
 * fit one Apollo's memory, so one processor paged to disk: Table 1), 40^3
 * ordinary ones.
 *
 * Here: u (x, double-buffered) and f (b) are n^3 doubles each, linear in
 * shared memory (plane z is n^2 doubles; planes are not page-aligned, so
 * neighbouring slabs share a page at their border, as IVY's linear layout
 * did).  Worker i owns the interior planes [1 + (n-2) i / W, 1 + (n-2)(i+1)
 * / W) and fills its planes of u and f itself (untimed setup; the first
 * and last workers also the boundary planes), then runs -i iterations,
 * each reading the halo planes of its neighbours' slabs through shared
 * memory, iterations separated by an eventcount barrier.  What differs: a
 * fixed iteration count (no convergence test), and no super-linear case:
 * every node here has the whole machine's memory (Figure 4's needs a
 * problem larger than a node's memory: not reproduced).
 *
 *   ivy-pde [-n N] [-i ITERS] [-w W] [-Y US]    (default 64, 100, nodes)
 *
 * -Y US: yield every US microseconds of computing (checked per grid line).
 *
 * Checked against the same iterations done sequentially on node 0 in
 * private memory (relative difference <= 1e-9, exit 1 if not).
 */
#include <getopt.h>
#include <math.h>

#include "ivy.h"

/* u's boundary value and the source term at (x, y, z). */
static double boundary(long n, long x, long y, long z)
{
    return (double)(x + 2 * y + 3 * z) / (double)n;
}

static double source(long n, long x, long y, long z)
{
    return sin((double)(x * 7 + y * 3 + z) / (double)n);
}

/* Planes [zlo, zhi) of u0, u1 and f (boundary points of u in both
 * buffers, interior 0). */
static void init_planes(double *u0, double *u1, double *f, long n, long zlo, long zhi)
{
    for (long z = zlo; z < zhi; z++)
        for (long y = 0; y < n; y++)
            for (long x = 0; x < n; x++) {
                long i = (z * n + y) * n + x;
                int edge = x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1;
                u0[i] = u1[i] = edge ? boundary(n, x, y, z) : 0.0;
                f[i] = source(n, x, y, z);
            }
}

/* One relaxation of interior planes [zlo, zhi): un from u. */
static void relax(const double *u, double *un, const double *f, long n, long zlo, long zhi,
                  struct ivy_worker *w)
{
    const long p = n * n;
    const double h2 = 1.0 / (double)((n - 1) * (n - 1));
    for (long z = zlo; z < zhi; z++)
        for (long y = 1; y < n - 1; y++) {
            long r = (z * n + y) * n;
            ivy_poll(w);
            for (long x = 1; x < n - 1; x++) {
                long i = r + x;
                un[i] = (u[i - 1] + u[i + 1] + u[i - n] + u[i + n] + u[i - p] + u[i + p] -
                         h2 * f[i]) / 6.0;
            }
        }
}

static int worker(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct ivy_worker w;
    ivy_worker_start(&w);
    struct ivy_ctl *c = w.c;
    long n = c->arg[0], iters = c->arg[1], lo, hi;
    double *U[2] = {c->ptr[0], c->ptr[1]}, *f = c->ptr[2];
    ivy_part(n - 2, c->workers, w.me, &lo, &hi);
    lo++, hi++;
    init_planes(U[0], U[1], f, n, w.me == 0 ? 0 : lo, w.me == c->workers - 1 ? n : hi);

    ivy_worker_go(&w, 1);
    for (long k = 0; k < iters; k++) {
        relax(U[k & 1], U[(k + 1) & 1], f, n, lo, hi, &w);
        ivy_barrier(&w);
    }
    ivy_worker_done(&w);
    ivy_worker_end(&w);
    return 0;
}
UPVM_TASK("ivy-pde", worker)

int main(int argc, char **argv)
{
    long n = 64, iters = 100;
    int W = ivy_nodes(), opt;
    long yield_ns = 0;
    while ((opt = getopt(argc, argv, "n:i:w:Y:")) != -1) {
        switch (opt) {
        case 'Y': yield_ns = ivy_yield_arg(optarg); break;
        case 'n': n = atol(optarg); break;
        case 'i': iters = atol(optarg); break;
        case 'w': W = ivy_workers_arg(optarg); break;
        default:
            fprintf(stderr, "usage: ivy-pde [-n N] [-i ITERS] [-w WORKERS] [-Y US]\n");
            return 2;
        }
    }
    if (n - 2 < W || iters < 1) {
        fprintf(stderr, "ivy-pde: need N - 2 >= workers and ITERS >= 1\n");
        return 2;
    }
    size_t bytes = (size_t)n * (size_t)n * (size_t)n * sizeof(double);
    struct ivy_ctl *c = ivy_ctl_new(W);
    c->arg[0] = n, c->arg[1] = iters, c->yield_ns = yield_ns;
    c->ptr[0] = ivy_alloc(bytes);
    c->ptr[1] = ivy_alloc(bytes);
    c->ptr[2] = ivy_alloc(bytes);
    ivy_spawn(c, "ivy-pde");
    double t = ivy_secs(ivy_phase(c, 1));
    uint64_t sum[IVY_NSTAT];
    ivy_finish(c, sum);

    uint64_t t0 = upvm_now_ns();
    double *U[2] = {malloc(bytes), malloc(bytes)}, *f = malloc(bytes);
    if (!U[0] || !U[1] || !f)
        ivy_die("malloc", -ENOMEM);
    init_planes(U[0], U[1], f, n, 0, n);
    for (long k = 0; k < iters; k++)
        relax(U[k & 1], U[(k + 1) & 1], f, n, 1, n - 1, NULL);
    double seq = ivy_secs(upvm_now_ns() - t0);
    const double *us = U[iters & 1], *up = c->ptr[iters & 1];
    int ok = 1;
    for (long i = 0; i < n * n * n && ok; i++)
        if (!(fabs(up[i] - us[i]) <= 1e-9 * (1 + fabs(us[i])))) {
            fprintf(stderr, "ivy-pde: u[%ld] = %.17g, sequentially %.17g\n", i, up[i], us[i]);
            ok = 0;
        }
    char size[64];
    snprintf(size, sizeof size, "%ld^3x%ld", n, iters);
    return ivy_report("pde", size, c, t, seq, sum, ok);
}
