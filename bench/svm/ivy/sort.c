/*
 * sort.c - IVY's split-merge sort on UPVM's shared virtual memory: a
 * vector of records with random string keys, sorted in shared memory.
 *
 * IVY (Li 1988, "Experiments", Figure 6): a block odd-even merge-split
 * sort: the vector is divided into 2N blocks for N processes, each
 * process quicksorts two blocks, then does an odd-even block merge-split
 * 2N - 1 times; the vector lies in the shared virtual memory and the
 * processes access it freely.  The speedup curve is poor because the
 * algorithm itself does not speed up linearly.
 *
 * Here, two algorithms (-a):
 *   tree     (default) worker i sorts its block [n i / W, n (i+1) / W)
 *            (qsort), then runs are merged pairwise in ceil(log2 W)
 *            rounds (round k: the worker at the start of each pair of
 *            runs merges them into the other buffer; the others wait), an
 *            eventcount barrier after each round.  The vector is
 *            double-buffered in shared memory (the merge's target).
 *   oddeven  IVY's: 2W blocks, worker i sorts blocks 2i and 2i+1, then
 *            2W - 1 phases, each merge-splitting the pairs of neighbouring
 *            blocks (even phases (2i, 2i+1), odd phases (2i+1, 2i+2))
 *            through a private buffer; a pair already in order is left
 *            alone; a barrier after each phase.
 * Records are 16 bytes: a 12-byte key of random letters and the record's
 * index (ties broken by it, so the order is total).  Each worker fills the
 * records of its own block (untimed setup).  What differs: C's qsort for
 * the quicksort; fixed-size keys in the records rather than strings.
 *
 *   ivy-sort [-n RECORDS] [-a tree|oddeven] [-w W] [-Y US]   (default 2^20, tree, nodes)
 *
 * -Y US: yield every US microseconds of merging (checked every 256
 * records; qsort itself cannot yield).
 *
 * Checked record for record against qsort of the same records, done
 * sequentially on node 0 in private memory.
 */
#include <getopt.h>

#include "ivy.h"

struct rec {
    char key[12];
    uint32_t id;
};

static int cmp_rec(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    int c = memcmp(x->key, y->key, sizeof x->key);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

static void gen(struct rec *v, long lo, long hi)
{
    for (long i = lo; i < hi; i++) {
        uint64_t s = (uint64_t)i * 0xd1342543de82ef95ull + 7;
        for (int k = 0; k < 12; k++)
            v[i].key[k] = (char)('a' + ivy_rand(&s) % 26);
        v[i].id = (uint32_t)i;
    }
}

/* Merge sorted a[0, na) and b[0, nb) into out. */
static void merge(const struct rec *a, long na, const struct rec *b, long nb, struct rec *out,
                  struct ivy_worker *w)
{
    long i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        if (k % 256 == 0)
            ivy_poll(w);
        out[k++] = cmp_rec(&b[j], &a[i]) < 0 ? b[j++] : a[i++];
    }
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

static long blk(long n, int blocks, int b)
{
    long lo, hi;
    ivy_part(n, blocks, b, &lo, &hi);
    return lo;
}

static void sort_tree(struct ivy_worker *w, struct rec *V[2], long n)
{
    int W = w->c->workers, src = 0;
    long lo = blk(n, W, w->me), hi = blk(n, W, w->me + 1);
    qsort(V[0] + lo, (size_t)(hi - lo), sizeof(struct rec), cmp_rec);
    ivy_barrier(w);
    for (int s = 1; s < W; s *= 2, src ^= 1) {
        if (w->me % (2 * s) == 0) {
            long a = blk(n, W, w->me), m = blk(n, W, w->me + s < W ? w->me + s : W);
            long e = blk(n, W, w->me + 2 * s < W ? w->me + 2 * s : W);
            if (m < e)
                merge(V[src] + a, m - a, V[src] + m, e - m, V[src ^ 1] + a, w);
            else
                memcpy(V[src ^ 1] + a, V[src] + a, (size_t)(e - a) * sizeof(struct rec));
        }
        ivy_barrier(w);
    }
}

static void sort_oddeven(struct ivy_worker *w, struct rec *v, long n)
{
    int W = w->c->workers, B = 2 * W;
    long cap = blk(n, B, 2) - blk(n, B, 0) + 2;
    struct rec *tmp = malloc((size_t)cap * sizeof *tmp);
    if (!tmp)
        ivy_die("malloc", -ENOMEM);
    long lo = blk(n, B, 2 * w->me), hi = blk(n, B, 2 * w->me + 2);
    qsort(v + lo, (size_t)(hi - lo), sizeof(struct rec), cmp_rec);
    ivy_barrier(w);
    for (int p = 1; p < B; p++) {
        int a = 2 * w->me + (p & 1);
        if (a + 1 < B) {
            long s = blk(n, B, a), m = blk(n, B, a + 1), e = blk(n, B, a + 2);
            if (s < m && m < e && cmp_rec(&v[m - 1], &v[m]) > 0) {
                if (e - s > cap)
                    ivy_die("the merge buffer", e - s);
                merge(v + s, m - s, v + m, e - m, tmp, w);
                memcpy(v + s, tmp, (size_t)(e - s) * sizeof *tmp);
            }
        }
        ivy_barrier(w);
    }
    free(tmp);
}

/* Where the sorted records end up. */
static int rounds_of(int W)
{
    int r = 0;
    for (int s = 1; s < W; s *= 2)
        r++;
    return r;
}

static int worker(int argc, char **argv)
{
    (void)argc, (void)argv;
    struct ivy_worker w;
    ivy_worker_start(&w);
    struct ivy_ctl *c = w.c;
    long n = c->arg[0], lo, hi;
    int oddeven = (int)c->arg[1];
    struct rec *V[2] = {c->ptr[0], c->ptr[1]};
    ivy_part(n, c->workers, w.me, &lo, &hi);
    gen(V[0], lo, hi);
    ivy_worker_go(&w, 1);
    if (oddeven)
        sort_oddeven(&w, V[0], n);
    else
        sort_tree(&w, V, n);
    ivy_worker_done(&w);
    ivy_worker_end(&w);
    return 0;
}
UPVM_TASK("ivy-sort", worker)

int main(int argc, char **argv)
{
    long n = 1l << 20;
    int W = ivy_nodes(), opt, oddeven = 0;
    long yield_ns = 0;
    while ((opt = getopt(argc, argv, "n:a:w:Y:")) != -1) {
        switch (opt) {
        case 'Y': yield_ns = ivy_yield_arg(optarg); break;
        case 'n': n = atol(optarg); break;
        case 'a':
            if (strcmp(optarg, "tree") && strcmp(optarg, "oddeven"))
                goto usage;
            oddeven = strcmp(optarg, "oddeven") == 0;
            break;
        case 'w': W = ivy_workers_arg(optarg); break;
        default:
            goto usage;
        }
    }
    if (n < 2l * W || n > (1l << 32)) {
        fprintf(stderr, "ivy-sort: need 2 x workers <= RECORDS <= 2^32\n");
        return 2;
    }
    size_t bytes = (size_t)n * sizeof(struct rec);
    struct ivy_ctl *c = ivy_ctl_new(W);
    c->arg[0] = n, c->arg[1] = oddeven, c->yield_ns = yield_ns;
    c->ptr[0] = ivy_alloc(bytes);
    c->ptr[1] = oddeven ? NULL : ivy_alloc(bytes);
    ivy_spawn(c, "ivy-sort");
    double t = ivy_secs(ivy_phase(c, 1));
    uint64_t sum[IVY_NSTAT];
    ivy_finish(c, sum);

    uint64_t t0 = upvm_now_ns();
    struct rec *v = malloc(bytes);
    if (!v)
        ivy_die("malloc", -ENOMEM);
    gen(v, 0, n);
    qsort(v, (size_t)n, sizeof *v, cmp_rec);
    double seq = ivy_secs(upvm_now_ns() - t0);
    const struct rec *got = c->ptr[oddeven ? 0 : rounds_of(W) & 1];
    int ok = 1;
    for (long i = 0; i < n && ok; i++)
        if (memcmp(&got[i], &v[i], sizeof *v) != 0) {
            fprintf(stderr, "ivy-sort: record %ld is %.12s/%u, sequentially %.12s/%u\n", i,
                    got[i].key, (unsigned)got[i].id, v[i].key, (unsigned)v[i].id);
            ok = 0;
        }
    char size[64];
    snprintf(size, sizeof size, "%ld%s", n, oddeven ? "-oddeven" : "");
    return ivy_report("sort", size, c, t, seq, sum, ok);
usage:
    fprintf(stderr, "usage: ivy-sort [-n RECORDS] [-a tree|oddeven] [-w WORKERS] [-Y US]\n");
    return 2;
}
