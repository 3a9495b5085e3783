/*
 * policy.c - the balancing policies (gs.h; docs/balancing.md, "Policies"):
 * pure functions from a view to moves.
 *
 * Every policy works on a plan: the view's placement, changed move by
 * move, with the nodes' loads kept up to date, so that each decision sees
 * the ones before it.  All loops go over the tasks in the order of their
 * tids (or heaviest first, ties by tid) and over the nodes in the order of
 * their numbers, and loads are summed in that order: the same view, in
 * whatever order its tasks are listed, gives the same moves.
 *
 * Balance is load per capacity: a node that gets half a core should carry
 * half the load.  The average is the load of the nodes that count (up, not
 * vacated) over the capacity of the nodes that may take tasks (up, not
 * vacated, capacity > 0).  A node "overloaded" is above average * (1 +
 * threshold).
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>

#include "gs/gs.h"

#define CAP_FLOOR 1e-3          /* capacity 0 divides as this: its load shows as
                                 * a huge ratio that still shrinks move by move */
#define EPS 1e-9                /* loads that differ by rounding only are equal */
#define COMM_MSGS 1000.0        /* a pair this chatty (msgs/s) is worth co-locating */
#define COMM_BYTES (8.0 * 1024 * 1024) /* ... or this heavy (bytes/s) */
#define IDLE_PULL 0.5           /* passive: a node this idle pulls a task */

static const struct gs_params default_params = {
    .threshold = GS_DEFAULT_THRESHOLD, .max_moves = GS_DEFAULT_MOVES, .min_load = GS_DEFAULT_MIN_LOAD};

struct plan {
    const struct gs_view *v;
    double thr, min_load;
    int nn;                    /* nodes, within GS_MAX_NODES */
    struct gs_move *moves;
    int n, room;               /* moves written; the most this phase may write */
    int max;                   /* the caller's max */
    int *order;                /* task indices by tid */
    int *heavy;                /* task indices heaviest first, ties by tid */
    int *at;                   /* each task's planned node */
    int *dest;                 /* scratch: greedy's assignment */
    bool *pinned;              /* moved this period, or bound to a partner: stays */
    double load[GS_MAX_NODES]; /* planned load per node */
};

/* ------------------------------------------------------------ the view */

static bool in_range(const struct plan *pl, int n) { return n >= 0 && n < pl->nn; }

/* Counts in the balance: its tasks may be moved off. */
static bool active(const struct plan *pl, int n)
{
    return in_range(pl, n) && pl->v->nodes[n].up && !pl->v->nodes[n].vacated;
}

/* May take tasks. */
static bool target(const struct plan *pl, int n)
{
    return active(pl, n) && pl->v->nodes[n].capacity > 0;
}

static double cap(const struct plan *pl, int n)
{
    double c = pl->v->nodes[n].capacity;
    return c > CAP_FLOOR ? c : CAP_FLOOR;
}

static double ratio(const struct plan *pl, int n) { return pl->load[n] / cap(pl, n); }

/* A load as a number to add: negative or NaN reads as 0. */
static double tload(const struct plan *pl, int i)
{
    double l = pl->v->tasks[i].load;
    return l > 0 ? l : 0;
}

static int tid(const struct plan *pl, int i) { return pl->v->tasks[i].tid; }

/* May be moved now (vacating ignores min_load; balancing does not). */
static bool movable(const struct plan *pl, int i)
{
    return pl->v->tasks[i].movable && !pl->pinned[i] && active(pl, pl->at[i]);
}

static bool worth(const struct plan *pl, int i)
{
    return movable(pl, i) && tload(pl, i) >= pl->min_load;
}

static double average(const struct plan *pl)
{
    double load = 0, capacity = 0;
    for (int n = 0; n < pl->nn; n++) {
        if (active(pl, n))
            load += pl->load[n];
        if (target(pl, n))
            capacity += pl->v->nodes[n].capacity;
    }
    return capacity > 0 ? load / capacity : 0;
}

static double limit(const struct plan *pl) { return average(pl) * (1 + pl->thr); }

static bool over_threshold(const struct plan *pl)
{
    double lim = limit(pl);
    for (int n = 0; n < pl->nn; n++)
        if (active(pl, n) && ratio(pl, n) > lim + EPS)
            return true;
    return false;
}

/* ------------------------------------------------------------ the plan */

static int cmp_int(int x, int y) { return (x > y) - (x < y); }

/* qsort_r comparators; ctx is the view.  Total orders (tids are unique),
 * so qsort's instability cannot show. */
static int by_tid(const void *a, const void *b, void *ctx)
{
    const struct gs_task *t = ((const struct gs_view *)ctx)->tasks;
    return cmp_int(t[*(const int *)a].tid, t[*(const int *)b].tid);
}

static int by_weight(const void *a, const void *b, void *ctx)
{
    const struct gs_task *t = ((const struct gs_view *)ctx)->tasks;
    double x = t[*(const int *)a].load, y = t[*(const int *)b].load;
    x = x > 0 ? x : 0;
    y = y > 0 ? y : 0;
    if (x != y)
        return x > y ? -1 : 1;
    return by_tid(a, b, ctx);
}

static void sort_tasks(struct plan *pl)
{
    void *ctx = (void *)pl->v;
    for (int k = 0; k < pl->v->ntasks; k++)
        pl->order[k] = pl->heavy[k] = k;
    qsort_r(pl->order, (size_t)pl->v->ntasks, sizeof(int), by_tid, ctx);
    qsort_r(pl->heavy, (size_t)pl->v->ntasks, sizeof(int), by_weight, ctx);
}

/* A node's load: its tasks' summed by tid.  Not the node's own figure: it
 * is the same sum (gs.h) summed in another order, and a rounding apart
 * would make the moves depend on the order of the view's tasks. */
static void sum_loads(struct plan *pl)
{
    for (int k = 0; k < pl->v->ntasks; k++) {
        int i = pl->order[k];
        if (in_range(pl, pl->at[i]))
            pl->load[pl->at[i]] += tload(pl, i);
    }
}

static bool plan_init(struct plan *pl, const struct gs_view *v, const struct gs_params *p,
                      struct gs_move *moves, int max)
{
    size_t nt = v->ntasks > 0 ? (size_t)v->ntasks : 0;
    *pl = (struct plan){.v = v, .moves = moves, .max = max > 0 ? max : 0};
    p = p ? p : &default_params;
    pl->thr = p->threshold > 0 ? p->threshold : 0;
    pl->min_load = p->min_load > 0 ? p->min_load : 0;
    pl->nn = v->nnodes < 0 ? 0 : v->nnodes > GS_MAX_NODES ? GS_MAX_NODES : v->nnodes;
    pl->room = pl->max;
    pl->order = malloc((4 * nt + 1) * sizeof(int));
    pl->pinned = calloc(nt + 1, sizeof(bool));
    if (!pl->order || !pl->pinned)
        return false;
    pl->heavy = pl->order + nt;
    pl->at = pl->heavy + nt;
    pl->dest = pl->at + nt;
    for (size_t i = 0; i < nt; i++)
        pl->at[i] = v->tasks[i].node;
    sort_tasks(pl);
    sum_loads(pl);
    return true;
}

static int plan_done(struct plan *pl)
{
    free(pl->order);
    free(pl->pinned);
    return pl->n;
}

/* The balancing phase after vacating: max_moves of its own. */
static void budget(struct plan *pl, const struct gs_params *p)
{
    int mm = (p ? p : &default_params)->max_moves;
    mm = mm > 0 ? mm : 0;
    pl->room = pl->max - pl->n < mm ? pl->max : pl->n + mm;
}

static bool move(struct plan *pl, int i, int to, const char *why)
{
    if (pl->n >= pl->room)
        return false;
    int from = pl->at[i];
    pl->moves[pl->n++] = (struct gs_move){.tid = tid(pl, i), .from = from, .to = to, .why = why};
    pl->load[from] -= tload(pl, i);
    pl->load[to] += tload(pl, i);
    pl->at[i] = to;
    pl->pinned[i] = true;
    return true;
}

/* Index of the task with this tid, -1 when none (binary search on order). */
static int find_tid(const struct plan *pl, int t)
{
    int lo = 0, hi = pl->v->ntasks - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, x = tid(pl, pl->order[mid]);
        if (x == t)
            return pl->order[mid];
        if (x < t)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* ------------------------------------------------------------ vacating */

/* The target with the most spare capacity (cores), lowest number on a tie. */
static int most_spare(const struct plan *pl)
{
    int best = -1;
    double spare = 0;
    for (int n = 0; n < pl->nn; n++) {
        double s = pl->v->nodes[n].capacity - pl->load[n];
        if (target(pl, n) && (best < 0 || s > spare + EPS))
            best = n, spare = s;
    }
    return best;
}

static bool on_vacated(const struct plan *pl, int i)
{
    int n = pl->at[i];
    return in_range(pl, n) && pl->v->nodes[n].up && pl->v->nodes[n].vacated;
}

/* Every movable task off the vacated nodes that are up (a node that is
 * down cannot send its tasks), heaviest first, each where most room is
 * left.  Limited by max only: the user asked for it. */
static void vacate(struct plan *pl)
{
    for (int k = 0; k < pl->v->ntasks; k++) {
        int i = pl->heavy[k];
        if (!pl->v->tasks[i].movable || pl->pinned[i] || !on_vacated(pl, i))
            continue;
        int to = most_spare(pl);
        if (to < 0 || !move(pl, i, to, "its node is vacated"))
            return;
    }
}

/* ------------------------------------------------------------ refine */

/* The best task to move from src to dst (dst < 0: any target): it leaves
 * dst within the limit and lowers max(src, dst) below src's ratio; the
 * lowest such max wins, ties by tid then node.  False when none. */
static bool pick(const struct plan *pl, int src, int dst, int *task, int *to)
{
    double lim = limit(pl), best = ratio(pl, src) - EPS;
    bool found = false;
    for (int k = 0; k < pl->v->ntasks; k++) {
        int i = pl->order[k];
        if (pl->at[i] != src || !worth(pl, i))
            continue;
        for (int n = dst < 0 ? 0 : dst; n < (dst < 0 ? pl->nn : dst + 1); n++) {
            if (n == src || !target(pl, n))
                continue;
            double l = tload(pl, i), rd = (pl->load[n] + l) / cap(pl, n);
            double rs = (pl->load[src] - l) / cap(pl, src), worst = rd > rs ? rd : rs;
            if (rd <= lim + EPS && worst < best - EPS)
                best = worst, *task = i, *to = n, found = true;
        }
    }
    return found;
}

/* Active nodes over the limit, most loaded first (ties: lowest number). */
static int overloaded(const struct plan *pl, int *nodes)
{
    int k = 0;
    double lim = limit(pl);
    for (int n = 0; n < pl->nn; n++) {
        if (!active(pl, n) || ratio(pl, n) <= lim + EPS)
            continue;
        int j = k++;
        for (; j > 0 && ratio(pl, nodes[j - 1]) < ratio(pl, n); j--)
            nodes[j] = nodes[j - 1];
        nodes[j] = n;
    }
    return k;
}

/* One move from the most loaded node that has an improving one; false
 * when no overloaded node has. */
static bool refine_step(struct plan *pl, int dst, const char *why)
{
    int nodes[GS_MAX_NODES], task, to;
    int k = overloaded(pl, nodes);
    for (int j = 0; j < k; j++)
        if (nodes[j] != dst && pick(pl, nodes[j], dst, &task, &to))
            return move(pl, task, to, why);
    return false;
}

static void refine(struct plan *pl)
{
    while (pl->n < pl->room && refine_step(pl, -1, "its node is overloaded"))
        ;
}

/* ------------------------------------------------------------ greedy */

/* The node where task i leaves the least load per capacity, given the loads
 * l[]: ties go to where it is (no move for nothing), then the lowest number. */
static int greedy_node(const struct plan *pl, const double *l, int i)
{
    int best = -1;
    double r = 0;
    for (int n = 0; n < pl->nn; n++) {
        if (!target(pl, n))
            continue;
        double rn = (l[n] + tload(pl, i)) / cap(pl, n);
        if (best < 0 || rn < r - EPS || (rn <= r + EPS && n == pl->at[i] && best != pl->at[i]))
            best = n, r = rn;
    }
    return best;
}

/* GreedyLB: every task worth moving placed again, heaviest first. */
static void greedy_assign(struct plan *pl)
{
    double l[GS_MAX_NODES];
    for (int n = 0; n < pl->nn; n++)
        l[n] = pl->load[n];
    for (int k = 0; k < pl->v->ntasks; k++)
        if (worth(pl, pl->heavy[k]))
            l[pl->at[pl->heavy[k]]] -= tload(pl, pl->heavy[k]);
    for (int k = 0; k < pl->v->ntasks; k++) {
        int i = pl->heavy[k];
        pl->dest[i] = worth(pl, i) ? greedy_node(pl, l, i) : pl->at[i];
        if (pl->dest[i] >= 0)
            l[pl->dest[i]] += tload(pl, i);
    }
}

static void greedy(struct plan *pl)
{
    if (!over_threshold(pl))
        return;
    greedy_assign(pl);
    for (int k = 0; k < pl->v->ntasks; k++) {
        int i = pl->heavy[k];
        if (worth(pl, i) && pl->dest[i] >= 0 && pl->dest[i] != pl->at[i] &&
            !move(pl, i, pl->dest[i], "greedy placement"))
            return;
    }
}

/* ------------------------------------------------------------ passive */

/* IVY-style: each mostly idle node pulls one task from the most loaded
 * overloaded node that has one that fits. */
static void passive(struct plan *pl)
{
    for (int n = 0; n < pl->nn && pl->n < pl->room; n++)
        if (target(pl, n) && pl->v->nodes[n].idle >= IDLE_PULL)
            refine_step(pl, n, "an idle node pulled it");
}

/* ------------------------------------------------------------ comm */

struct edge {
    int a, b; /* task indices, tid(a) < tid(b) */
    double rate;
};

static bool heavy_peer(const struct gs_peer *p)
{
    return p->msgs_per_s >= COMM_MSGS || p->bytes_per_s >= COMM_BYTES;
}

/* By pair, its larger report first: a pair's duplicates then follow it. */
static int edge_by_pair(const void *x, const void *y, void *ctx)
{
    const struct edge *e = x, *f = y;
    const struct gs_task *t = ((const struct gs_view *)ctx)->tasks;
    int d = cmp_int(t[e->a].tid, t[f->a].tid);
    d = d ? d : cmp_int(t[e->b].tid, t[f->b].tid);
    return d ? d : (e->rate < f->rate) - (e->rate > f->rate);
}

/* Chattiest first, ties by the pair's tids. */
static int edge_by_rate(const void *x, const void *y, void *ctx)
{
    const struct edge *e = x, *f = y;
    if (e->rate != f->rate)
        return e->rate > f->rate ? -1 : 1;
    return edge_by_pair(x, y, ctx);
}

/* The heavy pairs, chattiest first, each once (with its larger report:
 * both partners may report it). */
static int heavy_edges(const struct plan *pl, struct edge *e)
{
    int k = 0, u = 0;
    void *ctx = (void *)pl->v;
    for (int i = 0; i < pl->v->ntasks; i++)
        for (int j = 0; j < GS_PEERS; j++) {
            const struct gs_peer *p = &pl->v->tasks[i].peers[j];
            int o = p->tid ? find_tid(pl, p->tid) : -1;
            if (o < 0 || o == i || !heavy_peer(p))
                continue;
            bool lo = tid(pl, i) < tid(pl, o);
            e[k++] = (struct edge){.a = lo ? i : o, .b = lo ? o : i, .rate = p->msgs_per_s};
        }
    qsort_r(e, (size_t)k, sizeof *e, edge_by_pair, ctx);
    for (int j = 0; j < k; j++)
        if (u == 0 || e[u - 1].a != e[j].a || e[u - 1].b != e[j].b)
            e[u++] = e[j];
    qsort_r(e, (size_t)u, sizeof *e, edge_by_rate, ctx);
    return u;
}

/* Moving task i next to partner o loses no parallelism: dst stays within
 * the limit, or the pair fits in one core (they wait for each other) and
 * dst's core is not oversubscribed. */
static bool colocate_fits(const struct plan *pl, int i, int o)
{
    int dst = pl->at[o];
    double after = pl->load[dst] + tload(pl, i), slack = 1 + pl->thr;
    if (!movable(pl, i) || !target(pl, dst))
        return false;
    if (after / cap(pl, dst) <= limit(pl) + EPS)
        return true;
    return tload(pl, i) + tload(pl, o) <= slack + EPS && after <= pl->v->nodes[dst].capacity * slack + EPS;
}

/* The lighter one joins the heavier (ties: the higher tid moves), else the
 * other way round; then both stay for the rest of the period. */
static void colocate(struct plan *pl, const struct edge *e)
{
    int light = tload(pl, e->a) < tload(pl, e->b) ? e->a : e->b;
    int other = light == e->a ? e->b : e->a;
    if (pl->at[e->a] != pl->at[e->b]) {
        if (colocate_fits(pl, light, other))
            move(pl, light, pl->at[other], "co-located with its partner");
        else if (colocate_fits(pl, other, light))
            move(pl, other, pl->at[light], "co-located with its partner");
    }
    if (pl->at[e->a] == pl->at[e->b])
        pl->pinned[e->a] = pl->pinned[e->b] = true;
}

/* Without the pairs (no memory) refine would separate them: then only
 * the vacating moves are made. */
static void comm(struct plan *pl)
{
    struct edge *e = malloc(((size_t)pl->v->ntasks * GS_PEERS + 1) * sizeof *e);
    if (!e)
        return;
    int k = heavy_edges(pl, e);
    for (int j = 0; j < k; j++)
        colocate(pl, &e[j]);
    free(e);
    refine(pl);
}

/* ------------------------------------------------------------ policies */

enum kind { NONE, GREEDY, REFINE, COMM, PASSIVE };

static int decide(enum kind kind, const struct gs_view *v, const struct gs_params *p,
                  struct gs_move *moves, int max)
{
    struct plan pl;
    if (!v || !moves)
        return 0;
    if (!plan_init(&pl, v, p, moves, max)) {
        plan_done(&pl);
        return 0; /* no memory to plan with: no moves, the next period retries */
    }
    vacate(&pl);
    budget(&pl, p);
    if (kind == GREEDY)
        greedy(&pl);
    else if (kind == REFINE)
        refine(&pl);
    else if (kind == PASSIVE)
        passive(&pl);
    else if (kind == COMM)
        comm(&pl);
    return plan_done(&pl);
}

#define POLICY(fn, kind)                                                                     \
    static int fn(const struct gs_view *v, const struct gs_params *p, struct gs_move *moves, \
                  int max)                                                                   \
    {                                                                                        \
        return decide(kind, v, p, moves, max);                                               \
    }
POLICY(decide_none, NONE)
POLICY(decide_greedy, GREEDY)
POLICY(decide_refine, REFINE)
POLICY(decide_comm, COMM)
POLICY(decide_passive, PASSIVE)

static const struct gs_policy none = {"none", "no balancing (vacated nodes are still emptied)",
                                      decide_none};
static const struct gs_policy greedy_p = {
    "greedy", "place every task again, heaviest first, on the least loaded node (GreedyLB)",
    decide_greedy};
static const struct gs_policy refine_p = {
    "refine", "move a few tasks off overloaded nodes onto the least loaded (RefineLB)",
    decide_refine};
static const struct gs_policy comm_p = {
    "comm", "co-locate chatty pairs when no parallelism is lost, then refine (default)",
    decide_comm};
static const struct gs_policy passive_p = {
    "passive", "mostly idle nodes pull one task each from overloaded nodes (IVY)",
    decide_passive};

static const struct gs_policy *const all[] = {&none, &greedy_p, &refine_p, &comm_p, &passive_p};

const struct gs_policy *const *gs_policies(int *n)
{
    if (n)
        *n = (int)ARRAY_SIZE(all);
    return all;
}

const struct gs_policy *gs_policy_find(const char *name)
{
    for (size_t k = 0; name && k < ARRAY_SIZE(all); k++)
        if (strcmp(all[k]->name, name) == 0)
            return all[k];
    return NULL;
}
