/*
 * test-policies.c - the balancing policies (src/gs/policy.c) on recorded
 * views: what each one moves, and gs.h's contract for all of them (no
 * unmovable task moved, no move to a down, vacated or capacity-0 node,
 * vacated nodes emptied first, max and max_moves respected, the same
 * view in any task order gives the same moves).
 *
 * Loads are what a node measures: CPU used, so 16 compute-bound tasks on
 * one core show 1/16 core each.
 */
#include <string.h>

#include "gs/gs.h"
#include "harness.h"

#define MAXT 64
#define MAXM 64

static struct gs_task tasks[MAXT];
static struct gs_view view;
static struct gs_params params = {.threshold = 0.15, .max_moves = 8, .min_load = 0.05};
static struct gs_move moves[MAXM];

/* ---------------------------------------------------------- building views */

static void nodes(int n)
{
    memset(&view, 0, sizeof view);
    memset(tasks, 0, sizeof tasks);
    view.nnodes = n;
    view.tasks = tasks;
    for (int i = 0; i < n; i++)
        view.nodes[i] = (struct gs_node){.up = true, .capacity = 1};
}

static struct gs_task *task(int tid, int node, double load, bool movable)
{
    CHECK(view.ntasks < MAXT);
    struct gs_task *t = &tasks[view.ntasks++];
    *t = (struct gs_task){.tid = tid, .node = node, .load = load, .movable = movable};
    return t;
}

/* count tasks of load each on node, tids from tid0 */
static void tasks_on(int node, int count, int tid0, double load)
{
    for (int k = 0; k < count; k++)
        task(tid0 + k, node, load, true);
}

static void talk(struct gs_task *a, struct gs_task *b, double msgs)
{
    a->peers[0] = (struct gs_peer){.tid = b->tid, .msgs_per_s = msgs, .bytes_per_s = msgs * 64};
    b->peers[0] = (struct gs_peer){.tid = a->tid, .msgs_per_s = msgs, .bytes_per_s = msgs * 64};
}

/* The nodes' measured load and idle fraction from their tasks. */
static void measure(void)
{
    for (int n = 0; n < view.nnodes; n++)
        view.nodes[n].load = 0;
    for (int i = 0; i < view.ntasks; i++)
        view.nodes[tasks[i].node].load += tasks[i].load;
    for (int n = 0; n < view.nnodes; n++) {
        struct gs_node *d = &view.nodes[n];
        double busy = d->capacity > 0 ? d->load / d->capacity : 1;
        d->idle = busy >= 1 ? 0 : 1 - busy;
    }
}

/* ---------------------------------------------------------- checking */

static const struct gs_task *by_tid(int tid)
{
    for (int i = 0; i < view.ntasks; i++)
        if (tasks[i].tid == tid)
            return &tasks[i];
    FAIL("no task %d", tid);
    return NULL;
}

/* gs.h's contract for any policy's answer. */
static void check_contract(int n, int max)
{
    CHECK(n >= 0 && n <= max);
    for (int k = 0; k < n; k++) {
        const struct gs_task *t = by_tid(moves[k].tid);
        CHECK(moves[k].to >= 0 && moves[k].to < view.nnodes);
        const struct gs_node *to = &view.nodes[moves[k].to];
        CHECK(t->movable);
        CHECK_EQ(moves[k].from, t->node);
        CHECK(moves[k].to != moves[k].from);
        CHECK(to->up && !to->vacated && to->capacity > 0);
        CHECK(moves[k].why && moves[k].why[0]);
        for (int j = 0; j < k; j++)
            CHECK(moves[j].tid != moves[k].tid);
    }
}

static int decide_max(const char *name, int max)
{
    const struct gs_policy *p = gs_policy_find(name);
    CHECK(p);
    measure();
    int n = p->decide(&view, &params, moves, max);
    check_contract(n, max);
    return n;
}

static int decide(const char *name) { return decide_max(name, MAXM); }

/* Load per capacity of node after the moves. */
static double ratio_after(int node, int n)
{
    double l = view.nodes[node].load;
    for (int k = 0; k < n; k++) {
        double tl = by_tid(moves[k].tid)->load;
        l += (moves[k].to == node ? tl : 0) - (moves[k].from == node ? tl : 0);
    }
    return l / view.nodes[node].capacity;
}

static void check_balanced_after(int n)
{
    double load = 0, cap = 0;
    for (int d = 0; d < view.nnodes; d++)
        if (view.nodes[d].up && !view.nodes[d].vacated)
            load += view.nodes[d].load, cap += view.nodes[d].capacity;
    for (int d = 0; d < view.nnodes; d++)
        if (view.nodes[d].up && !view.nodes[d].vacated && view.nodes[d].capacity > 0)
            CHECK(ratio_after(d, n) <= load / cap * (1 + params.threshold) + 1e-9);
}

static int moved_to(int node, int n)
{
    int c = 0;
    for (int k = 0; k < n; k++)
        c += moves[k].to == node;
    return c;
}

/* ---------------------------------------------------------- the catalogue */

TEST(find_every_policy)
{
    int n = 0;
    const struct gs_policy *const *all = gs_policies(&n);
    CHECK_EQ(n, 5);
    const char *names[] = {"none", "greedy", "refine", "comm", "passive"};
    for (int k = 0; k < n; k++) {
        CHECK(strcmp(all[k]->name, names[k]) == 0);
        CHECK(gs_policy_find(names[k]) == all[k]);
        CHECK(all[k]->what && all[k]->decide);
    }
    CHECK(gs_policy_find("greedyLB") == NULL);
    CHECK(gs_policy_find("") == NULL);
    CHECK(gs_policy_find(NULL) == NULL);
}

/* ---------------------------------------------------------- spreading */

/* 16 compute-bound tasks of 1 core each on node 0 of 2. */
static void sixteen_on_node0(double each)
{
    nodes(2);
    tasks_on(0, 16, 1, each);
}

TEST(greedy_halves_sixteen_tasks)
{
    sixteen_on_node0(1.0);
    int n = decide("greedy");
    CHECK_EQ(n, 8);
    CHECK_EQ(moved_to(1, n), 8);
    check_balanced_after(n);
}

/* RefineLB stops once within the threshold: 9/7 is 12.5 % over. */
TEST(refine_moves_until_within_threshold)
{
    sixteen_on_node0(1.0);
    int n = decide("refine");
    CHECK_EQ(n, 7);
    CHECK_EQ(moved_to(1, n), 7);
    check_balanced_after(n);
}

TEST(comm_spreads_compute_bound_tasks)
{
    sixteen_on_node0(1.0 / 16); /* as measured: they share one core */
    int n = decide("comm");
    CHECK_EQ(n, 7);
    check_balanced_after(n);

    nodes(2);
    tasks_on(0, 2, 1, 0.5); /* two compute-bound tasks on one core */
    n = decide("comm");
    CHECK_EQ(n, 1);
    CHECK_EQ(moves[0].tid, 1); /* equal loads: the lower tid */
    CHECK_EQ(moves[0].to, 1);
}

/* Node 1 shares its core with another user: it gets half of node 0's load
 * per capacity, about a third of all of it. */
TEST(half_capacity_node_gets_a_third)
{
    const char *names[] = {"greedy", "refine", "comm"};
    for (int k = 0; k < 3; k++) {
        sixteen_on_node0(1.0 / 16);
        view.nodes[1].capacity = 0.5;
        int n = decide(names[k]);
        CHECK(n >= 4 && n <= 6);
        CHECK_EQ(moved_to(1, n), n);
        check_balanced_after(n);
    }
    sixteen_on_node0(1.0 / 16);
    view.nodes[1].capacity = 0.5;
    CHECK_EQ(decide("greedy"), 5); /* 11/16 on 1 core against 5/16 on half a core */
}

TEST(no_move_when_balanced)
{
    const char *names[] = {"none", "greedy", "refine", "comm", "passive"};
    for (int k = 0; k < 5; k++) {
        nodes(2);
        tasks_on(0, 9, 1, 1.0 / 9); /* 9 against 7 tasks, both cores full */
        tasks_on(1, 7, 10, 1.0 / 7);
        CHECK_EQ(decide(names[k]), 0);

        nodes(3); /* 9/8 against the average: within 15 % */
        tasks_on(0, 9, 1, 1.0);
        tasks_on(1, 8, 10, 1.0);
        tasks_on(2, 7, 20, 1.0);
        CHECK_EQ(decide(names[k]), 0);
    }
}

TEST(light_tasks_are_not_worth_moving)
{
    const char *names[] = {"greedy", "refine", "comm", "passive"};
    for (int k = 0; k < 4; k++) {
        nodes(2);
        tasks_on(0, 8, 1, 0.04); /* below min_load */
        CHECK_EQ(decide(names[k]), 0);
    }
}

/* ---------------------------------------------------------- communication */

/* A tight ping-pong: each waits for the other, half a core each. */
static void ping_pong(int node_a, int node_b)
{
    nodes(2);
    talk(task(1, node_a, 0.5, true), task(2, node_b, 0.5, true), 20000);
}

TEST(comm_colocates_a_ping_pong)
{
    ping_pong(0, 1);
    int n = decide("comm");
    CHECK_EQ(n, 1);
    CHECK_EQ(moves[0].tid, 2); /* equal loads: the higher tid joins */
    CHECK_EQ(moves[0].from, 1);
    CHECK_EQ(moves[0].to, 0);
    ping_pong(0, 1);
    CHECK_EQ(decide("greedy"), 0); /* balanced: traffic does not count */
    CHECK_EQ(decide("refine"), 0);
    CHECK_EQ(decide("passive"), 0);
}

TEST(comm_keeps_a_colocated_ping_pong)
{
    ping_pong(0, 0);
    CHECK_EQ(decide("comm"), 0);
    CHECK_EQ(decide("refine"), 1); /* load alone says: split them */
    CHECK_EQ(decide("greedy"), 1);
}

/* Two compute-bound tasks that talk would lose a core together. */
TEST(comm_does_not_colocate_compute_bound_pairs)
{
    nodes(2);
    talk(task(1, 0, 1.0, true), task(2, 1, 1.0, true), 20000);
    CHECK_EQ(decide("comm"), 0);
}

TEST(comm_ignores_quiet_pairs)
{
    ping_pong(0, 1);
    tasks[0].peers[0].msgs_per_s = tasks[1].peers[0].msgs_per_s = 100;
    tasks[0].peers[0].bytes_per_s = tasks[1].peers[0].bytes_per_s = 6400;
    CHECK_EQ(decide("comm"), 0);
}

/* The lighter partner would not fit next to the heavier one (on a node
 * that gets half a core): the heavier one goes the other way. */
TEST(comm_colocates_the_other_way_when_needed)
{
    nodes(2);
    view.nodes[1].capacity = 0.5;
    talk(task(1, 0, 0.3, true), task(2, 1, 0.4, true), 5000);
    int n = decide("comm");
    CHECK_EQ(n, 1);
    CHECK_EQ(moves[0].tid, 2);
    CHECK_EQ(moves[0].to, 0);
}

/* ---------------------------------------------------------- vacating */

static void vacated_node1(void)
{
    nodes(3);
    task(1, 0, 0.2, true);
    task(2, 2, 0.6, true);
    tasks_on(1, 5, 10, 0.1); /* tids 10..14 */
    task(20, 1, 0.1, false);
    task(21, 1, 0.1, false);
    view.nodes[1].vacated = true;
}

TEST(every_policy_empties_a_vacated_node)
{
    const char *names[] = {"none", "greedy", "refine", "comm", "passive"};
    for (int k = 0; k < 5; k++) {
        vacated_node1();
        int n = decide(names[k]);
        CHECK_EQ(n, 5);
        for (int j = 0; j < n; j++) {
            CHECK(moves[j].tid >= 10 && moves[j].tid <= 14);
            CHECK_EQ(moves[j].from, 1);
        }
        CHECK_EQ(moves[0].to, 0); /* the most spare capacity first */
    }
}

TEST(vacating_ignores_max_moves_but_not_max)
{
    vacated_node1();
    params.max_moves = 1;
    CHECK_EQ(decide("refine"), 5);
    params.max_moves = 8;
    vacated_node1();
    CHECK_EQ(decide_max("comm", 3), 3);
    vacated_node1();
    view.nodes[1].up = false; /* a node that is down cannot send its tasks */
    CHECK_EQ(decide("none"), 0);
}

TEST(vacated_tasks_count_where_they_land)
{
    nodes(3);
    tasks_on(2, 4, 1, 0.25); /* node 2 vacated: its core's worth goes to 0 and 1 */
    view.nodes[2].vacated = true;
    int n = decide("greedy");
    CHECK_EQ(n, 4);
    CHECK_EQ(moved_to(0, n), 2);
    CHECK_EQ(moved_to(1, n), 2);
}

/* ---------------------------------------------------------- passive */

TEST(passive_idle_node_pulls_one_task)
{
    nodes(2);
    tasks_on(0, 4, 1, 0.25);
    int n = decide("passive");
    CHECK_EQ(n, 1);
    CHECK_EQ(moves[0].from, 0);
    CHECK_EQ(moves[0].to, 1);

    nodes(3); /* two idle nodes: one pull each */
    tasks_on(0, 6, 1, 1.0 / 6);
    n = decide("passive");
    CHECK_EQ(n, 2);
    CHECK_EQ(moves[0].to, 1);
    CHECK_EQ(moves[1].to, 2);
}

TEST(passive_busy_node_does_not_pull)
{
    nodes(2);
    tasks_on(0, 4, 1, 0.25);
    tasks_on(1, 1, 10, 0.6); /* idle 0.4: not mostly idle */
    CHECK_EQ(decide("passive"), 0);
    CHECK(decide("refine") > 0); /* while the others see an imbalance */
}

/* ---------------------------------------------------------- the contract */

TEST(never_to_a_down_or_zero_capacity_node)
{
    const char *names[] = {"greedy", "refine", "comm", "passive"};
    for (int k = 0; k < 4; k++) {
        nodes(4);
        tasks_on(0, 8, 1, 0.125);
        view.nodes[2].up = false;
        view.nodes[3].capacity = 0;
        int n = decide(names[k]);
        CHECK(n > 0);
        CHECK_EQ(moved_to(1, n), n);
    }
}

TEST(never_an_unmovable_task)
{
    const char *names[] = {"greedy", "refine", "comm", "passive"};
    for (int k = 0; k < 4; k++) {
        nodes(2);
        for (int t = 1; t <= 8; t++)
            task(t, 0, 0.125, t > 6); /* only 7 and 8 may move */
        int n = decide(names[k]);
        CHECK(n >= 1 && n <= 2);
        for (int j = 0; j < n; j++)
            CHECK(moves[j].tid >= 7);
    }
}

TEST(tasks_leave_a_zero_capacity_node)
{
    nodes(2);
    view.nodes[0].capacity = 0; /* gets nothing: everything should leave */
    tasks_on(0, 3, 1, 0.2);
    int n = decide("greedy");
    CHECK_EQ(n, 3);
    CHECK_EQ(moved_to(1, n), 3);
}

TEST(max_moves_and_max_respected)
{
    const char *names[] = {"greedy", "refine", "comm", "passive"};
    for (int k = 0; k < 4; k++) {
        nodes(4);
        tasks_on(0, 16, 1, 1.0);
        params.max_moves = 3;
        CHECK(decide(names[k]) <= 3);
        params.max_moves = 8;
        CHECK(decide_max(names[k], 2) <= 2);
        CHECK_EQ(decide_max(names[k], 0), 0);
        params.max_moves = 0;
        CHECK_EQ(decide(names[k]), 0);
        params.max_moves = 8;
    }
}

/* ---------------------------------------------------------- determinism */

/* A mixed view: 4 nodes, one shared, one vacated; loads all different;
 * chatty pairs. */
static void mixed_view(void)
{
    nodes(4);
    view.nodes[1].capacity = 0.5;
    view.nodes[3].vacated = true;
    for (int t = 0; t < 20; t++)
        task(100 + t * 7 % 20, t % 3 == 1 ? 1 : 0, 0.05 + 0.03 * (t % 7), t % 5 != 4);
    task(200, 3, 0.3, true);
    task(201, 3, 0.2, false);
    talk(&tasks[0], &tasks[1], 3000);
    talk(&tasks[4], &tasks[9], 12000);
    talk(&tasks[20], &tasks[2], 1500);
}

static int snapshot(const char *name, struct gs_move *out)
{
    int n = decide(name);
    memcpy(out, moves, sizeof moves);
    return n;
}

static void check_same(const struct gs_move *a, int na, const struct gs_move *b, int nb)
{
    CHECK_EQ(na, nb);
    for (int k = 0; k < na; k++) {
        CHECK_EQ(a[k].tid, b[k].tid);
        CHECK_EQ(a[k].from, b[k].from);
        CHECK_EQ(a[k].to, b[k].to);
        CHECK(strcmp(a[k].why, b[k].why) == 0);
    }
}

/* Tasks listed in another order (peer entries name tids: they follow). */
static void permute_tasks(void)
{
    struct gs_task copy[MAXT];
    int n = view.ntasks;
    memcpy(copy, tasks, sizeof copy);
    for (int k = 0; k < n; k++)
        tasks[k] = copy[(k * 5 + 3) % n]; /* 5 is prime to 22 */
}

TEST(same_view_same_moves)
{
    const char *names[] = {"none", "greedy", "refine", "comm", "passive"};
    static struct gs_move first[MAXM], again[MAXM], shuffled[MAXM];
    for (int k = 0; k < 5; k++) {
        mixed_view();
        CHECK_EQ(view.ntasks, 22);
        int n1 = snapshot(names[k], first);
        CHECK(n1 >= 1); /* at least node 3's movable task */
        mixed_view();
        check_same(first, n1, again, snapshot(names[k], again));
        mixed_view();
        permute_tasks();
        check_same(first, n1, shuffled, snapshot(names[k], shuffled));
    }
}

TEST(null_params_take_the_defaults)
{
    sixteen_on_node0(1.0);
    measure();
    /* the default threshold (5 %): refine stops at 8 against 8 */
    CHECK_EQ(gs_policy_find("refine")->decide(&view, NULL, moves, MAXM), 8);
}

HARNESS_MAIN()
