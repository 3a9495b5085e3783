/*
 * tsp.c - IVY's traveling salesman on UPVM's shared virtual memory: a
 * parallel branch-and-bound for the shortest tour of n random cities.
 *
 * IVY (Li 1988, "Experiments", Figure 5): a simplified version of a
 * branch-and-bound with 1-tree lower bounds; the available branches, the
 * graph and the least upper bound lie in the shared virtual memory; one
 * process per processor takes a branch from shared memory and runs the
 * sequential algorithm on it, accessing the shared structures mutually
 * exclusively.  Branch-and-bound has anomalies: the speedup was
 * super-linear there, and may be anything.
 *
 * Here: the distances (integers: rounded Euclidean distances of random
 * points in a 1000 x 1000 square), a queue of the partial tours 0 a b
 * (every ordered pair of two other cities, filled by main), and the best
 * tour and its cost lie in shared memory, the queue and the best tour
 * under an upvm_svm_lock each (on their own pages).  Each worker takes
 * partial tours from the queue under its lock and searches each depth
 * first; a branch is cut when its cost plus a lower bound of the rest (the
 * weight of a minimum spanning tree of the cities not yet visited, the
 * current one and city 0, by Prim) is at least the best cost, read
 * without the lock (a word in shared memory: a read copy, invalidated when
 * a better tour is found); a better complete tour is stored under the
 * lock.  The initial bound is the nearest-neighbour tour's cost, so the
 * work depends less on the order the branches are taken.  What differs:
 * an MST bound rather than a 1-tree of the remaining graph; the branches
 * are all made at the start (depth 2) rather than as the search goes.
 *
 *   ivy-tsp [-n CITIES] [-s SEED] [-w W] [-Y US]    (default 16, 1, nodes)
 *
 * -Y US: yield every US microseconds of searching (checked per search node).
 *
 * Checked against the optimum computed by dynamic programming (Held-Karp,
 * n <= 20) on node 0 in private memory: the cost must be equal, and the
 * tour found must visit every city once and cost that much.
 */
#include <getopt.h>
#include <limits.h>

#include "ivy.h"

#define MAXN 20

struct branch {
    int city[2];
    int cost; /* of 0 -> city[0] -> city[1] */
};

struct best {
    upvm_svm_lock_t lock;
    int cost __attribute__((aligned(64)));
    int tour[MAXN];
};

struct queue {
    upvm_svm_lock_t lock;
    long head __attribute__((aligned(64)));
    long count;
};

static void gen(int *d, int n, uint64_t seed)
{
    double x[MAXN], y[MAXN];
    uint64_t s = seed;
    for (int i = 0; i < n; i++)
        x[i] = ivy_unit(&s) * 1000, y[i] = ivy_unit(&s) * 1000;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double dx = x[i] - x[j], dy = y[i] - y[j], r = dx * dx + dy * dy, q = r / 2;
            for (int k = 0; k < 40 && q > 0; k++) /* sqrt without libm */
                q = (q + r / q) / 2;
            d[i * n + j] = (int)(q + 0.5);
        }
}

/* The weight of a minimum spanning tree of the cities in mask (Prim). */
static int mst(const int *d, int n, unsigned mask)
{
    int key[MAXN], in[MAXN], m = 0, total = 0;
    for (int i = 0; i < n; i++)
        if (mask >> i & 1)
            in[m] = i, key[m++] = INT_MAX;
    if (m == 0)
        return 0;
    key[0] = 0;
    for (int left = m; left > 0; left--) {
        int b = -1;
        for (int i = 0; i < m; i++)
            if (key[i] >= 0 && (b < 0 || key[i] < key[b]))
                b = i;
        total += key[b];
        int u = in[b];
        key[b] = -1;
        for (int i = 0; i < m; i++)
            if (key[i] >= 0 && d[u * n + in[i]] < key[i])
                key[i] = d[u * n + in[i]];
    }
    return total;
}

struct search {
    const int *d;
    int n;
    struct best *best; /* shared */
    struct ivy_worker *w;
    int path[MAXN];
    long nodes;
};

static int best_cost(struct best *b)
{
    return __atomic_load_n(&b->cost, __ATOMIC_RELAXED);
}

static void dfs(struct search *s, int depth, unsigned visited, int cost)
{
    int n = s->n, cur = s->path[depth - 1];
    s->nodes++;
    ivy_poll(s->w);
    if (depth == n) {
        int total = cost + s->d[cur * n];
        if (total < best_cost(s->best)) {
            int rc = upvm_svm_lock(&s->best->lock);
            if (rc)
                ivy_die("upvm_svm_lock", rc);
            if (total < s->best->cost) {
                memcpy(s->best->tour, s->path, sizeof(int) * (size_t)n);
                __atomic_store_n(&s->best->cost, total, __ATOMIC_RELAXED);
            }
            upvm_svm_unlock(&s->best->lock);
        }
        return;
    }
    unsigned all = (1u << n) - 1, rest = all & ~visited;
    if (cost + mst(s->d, n, rest | 1u << cur | 1u) >= best_cost(s->best))
        return;
    for (int c = 1; c < n; c++)
        if (rest >> c & 1) {
            int nc = cost + s->d[cur * n + c];
            if (nc >= best_cost(s->best))
                continue;
            s->path[depth] = c;
            dfs(s, depth + 1, visited | 1u << c, nc);
        }
}

static int worker(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct ivy_worker w;
    ivy_worker_start(&w);
    struct ivy_ctl *c = w.c;
    struct search s = {.d = c->ptr[0], .n = (int)c->arg[0], .best = c->ptr[1], .w = &w};
    struct queue *q = c->ptr[2];
    const struct branch *br = c->ptr[3];
    ivy_worker_go(&w, 1);
    for (;;) {
        int rc = upvm_svm_lock(&q->lock);
        if (rc)
            ivy_die("upvm_svm_lock", rc);
        long k = q->head < q->count ? q->head++ : -1;
        upvm_svm_unlock(&q->lock);
        if (k < 0)
            break;
        s.path[0] = 0, s.path[1] = br[k].city[0], s.path[2] = br[k].city[1];
        dfs(&s, 3, 1u | 1u << br[k].city[0] | 1u << br[k].city[1], br[k].cost);
    }
    ivy_worker_done(&w);
    ivy_worker_end(&w);
    return 0;
}
UPVM_TASK("ivy-tsp", worker)

/* The optimum by Held-Karp: f[S][j], the shortest path from 0 through the
 * set S (of cities 1..n-1) ending at j in S. */
static int held_karp(const int *d, int n)
{
    int m = n - 1;
    size_t sets = (size_t)1 << m;
    int *f = malloc(sets * (size_t)m * sizeof *f);
    if (!f)
        ivy_die("malloc", -ENOMEM);
    for (size_t S = 1; S < sets; S++)
        for (int j = 0; j < m; j++) {
            int *v = &f[S * (size_t)m + (size_t)j];
            if (!(S >> j & 1)) {
                *v = INT_MAX;
                continue;
            }
            size_t P = S & ~((size_t)1 << j);
            if (!P) {
                *v = d[j + 1];
                continue;
            }
            int b = INT_MAX;
            for (int k = 0; k < m; k++)
                if (P >> k & 1) {
                    int t = f[P * (size_t)m + (size_t)k];
                    if (t != INT_MAX && t + d[(k + 1) * n + j + 1] < b)
                        b = t + d[(k + 1) * n + j + 1];
                }
            *v = b;
        }
    int best = INT_MAX;
    for (int j = 0; j < m; j++) {
        int t = f[(sets - 1) * (size_t)m + (size_t)j] + d[(j + 1) * n];
        if (t < best)
            best = t;
    }
    free(f);
    return best;
}

int main(int argc, char **argv)
{
    int n = 16, W = ivy_nodes(), opt;
    long seed = 1;
    long yield_ns = 0;
    while ((opt = getopt(argc, argv, "n:s:w:Y:")) != -1) {
        switch (opt) {
        case 'Y': yield_ns = ivy_yield_arg(optarg); break;
        case 'n': n = atoi(optarg); break;
        case 's': seed = atol(optarg); break;
        case 'w': W = ivy_workers_arg(optarg); break;
        default:
            fprintf(stderr, "usage: ivy-tsp [-n CITIES] [-s SEED] [-w WORKERS] [-Y US]\n");
            return 2;
        }
    }
    if (n < 4 || n > MAXN) {
        fprintf(stderr, "ivy-tsp: 4 to %d cities\n", MAXN);
        return 2;
    }
    struct ivy_ctl *c = ivy_ctl_new(W);
    int *d = ivy_alloc((size_t)n * (size_t)n * sizeof(int));
    struct best *best = ivy_alloc(sizeof *best);
    struct queue *q = ivy_alloc(sizeof *q);
    struct branch *br = ivy_alloc((size_t)(n - 1) * (size_t)(n - 2) * sizeof *br);
    int rc;
    if ((rc = upvm_svm_lock_init(&best->lock)) || (rc = upvm_svm_lock_init(&q->lock)))
        ivy_die("upvm_svm_lock_init", rc);
    gen(d, n, (uint64_t)seed);
    /* the initial bound: the nearest-neighbour tour */
    unsigned seen = 1;
    int cur = 0, cost = 0;
    best->tour[0] = 0;
    for (int k = 1; k < n; k++) {
        int b = -1;
        for (int j = 1; j < n; j++)
            if (!(seen >> j & 1) && (b < 0 || d[cur * n + j] < d[cur * n + b]))
                b = j;
        cost += d[cur * n + b];
        best->tour[k] = cur = b;
        seen |= 1u << b;
    }
    best->cost = cost + d[cur * n];
    long nb = 0;
    for (int a = 1; a < n; a++)
        for (int b = 1; b < n; b++)
            if (a != b)
                br[nb].city[0] = a, br[nb].city[1] = b, br[nb++].cost = d[a] + d[a * n + b];
    q->count = nb;
    c->arg[0] = n, c->yield_ns = yield_ns;
    c->ptr[0] = d, c->ptr[1] = best, c->ptr[2] = q, c->ptr[3] = br;
    ivy_spawn(c, "ivy-tsp");
    double t = ivy_secs(ivy_phase(c, 1));
    uint64_t sum[IVY_NSTAT];
    ivy_finish(c, sum);

    uint64_t t0 = upvm_now_ns();
    int *dp = malloc((size_t)n * (size_t)n * sizeof *dp);
    if (!dp)
        ivy_die("malloc", -ENOMEM);
    gen(dp, n, (uint64_t)seed);
    int opt_cost = held_karp(dp, n);
    double seq = ivy_secs(upvm_now_ns() - t0);
    /* the tour found: a permutation starting at 0, of the cost claimed */
    int ok = best->cost == opt_cost, tc = 0;
    unsigned visited = 0;
    for (int k = 0; k < n; k++) {
        int a = best->tour[k], b = best->tour[(k + 1) % n];
        if (a < 0 || a >= n || b < 0 || b >= n || (visited >> a & 1)) {
            ok = 0;
            break;
        }
        visited |= 1u << a;
        tc += dp[a * n + b];
    }
    if (best->tour[0] != 0 || tc != best->cost)
        ok = 0;
    if (!ok)
        fprintf(stderr, "ivy-tsp: best %d (its tour costs %d), the optimum is %d\n", best->cost, tc,
                opt_cost);
    char size[32];
    snprintf(size, sizeof size, "%d-s%ld", n, seed);
    return ivy_report("tsp", size, c, t, seq, sum, ok);
}
