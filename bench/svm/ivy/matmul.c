/*
 * matmul.c - IVY's matrix multiply on UPVM's shared virtual memory:
 * C = A B for n x n doubles.
 *
 * IVY (Li 1988, "Experiments", Figure 5): processes partition the problem
 * by the columns of B; A, B and C lie in the shared virtual memory, A and
 * B on one processor at the beginning, paged to the others on demand;
 * near-linear speedup (much computation per page moved).
 *
 * Here: main fills A and B on node 0 (as IVY: the workers' nodes get them
 * by read faults, during the timed part); worker i computes the rows
 * [n i / W, n (i+1) / W) of C (rows rather than IVY's columns: a row of C
 * is contiguous, so each worker writes pages of its own and reads all of
 * B; with columns every worker would write every page of C), in the i-k-j
 * order.  What differs: rows, not columns, of the result per worker.
 *
 *   ivy-matmul [-n N] [-w W] [-Y US]     (default 512, nodes)
 *
 * -Y US: yield every US microseconds of computing (checked per row of C).
 *
 * Checked against the same product computed sequentially on node 0 in
 * private memory (exact: the same operations in the same order).
 */
#include <getopt.h>
#include <math.h>

#include "ivy.h"

static void fill(double *A, double *B, long n)
{
    uint64_t s = 42;
    for (long i = 0; i < n * n; i++)
        A[i] = ivy_unit(&s) - 0.5;
    for (long i = 0; i < n * n; i++)
        B[i] = ivy_unit(&s) - 0.5;
}

/* Rows [lo, hi) of C = A B. */
static void mul_rows(const double *A, const double *B, double *C, long n, long lo, long hi,
                     struct ivy_worker *w)
{
    for (long i = lo; i < hi; i++) {
        ivy_poll(w);
        double *c = C + i * n;
        for (long j = 0; j < n; j++)
            c[j] = 0;
        for (long k = 0; k < n; k++) {
            double a = A[i * n + k];
            const double *b = B + k * n;
            for (long j = 0; j < n; j++)
                c[j] += a * b[j];
        }
    }
}

static int worker(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct ivy_worker w;
    ivy_worker_start(&w);
    struct ivy_ctl *c = w.c;
    long n = c->arg[0], lo, hi;
    ivy_part(n, c->workers, w.me, &lo, &hi);
    ivy_worker_go(&w, 1);
    mul_rows(c->ptr[0], c->ptr[1], c->ptr[2], n, lo, hi, &w);
    ivy_worker_done(&w);
    ivy_worker_end(&w);
    return 0;
}
UPVM_TASK("ivy-matmul", worker)

int main(int argc, char **argv)
{
    long n = 512;
    int W = ivy_nodes(), opt;
    long yield_ns = 0;
    while ((opt = getopt(argc, argv, "n:w:Y:")) != -1) {
        switch (opt) {
        case 'Y': yield_ns = ivy_yield_arg(optarg); break;
        case 'n': n = atol(optarg); break;
        case 'w': W = ivy_workers_arg(optarg); break;
        default:
            fprintf(stderr, "usage: ivy-matmul [-n N] [-w WORKERS] [-Y US]\n");
            return 2;
        }
    }
    if (n < W) {
        fprintf(stderr, "ivy-matmul: need N >= workers\n");
        return 2;
    }
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    struct ivy_ctl *c = ivy_ctl_new(W);
    c->arg[0] = n, c->yield_ns = yield_ns;
    c->ptr[0] = ivy_alloc(bytes);
    c->ptr[1] = ivy_alloc(bytes);
    c->ptr[2] = ivy_alloc(bytes);
    fill(c->ptr[0], c->ptr[1], n);
    ivy_spawn(c, "ivy-matmul");
    double t = ivy_secs(ivy_phase(c, 1));
    uint64_t sum[IVY_NSTAT];
    ivy_finish(c, sum);

    uint64_t t0 = upvm_now_ns();
    double *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
    if (!A || !B || !C)
        ivy_die("malloc", -ENOMEM);
    fill(A, B, n);
    mul_rows(A, B, C, n, 0, n, NULL);
    double seq = ivy_secs(upvm_now_ns() - t0);
    const double *cp = c->ptr[2];
    int ok = 1;
    for (long i = 0; i < n * n && ok; i++)
        if (!(fabs(cp[i] - C[i]) <= 1e-12 * (1 + fabs(C[i])))) {
            fprintf(stderr, "ivy-matmul: C[%ld] = %.17g, sequentially %.17g\n", i, cp[i], C[i]);
            ok = 0;
        }
    char size[32];
    snprintf(size, sizeof size, "%ld", n);
    return ivy_report("matmul", size, c, t, seq, sum, ok);
}
