/*
 * otf2.c - the trace as an OTF2 3.0 archive DIR/traces.otf2 (design notes
 * §14.7), written by this one process: the raw files are the per-node
 * part, so no MPI collectives and no per-node writers.
 *
 * Definitions: the system tree "UPVM job" -> host -> "node N"; a location
 * group (PROCESS) per node; a location (CPU_THREAD, "t40003" or "t40003
 * (from node 0)") per residency, whose rank in comm "PVM" is its index;
 * paradigm MPI named "PVM" (OTF2 has no PVM paradigm: so named, MPI tools
 * still pair the messages); comms "PVM" and "migration" over every
 * location, and per PVM group "group NAME" over the residencies that took
 * part in its collective operations; a region per distinct slice name.
 * Events, per location in time order: Enter/Leave for the model's slices,
 * MpiSend/MpiRecv for each matched message (peer as its rank in "PVM"),
 * MpiCollectiveBegin/End for group operations (in the group's comm), a migration as MpiSend on
 * the old residency and MpiRecv on the new one in comm "migration" (tag 0,
 * bytes moved).
 * Time: already node 0's CLOCK_MONOTONIC in ns, so ClockProperties (1e9
 * ticks/s, the first event, the length, the wall clock at the first
 * event) and no ClockOffset records (a reader would apply them again).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/convert.h"
#include "trace/model.h"

#ifndef UPVM_HAVE_OTF2

int trace_write_otf2(const struct trace_model *m, const char *dir, bool quiet)
{
    (void)m;
    (void)quiet;
    fprintf(stderr, "upvm trace: %s: this upvm was built without OTF2\n", dir);
    return -1;
}

#else

#include <otf2/otf2.h>

#define COMM_PVM 0
#define COMM_MIGRATION 1

/* ------------------------------------------------------------ strings, regions */

struct names {
    char **s;
    size_t n, cap;
    struct trace_map index; /* (hash, 0) -> the first name of that hash */
};


/* The index of s in the table, added when new. */
static uint32_t intern(struct names *t, const char *s)
{
    struct trace_map_slot *x = trace_map_find(&t->index, trace_str_hash(s), 0, true);
    if (x->v1 != TRACE_NONE && !strcmp(t->s[x->v1], s))
        return (uint32_t)x->v1;
    for (size_t i = 0; x->v1 != TRACE_NONE && i < t->n; i++) /* a hash collision */
        if (!strcmp(t->s[i], s))
            return (uint32_t)i;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->s = trace_xrealloc(t->s, t->cap * sizeof *t->s);
    }
    t->s[t->n] = strdup(s);
    if (!t->s[t->n])
        exit(1);
    if (x->v1 == TRACE_NONE)
        x->v1 = t->n;
    return (uint32_t)t->n++;
}

static void names_free(struct names *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    trace_map_free(&t->index);
}

/* ------------------------------------------------------------ PVM groups */

/* A comm per PVM group (ids from COMM_GROUPS on), over the residencies that
 * took part in one of its collective operations. */
#define COMM_GROUPS 2

struct pvm_groups {
    struct names names;
    bool *member; /* [group * nres + residency] */
    size_t cap;   /* groups the array has room for */
};

static uint32_t group_of(struct pvm_groups *g, const char *name, size_t nres, int res)
{
    uint32_t k = intern(&g->names, name ? name : "?");
    if (k >= g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        g->member = trace_xrealloc(g->member, cap * nres * sizeof *g->member);
        memset(g->member + g->cap * nres, 0, (cap - g->cap) * nres * sizeof *g->member);
        g->cap = cap;
    }
    g->member[k * nres + (size_t)res] = true;
    return k;
}

/* ------------------------------------------------------------ one location's records */

enum rec_type { R_ENTER, R_LEAVE, R_SEND, R_RECV, R_COLL_BEGIN, R_COLL_END, R_MIG_SEND,
                R_MIG_RECV };

struct orec {
    int64_t ns;
    size_t ev;      /* the event it comes from (ties: recording order) */
    int cls;        /* ties at one event: ends, leaves, enters, the rest */
    int64_t tie;    /* then this */
    enum rec_type type;
    uint32_t a;     /* region, peer rank or collective op */
    uint32_t b;     /* tag, root */
    uint64_t c;     /* bytes */
    uint32_t comm;  /* R_COLL_END: the group's comm */
};

struct loc {
    struct orec *r;
    size_t n, cap;
};

static void add_rec(struct loc *l, struct orec r)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->r = trace_xrealloc(l->r, l->cap * sizeof *l->r);
    }
    l->r[l->n++] = r;
}

static int cmp_orec(const void *a, const void *b)
{
    const struct orec *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    if (x->ev != y->ev)
        return x->ev < y->ev ? -1 : 1;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    return (x->tie > y->tie) - (x->tie < y->tie);
}

static OTF2_CollectiveOp coll_op(unsigned op)
{
    switch (op) {
    case TRC_GROUP_BCAST: return OTF2_COLLECTIVE_OP_BCAST;
    case TRC_GROUP_REDUCE: return OTF2_COLLECTIVE_OP_REDUCE;
    case TRC_GROUP_GATHER: return OTF2_COLLECTIVE_OP_GATHER;
    case TRC_GROUP_SCATTER: return OTF2_COLLECTIVE_OP_SCATTER;
    default: return OTF2_COLLECTIVE_OP_BARRIER;
    }
}

/* Each slice's Enter and Leave on its location.  At one event, leaves go
 * inner first (the model emits them so), enters outer first (the longer,
 * else the one emitted later: the outer one closes last). */
static void slice_records(const struct trace_model *m, struct loc *locs, struct names *regions)
{
    char name[300];
    for (size_t i = 0; i < m->nslices; i++) {
        const struct trace_slice *s = &m->slices[i];
        trace_slice_name(s, name, sizeof name);
        uint32_t reg = intern(regions, name);
        add_rec(&locs[s->res], (struct orec){.ns = s->begin, .ev = s->begin_ev, .cls = 2,
                                             .tie = -(int64_t)i, .type = R_ENTER, .a = reg});
        add_rec(&locs[s->res], (struct orec){.ns = s->end, .ev = s->end_ev, .cls = 1,
                                             .tie = (int64_t)i, .type = R_LEAVE, .a = reg});
    }
}

static void event_records(const struct trace_model *m, struct loc *locs,
                          struct pvm_groups *groups)
{
    const struct trace *t = m->t;
    for (size_t i = 0; i < t->nev; i++) {
        const struct trace_event *e = &t->ev[i];
        int r = m->res_of[i];
        if (r < 0)
            continue;
        struct orec o = {.ns = e->ns, .ev = i, .cls = 3, .type = R_SEND};
        switch (e->r.kind) {
        case TRC_SEND:
        case TRC_RECV:
            if (m->peer[i] == TRACE_NONE || m->res_of[m->peer[i]] < 0)
                continue;
            o.type = e->r.kind == TRC_SEND ? R_SEND : R_RECV;
            o.a = (uint32_t)m->res_of[m->peer[i]];
            o.b = e->r.b;
            o.c = (uint32_t)e->r.c;
            break;
        case TRC_GROUP: {
            unsigned op = e->r.flags & 0xff;
            if (op < TRC_GROUP_BARRIER)
                continue;
            bool end = e->r.flags & TRC_END;
            o.type = end ? R_COLL_END : R_COLL_BEGIN;
            o.cls = end ? 0 : 3;
            o.a = (uint32_t)coll_op(op);
            /* the records give a root instance (not a rank) and items (not
             * bytes): neither is said */
            o.b = OTF2_UNDEFINED_UINT32;
            o.c = 0;
            o.comm = COMM_GROUPS + group_of(groups, e->str, m->nres, r);
            break;
        }
        case TRC_MIGRATE:
            if (m->peer_mig[i] == TRACE_NONE || m->res_of[m->peer_mig[i]] < 0)
                continue;
            if (e->r.flags != TRC_MIG_FROZEN && e->r.flags != TRC_MIG_RESTARTED)
                continue;
            o.type = e->r.flags == TRC_MIG_FROZEN ? R_MIG_SEND : R_MIG_RECV;
            o.cls = e->r.flags == TRC_MIG_FROZEN ? 3 : 0;
            o.a = (uint32_t)m->res_of[m->peer_mig[i]];
            o.c = e->r.c > t->ev[m->peer_mig[i]].r.c ? e->r.c : t->ev[m->peer_mig[i]].r.c;
            break;
        default:
            continue;
        }
        add_rec(&locs[r], o);
    }
}

/* ------------------------------------------------------------ writing */

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc,
                                void *caller, bool final)
{
    (void)user, (void)type, (void)loc, (void)caller, (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
    (void)user, (void)type, (void)loc;
    return 0;
}

static int failed(const char *dir, const char *what, OTF2_ErrorCode e)
{
    fprintf(stderr, "upvm trace: %s: OTF2 %s: %s (%s)\n", dir, what, OTF2_Error_GetName(e),
            OTF2_Error_GetDescription(e));
    return -1;
}

#define TRY(what, call)                               \
    do {                                              \
        OTF2_ErrorCode e_ = (call);                   \
        if (e_ != OTF2_SUCCESS)                       \
            return failed(dir, what, e_);             \
    } while (0)

static OTF2_ErrorCode write_record(OTF2_EvtWriter *w, const struct orec *r)
{
    OTF2_TimeStamp ts = (OTF2_TimeStamp)r->ns;
    switch (r->type) {
    case R_ENTER: return OTF2_EvtWriter_Enter(w, NULL, ts, r->a);
    case R_LEAVE: return OTF2_EvtWriter_Leave(w, NULL, ts, r->a);
    case R_SEND: return OTF2_EvtWriter_MpiSend(w, NULL, ts, r->a, COMM_PVM, r->b, r->c);
    case R_RECV: return OTF2_EvtWriter_MpiRecv(w, NULL, ts, r->a, COMM_PVM, r->b, r->c);
    case R_COLL_BEGIN: return OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, ts);
    case R_COLL_END:
        return OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, ts, (OTF2_CollectiveOp)r->a, r->comm,
                                               r->b, r->c, 0);
    case R_MIG_SEND: return OTF2_EvtWriter_MpiSend(w, NULL, ts, r->a, COMM_MIGRATION, 0, r->c);
    case R_MIG_RECV: return OTF2_EvtWriter_MpiRecv(w, NULL, ts, r->a, COMM_MIGRATION, 0, r->c);
    }
    return OTF2_SUCCESS;
}

static int write_events(OTF2_Archive *ar, const char *dir, struct loc *locs, size_t nlocs,
                        uint64_t *counts)
{
    TRY("opening the event files", OTF2_Archive_OpenEvtFiles(ar));
    for (size_t l = 0; l < nlocs; l++) {
        OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, l);
        if (!w)
            return failed(dir, "an event writer", OTF2_ERROR_MEM_ALLOC_FAILED);
        sort_any(locs[l].r, locs[l].n, sizeof *locs[l].r, cmp_orec);
        for (size_t i = 0; i < locs[l].n; i++)
            TRY("writing an event", write_record(w, &locs[l].r[i]));
        TRY("counting events", OTF2_EvtWriter_GetNumberOfEvents(w, &counts[l]));
        TRY("closing an event writer", OTF2_Archive_CloseEvtWriter(ar, w));
    }
    TRY("closing the event files", OTF2_Archive_CloseEvtFiles(ar));
    return 0;
}

/* The strings first (every name used below is interned before). */
static int write_strings(OTF2_GlobalDefWriter *g, const char *dir, const struct names *s)
{
    for (size_t i = 0; i < s->n; i++)
        TRY("a string", OTF2_GlobalDefWriter_WriteString(g, (uint32_t)i, s->s[i]));
    return 0;
}

static OTF2_RegionRole region_role(const char *name)
{
    if (strstr(name, "barrier"))
        return OTF2_REGION_ROLE_BARRIER;
    if (strstr(name, "bcast") || strstr(name, "scatter"))
        return OTF2_REGION_ROLE_COLL_ONE2ALL;
    if (strstr(name, "reduce") || strstr(name, "gather"))
        return OTF2_REGION_ROLE_COLL_ALL2ONE;
    if (strstr(name, "send") || strstr(name, "recv") || strstr(name, "mcast"))
        return OTF2_REGION_ROLE_POINT2POINT;
    return OTF2_REGION_ROLE_FUNCTION;
}

static bool is_api_region(const char *name)
{
    return !strncmp(name, "pvm_", 4) || !strncmp(name, "upvm_", 5);
}

struct defs {
    struct names str;
    uint32_t *host_node;   /* per file: its host's system tree node */
    uint32_t *loc_name;    /* per residency */
    uint32_t *file_name;   /* per file: "node N" */
    uint32_t *region_name; /* per region */
    size_t nregions;
    uint32_t s_job, s_machine, s_host, s_node, s_pvm, s_migration, s_all;
    const struct pvm_groups *groups;
    uint32_t *group_name;  /* per PVM group: "group NAME" */
};

static void intern_all(const struct trace_model *m, const struct names *regions,
                       struct defs *d)
{
    const struct trace *t = m->t;
    char buf[300];
    d->s_job = intern(&d->str, "UPVM job");
    d->s_machine = intern(&d->str, "machine");
    d->s_host = intern(&d->str, "host");
    d->s_node = intern(&d->str, "node");
    d->s_pvm = intern(&d->str, "PVM");
    d->s_migration = intern(&d->str, "migration");
    d->s_all = intern(&d->str, "all residencies");
    d->host_node = trace_xrealloc(NULL, (size_t)t->nfiles * sizeof *d->host_node);
    d->file_name = trace_xrealloc(NULL, (size_t)t->nfiles * sizeof *d->file_name);
    for (int f = 0; f < t->nfiles; f++) {
        snprintf(buf, sizeof buf, "node %d", t->files[f].node);
        d->file_name[f] = intern(&d->str, buf);
        d->host_node[f] = intern(&d->str, t->files[f].h.host);
    }
    d->loc_name = trace_xrealloc(NULL, m->nres * sizeof *d->loc_name);
    for (size_t r = 0; r < m->nres; r++) {
        trace_res_name(&m->res[r], buf, sizeof buf);
        d->loc_name[r] = intern(&d->str, buf);
    }
    d->group_name = trace_xrealloc(NULL, d->groups->names.n * sizeof *d->group_name);
    for (size_t k = 0; k < d->groups->names.n; k++) {
        snprintf(buf, sizeof buf, "group %s", d->groups->names.s[k]);
        d->group_name[k] = intern(&d->str, buf);
    }
    d->nregions = regions->n;
    d->region_name = trace_xrealloc(NULL, regions->n * sizeof *d->region_name);
    for (size_t i = 0; i < regions->n; i++)
        d->region_name[i] = intern(&d->str, regions->s[i]);
}

/* System tree: 0 the job, then one per host (the string of its name tells
 * hosts apart), then one per node. */
static int write_tree(OTF2_GlobalDefWriter *g, const char *dir, const struct trace *t,
                      const struct defs *d, uint32_t *tree_of_file)
{
    TRY("the system tree", OTF2_GlobalDefWriter_WriteSystemTreeNode(
                               g, 0, d->s_job, d->s_machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    uint32_t next = 1;
    uint32_t *host_tree = trace_xrealloc(NULL, (size_t)t->nfiles * sizeof *host_tree);
    for (int f = 0; f < t->nfiles; f++) {
        host_tree[f] = OTF2_UNDEFINED_UINT32;
        for (int j = 0; j < f; j++)
            if (t->files[j].ok && d->host_node[j] == d->host_node[f])
                host_tree[f] = host_tree[j];
        if (!t->files[f].ok || host_tree[f] != OTF2_UNDEFINED_UINT32)
            continue;
        host_tree[f] = next++;
        OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, host_tree[f],
                                                                   d->host_node[f], d->s_host, 0);
        if (e != OTF2_SUCCESS) {
            free(host_tree);
            return failed(dir, "the system tree", e);
        }
    }
    for (int f = 0; f < t->nfiles; f++) {
        if (!t->files[f].ok)
            continue;
        tree_of_file[f] = next++;
        OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteSystemTreeNode(
            g, tree_of_file[f], d->file_name[f], d->s_node, host_tree[f]);
        if (e != OTF2_SUCCESS) {
            free(host_tree);
            return failed(dir, "the system tree", e);
        }
    }
    free(host_tree);
    return 0;
}

static int write_locations(OTF2_GlobalDefWriter *g, const char *dir,
                           const struct trace_model *m, const struct defs *d,
                           const uint32_t *tree_of_file, const uint64_t *counts)
{
    const struct trace *t = m->t;
    for (int f = 0; f < t->nfiles; f++)
        if (t->files[f].ok)
            TRY("a location group", OTF2_GlobalDefWriter_WriteLocationGroup(
                                        g, (uint32_t)f, d->file_name[f],
                                        OTF2_LOCATION_GROUP_TYPE_PROCESS, tree_of_file[f],
                                        OTF2_UNDEFINED_LOCATION_GROUP));
    for (size_t r = 0; r < m->nres; r++)
        TRY("a location", OTF2_GlobalDefWriter_WriteLocation(
                              g, r, d->loc_name[r], OTF2_LOCATION_TYPE_CPU_THREAD, counts[r],
                              (uint32_t)m->res[r].file));
    return 0;
}

static int write_regions(OTF2_GlobalDefWriter *g, const char *dir, const struct defs *d,
                         const struct names *regions)
{
    for (size_t i = 0; i < regions->n; i++) {
        const char *n = regions->s[i];
        bool api = is_api_region(n);
        TRY("a region", OTF2_GlobalDefWriter_WriteRegion(
                            g, (uint32_t)i, d->region_name[i], d->region_name[i],
                            d->region_name[i],
                            api ? region_role(n) : OTF2_REGION_ROLE_ARTIFICIAL,
                            api ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                            OTF2_UNDEFINED_STRING, 0, 0));
    }
    return 0;
}

/* Group 0: every location (COMM_LOCATIONS); group 1: their ranks
 * (COMM_GROUP); comms "PVM" and "migration" on group 1. */
static int write_comms(OTF2_GlobalDefWriter *g, const char *dir, const struct trace_model *m,
                       const struct defs *d)
{
    uint64_t *members = trace_xrealloc(NULL, m->nres * sizeof *members);
    for (size_t r = 0; r < m->nres; r++)
        members[r] = r;
    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, d->s_pvm,
                                                          OTF2_PARADIGM_CLASS_PROCESS);
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteGroup(g, 0, d->s_all, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                            (uint32_t)m->nres, members);
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteGroup(g, 1, d->s_pvm, OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                            (uint32_t)m->nres, members);
    free(members);
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteComm(g, COMM_PVM, d->s_pvm, 1, OTF2_UNDEFINED_COMM,
                                           OTF2_COMM_FLAG_NONE);
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteComm(g, COMM_MIGRATION, d->s_migration, 1,
                                           OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    for (size_t k = 0; k < d->groups->names.n && e == OTF2_SUCCESS; k++) {
        uint64_t *mem = trace_xrealloc(NULL, m->nres * sizeof *mem);
        uint32_t n = 0;
        for (size_t r = 0; r < m->nres; r++)
            if (d->groups->member[k * m->nres + r])
                mem[n++] = r; /* its rank in group 0 */
        uint32_t id = COMM_GROUPS + (uint32_t)k;
        e = OTF2_GlobalDefWriter_WriteGroup(g, id, d->group_name[k], OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, mem);
        free(mem);
        if (e == OTF2_SUCCESS)
            e = OTF2_GlobalDefWriter_WriteComm(g, id, d->group_name[k], id, COMM_PVM,
                                               OTF2_COMM_FLAG_NONE);
    }
    return e == OTF2_SUCCESS ? 0 : failed(dir, "the communicators", e);
}

static int write_definitions(OTF2_Archive *ar, const char *dir, const struct trace_model *m,
                             const struct names *regions, const struct pvm_groups *groups,
                             const uint64_t *counts)
{
    const struct trace *t = m->t;
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(ar);
    if (!g)
        return failed(dir, "the definitions writer", OTF2_ERROR_MEM_ALLOC_FAILED);
    uint64_t length = t->nev ? (uint64_t)(t->last_ns - t->first_ns) + 1 : 1;
    TRY("the clock", OTF2_GlobalDefWriter_WriteClockProperties(
                         g, 1000000000u, (uint64_t)t->first_ns, length, t->realtime_at_first));
    struct defs d = {.groups = groups};
    intern_all(m, regions, &d);
    uint32_t *tree_of_file = trace_xrealloc(NULL, (size_t)t->nfiles * sizeof *tree_of_file);
    int rc = write_strings(g, dir, &d.str);
    if (!rc)
        rc = write_tree(g, dir, t, &d, tree_of_file);
    if (!rc)
        rc = write_locations(g, dir, m, &d, tree_of_file, counts);
    if (!rc)
        rc = write_regions(g, dir, &d, regions);
    if (!rc)
        rc = write_comms(g, dir, m, &d);
    free(tree_of_file);
    free(d.host_node);
    free(d.file_name);
    free(d.loc_name);
    free(d.region_name);
    free(d.group_name);
    names_free(&d.str);
    if (rc)
        return rc;
    TRY("closing the definitions", OTF2_Archive_CloseGlobalDefWriter(ar, g));
    /* empty local definitions, one per location */
    TRY("opening the local definitions", OTF2_Archive_OpenDefFiles(ar));
    for (size_t r = 0; r < m->nres; r++) {
        OTF2_DefWriter *w = OTF2_Archive_GetDefWriter(ar, r);
        if (!w)
            return failed(dir, "a local definitions writer", OTF2_ERROR_MEM_ALLOC_FAILED);
        TRY("closing local definitions", OTF2_Archive_CloseDefWriter(ar, w));
    }
    TRY("closing the local definitions", OTF2_Archive_CloseDefFiles(ar));
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* A previous archive in dir is replaced (nothing else is ever in it). */
static int clear_dir(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) && errno == ENOENT)
        return 0;
    if (!S_ISDIR(st.st_mode) || nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS)) {
        fprintf(stderr, "upvm trace: %s: could not replace it: %s\n", dir,
                S_ISDIR(st.st_mode) ? strerror(errno) : "not a directory");
        return -1;
    }
    return 0;
}

static int write_archive(const struct trace_model *m, const char *dir, struct loc *locs,
                         const struct names *regions, const struct pvm_groups *groups)
{
    OTF2_Archive *ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1 << 20, 4 << 20,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar)
        return failed(dir, "opening the archive", OTF2_ERROR_FILE_CAN_NOT_OPEN);
    static const OTF2_FlushCallbacks flush = {.otf2_pre_flush = pre_flush,
                                              .otf2_post_flush = post_flush};
    uint64_t *counts = trace_xrealloc(NULL, m->nres * sizeof *counts);
    int rc = -1;
    if (OTF2_Archive_SetFlushCallbacks(ar, &flush, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetSerialCollectiveCallbacks(ar) != OTF2_SUCCESS)
        failed(dir, "setting the callbacks", OTF2_ERROR_INVALID_CALL);
    else if (!write_events(ar, dir, locs, m->nres, counts))
        rc = write_definitions(ar, dir, m, regions, groups, counts);
    free(counts);
    OTF2_ErrorCode e = OTF2_Archive_Close(ar);
    if (e != OTF2_SUCCESS && !rc)
        rc = failed(dir, "closing the archive", e);
    return rc;
}

int trace_write_otf2(const struct trace_model *m, const char *dir, bool quiet)
{
    if (!m->nres) { /* nothing to show: not an error */
        if (!quiet)
            printf("upvm trace: no task in the trace: no OTF2 archive written\n");
        return 0;
    }
    if (clear_dir(dir))
        return -1;
    struct loc *locs = calloc(m->nres, sizeof *locs);
    struct names regions = {0};
    struct pvm_groups groups = {0};
    if (!locs)
        exit(1);
    slice_records(m, locs, &regions);
    event_records(m, locs, &groups);
    int rc = write_archive(m, dir, locs, &regions, &groups);
    uint64_t total = 0;
    for (size_t l = 0; l < m->nres; l++) {
        total += locs[l].n;
        free(locs[l].r);
    }
    free(locs);
    names_free(&regions);
    names_free(&groups.names);
    free(groups.member);
    if (!rc && !quiet)
        printf("upvm trace: wrote %s/traces.otf2 (%zu locations, %llu events)\n", dir,
               m->nres, (unsigned long long)total);
    return rc;
}

#endif /* UPVM_HAVE_OTF2 */
