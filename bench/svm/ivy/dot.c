/*
 * dot.c - IVY's dot product on UPVM's shared virtual memory: S = sum x_i
 * y_i over two long shared vectors.
 *
 * IVY (Li 1988, "Experiments", Figure 5): processes compute partial sums of
 * a partition, S is the sum of the partial sums; x and y are stored in the
 * shared virtual memory "in a random manner" (not distributed to the
 * processes that will use them), so nearly every page a process reads
 * comes from elsewhere: little computation per page moved, and no speedup
 * (included "so as not to paint too bright a picture").
 *
 * Here: -r rounds; in each, an untimed scatter step writes every page of x
 * and y from a worker picked pseudo-randomly per page and round (so each
 * page's owner is a random node, as in IVY), then the timed step: worker i
 * sums x_j y_j over its contiguous part [n i / W, n (i+1) / W) and writes
 * its partial sum to shared memory; main adds the partial sums.  time_s is
 * the sum of the timed steps.  Values are small integers depending on the
 * round (exact sums), so a stale page gives a wrong S: each round's S is
 * checked against the value computed sequentially.  What differs: the
 * rounds (to measure more than one pass; each round's data is new, so no
 * page read in a round is still valid in the next).
 *
 * The counters (faults, pages, frames) run from the first timed step to
 * the end, so they include the scatter steps of rounds 2..R.
 *
 *   ivy-dot [-n N] [-r ROUNDS] [-w W] [-Y US]    (default 2^20, 10, nodes)
 *
 * -Y US: yield every US microseconds of computing (checked per page).
 */
#include <getopt.h>

#include "ivy.h"

#define PER_PAGE ((long)(UPVM_SVM_PAGE / sizeof(double)))
#define MAX_ROUNDS 1000

static double xval(long i, long r) { return (double)((i + 3 * r) % 97 - 48); }
static double yval(long i, long r) { return (double)((i * 5 + r) % 89 - 44); }

/* The worker that writes page p in round r. */
static int page_writer(long p, long r, int workers)
{
    uint64_t s = (uint64_t)p * 0x9e3779b97f4a7c15ull ^ (uint64_t)r;
    return (int)(ivy_rand(&s) % (uint64_t)workers);
}

static int worker(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct ivy_worker w;
    ivy_worker_start(&w);
    struct ivy_ctl *c = w.c;
    long n = c->arg[0], rounds = c->arg[1], lo, hi;
    double *x = c->ptr[0], *y = c->ptr[1], *part = c->ptr[2];
    ivy_part(n, c->workers, w.me, &lo, &hi);
    for (long r = 1; r <= rounds; r++) {
        /* the scatter: this round's values, each page from a random worker */
        for (long p = 0; p * PER_PAGE < n; p++) {
            if (page_writer(p, r, c->workers) != w.me)
                continue;
            long end = (p + 1) * PER_PAGE < n ? (p + 1) * PER_PAGE : n;
            ivy_poll(&w);
            for (long i = p * PER_PAGE; i < end; i++)
                x[i] = xval(i, r);
        }
        for (long p = 0; p * PER_PAGE < n; p++) {
            if (page_writer(p + n, r, c->workers) != w.me)
                continue;
            long end = (p + 1) * PER_PAGE < n ? (p + 1) * PER_PAGE : n;
            ivy_poll(&w);
            for (long i = p * PER_PAGE; i < end; i++)
                y[i] = yval(i, r);
        }
        ivy_worker_go(&w, (uint64_t)r);
        double s = 0;
        for (long i = lo; i < hi; i++) {
            if (i % PER_PAGE == 0)
                ivy_poll(&w);
            s += x[i] * y[i];
        }
        part[w.me * 8] = s; /* (a cache line each) */
        ivy_worker_done(&w);
        ivy_barrier(&w); /* nobody scatters the next round while others read */
    }
    ivy_worker_end(&w);
    return 0;
}
UPVM_TASK("ivy-dot", worker)

int main(int argc, char **argv)
{
    long n = 1l << 20, rounds = 10;
    int W = ivy_nodes(), opt;
    long yield_ns = 0;
    while ((opt = getopt(argc, argv, "n:r:w:Y:")) != -1) {
        switch (opt) {
        case 'Y': yield_ns = ivy_yield_arg(optarg); break;
        case 'n': n = atol(optarg); break;
        case 'r': rounds = atol(optarg); break;
        case 'w': W = ivy_workers_arg(optarg); break;
        default:
            fprintf(stderr, "usage: ivy-dot [-n N] [-r ROUNDS] [-w WORKERS] [-Y US]\n");
            return 2;
        }
    }
    if (n < W || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "ivy-dot: need N >= workers and 1 <= ROUNDS <= %d\n", MAX_ROUNDS);
        return 2;
    }
    struct ivy_ctl *c = ivy_ctl_new(W);
    c->arg[0] = n, c->arg[1] = rounds, c->yield_ns = yield_ns;
    c->ptr[0] = ivy_alloc((size_t)n * sizeof(double));
    c->ptr[1] = ivy_alloc((size_t)n * sizeof(double));
    c->ptr[2] = ivy_alloc((size_t)W * 8 * sizeof(double));
    const double *part = c->ptr[2];
    static double S[MAX_ROUNDS + 1];
    uint64_t ns = 0;
    ivy_spawn(c, "ivy-dot");
    for (long r = 1; r <= rounds; r++) {
        ns += ivy_phase(c, (uint64_t)r);
        S[r] = 0;
        for (int i = 0; i < W; i++)
            S[r] += part[i * 8];
    }
    uint64_t sum[IVY_NSTAT];
    ivy_finish(c, sum);

    /* the check: every round's S, sequentially (exact: small integers) */
    uint64_t t0 = upvm_now_ns();
    double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
    if (!x || !y)
        ivy_die("malloc", -ENOMEM);
    int ok = 1;
    for (long r = 1; r <= rounds; r++) {
        for (long i = 0; i < n; i++)
            x[i] = xval(i, r), y[i] = yval(i, r);
        double s = 0;
        for (long i = 0; i < n; i++)
            s += x[i] * y[i];
        if (s != S[r]) {
            fprintf(stderr, "ivy-dot: round %ld: S = %.17g, sequentially %.17g\n", r, S[r], s);
            ok = 0;
        }
    }
    double seq = ivy_secs(upvm_now_ns() - t0);
    char size[64];
    snprintf(size, sizeof size, "%ldx%ld", n, rounds);
    return ivy_report("dot", size, c, ivy_secs(ns), seq, sum, ok);
}
