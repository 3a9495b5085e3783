/*
 * jacobi-pvm.c - the Jacobi solver of ivy/jacobi.c with PVM messages
 * instead of shared memory, to compare the two models on the same problem
 * (IVY's argument: shared virtual memory spares the programmer the
 * messages; this measures what it costs or saves in time).
 *
 * The same problem, rows and arithmetic (ivy/jacobi_common.h): worker i of
 * W (on node i % nodes) owns rows [n i / W, n (i+1) / W) and fills its rows
 * of A and b itself, in private memory (untimed setup), and keeps a
 * private copy of all of x.  Each iteration it computes its block of x',
 * sends it to every other worker (pvm_mcast, PvmDataRaw) and receives
 * theirs (from each sender in turn: PVM keeps a sender's messages in
 * order, so a block of the next iteration is never taken for this one's).
 * No barrier is needed: the messages are the synchronisation.  Timing as
 * the shared-memory programs: from every worker ready (a message each) to
 * every final block back at main (a message each).
 *
 *   jacobi-pvm [-n N] [-i ITERS] [-w W] [-s SEED]   (default 1024, 200, nodes)
 *
 * Prints the line of the ivy programs (prog=jacobi-pvm, manager=none; the
 * shared-memory counters are 0: it uses none) and checks x against the
 * sequential iterations, as ivy/jacobi.c does.
 */
#include <getopt.h>
#include <math.h>

#include "ivy/ivy.h"
#include "ivy/jacobi_common.h"

#define TAG_START 7200
#define TAG_READY 7201
#define TAG_GO    7202
#define TAG_X     7203
#define TAG_DONE  7204

static int worker(int argc, char **argv)
{
    (void)argc, (void)argv;
    int me = 0, W = 0, tids[IVY_MAXW], rc;
    long arg[3];
    if ((rc = pvm_recv(-1, TAG_START)) < 0 || pvm_upkint(&me, 1, 1) || pvm_upkint(&W, 1, 1) ||
        W < 1 || W > IVY_MAXW || pvm_upkint(tids, W, 1) || pvm_upklong(arg, 3, 1))
        ivy_die("receiving the start", rc);
    long n = arg[0], iters = arg[1], lo, hi, plo, phi;
    ivy_part(n, W, me, &lo, &hi);
    /* A's rows lo..hi-1 (row i at A + (i - lo) n), and b and x in full */
    double *A = malloc((size_t)(hi - lo) * (size_t)n * sizeof(double));
    double *b = malloc((size_t)n * sizeof(double));
    double *X[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
    int others[IVY_MAXW], no = 0;
    if (!A || !b || !X[0] || !X[1])
        ivy_die("malloc", -ENOMEM);
    for (long i = lo; i < hi; i++)
        gen_row((uint64_t)arg[2], n, i, A + (i - lo) * n, &b[i]);
    for (int j = 0; j < W; j++)
        if (j != me)
            others[no++] = tids[j];

    if (pvm_initsend(PvmDataRaw) < 0 || (rc = pvm_send(pvm_parent(), TAG_READY)) < 0)
        ivy_die("ready", rc);
    if ((rc = pvm_recv(pvm_parent(), TAG_GO)) < 0)
        ivy_die("go", rc);
    for (long k = 0; k < iters; k++) {
        double *x = X[k & 1], *xn = X[(k + 1) & 1];
        /* rows lo..hi-1 of A start at A - lo n, as jacobi_rows indexes them */
        jacobi_rows(A - lo * n, b, x, xn, n, lo, hi, NULL);
        if (no > 0) {
            if (pvm_initsend(PvmDataRaw) < 0 || pvm_pkdouble(xn + lo, (int)(hi - lo), 1) ||
                (rc = pvm_mcast(others, no, TAG_X)) < 0)
                ivy_die("pvm_mcast", rc);
            for (int j = 0; j < W; j++) {
                if (j == me)
                    continue;
                ivy_part(n, W, j, &plo, &phi);
                if ((rc = pvm_recv(tids[j], TAG_X)) < 0 || pvm_upkdouble(xn + plo, (int)(phi - plo), 1))
                    ivy_die("receiving a block of x", rc);
            }
        }
    }
    if (pvm_initsend(PvmDataRaw) < 0 || pvm_pkint(&me, 1, 1) ||
        pvm_pkdouble(X[iters & 1] + lo, (int)(hi - lo), 1) || (rc = pvm_send(pvm_parent(), TAG_DONE)) < 0)
        ivy_die("sending the result", rc);
    free(A), free(b), free(X[0]), free(X[1]);
    return 0;
}
UPVM_TASK("jacobi-pvm", worker)

int main(int argc, char **argv)
{
    long n = 1024, iters = 200, seed = 1;
    int W = ivy_nodes(), nodes = upvm_nodes(), opt, rc;
    while ((opt = getopt(argc, argv, "n:i:w:s:")) != -1) {
        switch (opt) {
        case 'n': n = atol(optarg); break;
        case 'i': iters = atol(optarg); break;
        case 'w': W = ivy_workers_arg(optarg); break;
        case 's': seed = atol(optarg); break;
        default:
            fprintf(stderr, "usage: jacobi-pvm [-n N] [-i ITERS] [-w WORKERS] [-s SEED]\n");
            return 2;
        }
    }
    if (n < W || iters < 1) {
        fprintf(stderr, "jacobi-pvm: need N >= workers and ITERS >= 1\n");
        return 2;
    }
    int tids[IVY_MAXW];
    for (int i = 0; i < W; i++) {
        char where[32];
        snprintf(where, sizeof where, nodes > 1 ? "node%d" : ".", i % nodes);
        if ((rc = pvm_spawn("jacobi-pvm", NULL, PvmTaskHost, where, 1, &tids[i])) != 1)
            ivy_die("pvm_spawn", rc < 0 ? rc : tids[i]);
    }
    long arg[3] = {n, iters, seed};
    for (int i = 0; i < W; i++)
        if (pvm_initsend(PvmDataRaw) < 0 || pvm_pkint(&i, 1, 1) || pvm_pkint(&W, 1, 1) ||
            pvm_pkint(tids, W, 1) || pvm_pklong(arg, 3, 1) || (rc = pvm_send(tids[i], TAG_START)) < 0)
            ivy_die("sending a worker its start", rc);
    for (int i = 0; i < W; i++)
        if ((rc = pvm_recv(-1, TAG_READY)) < 0)
            ivy_die("ready", rc);
    uint64_t t0 = upvm_now_ns();
    if (pvm_initsend(PvmDataRaw) < 0 || (rc = pvm_mcast(tids, W, TAG_GO)) < 0)
        ivy_die("go", rc);
    double *xp = malloc((size_t)n * sizeof(double));
    if (!xp)
        ivy_die("malloc", -ENOMEM);
    for (int i = 0; i < W; i++) {
        int who = -1;
        long lo, hi;
        if ((rc = pvm_recv(-1, TAG_DONE)) < 0 || pvm_upkint(&who, 1, 1) || who < 0 || who >= W)
            ivy_die("a result", rc);
        ivy_part(n, W, who, &lo, &hi);
        if (pvm_upkdouble(xp + lo, (int)(hi - lo), 1))
            ivy_die("a result's block", who);
    }
    double t = ivy_secs(upvm_now_ns() - t0);

    t0 = upvm_now_ns();
    double *A = malloc((size_t)n * (size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
    double *X[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
    if (!A || !b || !X[0] || !X[1])
        ivy_die("malloc", -ENOMEM);
    for (long i = 0; i < n; i++)
        gen_row((uint64_t)seed, n, i, A + i * n, &b[i]);
    for (long k = 0; k < iters; k++)
        jacobi_rows(A, b, X[k & 1], X[(k + 1) & 1], n, 0, n, NULL);
    double seq = ivy_secs(upvm_now_ns() - t0);
    const double *xs = X[iters & 1];
    int ok = 1;
    for (long i = 0; i < n && ok; i++)
        if (!(fabs(xp[i] - xs[i]) <= 1e-9 * (1 + fabs(xs[i])))) {
            fprintf(stderr, "jacobi-pvm: x[%ld] = %.17g, sequentially %.17g\n", i, xp[i], xs[i]);
            ok = 0;
        }
    uint64_t zero[IVY_NSTAT] = {0};
    char size[64];
    snprintf(size, sizeof size, "%ldx%ld", n, iters);
    return ivy_report_line("jacobi-pvm", size, W, nodes, "none", 0, t, seq, zero, ok);
}
