/*
 * json.c - the trace as Chrome/Perfetto trace-event JSON (design notes
 * §14.7): pid = node + 1, one thread track per residency (tid = its index
 * + 1), tid 0 of each pid the node's own track (load counters, balancer
 * decisions, node events); X slices from the model, instants, flows from
 * each SEND to its RECV (cat "msg") and from FROZEN to RESTARTED (cat
 * "migrate").  Times are us from the trace's first event, printed from
 * integer ns with 3 decimals, so a child never sticks out of its parent by
 * a rounding.  Written sorted by (pid, tid, ts, -dur).
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/convert.h"
#include "trace/model.h"

struct item {
    int pid;
    int tid;
    int64_t ts;  /* ns from the first event; INT64_MIN: metadata */
    int64_t dur; /* X: ns, else -1 */
    int64_t end_ts; /* a flow's start: the time of its end (a cut drops the
                     * start with its end); else INT64_MIN */
    char *text;  /* the whole JSON object */
};

struct out {
    const struct trace_model *m;
    struct item *it;
    size_t n, cap;
    int64_t end_ts; /* for the next add() */
};


/* s as a JSON string's contents (no quotes) into buf. */
static void escape(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    for (; s && *s && n + 7 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) { /* bytes of a file: keep it ASCII */
            n += (size_t)snprintf(buf + n, len - n, "\\u%04x", c);
        } else {
            buf[n++] = (char)c;
        }
    }
    buf[n] = 0;
}

/* ns -> "us.nnn" */
static void us(int64_t ns, char *buf, size_t len)
{
    if (ns < 0)
        snprintf(buf, len, "-%" PRId64 ".%03" PRId64, -ns / 1000, -ns % 1000);
    else
        snprintf(buf, len, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void add(struct out *o, int pid, int tid, int64_t ts, int64_t dur, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void add(struct out *o, int pid, int tid, int64_t ts, int64_t dur, const char *fmt, ...)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 1024;
        o->it = trace_xrealloc(o->it, o->cap * sizeof *o->it);
    }
    char *body, t[32], d[32];
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&body, fmt, ap);
    va_end(ap);
    if (n < 0)
        exit(1);
    char *text;
    if (ts == INT64_MIN) {
        if (asprintf(&text, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,%s}", pid, tid, body) < 0)
            exit(1);
    } else {
        us(ts, t, sizeof t);
        us(dur, d, sizeof d);
        if (asprintf(&text, "{\"pid\":%d,\"tid\":%d,\"ts\":%s%s%s,%s}", pid, tid, t,
                     dur >= 0 ? ",\"dur\":" : "", dur >= 0 ? d : "", body) < 0)
            exit(1);
    }
    free(body);
    o->it[o->n++] = (struct item){pid, tid, ts, dur, o->end_ts, text};
    o->end_ts = INT64_MIN;
}

static int pid_of_file(const struct trace_model *m, int file)
{
    return m->t->files[file].node + 1;
}

/* ------------------------------------------------------------ metadata */

static void metadata(struct out *o)
{
    const struct trace *t = o->m->t;
    char host[160], name[200];
    int sort = 0;
    for (int i = 0; i < t->nfiles; i++) { /* host-major: hosts in order of first node */
        if (!t->files[i].ok)
            continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = t->files[j].ok && !strcmp(t->files[j].h.host, t->files[i].h.host);
        if (seen)
            continue;
        for (int j = i; j < t->nfiles; j++) {
            const struct trace_file *f = &t->files[j];
            if (!f->ok || strcmp(f->h.host, t->files[i].h.host))
                continue;
            escape(f->h.host, host, sizeof host);
            int pid = f->node + 1;
            add(o, pid, 0, INT64_MIN, -1,
                "\"name\":\"process_name\",\"args\":{\"name\":\"node %d @ %s\"}", f->node, host);
            add(o, pid, 0, INT64_MIN, -1,
                "\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}", sort++);
            add(o, pid, 0, INT64_MIN, -1, "\"name\":\"thread_name\",\"args\":{\"name\":\"node\"}");
        }
    }
    for (size_t r = 0; r < o->m->nres; r++) {
        const struct trace_res *res = &o->m->res[r];
        trace_res_name(res, name, sizeof name);
        add(o, res->node + 1, (int)r + 1, INT64_MIN, -1,
            "\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}", name);
        add(o, res->node + 1, (int)r + 1, INT64_MIN, -1,
            "\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%zu}", r + 1);
    }
}

/* ------------------------------------------------------------ slices */

static const char *slice_cat(enum trace_slice_kind k)
{
    static const char *const c[] = {"task", "api", "wait", "coupled", "group", "migrate"};
    return c[k];
}

static void slices(struct out *o)
{
    const struct trace_model *m = o->m;
    char name[300], esc[700];
    for (size_t i = 0; i < m->nslices; i++) {
        const struct trace_slice *s = &m->slices[i];
        const struct trace_res *r = &m->res[s->res];
        trace_slice_name(s, name, sizeof name);
        escape(name, esc, sizeof esc);
        char args[200] = "";
        if (s->kind == SL_API && s->end_ev != TRACE_NONE)
            snprintf(args, sizeof args, ",\"args\":{\"result\":%" PRId64 ",\"tev\":%u%s}",
                     s->result, s->op, s->unfinished ? ",\"unfinished\":true" : "");
        else if (s->unfinished)
            snprintf(args, sizeof args, ",\"args\":{\"unfinished\":true}");
        add(o, r->node + 1, s->res + 1, s->begin - m->t->first_ns, s->end - s->begin,
            "\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\"%s", slice_cat(s->kind), esc, args);
    }
}

/* ------------------------------------------------------------ events */

static void instant(struct out *o, const struct trace_event *e, int tid, const char *cat,
                    const char *name, const char *args)
{
    char esc[600];
    escape(name, esc, sizeof esc);
    add(o, pid_of_file(o->m, e->file), tid, e->ns - o->m->t->first_ns, -1,
        "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":\"%s\"%s%s%s", cat, esc,
        *args ? ",\"args\":{" : "", args, *args ? "}" : "");
}

static void message_flow(struct out *o, size_t i, uint64_t flow_id)
{
    const struct trace_model *m = o->m;
    const struct trace_event *e = &m->t->ev[i];
    bool send = e->r.kind == TRC_SEND;
    if (send)
        o->end_ts = m->t->ev[m->peer[i]].ns - m->t->first_ns;
    add(o, pid_of_file(m, e->file), m->res_of[i] + 1, e->ns - m->t->first_ns, -1,
        "\"ph\":\"%s\",\"cat\":\"msg\",\"name\":\"tag %d\",\"id\":%" PRIu64 "%s,"
        "\"args\":{\"bytes\":%u,\"tag\":%d,\"ctx\":%u}",
        send ? "s" : "f", (int32_t)e->r.b, flow_id, send ? "" : ",\"bp\":\"e\"",
        (uint32_t)e->r.c, (int32_t)e->r.b, (uint32_t)(e->r.c >> 32));
}

static void migrate_flow(struct out *o, size_t i, uint64_t flow_id)
{
    const struct trace_model *m = o->m;
    const struct trace_event *e = &m->t->ev[i];
    bool start = e->r.flags == TRC_MIG_FROZEN;
    if (start)
        o->end_ts = m->t->ev[m->peer_mig[i]].ns - m->t->first_ns;
    add(o, pid_of_file(m, e->file), m->res_of[i] + 1, e->ns - m->t->first_ns, -1,
        "\"ph\":\"%s\",\"cat\":\"migrate\",\"name\":\"migration\",\"id\":%" PRIu64 "%s,"
        "\"args\":{\"bytes\":%" PRIu64 "}",
        start ? "s" : "f", flow_id, start ? "" : ",\"bp\":\"e\"", e->r.c);
}

static void task_event(struct out *o, size_t i)
{
    const struct trace_model *m = o->m;
    const struct trace_event *e = &m->t->ev[i];
    const struct trc_rec *r = &e->r;
    int tid = m->res_of[i] + 1;
    char name[300], args[400], peer[24], prog[300];
    trace_id_name(r->a, peer, sizeof peer);
    escape(e->str ? e->str : "", prog, sizeof prog);
    switch (r->kind) {
    case TRC_SPAWN:
        snprintf(name, sizeof name, "spawn %s", peer);
        snprintf(args, sizeof args, "\"child\":\"%s\",\"node\":%u,\"program\":\"%s\"", peer,
                 r->b, prog);
        instant(o, e, tid, "task", name, args);
        break;
    case TRC_TASK_END:
        snprintf(args, sizeof args, "\"status\":%d", (int32_t)r->a);
        instant(o, e, tid, "task", "exit", args);
        break;
    case TRC_GROUP:
        if ((r->flags & 0xff) == TRC_GROUP_JOIN || (r->flags & 0xff) == TRC_GROUP_LEAVE) {
            snprintf(name, sizeof name, "%s %s",
                     (r->flags & 0xff) == TRC_GROUP_JOIN ? "join" : "leave",
                     e->str ? e->str : "?");
            snprintf(args, sizeof args, "\"instance\":%d", (int32_t)r->a);
            instant(o, e, tid, "group", name, args);
        }
        break;
    case TRC_MIGRATE:
        if (r->flags == TRC_MIG_FROZEN || r->flags == TRC_MIG_RESTARTED) {
            if (m->peer_mig[i] != TRACE_NONE)
                break; /* the flow's ends */
        }
        snprintf(name, sizeof name, "migrate: %s", trace_mig_stage_name(r->flags));
        snprintf(args, sizeof args, "\"other_node\":%u,\"bytes\":%" PRIu64, r->a, r->c);
        instant(o, e, tid, "migrate", name, args);
        break;
    default:
        break;
    }
}

static void node_event(struct out *o, const struct trace_event *e)
{
    const struct trc_rec *r = &e->r;
    char name[300], args[400], task[24], pol[300];
    switch (r->kind) {
    case TRC_LOAD:
        add(o, (int)r->a + 1, 0, e->ns - o->m->t->first_ns, -1,
            "\"ph\":\"C\",\"name\":\"load\",\"args\":{\"load\":%u.%03u}", r->b / 1000,
            r->b % 1000);
        break;
    case TRC_BALANCE:
        trace_id_name(r->id, task, sizeof task);
        escape(e->str ? e->str : "", pol, sizeof pol);
        snprintf(name, sizeof name, "balance %s %u->%u", task, r->a, r->b);
        snprintf(args, sizeof args, "\"task\":\"%s\",\"from\":%u,\"to\":%u,\"policy\":\"%s\"",
                 task, r->a, r->b, pol);
        instant(o, e, 0, "balance", name, args);
        break;
    case TRC_NODE:
        snprintf(name, sizeof name, "node %s %u", trace_node_event_name(r->flags), r->a);
        snprintf(args, sizeof args, "\"node\":%u,\"code\":%u", r->a, r->b);
        instant(o, e, 0, "node", name, args);
        break;
    case TRC_MIGRATE: /* a stage recorded by a node the task is not on */
        trace_id_name(r->id, task, sizeof task);
        snprintf(name, sizeof name, "migrate %s: %s", task, trace_mig_stage_name(r->flags));
        instant(o, e, 0, "migrate", name, "");
        break;
    default:
        break;
    }
}

static void events(struct out *o)
{
    const struct trace_model *m = o->m;
    for (size_t k = 0; k < m->nmsgs; k++) {
        message_flow(o, m->msgs[k].send, k + 1);
        message_flow(o, m->msgs[k].recv, k + 1);
    }
    for (size_t k = 0; k < m->nmigs; k++) {
        migrate_flow(o, m->migs[k].send, m->nmsgs + k + 1);
        migrate_flow(o, m->migs[k].recv, m->nmsgs + k + 1);
    }
    for (size_t i = 0; i < m->t->nev; i++) {
        if (m->res_of[i] >= 0)
            task_event(o, i);
        else
            node_event(o, &m->t->ev[i]);
    }
}

/* ------------------------------------------------------------ writing */

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->dur < y->dur) - (x->dur > y->dur); /* the longer first: parents */
}

static int cmp_ts(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Past max bytes: the items after the time where the sum reaches it are
 * dropped; that time, or -1 when all fit. */
static int64_t cut(struct out *o, uint64_t max)
{
    uint64_t sum = 64;
    for (size_t i = 0; i < o->n; i++)
        sum += strlen(o->it[i].text) + 2;
    if (sum <= max)
        return -1;
    sort_any(o->it, o->n, sizeof *o->it, cmp_ts);
    sum = 256;
    size_t i = 0;
    for (; i < o->n; i++) {
        sum += strlen(o->it[i].text) + 2;
        if (sum > max)
            break;
    }
    int64_t at = i < o->n ? o->it[i].ts : INT64_MAX;
    size_t n = 0;
    for (size_t j = 0; j < o->n; j++) {
        if ((o->it[j].ts < at && o->it[j].end_ts < at) || o->it[j].ts == INT64_MIN)
            o->it[n++] = o->it[j];
        else
            free(o->it[j].text);
    }
    o->n = n;
    return at;
}

int trace_write_json(const struct trace_model *m, const char *path, uint64_t max_bytes,
                     bool quiet)
{
    struct out o = {.m = m, .end_ts = INT64_MIN};
    metadata(&o);
    slices(&o);
    events(&o);
    size_t all = o.n;
    int64_t at = cut(&o, max_bytes);
    sort_any(o.it, o.n, sizeof *o.it, cmp_item);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "upvm trace: %s: %s\n", path, strerror(errno));
        for (size_t i = 0; i < o.n; i++)
            free(o.it[i].text);
        free(o.it);
        return -1;
    }
    fputs("{\"traceEvents\":[\n", f);
    for (size_t i = 0; i < o.n; i++) {
        fprintf(f, "%s%s\n", o.it[i].text, i + 1 < o.n ? "," : "");
        free(o.it[i].text);
    }
    char a[32], len[32];
    us(at, a, sizeof a);
    us(m->t->last_ns - m->t->first_ns, len, sizeof len);
    fprintf(f, "],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"upvm trace\"");
    if (at >= 0)
        fprintf(f, ",\"note\":\"cut at %s us of %s us: UPVM_TRACE_JSON_MAX\"", a, len);
    fprintf(f, "}}\n");
    free(o.it);
    long size = ftell(f);
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "upvm trace: %s: could not write it\n", path);
        return -1;
    }
    if (at >= 0)
        fprintf(stderr, "upvm trace: %s: cut at %s us of %s us (%zu of %zu events): it would "
                        "pass UPVM_TRACE_JSON_MAX=%" PRIu64 " bytes; the OTF2 archive has "
                        "everything\n", path, a, len, o.n, all, max_bytes);
    if (!quiet)
        printf("upvm trace: wrote %s (%zu trace events, %ld bytes)\n", path, o.n, size);
    return 0;
}
