/*
 * gs.c - the global scheduler at run time: each node's report, node 0's
 * view and decisions, the moves, vacate/restore, `upvm top`'s table.
 *
 *   every node, every period (node_on_tick)
 *     measure: the CPU its scheduler thread got against the time it had
 *     work (/proc/thread-self/schedstat: time run, time waiting for a
 *     CPU), its idle time (core), each task's CPU time (core, TSC at
 *     switches) and heaviest partners (pvm); send node 0 a report
 *   node 0, every period
 *     the reports make a gs_view; the policy (UPVM_BALANCE) gives moves;
 *     each starts with migrate_request_async; its result goes to the log
 *     (`upvm top`, UPVM_TRACE=balance).  While moves are in flight, and
 *     for the period after (the loads still show the old placement), no
 *     new decision is taken.
 *
 * Vacating: node 0 marks the node (every node learns it: no placement
 * there, node_job_set_vacated) and the policies move every movable task
 * off it first.  Optionally automatic (UPVM_BALANCE_RECLAIM=share): a node
 * whose CPU share stays below that for 3 periods is vacated, as MPVM's
 * global scheduler and Condor do when a workstation's owner comes back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "gs/gs.h"
#include "gs/gs_run.h"
#include "migrate/migrate.h"
#include "node/job.h"
#include "proc/proc.h"
#include "pvm/pvm.h"
#include "util/env.h"

enum gs_kind {
    K_GS_REPORT = NODE_KINDS_GS, /* a: node, b: tasks; payload: wire_node, wire_task[] */
    K_GS_VACATE,                 /* a: node, b: 1 vacated / 0 restored */
};

#define REPORT_TASKS 256 /* the heaviest tasks a report lists */
#define LOG_LINES 12
#define RECLAIM_PERIODS 3
#define RECENT 256        /* moves remembered ... */
#define RECENT_PERIODS 5  /* ... and for how long: a task moved stays put */

/* What a report carries: floats are plenty for loads and rates. */
struct wire_node {
    float capacity, load, idle;
    int32_t runq, nulps;
    float msgs_per_s, bytes_per_s;
};
struct wire_peer {
    int32_t tid;
    float msgs_per_s, bytes_per_s;
};
struct wire_task {
    int32_t tid;
    float load;
    int32_t movable;          /* 1: may migrate; 2: placed by hand */
    struct wire_peer peers[GS_PEERS];
};

struct node_report {
    bool have;
    uint64_t at_ns;
    struct wire_node n;
    int ntasks;
    struct wire_task *tasks;
    int moved_in, moved_out;
    int low_periods;          /* periods in a row below the reclaim share */
};

static struct {
    bool on;                   /* a job of several nodes */
    const struct gs_policy *policy;
    struct gs_params params;
    uint64_t period_ns;
    double reclaim;            /* 0: no automatic vacate */
    bool trace;
    /* this node's measuring */
    int schedstat_fd;
    uint64_t last_wall, last_tsc, last_idle_tsc, last_run_ns, last_wait_ns;
    double capacity;
    /* node 0 */
    struct node_report reports[GS_MAX_NODES];
    bool vacated[GS_MAX_NODES];
    int inflight;
    bool settle;               /* moves ended last period: let loads show them */
    unsigned long periods, moves_started, moves_done, moves_refused;
    char log[LOG_LINES][200];
    int log_next;
    struct {
        int tid;
        unsigned long period;
    } recent[RECENT];         /* the balancer's last moves: no ping-pong of a
                               * task between nodes on noisy loads */
    int recent_next;
} gs = {.schedstat_fd = -1, .capacity = 1.0};

static bool moved_recently(int tid)
{
    for (int i = 0; i < RECENT; i++)
        if (gs.recent[i].tid == tid && gs.periods - gs.recent[i].period < RECENT_PERIODS)
            return true;
    return false;
}

/* ------------------------------------------------------------ log */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char *line = gs.log[gs.log_next++ % LOG_LINES];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof gs.log[0], "%02d:%02d:%02d.%03ld ", tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof gs.log[0] - (size_t)n, fmt, ap);
    va_end(ap);
    if (gs.trace)
        fprintf(stderr, "upvm-trace balance: %s\n", line + n);
}

/* ------------------------------------------------------------ measuring */

/* The scheduler thread's time on a CPU and waiting for one, in ns
 * (/proc/thread-self/schedstat); false when it cannot be read. */
static bool sched_times(uint64_t *run_ns, uint64_t *wait_ns)
{
    if (gs.schedstat_fd < 0)
        return false;
    char buf[128];
    ssize_t n = pread(gs.schedstat_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    unsigned long long r, w;
    if (sscanf(buf, "%llu %llu", &r, &w) != 2)
        return false;
    *run_ns = r;
    *wait_ns = w;
    return true;
}

struct collect {
    double ns_per_tick, wall_ns;
    int n, cap;
    struct wire_task *tasks;
    double msgs, bytes;
};

static void add_task(void *ctx, int tid, struct ulp *u, bool placed,
                     const struct pvm_traffic *peers)
{
    struct collect *c = ctx;
    if (!u || c->n == c->cap)
        return;
    uint64_t ticks = u->cpu_tsc - u->cpu_tsc_reported;
    u->cpu_tsc_reported = u->cpu_tsc;
    struct wire_task *w = &c->tasks[c->n++];
    memset(w, 0, sizeof *w);
    w->tid = tid;
    w->load = (float)((double)ticks * c->ns_per_tick / c->wall_ns);
    /* movable: may migrate; placed: moved by hand, left alone but by a
     * vacate (the owner wants the node back) */
    w->movable = (u->ext[ULP_EXT_PROC] != NULL && u != core_sched.main &&
                  !proc_cxx_pins(u->ext[ULP_EXT_PROC])) | (placed ? 2 : 0);
    for (int i = 0; i < PVM_TRAFFIC_PEERS && i < GS_PEERS; i++) {
        w->peers[i].tid = peers[i].tid;
        w->peers[i].msgs_per_s = (float)(peers[i].msgs * 1e9 / c->wall_ns);
        w->peers[i].bytes_per_s = (float)(peers[i].bytes * 1e9 / c->wall_ns);
        c->msgs += peers[i].msgs * 1e9 / c->wall_ns;
        c->bytes += peers[i].bytes * 1e9 / c->wall_ns;
    }
}

static int by_load_desc(const void *a, const void *b)
{
    const struct wire_task *x = a, *y = b;
    if (x->load != y->load)
        return x->load < y->load ? 1 : -1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* This node's report over the period that just ended; its tasks in
 * tasks[] (REPORT_TASKS room), their number returned. */
static int measure(struct wire_node *out, struct wire_task *tasks)
{
    uint64_t wall = upvm_now_ns(), tsc = __builtin_ia32_rdtsc();
    uint64_t dwall = wall - gs.last_wall, dtsc = tsc - gs.last_tsc;
    uint64_t didle = core_sched.idle_tsc - gs.last_idle_tsc;
    gs.last_wall = wall;
    gs.last_tsc = tsc;
    gs.last_idle_tsc = core_sched.idle_tsc;
    double ns_per_tick = dtsc ? (double)dwall / (double)dtsc : 1.0;
    double idle = dwall ? (double)didle * ns_per_tick / (double)dwall : 0;
    if (idle > 1)
        idle = 1;
    uint64_t run_ns, wait_ns;
    if (sched_times(&run_ns, &wait_ns)) {
        /* busy: it had work; waiting: it had work and no CPU.  Measured
         * only when it had work for a fifth of the period at least. */
        double busy = 1 - idle, waited = (double)(wait_ns - gs.last_wait_ns) / (double)dwall;
        if (busy + waited > 0.2)
            gs.capacity = busy / (busy + waited);
        gs.last_run_ns = run_ns;
        gs.last_wait_ns = wait_ns;
    }
    struct collect c = {ns_per_tick, dwall ? (double)dwall : 1, 0, REPORT_TASKS, tasks, 0, 0};
    pvm_tasks_visit(add_task, &c);
    qsort(tasks, (size_t)c.n, sizeof *tasks, by_load_desc);
    double load = 0;
    for (int i = 0; i < c.n; i++)
        load += tasks[i].load;
    int runq = 0;
    list_for_each(l, &core_sched.runq) runq++;
    *out = (struct wire_node){(float)gs.capacity, (float)load, (float)idle, runq,
                              core_sched.nlive, (float)c.msgs, (float)c.bytes};
    return c.n;
}

/* ------------------------------------------------------------ node 0: the view */

static void store_report(int node, const struct wire_node *n, const struct wire_task *t,
                         int ntasks)
{
    if (node < 0 || node >= GS_MAX_NODES)
        return;
    struct node_report *r = &gs.reports[node];
    struct wire_task *copy = realloc(r->tasks, (size_t)(ntasks ? ntasks : 1) * sizeof *copy);
    if (!copy)
        return;
    memcpy(copy, t, (size_t)ntasks * sizeof *copy);
    r->tasks = copy;
    r->ntasks = ntasks;
    r->n = *n;
    r->have = true;
    r->at_ns = upvm_now_ns();
}

/* A node that has not reported for a while sleeps: nothing of it ran
 * (nodes other than 0 report when they have work, not to wake for it). */
static bool report_fresh(int node)
{
    const struct node_report *r = &gs.reports[node];
    return r->have && upvm_now_ns() - r->at_ns < 3 * gs.period_ns;
}

/* The view from the latest reports; tasks in a malloc'd array (NULL when
 * none or no memory). */
static void build_view(struct gs_view *v)
{
    memset(v, 0, sizeof *v);
    int slots = node_job_slots() < GS_MAX_NODES ? node_job_slots() : GS_MAX_NODES;
    int total = 0;
    for (int n = 0; n < slots; n++)
        total += gs.reports[n].have && node_job_up(n) ? gs.reports[n].ntasks : 0;
    v->nnodes = slots;
    v->tasks = total ? calloc((size_t)total, sizeof *v->tasks) : NULL;
    for (int n = 0; n < slots; n++) {
        struct gs_node *gn = &v->nodes[n];
        gn->vacated = gs.vacated[n];
        const struct node_report *r = &gs.reports[n];
        if (!r->have || !node_job_up(n))
            continue;
        bool fresh = report_fresh(n); /* else asleep: idle, its tasks blocked */
        gn->up = node_job_places(n) || gs.vacated[n];
        gn->capacity = r->n.capacity;
        gn->load = fresh ? r->n.load : 0;
        gn->idle = fresh ? r->n.idle : 1;
        gn->runq = fresh ? r->n.runq : 0;
        gn->nulps = r->n.nulps;
        for (int i = 0; v->tasks && i < r->ntasks; i++) {
            struct gs_task *t = &v->tasks[v->ntasks++];
            t->tid = r->tasks[i].tid;
            t->node = n;
            t->load = fresh ? r->tasks[i].load : 0;
            bool may = r->tasks[i].movable & 1, placed = r->tasks[i].movable & 2;
            t->movable = may && (gs.vacated[n] || (!placed && !moved_recently(t->tid)));
            for (int k = 0; k < GS_PEERS; k++)
                t->peers[k] = (struct gs_peer){r->tasks[i].peers[k].tid,
                                               r->tasks[i].peers[k].msgs_per_s,
                                               r->tasks[i].peers[k].bytes_per_s};
        }
    }
}

/* ------------------------------------------------------------ node 0: moving */

struct move_ctx {
    int tid, from, to;
    char why[80];
};

static void move_done(void *ctx, const struct migrate_result *r)
{
    struct move_ctx *m = ctx;
    gs.inflight--;
    gs.settle = true;
    if (r->rc == 0) {
        gs.moves_done++;
        if (m->from >= 0 && m->from < GS_MAX_NODES)
            gs.reports[m->from].moved_out++;
        if (m->to >= 0 && m->to < GS_MAX_NODES)
            gs.reports[m->to].moved_in++;
        say("t%x node%d -> node%d (%s): moved in %.1f ms, %llu KiB", (unsigned)m->tid, m->from,
            m->to, m->why, (double)r->total_ns / 1e6, (unsigned long long)(r->bytes >> 10));
    } else {
        gs.moves_refused++;
        say("t%x stays on node%d: %s", (unsigned)m->tid, m->from,
            r->why && *r->why ? r->why : "refused");
    }
    free(m);
}

static void start_move(const struct gs_move *mv)
{
    struct move_ctx *m = malloc(sizeof *m);
    if (!m)
        return;
    *m = (struct move_ctx){mv->tid, mv->from, mv->to, ""};
    snprintf(m->why, sizeof m->why, "%s", mv->why ? mv->why : gs.policy->name);
    if (unlikely(trc_on)) /* the decision, on node 0's timeline */
        trc_put(TRC_BALANCE, 0, (uint32_t)mv->tid, (uint32_t)mv->from, (uint32_t)mv->to,
                trc_str_copy(m->why));
    int rc = migrate_request_balance(mv->tid, mv->to, move_done, m);
    if (rc != 0) {
        say("t%x stays on node%d: %s", (unsigned)mv->tid, mv->from,
            rc == -ESRCH ? "it ended" : strerror(-rc));
        free(m);
        return;
    }
    gs.inflight++;
    gs.moves_started++;
    gs.recent[gs.recent_next].tid = mv->tid;
    gs.recent[gs.recent_next].period = gs.periods;
    gs.recent_next = (gs.recent_next + 1) % RECENT;
}

/* A node whose CPU share stays low is vacated (UPVM_BALANCE_RECLAIM). */
static void reclaim_check(int n)
{
    struct node_report *r = &gs.reports[n];
    if (gs.reclaim <= 0 || gs.vacated[n] || n == 0)
        return;
    r->low_periods = r->n.capacity < gs.reclaim ? r->low_periods + 1 : 0;
    if (r->low_periods < RECLAIM_PERIODS)
        return;
    char reply[160];
    (void)gs_vacate(n, true, reply, sizeof reply);
    say("node%d reclaimed: its CPU share %.2f < %.2f for %d periods (upvm restore %d brings "
        "it back)", n, r->n.capacity, gs.reclaim, RECLAIM_PERIODS, n);
}

static void decide(void)
{
    gs.periods++;
    for (int n = 0; n < GS_MAX_NODES; n++)
        if (report_fresh(n))
            reclaim_check(n);
    if (gs.inflight > 0)
        return;
    if (gs.settle) {
        gs.settle = false;
        return;
    }
    struct gs_view v;
    build_view(&v);
    struct gs_move moves[64];
    int n = v.ntasks ? gs.policy->decide(&v, &gs.params, moves, 64) : 0;
    for (int i = 0; i < n; i++)
        start_move(&moves[i]);
    free(v.tasks);
}

/* ------------------------------------------------------------ frames and tick */

static void on_report(int src, const struct node_frame *f, const void *payload, size_t len)
{
    size_t want = sizeof(struct wire_node) + (size_t)f->b * sizeof(struct wire_task);
    if (f->b < 0 || f->b > REPORT_TASKS || len != want)
        return;
    const struct wire_node *n = payload;
    store_report(f->a, n, (const struct wire_task *)(n + 1), f->b);
    trc_put(TRC_LOAD, 0, 0, (uint32_t)f->a, (uint32_t)(n->load * 1000.0f + 0.5f), 0);
}

static void tick(void);

/* Every node learns of a vacate (no placement there); the node vacated
 * reports at once, so that node 0 has its tasks even if it slept. */
static void on_vacate(int src, const struct node_frame *f, const void *payload, size_t len)
{
    if (f->a < 0 || f->a >= GS_MAX_NODES)
        return;
    node_job_set_vacated(f->a, f->b != 0);
    if (f->a == node_job_self() && f->b)
        tick();
}

static void tick(void)
{
    static struct wire_task tasks[REPORT_TASKS];
    struct wire_node n;
    int nt = measure(&n, tasks);
    int self = node_job_self();
    if (self == 0) {
        store_report(0, &n, tasks, nt);
        decide();
        return;
    }
    struct node_frame f = {K_GS_REPORT, self, nt, 0};
    node_post(0, &f, &n, sizeof n, tasks, (size_t)nt * sizeof *tasks);
}

/* ------------------------------------------------------------ vacate, top */

int gs_vacate(int node, bool on, char *reply, size_t len)
{
    if (!gs.on || node_job_self() != 0)
        return snprintf(reply, len, "error: no balancer in this job"), -ENOSYS;
    if (node < 0 || node >= GS_MAX_NODES || !node_job_up(node))
        return snprintf(reply, len, "error: node%d is not running", node), -EINVAL;
    gs.vacated[node] = on;
    gs.reports[node].low_periods = 0;
    node_job_set_vacated(node, on);
    for (int n = 1; n < node_job_slots(); n++) {
        struct node_frame f = {K_GS_VACATE, node, on, 0};
        if (node_job_up(n))
            node_post(n, &f, NULL, 0, NULL, 0);
    }
    int movable = 0, stay = 0;
    const struct node_report *r = &gs.reports[node];
    for (int i = 0; i < r->ntasks; i++)
        (r->tasks[i].movable & 1) ? movable++ : stay++;
    if (on)
        say("node%d vacated: %d task(s) to move, %d that cannot", node, movable, stay);
    else
        say("node%d restored", node);
    gs.settle = false;
    if (on && !r->have)
        snprintf(reply, len, "ok node%d vacated: its tasks move once it has reported them",
                 node);
    else
        snprintf(reply, len, on ? "ok node%d vacated: %d task(s) to move, %d that cannot"
                                : "ok node%d restored: it takes tasks again",
                 node, movable, stay);
    return 0;
}

static void fmt_rate(char *buf, size_t len, double v)
{
    if (v >= 1e9)
        snprintf(buf, len, "%.1fG", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, len, "%.1fM", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, len, "%.1fK", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
}

char *gs_top_text(void)
{
    size_t cap = 8192 + (size_t)LOG_LINES * 220;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t n = 0;
#define PUT(...) n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__)
    PUT("node  ULPs  CPU share  load  idle  msgs/s  bytes/s  moved in/out  state\n");
    for (int k = 0; k < node_job_slots() && k < GS_MAX_NODES; k++) {
        const struct node_report *r = &gs.reports[k];
        if (!node_job_up(k))
            continue;
        char m[16] = "-", b[16] = "-";
        if (r->have) {
            fmt_rate(m, sizeof m, r->n.msgs_per_s);
            fmt_rate(b, sizeof b, r->n.bytes_per_s);
        }
        PUT("%-5d %4d  %9.2f  %4.2f  %3.0f%%  %6s  %7s  %5d / %-5d %s\n", k,
            r->have ? r->n.nulps : 0, r->have ? r->n.capacity : 0, r->have ? r->n.load : 0,
            r->have ? r->n.idle * 100 : 0, m, b, r->moved_in, r->moved_out,
            gs.vacated[k] ? "vacated" : !r->have ? "no report yet" : !report_fresh(k) ? "asleep" : "");
    }
    PUT("balancer: %s every %llu ms, threshold %.0f %%, %lu move(s) done, %lu refused, %d in "
        "flight\n", gs.policy->name, (unsigned long long)(gs.period_ns / 1000000),
        gs.params.threshold * 100, gs.moves_done, gs.moves_refused, gs.inflight);
    for (int i = 0; i < LOG_LINES; i++) {
        const char *line = gs.log[(gs.log_next + i) % LOG_LINES];
        if (*line)
            PUT("  %s\n", line);
    }
#undef PUT
    return out;
}

/* ------------------------------------------------------------ settings */

void gs_read_settings(void)
{
    int np;
    const struct gs_policy *const *all = gs_policies(&np);
    const char *words[16];
    int k = 0;
    for (; k < np && k < 15; k++)
        words[k] = all[k]->name;
    words[k] = NULL;
    int dflt = 0, choice;
    for (int i = 0; i < k; i++)
        if (!strcmp(words[i], "comm"))
            dflt = i;
    (void)env_choice("UPVM_BALANCE", words, dflt, 0, &choice);
    gs.policy = all[choice];
    static const struct env_num period = {10, 60000, GS_DEFAULT_PERIOD_MS, 0, NULL, NULL};
    static const struct env_num threshold = {1, 1000, (uint64_t)(GS_DEFAULT_THRESHOLD * 100 + 0.5),
                                             0, NULL, NULL};
    static const struct env_num moves = {1, 64, GS_DEFAULT_MOVES, 0, NULL, NULL};
    static const struct env_num reclaim = {0, 99, 0, 0, NULL, NULL};
    uint64_t v;
    (void)env_uint("UPVM_BALANCE_PERIOD", &period, &v);
    gs.period_ns = v * 1000000;
    (void)env_uint("UPVM_BALANCE_THRESHOLD", &threshold, &v);
    gs.params.threshold = (double)v / 100;
    (void)env_uint("UPVM_BALANCE_MOVES", &moves, &v);
    gs.params.max_moves = (int)v;
    gs.params.min_load = GS_DEFAULT_MIN_LOAD;
    (void)env_uint("UPVM_BALANCE_RECLAIM", &reclaim, &v);
    gs.reclaim = (double)v / 100;
    /* the words of pvm_trace_init (src/pvm/move.c), which says a bad one */
    static const char *const traces[] = {"migrate", "balance", "all", NULL};
    int t;
    gs.trace = env_choice("UPVM_TRACE", traces, -1, 0, &t) > 0 && t != 0;
}

void gs_init(void)
{
    if (node_job_slots() < 2)
        return;
    /* A persistent VM's nodes include programs that join and leave (their
     * nodes end with them): it is balanced only when asked for. */
    const char *asked;
    if ((node_job_persistent() || node_job_joined()) && env_string("UPVM_BALANCE", &asked) <= 0)
        return;
    gs_read_settings();
    gs.on = true;
    gs.schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    gs.last_wall = upvm_now_ns();
    gs.last_tsc = __builtin_ia32_rdtsc();
    gs.last_idle_tsc = core_sched.idle_tsc;
    (void)sched_times(&gs.last_run_ns, &gs.last_wait_ns);
    node_on_frame(K_GS_REPORT, on_report);
    node_on_frame(K_GS_VACATE, on_vacate);
    node_on_tick(tick, gs.period_ns);
}

/* ------------------------------------------------------------ public API */

void upvm_balance_point(void)
{
    upvm_migrate_point();
}
