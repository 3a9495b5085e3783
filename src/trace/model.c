/*
 * model.c - residencies, matched messages and migrations, nested slices
 * (model.h).
 */
#include "trace/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ a small map */


static uint64_t mix(uint64_t k1, uint64_t k2)
{
    uint64_t h = k1 * 0x9e3779b97f4a7c15u ^ (k2 + 0x632be59bd9b4e019u) * 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 31);
}

static void map_grow(struct trace_map *m)
{
    struct trace_map old = *m;
    m->cap = old.cap ? old.cap * 2 : 256;
    m->s = trace_xcalloc(m->cap, sizeof *m->s);
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.s[i].used) {
            struct trace_map_slot *x = trace_map_find(m, old.s[i].k1, old.s[i].k2, true);
            x->v1 = old.s[i].v1;
            x->v2 = old.s[i].v2;
        }
    free(old.s);
}

struct trace_map_slot *trace_map_find(struct trace_map *m, uint64_t k1, uint64_t k2, bool add)
{
    if (add && (m->n + 1) * 2 > m->cap)
        map_grow(m);
    if (!m->cap)
        return NULL;
    for (size_t i = mix(k1, k2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct trace_map_slot *x = &m->s[i];
        if (x->used && x->k1 == k1 && x->k2 == k2)
            return x;
        if (!x->used) {
            if (!add)
                return NULL;
            *x = (struct trace_map_slot){k1, k2, TRACE_NONE, TRACE_NONE, true};
            m->n++;
            return x;
        }
    }
}

void trace_map_free(struct trace_map *m)
{
    free(m->s);
    memset(m, 0, sizeof *m);
}

uint64_t trace_str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h;
}

/* ------------------------------------------------------------ names */

bool trace_waitq_is_recv(const char *name)
{
    return name && (strstr(name, "recv") || strstr(name, "message"));
}

void trace_slice_name(const struct trace_slice *s, char *buf, size_t len)
{
    const char *str = s->str ? s->str : "?";
    const char *cont = s->continued ? " (continued)" : "";
    switch (s->kind) {
    case SL_TASK:
        snprintf(buf, len, "task%s", cont);
        break;
    case SL_API:
        snprintf(buf, len, "%s%s", str, cont);
        break;
    case SL_WAIT:
        snprintf(buf, len, "wait: %s%s", str, cont);
        break;
    case SL_COUPLED:
        snprintf(buf, len, "coupled: %s%s", str, cont);
        break;
    case SL_GROUP: {
        char op[16];
        snprintf(op, sizeof op, "%s", trace_group_op_name(s->op));
        for (char *p = op; *p; p++)
            *p = (char)(*p - 'A' + 'a');
        snprintf(buf, len, "%s %s%s", op, str, cont);
        break;
    }
    case SL_MIGRATING:
        snprintf(buf, len, "migrating");
        break;
    }
}

void trace_res_name(const struct trace_res *r, char *buf, size_t len)
{
    char id[24];
    trace_id_name(r->tid, id, sizeof id);
    if (r->from_node >= 0)
        snprintf(buf, len, "%s (from node %d)", id, r->from_node);
    else
        snprintf(buf, len, "%s", id);
}

/* ------------------------------------------------------------ residencies */

struct build {
    struct trace_model *m;
    struct trace_map cur;  /* tid -> (its latest residency, -) */
    struct trace_map at;   /* (tid, node) -> (its latest residency there, -) */
    size_t cap_res;
};

static int new_res(struct build *b, uint32_t tid, const struct trace_event *e)
{
    struct trace_model *m = b->m;
    if (m->nres == b->cap_res) {
        b->cap_res = b->cap_res ? b->cap_res * 2 : 64;
        m->res = trace_xrealloc(m->res, b->cap_res * sizeof *m->res);
    }
    struct trace_map_slot *c = trace_map_find(&b->cur, tid, 0, true);
    int node = m->t->files[e->file].node;
    int from = c->v1 != TRACE_NONE ? m->res[c->v1].node : -1;
    m->res[m->nres] = (struct trace_res){.tid = tid, .file = e->file, .node = node,
                                         .from_node = from == node ? -1 : from,
                                         .first_ns = e->ns, .last_ns = e->ns};
    c->v1 = m->nres;
    trace_map_find(&b->at, ((uint64_t)tid << 32) | (uint32_t)node, 1, true)->v1 = m->nres;
    return (int)m->nres++;
}

/* The residency of a task's event on this node, made if it starts one
 * (see the rules in model.h's top). */
static int res_for(struct build *b, uint32_t tid, const struct trace_event *e, bool may_create)
{
    struct trace_model *m = b->m;
    int node = m->t->files[e->file].node;
    struct trace_map_slot *c = trace_map_find(&b->cur, tid, 0, false);
    struct trace_map_slot *l = trace_map_find(&b->at, ((uint64_t)tid << 32) | (uint32_t)node, 1, false);
    size_t cur = c ? c->v1 : TRACE_NONE, last = l ? l->v1 : TRACE_NONE;
    bool arrival = e->r.kind == TRC_TASK_BEGIN ||
                   (e->r.kind == TRC_MIGRATE &&
                    (e->r.flags == TRC_MIG_ARRIVED || e->r.flags == TRC_MIG_RESTARTED));
    if (cur != TRACE_NONE && m->res[cur].node == node && !(arrival && m->res[cur].frozen))
        return (int)cur;
    if (!arrival && last != TRACE_NONE)
        return (int)last; /* a late record of a residency left behind */
    if (e->r.kind == TRC_MIGRATE && !arrival && cur != TRACE_NONE)
        return -1;        /* a stage recorded elsewhere (the requester) */
    return may_create ? new_res(b, tid, e) : -1;
}

static void assign_residencies(struct build *b)
{
    struct trace_model *m = b->m;
    struct trace *t = m->t;
    for (size_t i = 0; i < t->nev; i++) {
        const struct trace_event *e = &t->ev[i];
        m->res_of[i] = m->res_prev[i] = -1;
        unsigned k = e->r.kind;
        if (k < TRC_SWITCH || k == TRC_LOAD || k == TRC_NODE || k == TRC_BALANCE)
            continue;
        if (trace_is_task(e->r.id))
            m->res_of[i] = res_for(b, e->r.id, e, true);
        if (k == TRC_SWITCH && trace_is_task(e->r.a))
            m->res_prev[i] = res_for(b, e->r.a, e, false);
        int r = m->res_of[i];
        if (r < 0)
            continue;
        m->res[r].last_ns = e->ns;
        m->res[r].events++;
        if (k == TRC_MIGRATE && e->r.flags == TRC_MIG_FROZEN)
            m->res[r].frozen = true;
        if (k == TRC_MIGRATE && e->r.flags == TRC_MIG_FAILED)
            m->res[r].frozen = false;
    }
}

/* ------------------------------------------------------------ matching */

static void match_messages(struct trace_model *m)
{
    struct trace *t = m->t;
    struct trace_map q = {0}; /* (src, dst, ctx, tag) -> (oldest send, newest) */
    size_t *next = trace_xcalloc(t->nev, sizeof *next), cap = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const struct trc_rec *r = &t->ev[i].r;
        m->peer[i] = TRACE_NONE;
        if (r->kind != TRC_SEND && r->kind != TRC_RECV)
            continue;
        uint32_t src = r->kind == TRC_SEND ? r->id : r->a;
        uint32_t dst = r->kind == TRC_SEND ? r->a : r->id;
        uint64_t k1 = (uint64_t)src << 32 | dst, k2 = (r->c >> 32) << 32 | r->b;
        struct trace_map_slot *x = trace_map_find(&q, k1, k2, r->kind == TRC_SEND);
        if (r->kind == TRC_SEND) {
            next[i] = TRACE_NONE;
            if (x->v1 == TRACE_NONE)
                x->v1 = i;
            else
                next[x->v2] = i;
            x->v2 = i;
            continue;
        }
        if (!x || x->v1 == TRACE_NONE) {
            m->unmatched_recvs++;
            continue;
        }
        size_t s = x->v1;
        x->v1 = next[s];
        m->peer[s] = i;
        m->peer[i] = s;
        int64_t gap = t->ev[s].ns - t->ev[i].ns;
        if (gap > 0) {
            m->violations++;
            if (gap > m->max_violation_ns)
                m->max_violation_ns = gap;
        }
    }
    for (size_t i = 0; i < t->nev; i++) /* in SEND order */
        if (t->ev[i].r.kind == TRC_SEND) {
            if (m->peer[i] == TRACE_NONE) {
                m->unmatched_sends++;
                continue;
            }
            if (m->nmsgs == cap) {
                cap = cap ? cap * 2 : 64;
                m->msgs = realloc(m->msgs, cap * sizeof *m->msgs);
                if (!m->msgs)
                    exit(1);
            }
            m->msgs[m->nmsgs++] = (struct trace_msg){i, m->peer[i]};
        }
    free(next);
    free(q.s);
}

static void match_migrations(struct trace_model *m)
{
    struct trace *t = m->t;
    struct trace_map frozen = {0}; /* tid -> its pending FROZEN */
    size_t cap = 0;
    for (size_t i = 0; i < t->nev; i++) {
        const struct trc_rec *r = &t->ev[i].r;
        m->peer_mig[i] = TRACE_NONE;
        if (r->kind != TRC_MIGRATE || !trace_is_task(r->id))
            continue;
        if (r->flags == TRC_MIG_FROZEN) {
            trace_map_find(&frozen, r->id, 0, true)->v1 = i;
            continue;
        }
        if (r->flags != TRC_MIG_RESTARTED && r->flags != TRC_MIG_FAILED)
            continue;
        struct trace_map_slot *x = trace_map_find(&frozen, r->id, 0, false);
        if (!x || x->v1 == TRACE_NONE)
            continue;
        size_t f = x->v1;
        x->v1 = TRACE_NONE;
        if (r->flags == TRC_MIG_FAILED)
            continue;
        m->peer_mig[f] = i;
        m->peer_mig[i] = f;
        if (m->nmigs == cap) {
            cap = cap ? cap * 2 : 16;
            m->migs = realloc(m->migs, cap * sizeof *m->migs);
            if (!m->migs)
                exit(1);
        }
        m->migs[m->nmigs++] = (struct trace_msg){f, i};
    }
    free(frozen.s);
}

/* ------------------------------------------------------------ slices */

/* An open slice on a residency's stack. */
struct open_slice {
    struct trace_slice s;
};
struct stack {
    struct open_slice *o;
    size_t n, cap;
};

struct slicer {
    struct trace_model *m;
    struct stack *st;   /* per residency */
    struct trace_map carried; /* tid -> (first index in `cut`, count) */
    struct trace_slice *cut;
    size_t ncut, cap_cut, cap_slices;
};

static void emit(struct slicer *sl, const struct trace_slice *s)
{
    struct trace_model *m = sl->m;
    if (m->nslices == sl->cap_slices) {
        sl->cap_slices = sl->cap_slices ? sl->cap_slices * 2 : 256;
        m->slices = realloc(m->slices, sl->cap_slices * sizeof *m->slices);
        if (!m->slices)
            exit(1);
    }
    m->slices[m->nslices++] = *s;
}

static void push(struct slicer *sl, int res, struct trace_slice s)
{
    struct stack *st = &sl->st[res];
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 8;
        st->o = realloc(st->o, st->cap * sizeof *st->o);
        if (!st->o)
            exit(1);
    }
    s.res = res;
    st->o[st->n++].s = s;
}

/* Close the innermost open slice of kind (and those inside it) at ns;
 * nothing when none is open. */
static void pop_to(struct slicer *sl, int res, enum trace_slice_kind kind, int64_t ns,
                   size_t ev, int64_t result)
{
    struct stack *st = &sl->st[res];
    size_t k = st->n;
    while (k > 0 && st->o[k - 1].s.kind != kind)
        k--;
    if (!k)
        return;
    while (st->n > k - 1) {
        struct trace_slice s = st->o[--st->n].s;
        s.end = ns;
        s.end_ev = ev;
        if (st->n == k - 1)
            s.result = result;
        emit(sl, &s);
    }
}

/* Close every open slice at ns; with `cut`, keep them to go on later. */
static void pop_all(struct slicer *sl, int res, int64_t ns, size_t ev, bool unfinished,
                    bool cut)
{
    struct stack *st = &sl->st[res];
    if (cut && st->n) {
        struct trace_map_slot *x = trace_map_find(&sl->carried, sl->m->res[res].tid, 0, true);
        x->v1 = sl->ncut;
        x->v2 = st->n;
        for (size_t i = 0; i < st->n; i++) {
            if (sl->ncut == sl->cap_cut) {
                sl->cap_cut = sl->cap_cut ? sl->cap_cut * 2 : 16;
                sl->cut = realloc(sl->cut, sl->cap_cut * sizeof *sl->cut);
                if (!sl->cut)
                    exit(1);
            }
            sl->cut[sl->ncut++] = st->o[i].s;
        }
    }
    while (st->n) {
        struct trace_slice s = st->o[--st->n].s;
        s.end = ns;
        s.end_ev = ev;
        s.unfinished = unfinished;
        emit(sl, &s);
    }
}

/* At RESTARTED (or FAILED: the same residency), the slices cut at FROZEN go
 * on. */
static void resume(struct slicer *sl, int res, int64_t ns, size_t ev)
{
    struct trace_map_slot *x = trace_map_find(&sl->carried, sl->m->res[res].tid, 0, false);
    if (!x || x->v1 == TRACE_NONE)
        return;
    for (size_t i = 0; i < x->v2; i++) {
        struct trace_slice s = sl->cut[x->v1 + i];
        s.begin = ns;
        s.begin_ev = ev;
        s.continued = true;
        push(sl, res, s);
    }
    x->v1 = TRACE_NONE;
}

static void slice_migration(struct slicer *sl, int res, size_t i)
{
    struct trace_model *m = sl->m;
    const struct trace_event *e = &m->t->ev[i];
    if (e->r.flags == TRC_MIG_FROZEN) {
        pop_all(sl, res, e->ns, i, false, true);
    } else if (e->r.flags == TRC_MIG_FAILED) {
        resume(sl, res, e->ns, i);
    } else if (e->r.flags == TRC_MIG_RESTARTED) {
        size_t f = m->peer_mig[i];
        if (f != TRACE_NONE) {
            int64_t b = m->t->ev[f].ns < e->ns ? m->t->ev[f].ns : e->ns;
            struct trace_slice s = {.res = res, .kind = SL_MIGRATING, .begin = b,
                                    .end = e->ns, .begin_ev = f, .end_ev = i};
            emit(sl, &s);
        }
        resume(sl, res, e->ns, i);
    }
}

static void slice_event(struct slicer *sl, size_t i)
{
    struct trace_model *m = sl->m;
    const struct trace_event *e = &m->t->ev[i];
    int res = m->res_of[i];
    if (res < 0)
        return;
    struct trace_slice s = {.kind = SL_TASK, .str = e->str, .begin = e->ns, .begin_ev = i,
                            .end_ev = TRACE_NONE};
    switch (e->r.kind) {
    case TRC_TASK_BEGIN:
        push(sl, res, s);
        break;
    case TRC_TASK_END:
        pop_all(sl, res, e->ns, i, false, false);
        break;
    case TRC_API_ENTER:
        s.kind = SL_API;
        s.op = e->r.a;
        push(sl, res, s);
        break;
    case TRC_API_LEAVE:
        pop_to(sl, res, SL_API, e->ns, i, (int32_t)e->r.b);
        break;
    case TRC_BLOCK:
        s.kind = SL_WAIT;
        push(sl, res, s);
        break;
    case TRC_WAKE:
        pop_to(sl, res, SL_WAIT, e->ns, i, 0);
        break;
    case TRC_COUPLE:
        s.kind = SL_COUPLED;
        push(sl, res, s);
        break;
    case TRC_DECOUPLE:
        pop_to(sl, res, SL_COUPLED, e->ns, i, 0);
        break;
    case TRC_GROUP: {
        unsigned op = e->r.flags & 0xff;
        if (op < TRC_GROUP_BARRIER)
            break; /* join, leave: instants */
        if (e->r.flags & TRC_END) {
            pop_to(sl, res, SL_GROUP, e->ns, i, 0);
        } else {
            s.kind = SL_GROUP;
            s.op = op;
            push(sl, res, s);
        }
        break;
    }
    case TRC_MIGRATE:
        slice_migration(sl, res, i);
        break;
    default:
        break;
    }
}

static void make_slices(struct trace_model *m)
{
    struct slicer sl = {.m = m, .st = trace_xcalloc(m->nres, sizeof *sl.st)};
    for (size_t i = 0; i < m->t->nev; i++)
        slice_event(&sl, i);
    for (size_t r = 0; r < m->nres; r++) { /* no end in the trace */
        pop_all(&sl, (int)r, m->res[r].last_ns, TRACE_NONE, true, false);
        free(sl.st[r].o);
    }
    free(sl.st);
    free(sl.cut);
    free(sl.carried.s);
}

/* ------------------------------------------------------------ the model */

int trace_model_build(struct trace *t, struct trace_model *m)
{
    memset(m, 0, sizeof *m);
    m->t = t;
    m->res_of = trace_xcalloc(t->nev, sizeof *m->res_of);
    m->res_prev = trace_xcalloc(t->nev, sizeof *m->res_prev);
    m->peer = trace_xcalloc(t->nev, sizeof *m->peer);
    m->peer_mig = trace_xcalloc(t->nev, sizeof *m->peer_mig);
    struct build b = {.m = m};
    assign_residencies(&b);
    free(b.cur.s);
    free(b.at.s);
    match_messages(m);
    match_migrations(m);
    make_slices(m);
    return 0;
}

void trace_model_free(struct trace_model *m)
{
    free(m->res);
    free(m->res_of);
    free(m->res_prev);
    free(m->peer);
    free(m->peer_mig);
    free(m->msgs);
    free(m->migs);
    free(m->slices);
    memset(m, 0, sizeof *m);
}
