/*
 * summary.c - `upvm trace summary` (design notes §14.8): where each task's
 * time went, per task, per node and in total; the communication matrix;
 * events per second and lost records per node; clock violations.
 *
 * The times, per residency then added up:
 *   running     SWITCH to it .. SWITCH away from it or BLOCK; a ULP that
 *               blocks when nothing else can run stays the node's current
 *               one (the idle loop runs on its stack: no SWITCH), so its
 *               WAKE, with no SWITCH away since, starts it running again
 *   wait_msg    wait slices (BLOCK .. WAKE) on a receive's wait queue
 *   wait_other  the other wait slices, also by queue name
 *   ready       WAKE .. the SWITCH to it
 *   runtime     API slices minus the waits inside them
 *   coupled     COUPLE .. DECOUPLE
 *   migrating   FROZEN .. RESTARTED (counted on the node it left)
 * An interval the trace does not end (a node killed) ends at the
 * residency's last event.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/convert.h"
#include "trace/model.h"

#define NBINS 100 /* the utilization time line of --json (and --plot) */

struct times {
    int64_t running, wait_msg, wait_other, ready, runtime, coupled, migrating;
};

/* A wait queue's name and time, per task. */
struct qtime {
    uint32_t tid;
    const char *name;
    int64_t ns;
};

struct pair {
    uint32_t src, dst;
    uint64_t count, bytes;
};

struct sum {
    const struct trace_model *m;
    struct times *res;     /* per residency */
    int64_t (*bins)[NBINS];/* per residency: running ns per bin */
    int64_t bin_ns;
    struct qtime *q;
    size_t nq, capq;
    struct pair *pairs;
    size_t npairs, cap_pairs;
    struct trace_map qmap;     /* (name hash, tid) -> index in q */
    struct trace_map pair_map; /* (src, dst) -> index in pairs */
};


static void add_qtime(struct sum *s, uint32_t tid, const char *name, int64_t ns)
{
    name = name ? name : "?";
    struct trace_map_slot *x = trace_map_find(&s->qmap, trace_str_hash(name), tid, true);
    if (x->v1 != TRACE_NONE && !strcmp(s->q[x->v1].name, name)) {
        s->q[x->v1].ns += ns;
        return;
    }
    for (size_t i = 0; x->v1 != TRACE_NONE && i < s->nq; i++) /* a hash collision */
        if (s->q[i].tid == tid && !strcmp(s->q[i].name, name)) {
            s->q[i].ns += ns;
            return;
        }
    if (s->nq == s->capq) {
        s->capq = s->capq ? s->capq * 2 : 16;
        s->q = realloc(s->q, s->capq * sizeof *s->q);
        if (!s->q)
            exit(1);
    }
    if (x->v1 == TRACE_NONE)
        x->v1 = s->nq;
    s->q[s->nq++] = (struct qtime){tid, name, ns};
}

/* Running from b to e on residency r: its total and its bins. */
static void add_running(struct sum *s, int r, int64_t b, int64_t e)
{
    if (e <= b)
        return;
    s->res[r].running += e - b;
    int64_t first = s->m->t->first_ns;
    for (int64_t k = (b - first) / s->bin_ns; k < NBINS && first + k * s->bin_ns < e; k++) {
        int64_t lo = first + k * s->bin_ns, hi = lo + s->bin_ns;
        s->bins[r][k] += (e < hi ? e : hi) - (b > lo ? b : lo);
    }
}

/* running and ready, from SWITCH and WAKE */
static void scheduling(struct sum *s)
{
    const struct trace_model *m = s->m;
    int64_t *run = trace_xcalloc(m->nres, sizeof *run), *ready = trace_xcalloc(m->nres, sizeof *ready);
    bool *idle_on = trace_xcalloc(m->nres, sizeof *idle_on); /* blocked, still current */
    for (size_t r = 0; r < m->nres; r++)
        run[r] = ready[r] = -1;
    for (size_t i = 0; i < m->t->nev; i++) {
        const struct trace_event *e = &m->t->ev[i];
        int in = m->res_of[i], out = m->res_prev[i];
        if (e->r.kind == TRC_SWITCH) {
            if (out >= 0 && run[out] >= 0) {
                add_running(s, out, run[out], e->ns);
                run[out] = -1;
            }
            if (out >= 0)
                idle_on[out] = false;
            if (in >= 0) {
                if (ready[in] >= 0)
                    s->res[in].ready += e->ns - ready[in];
                ready[in] = -1;
                run[in] = e->ns;
            }
        } else if (e->r.kind == TRC_BLOCK && in >= 0 && run[in] >= 0) {
            add_running(s, in, run[in], e->ns);
            run[in] = -1;
            idle_on[in] = true;
        } else if (e->r.kind == TRC_WAKE && in >= 0 && run[in] < 0 && idle_on[in]) {
            idle_on[in] = false; /* the idle loop returns to it */
            run[in] = e->ns;
        } else if (e->r.kind == TRC_WAKE && in >= 0 && run[in] < 0) {
            ready[in] = e->ns;
        } else if (e->r.kind == TRC_TASK_END && in >= 0) {
            ready[in] = -1;
        }
    }
    for (size_t r = 0; r < m->nres; r++) /* never switched away: ends with its events */
        if (run[r] >= 0)
            add_running(s, (int)r, run[r], m->res[r].last_ns);
    free(run);
    free(ready);
    free(idle_on);
}

static int cmp_slice_ptr(const void *a, const void *b)
{
    const struct trace_slice *x = *(const struct trace_slice *const *)a;
    const struct trace_slice *y = *(const struct trace_slice *const *)b;
    if (x->res != y->res)
        return x->res < y->res ? -1 : 1;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end);
}

/* waits, runtime, coupled, migrating, from the model's slices: in each
 * residency's slices by begin, the API slices not inside another one, and
 * the waits inside them */
static void from_slices(struct sum *s)
{
    const struct trace_model *m = s->m;
    const struct trace_slice **sl = trace_xcalloc(m->nslices, sizeof *sl);
    for (size_t i = 0; i < m->nslices; i++)
        sl[i] = &m->slices[i];
    sort_any(sl, m->nslices, sizeof *sl, cmp_slice_ptr);
    int64_t api_end = INT64_MIN;
    int api_res = -1;
    for (size_t i = 0; i < m->nslices; i++) {
        const struct trace_slice *x = sl[i];
        struct times *t = &s->res[x->res];
        int64_t d = x->end - x->begin;
        if (x->res != api_res)
            api_end = INT64_MIN, api_res = x->res;
        bool in_api = x->begin < api_end || (x->begin == api_end && d == 0);
        switch (x->kind) {
        case SL_API:
            if (!in_api) {
                t->runtime += d;
                api_end = x->end;
            }
            break;
        case SL_WAIT:
            if (trace_waitq_is_recv(x->str)) {
                t->wait_msg += d;
            } else {
                t->wait_other += d;
                add_qtime(s, m->res[x->res].tid, x->str, d);
            }
            if (in_api)
                t->runtime -= d;
            break;
        case SL_COUPLED:
            t->coupled += d;
            break;
        default:
            break;
        }
    }
    free(sl);
    for (size_t k = 0; k < m->nmigs; k++) {
        int r = m->res_of[m->migs[k].send];
        if (r >= 0)
            s->res[r].migrating += m->t->ev[m->migs[k].recv].ns - m->t->ev[m->migs[k].send].ns;
    }
}

static void matrix(struct sum *s)
{
    const struct trace *t = s->m->t;
    for (size_t i = 0; i < t->nev; i++) {
        const struct trc_rec *r = &t->ev[i].r;
        if (r->kind != TRC_SEND)
            continue;
        struct trace_map_slot *x = trace_map_find(&s->pair_map, r->id, r->a, true);
        size_t k = x->v1 == TRACE_NONE ? s->npairs : x->v1;
        if (k == s->npairs) {
            x->v1 = k;
            if (s->npairs == s->cap_pairs) {
                s->cap_pairs = s->cap_pairs ? s->cap_pairs * 2 : 16;
                s->pairs = realloc(s->pairs, s->cap_pairs * sizeof *s->pairs);
                if (!s->pairs)
                    exit(1);
            }
            s->pairs[s->npairs++] = (struct pair){r->id, r->a, 0, 0};
        }
        s->pairs[k].count++;
        s->pairs[k].bytes += (uint32_t)r->c;
    }
}

static void add_times(struct times *to, const struct times *t)
{
    to->running += t->running;
    to->wait_msg += t->wait_msg;
    to->wait_other += t->wait_other;
    to->ready += t->ready;
    to->runtime += t->runtime;
    to->coupled += t->coupled;
    to->migrating += t->migrating;
}

/* ------------------------------------------------------------ grouping */

/* The distinct tids, in order of first residency. */
static size_t task_list(const struct trace_model *m, uint32_t *tids)
{
    struct trace_map seen = {0};
    size_t n = 0;
    for (size_t r = 0; r < m->nres; r++) {
        struct trace_map_slot *x = trace_map_find(&seen, m->res[r].tid, 0, true);
        if (x->v1 == TRACE_NONE) {
            x->v1 = n;
            tids[n++] = m->res[r].tid;
        }
    }
    trace_map_free(&seen);
    return n;
}

static struct times task_times(const struct sum *s, uint32_t tid)
{
    struct times t = {0};
    for (size_t r = 0; r < s->m->nres; r++)
        if (s->m->res[r].tid == tid)
            add_times(&t, &s->res[r]);
    return t;
}

static struct times node_times(const struct sum *s, int file)
{
    struct times t = {0};
    for (size_t r = 0; r < s->m->nres; r++)
        if (s->m->res[r].file == file)
            add_times(&t, &s->res[r]);
    return t;
}

static const char *state_name(uint32_t st)
{
    return st == TRC_FILE_OPEN ? "open" : st == TRC_FILE_CLOSED ? "closed"
                                        : st == TRC_FILE_CRASHED ? "crashed" : "?";
}

/* ------------------------------------------------------------ text */

static void ms(int64_t ns, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRId64 ".%03" PRId64, ns / 1000000, (ns % 1000000) / 1000);
}

static void times_row(FILE *out, const char *label, const struct times *t)
{
    char c[7][32];
    const int64_t v[7] = {t->running, t->wait_msg, t->wait_other, t->ready,
                          t->runtime, t->coupled, t->migrating};
    for (int i = 0; i < 7; i++)
        ms(v[i], c[i], sizeof c[i]);
    fprintf(out, "%-24s %12s %12s %12s %12s %12s %12s %12s\n", label, c[0], c[1], c[2], c[3],
            c[4], c[5], c[6]);
}

static void times_head(FILE *out, const char *what)
{
    fprintf(out, "%-24s %12s %12s %12s %12s %12s %12s %12s\n", what, "running", "wait msg",
            "wait other", "ready", "runtime", "coupled", "migrating");
}

static void text(const struct sum *s, FILE *out, const uint32_t *tids, size_t ntids)
{
    const struct trace_model *m = s->m;
    const struct trace *t = m->t;
    char label[64], dur[32];
    ms(t->last_ns - t->first_ns, dur, sizeof dur);
    fprintf(out, "Trace %s: %d nodes, %zu tasks, %zu events over %s ms\n\n", t->base,
            t->nfiles - t->refused, ntids, t->nev, dur);
    fprintf(out, "Time per task (ms)\n");
    times_head(out, "task");
    struct times total = {0};
    for (size_t k = 0; k < ntids; k++) {
        struct times tt = task_times(s, tids[k]);
        trace_id_name(tids[k], label, sizeof label);
        times_row(out, label, &tt);
        add_times(&total, &tt);
    }
    times_row(out, "total", &total);
    fprintf(out, "\nTime per node (ms)\n");
    times_head(out, "node");
    for (int f = 0; f < t->nfiles; f++) {
        if (!t->files[f].ok)
            continue;
        struct times nt = node_times(s, f);
        snprintf(label, sizeof label, "%d @ %.20s", t->files[f].node, t->files[f].h.host);
        times_row(out, label, &nt);
    }
    if (s->nq) {
        fprintf(out, "\nWaiting otherwise, by wait queue (ms)\n%-12s %-40s %12s\n", "task",
                "queue", "time");
        for (size_t i = 0; i < s->nq; i++) {
            trace_id_name(s->q[i].tid, label, sizeof label);
            ms(s->q[i].ns, dur, sizeof dur);
            fprintf(out, "%-12s %-40.40s %12s\n", label, s->q[i].name, dur);
        }
    }
    fprintf(out, "\nMessages (sender -> receiver)\n%-12s %-12s %10s %14s\n", "from", "to",
            "messages", "bytes");
    for (size_t i = 0; i < s->npairs; i++) {
        char a[24], b[24];
        trace_id_name(s->pairs[i].src, a, sizeof a);
        trace_id_name(s->pairs[i].dst, b, sizeof b);
        fprintf(out, "%-12s %-12s %10" PRIu64 " %14" PRIu64 "\n", a, b, s->pairs[i].count,
                s->pairs[i].bytes);
    }
    fprintf(out, "\nNodes\n%-6s %-20s %-8s %10s %14s %10s\n", "node", "host", "state", "events",
            "events/s", "lost");
    for (int f = 0; f < t->nfiles; f++) {
        const struct trace_file *tf = &t->files[f];
        if (!tf->ok)
            continue;
        int64_t span = tf->last_ns - tf->first_ns;
        fprintf(out, "%-6d %-20.20s %-8s %10" PRIu64 " %14.0f %10" PRIu64 "\n", tf->node,
                tf->h.host, state_name(tf->h.state), tf->events,
                span > 0 ? (double)tf->events * 1e9 / (double)span : 0.0, (uint64_t)tf->h.lost);
    }
    fprintf(out, "\nClock violations (a RECV earlier than its SEND): %" PRIu64
                 " (largest %" PRId64 " ns)\nLost records: %" PRIu64
                 "\nUnmatched: %" PRIu64 " sends not received, %" PRIu64 " receives "
                 "without their send\n",
            m->violations, m->max_violation_ns, t->lost, m->unmatched_sends,
            m->unmatched_recvs);
}

/* ------------------------------------------------------------ json */

static void json_times(FILE *out, const struct times *t)
{
    fprintf(out,
            "\"running_ns\":%" PRId64 ",\"wait_msg_ns\":%" PRId64 ",\"wait_other_ns\":%" PRId64
            ",\"ready_ns\":%" PRId64 ",\"runtime_ns\":%" PRId64 ",\"coupled_ns\":%" PRId64
            ",\"migrating_ns\":%" PRId64,
            t->running, t->wait_msg, t->wait_other, t->ready, t->runtime, t->coupled,
            t->migrating);
}

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void json_bins(FILE *out, const struct sum *s, uint32_t tid)
{
    fputs(",\"running_bins_ns\":[", out);
    for (int k = 0; k < NBINS; k++) {
        int64_t v = 0;
        for (size_t r = 0; r < s->m->nres; r++)
            if (s->m->res[r].tid == tid)
                v += s->bins[r][k];
        fprintf(out, "%s%" PRId64, k ? "," : "", v);
    }
    fputc(']', out);
}

static void json(const struct sum *s, FILE *out, const uint32_t *tids, size_t ntids)
{
    const struct trace_model *m = s->m;
    const struct trace *t = m->t;
    char name[24];
    fprintf(out, "{\"trace\":");
    json_str(out, t->base);
    fprintf(out, ",\"duration_ns\":%" PRId64 ",\"bin_ns\":%" PRId64 ",\"events\":%zu,\n\"tasks\":[",
            t->last_ns - t->first_ns, s->bin_ns, t->nev);
    struct times total = {0};
    for (size_t k = 0; k < ntids; k++) {
        struct times tt = task_times(s, tids[k]);
        add_times(&total, &tt);
        trace_id_name(tids[k], name, sizeof name);
        fprintf(out, "%s\n{\"task\":\"%s\",\"nodes\":[", k ? "," : "", name);
        bool first = true;
        for (size_t r = 0; r < m->nres; r++)
            if (m->res[r].tid == tids[k]) {
                fprintf(out, "%s%d", first ? "" : ",", m->res[r].node);
                first = false;
            }
        fputs("],", out);
        json_times(out, &tt);
        fputs(",\"wait_by_queue_ns\":{", out);
        first = true;
        for (size_t i = 0; i < s->nq; i++)
            if (s->q[i].tid == tids[k]) {
                fputs(first ? "" : ",", out);
                json_str(out, s->q[i].name);
                fprintf(out, ":%" PRId64, s->q[i].ns);
                first = false;
            }
        fputc('}', out);
        json_bins(out, s, tids[k]);
        fputc('}', out);
    }
    fputs("],\n\"nodes\":[", out);
    bool first = true;
    for (int f = 0; f < t->nfiles; f++) {
        const struct trace_file *tf = &t->files[f];
        if (!tf->ok)
            continue;
        struct times nt = node_times(s, f);
        int64_t span = tf->last_ns - tf->first_ns;
        fprintf(out, "%s\n{\"node\":%d,\"host\":", first ? "" : ",", tf->node);
        json_str(out, tf->h.host);
        fprintf(out, ",\"state\":\"%s\",\"events\":%" PRIu64 ",\"events_per_s\":%.0f,"
                     "\"lost\":%" PRIu64 ",",
                state_name(tf->h.state), tf->events,
                span > 0 ? (double)tf->events * 1e9 / (double)span : 0.0, (uint64_t)tf->h.lost);
        json_times(out, &nt);
        fputc('}', out);
        first = false;
    }
    fputs("],\n\"total\":{", out);
    json_times(out, &total);
    fputs("},\n\"messages\":[", out);
    for (size_t i = 0; i < s->npairs; i++) {
        char a[24], b[24];
        trace_id_name(s->pairs[i].src, a, sizeof a);
        trace_id_name(s->pairs[i].dst, b, sizeof b);
        fprintf(out, "%s\n{\"src\":\"%s\",\"dst\":\"%s\",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
                     "}", i ? "," : "", a, b, s->pairs[i].count, s->pairs[i].bytes);
    }
    fprintf(out, "],\n\"clock_violations\":{\"count\":%" PRIu64 ",\"max_gap_ns\":%" PRId64 "},"
                 "\"lost\":%" PRIu64 ",\"unmatched_sends\":%" PRIu64
                 ",\"unmatched_recvs\":%" PRIu64 ",\"migrations\":%zu}\n",
            m->violations, m->max_violation_ns, t->lost, m->unmatched_sends,
            m->unmatched_recvs, m->nmigs);
}

int trace_write_summary(const struct trace_model *m, FILE *out, bool as_json)
{
    struct sum s = {.m = m};
    s.res = trace_xcalloc(m->nres, sizeof *s.res);
    s.bins = trace_xcalloc(m->nres, sizeof *s.bins);
    s.bin_ns = (m->t->last_ns - m->t->first_ns) / NBINS + 1;
    scheduling(&s);
    from_slices(&s);
    matrix(&s);
    uint32_t *tids = trace_xcalloc(m->nres, sizeof *tids);
    size_t ntids = task_list(m, tids);
    if (as_json)
        json(&s, out, tids, ntids);
    else
        text(&s, out, tids, ntids);
    free(tids);
    free(s.res);
    free(s.bins);
    free(s.q);
    free(s.pairs);
    trace_map_free(&s.qmap);
    trace_map_free(&s.pair_map);
    return ferror(out) ? -1 : 0;
}
