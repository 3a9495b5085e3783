/*
 * console_trace.c - the console's `trace` and the tracer of `spawn -@`
 * (console_trace.h), in the shapes of PVM 3.4.6's console: its cmds.c
 * (trace_cmd) and the tracer library it links (libpvmtrc: trcutil.c's
 * mask table, trcfile.c's SDDF descriptors and records).
 *
 * The events come in libpvm's format (docs/pvm-tracing.md): an event's
 * first time from a task, its description (-5 ... -6: kind, name, and per
 * value its data id, type, [count], value); afterwards values only (-7
 * ... -8).  Each description is kept as libpvmtrc keeps it: one list per
 * event id, a new entry when the values' ids or types differ; its place in
 * that list is its "index", in its name ("send(0.0)") and number (#1000 *
 * (index + 1) + 2 * id, + 1 for an exit event).  Like libpvmtrc, a
 * description is written once, before the first record that uses it.
 */
#define _GNU_SOURCE /* open_memstream */
#include "console_trace.h"

#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <pvm3.h>
#include <pvmtev.h>
#include <upvm.h>

#define TAG_BASE 0x7c000000 /* a traced job's trace messages: TAG_BASE + its number */
#define CJOBS_MAX 64
#define DESCS_MAX 1024
#define VALUES_MAX 48
#define SOURCES_MAX 1024
#define TASKS_MAX 256
#define STR_MAX 65536
#define EID_HOST_ADD 401 /* libpvmtrc's own events (trcdef.h) */
#define EID_OUTPUT 404

/* The event an id without ENTRY/EXIT (the pvmd's, libpvmtrc's) is. */
enum { EE_NONE = -1, EE_ENTRY = 0, EE_EXIT = 1 };

struct value_desc {
    int did, dt; /* dt: TEV_DATA_*, without TEV_DATA_ARRAY */
    bool array;
};

struct desc {
    int eid, ee, index;
    const char *name;
    int n;
    struct value_desc v[VALUES_MAX];
    bool dumped;
};

/* What a task (or the pvmd) described: descs[] + 1 per event and ENTRY/EXIT. */
struct source {
    int tid;
    short desc[TEV_MAX + 1][2];
};

struct cjob {
    int id;
    FILE *out;
    int nspawned, ended;
    int tasks[TASKS_MAX], ntasks; /* seen by newtask/spntask/endtask */
    bool ended_task[TASKS_MAX];   /* ... and its endtask came (which may come
                                   * before the spawner's node's spntask) */
    int alive;                    /* those not ended */
    bool active, complete;
};

static struct {
    int mytid;
    int topt, tbuf; /* as `trace opt` / `trace buf` set them (PVM's console's statics) */
    struct desc descs[DESCS_MAX];
    int ndescs;
    struct source *sources;
    int nsources;
    struct cjob jobs[CJOBS_MAX];
    int njobs;
    struct cjob *spawning;
    char str[STR_MAX];
} ct = {.topt = PvmTraceFull};

/* ------------------------------------------------------------ trace */

/* The events `trace` lists: every kind but the pvmd's and the summaries,
 * in name order (trcutil.c's trc_print_tmask). */
static int event_order(int *kinds)
{
    int n = 0;
    for (int k = TEV_FIRST; k <= TEV_MAX; k++) {
        const char *name = upvm_tev_name(k);
        if (!name || !strcmp(name, "newtask") || !strcmp(name, "spntask") ||
            !strcmp(name, "endtask") || !strcmp(name, "timing") || !strcmp(name, "profiling"))
            continue;
        int i = n++;
        while (i > 0 && strcmp(upvm_tev_name(kinds[i - 1]), name) > 0) {
            kinds[i] = kinds[i - 1];
            i--;
        }
        kinds[i] = k;
    }
    return n;
}

/* The mask as columns, " * name" for an event on, column by column. */
static void print_mask(const char *mask)
{
    int kinds[TEV_MAX + 1], n = event_order(kinds), maxlen = 0;
    for (int i = 0; i < n; i++)
        if ((int)strlen(upvm_tev_name(kinds[i])) > maxlen)
            maxlen = (int)strlen(upvm_tev_name(kinds[i]));
    int ncols = 79 / (maxlen + 4), width = 79 / ncols - 4, nrows = (n + ncols - 1) / ncols;
    for (int r = 0; r < nrows; r++)
        for (int c = 0; c < ncols; c++) {
            int i = r + c * nrows;
            if (i >= n) {
                printf("\n");
                continue;
            }
            printf(" %c %-*s%c", TEV_MASK_CHECK(mask, kinds[i]) ? '*' : ' ', width,
                   upvm_tev_name(kinds[i]), c == ncols - 1 ? '\n' : ' ');
        }
}

/* `trace xpvm`: the events XPVM shows, PVM's console's default. */
static void xpvm_mask(Pvmtmask m)
{
    static const int kinds[] = {
        TEV_BARRIER,  TEV_BCAST, TEV_JOINGROUP, TEV_LVGROUP, TEV_MYTID,      TEV_PARENT,
        TEV_SIBLINGS, TEV_SPAWN, TEV_SENDSIG,   TEV_KILL,    TEV_EXIT,       TEV_MCAST,
        TEV_SEND,     TEV_RECV,  TEV_RECVF,     TEV_NRECV,   TEV_PSEND,      TEV_PRECV,
        TEV_TRECV,    TEV_PROBE, TEV_ADDMHF,    TEV_DELMHF,  TEV_MHF_INVOKE, TEV_USER_DEFINED};
    TEV_MASK_INIT(m);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        TEV_MASK_SET(m, kinds[i]);
}

void ctrace_init(int mytid)
{
    Pvmtmask m;
    ct.mytid = mytid;
    /* PVM's console (cons.c): full events, unbuffered, XPVM's mask */
    (void)pvm_setopt(PvmTraceOptions, PvmTraceFull);
    (void)pvm_setopt(PvmTraceBuffer, 0);
    xpvm_mask(m);
    (void)pvm_settmask(PvmTaskChild, m);
}

static int event_named(const char *arg)
{
    const char *name = strncmp(arg, "pvm_", 4) ? arg : arg + 4;
    for (int k = TEV_FIRST; k <= TEV_MAX; k++)
        if (upvm_tev_name(k) && (!strcmp(upvm_tev_name(k), name) || !strcmp(upvm_tev_name(k), arg)))
            return k;
    return -1;
}

static void trace_opt(int ac, char **av, int *i)
{
    if (*i + 1 >= ac) {
        const char *s = ct.topt == PvmTraceFull    ? "full"
                        : ct.topt == PvmTraceTime  ? "time"
                        : ct.topt == PvmTraceCount ? "count"
                                                   : NULL;
        if (s)
            printf("\nTrace Options set to \"%s\"\n\n", s);
        else
            printf("\nTrace Options set to \"<Unknown=%d>\"\n\n", ct.topt);
        return;
    }
    const char *o = av[++*i];
    if (!strcmp(o, "full"))
        ct.topt = PvmTraceFull;
    else if (!strcmp(o, "time"))
        ct.topt = PvmTraceTime;
    else if (!strcmp(o, "count"))
        ct.topt = PvmTraceCount;
    else
        printf("\nError:  Unknown Trace Option \"%s\"\n\n", o);
    (void)pvm_setopt(PvmTraceOptions, ct.topt); /* the old one again after an error, as PVM */
}

int ctrace_command(int ac, char **av)
{
    Pvmtmask m;
    (void)pvm_gettmask(PvmTaskChild, m);
    if (ac == 1) {
        print_mask(m);
        return 0;
    }
    bool on = true, set = false;
    for (int i = 1; i < ac; i++) {
        if (!strcmp(av[i], "+") || !strcmp(av[i], "-")) {
            on = av[i][0] == '+';
        } else if (!strcmp(av[i], "*")) {
            for (int k = TEV_FIRST; k <= TEV_MAX; k++) {
                if (on)
                    TEV_MASK_SET(m, k);
                else
                    TEV_MASK_UNSET(m, k);
            }
            set = true;
        } else if (!strcmp(av[i], "buf")) {
            if (i + 1 < ac) {
                ct.tbuf = atoi(av[++i]);
                (void)pvm_setopt(PvmTraceBuffer, ct.tbuf);
            } else
                printf("\nTrace Buffering set to %d bytes\n\n", ct.tbuf);
        } else if (!strcmp(av[i], "opt")) {
            trace_opt(ac, av, &i);
        } else if (!strcmp(av[i], "xpvm")) {
            xpvm_mask(m);
            set = true;
        } else {
            int k = event_named(av[i]);
            if (k < 0) {
                printf("no such event \"%s\"\n", av[i]);
                continue;
            }
            if (on)
                TEV_MASK_SET(m, k);
            else
                TEV_MASK_UNSET(m, k);
            set = true;
        }
    }
    if (set)
        (void)pvm_settmask(PvmTaskChild, m);
    return 0;
}

/* ------------------------------------------------------------ the trace file */

static struct cjob *job_numbered(int id)
{
    for (int i = 0; i < ct.njobs; i++)
        if (ct.jobs[i].id == id)
            return &ct.jobs[i];
    return NULL;
}

/* libpvmtrc's line head: "[T<job>:t<tid>] " (while PvmShowTids is on). */
static void head(struct cjob *j, int tid)
{
    if (pvm_getopt(PvmShowTids))
        fprintf(j->out, "[T%d:t%x] ", j->id, (unsigned)tid);
}

static void desc_name(FILE *f, const struct desc *d)
{
    if (d->ee == EE_NONE)
        fprintf(f, "%s(%d)", d->name, d->index);
    else
        fprintf(f, "%s(%d.%d)", d->name, d->ee, d->index);
}

/* trcfile.c's trc_dump_tevdesc: the event's SDDF record description. */
static void dump_desc(struct cjob *j, int tid, struct desc *d)
{
    static const char *const types[16] = {"void", "char", "float", "double", "double", "float",
                                          "int",  "int",  "int",   "int",    "int",    "int",
                                          "char", "void", "void",  "void"};
    head(j, tid);
    fprintf(j->out, "\n");
    head(j, tid);
    fprintf(j->out, "#%d: \"", 1000 * (d->index + 1) + 2 * d->eid + (d->ee == EE_EXIT));
    desc_name(j->out, d);
    fprintf(j->out, "\"\n");
    head(j, tid);
    fprintf(j->out, "{\n");
    for (int i = 0; i < d->n; i++) {
        const struct value_desc *v = &d->v[i];
        const char *name = upvm_tev_did_name(v->did), *desc = upvm_tev_did_desc(v->did);
        head(j, tid);
        fprintf(j->out, "\t// \"%s\" \"%s\"\n", name ? name : "?", desc ? desc : "?");
        head(j, tid);
        fprintf(j->out, "\t%s \"%s\"%s%s;\n", types[v->dt & 15], name ? name : "?",
                v->array ? "[]" : "", v->dt == TEV_DATA_STRING ? "[]" : "");
    }
    head(j, tid);
    fprintf(j->out, "};;\n");
    head(j, tid);
    fprintf(j->out, "\n");
    d->dumped = true;
}

/* libpvmtrc's trc_add_tevdesc: the description like d (same event, same
 * values' ids and types), or d as a new one.  NULL: no room. */
static struct desc *add_desc(const struct desc *d)
{
    int index = 0;
    for (int i = 0; i < ct.ndescs; i++) {
        struct desc *o = &ct.descs[i];
        if (o->eid != d->eid)
            continue;
        if (o->ee == d->ee && o->n == d->n && !strcmp(o->name, d->name) &&
            !memcmp(o->v, d->v, (size_t)d->n * sizeof d->v[0]))
            return o;
        index++;
    }
    if (ct.ndescs == DESCS_MAX)
        return NULL;
    struct desc *n = &ct.descs[ct.ndescs++];
    *n = *d;
    n->index = index;
    n->name = strdup(d->name);
    n->dumped = false;
    return n->name ? n : NULL;
}

/* The record: its head, then the values (already written to text). */
static void put_record(struct cjob *j, int tid, struct desc *d, const char *values)
{
    if (!d->dumped)
        dump_desc(j, tid, d);
    head(j, tid);
    fputc('"', j->out);
    desc_name(j->out, d);
    fprintf(j->out, "\" { %s };;\n", values);
    fflush(j->out);
}

static long now_sec(int *usec)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    *usec = (int)tv.tv_usec;
    return tv.tv_sec;
}

static struct desc *own_desc(int eid, const char *name, const int *dids, const int *dts, int n)
{
    struct desc d = {.eid = eid, .ee = EE_NONE, .name = name, .n = n};
    for (int i = 0; i < n; i++)
        d.v[i] = (struct value_desc){dids[i], dts[i], false};
    return add_desc(&d);
}

/* The head of the trace file and a host_add event per host, as libpvmtrc
 * writes them when a trace starts. */
static void trace_head(struct cjob *j)
{
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y", localtime(&now));
    head(j, ct.mytid);
    fprintf(j->out, "/*\n");
    head(j, ct.mytid);
    fprintf(j->out, " * \"Creation Date\" \"%s\"\n", date);
    head(j, ct.mytid);
    fprintf(j->out, " * \"Machine\" \"Console %s (PVM %s)\"\n", pvm_version(), pvm_version());
    head(j, ct.mytid);
    fprintf(j->out, " */ ;;\n");
    head(j, ct.mytid);
    fprintf(j->out, "\n");

    static const int dids[] = {TEV_DID_TS,  TEV_DID_TU, TEV_DID_TID, TEV_DID_HN,
                               TEV_DID_HNA, TEV_DID_HA, TEV_DID_HSP};
    static const int dts[] = {TEV_DATA_INT,    TEV_DATA_INT,    TEV_DATA_INT, TEV_DATA_STRING,
                              TEV_DATA_STRING, TEV_DATA_STRING, TEV_DATA_INT};
    struct desc *d = own_desc(EID_HOST_ADD, "host_add", dids, dts, 7);
    int nhost, narch;
    struct pvmhostinfo *hi;
    if (!d || pvm_config(&nhost, &narch, &hi) < 0)
        return;
    for (int i = 0; i < nhost; i++) {
        int usec;
        long sec = now_sec(&usec);
        size_t ln = strlen(hi[i].hi_name) + 1, la = strlen(hi[i].hi_arch) + 1;
        char values[1024];
        snprintf(values, sizeof values,
                 "%ld, %d, %d, [%zu] { \"%s\" }, [%zu] { \"%s\" }, [%zu] { \"%s\" }, %d", sec, usec,
                 hi[i].hi_tid, ln, hi[i].hi_name, ln, hi[i].hi_name, la, hi[i].hi_arch,
                 hi[i].hi_speed);
        put_record(j, hi[i].hi_tid, d, values);
    }
}

bool ctrace_spawning(int job, FILE *out)
{
    if (ct.njobs == CJOBS_MAX) {
        printf("too many traced jobs\n");
        return false;
    }
    struct cjob *j = &ct.jobs[ct.njobs++];
    *j = (struct cjob){.id = job, .out = out ? out : stdout, .active = true};
    ct.spawning = j;
    trace_head(j);
    fflush(j->out);
    (void)pvm_setopt(PvmTraceTid, ct.mytid);
    (void)pvm_setopt(PvmTraceCode, TAG_BASE + job);
    return true;
}

static void check_complete(struct cjob *j);

void ctrace_spawned(int nstarted)
{
    (void)pvm_setopt(PvmTraceTid, 0);
    if (ct.spawning) {
        ct.spawning->nspawned = nstarted > 0 ? nstarted : 0;
        check_complete(ct.spawning);
    }
    ct.spawning = NULL;
}

/* ------------------------------------------------------------ tasks */

static int task_index(struct cjob *j, int tid)
{
    for (int i = 0; i < j->ntasks; i++)
        if (j->tasks[i] == tid)
            return i;
    return -1;
}

/* Every task spawned has ended and none it started runs: the trace is
 * complete (libpvmtrc's trc_end_trace), the job finished. */
static void check_complete(struct cjob *j)
{
    if (j->complete || j->alive > 0 || j->ended < j->nspawned || j == ct.spawning)
        return;
    j->complete = true;
    j->active = false;
    fflush(j->out);
    fprintf(stderr, "[%d] libpvmtrc: Trace File Complete\n", j->id);
    printf("[%d] finished\n", j->id);
    fflush(stdout);
    if (j->out != stdout)
        fclose(j->out);
    j->out = stdout;
}

/* newtask / spntask / endtask of tid: the job's tasks. */
static void task_event(struct cjob *j, int eid, int tid)
{
    int i = task_index(j, tid);
    if (i < 0) {
        if (j->ntasks == TASKS_MAX)
            return;
        i = j->ntasks++;
        j->tasks[i] = tid;
        j->ended_task[i] = eid == TEV_ENDTASK;
        if (eid != TEV_ENDTASK) {
            fprintf(stderr, "[%d] libpvmtrc: Task TID=0x%x Connected to Console\n", j->id,
                    (unsigned)tid);
            j->alive++;
        } else
            j->ended++;
    } else if (eid == TEV_ENDTASK && !j->ended_task[i]) {
        j->ended_task[i] = true;
        j->alive--;
        j->ended++;
    }
    check_complete(j);
}

bool ctrace_output(int job, int tid, const char *line)
{
    struct cjob *j = job_numbered(job);
    if (!j)
        return false;
    static const int dids[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_OS};
    static const int dts[] = {TEV_DATA_INT, TEV_DATA_INT, TEV_DATA_INT, TEV_DATA_STRING};
    struct desc *d = own_desc(EID_OUTPUT, "output", dids, dts, 4);
    if (!d)
        return true;
    /* pvm_catchout's BEGIN is the task's start and its spawn (libpvmtrc
     * shows the pvmd's TO_NEW and TO_SPAWN); EOF its end */
    const char *lines[2] = {line, NULL};
    if (!strcmp(line, "BEGIN"))
        lines[0] = "CREATION", lines[1] = "GOTSPAWN";
    else if (!strcmp(line, "EOF"))
        lines[0] = "GOTEOF";
    for (int i = 0; i < 2 && lines[i]; i++) {
        int usec;
        long sec = now_sec(&usec);
        char *values = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&values, &len);
        if (!f)
            return true;
        fprintf(f, "%ld, %d, %d, [%zu] { \"%s\" }", sec, usec, tid, strlen(lines[i]) + 1, lines[i]);
        fclose(f);
        put_record(j, tid, d, values);
        free(values);
    }
    return true;
}

/* ------------------------------------------------------------ events */

static struct source *source_of(int tid)
{
    for (int i = 0; i < ct.nsources; i++)
        if (ct.sources[i].tid == tid)
            return &ct.sources[i];
    if (ct.nsources == SOURCES_MAX)
        return NULL;
    if (!ct.sources && !(ct.sources = calloc(SOURCES_MAX, sizeof *ct.sources)))
        return NULL;
    struct source *s = &ct.sources[ct.nsources++];
    memset(s, 0, sizeof *s);
    s->tid = tid;
    return s;
}

/* One value (count values for an array) unpacked and written as libpvmtrc
 * writes it; its int in *first.  false: the message is short. */
static bool put_value(FILE *f, const struct value_desc *v, int *first)
{
    int n = 1;
    if (v->array && pvm_upkint(&n, 1, 1) < 0)
        return false;
    if (n < 0)
        n = 0;
    if (v->array) {
        if (v->dt == TEV_DATA_STRING)
            fprintf(f, "[%d] ", n);
        else
            fprintf(f, "[%d] { ",
                    v->dt == TEV_DATA_CPLX || v->dt == TEV_DATA_DCPLX ? 2 * n
                    : v->dt == TEV_DATA_BYTE                          ? n + 1
                                                                      : n);
    }
    switch (v->dt) {
    case TEV_DATA_STRING: {
        char **s = calloc((size_t)(n ? n : 1), sizeof *s);
        size_t maxlen = 0;
        for (int i = 0; s && i < n; i++) {
            if (pvm_upkstr(ct.str) < 0)
                return free(s), false;
            s[i] = strdup(ct.str);
            if (s[i] && strlen(s[i]) > maxlen)
                maxlen = strlen(s[i]);
        }
        if (n > 0) {
            fprintf(f, "[%zu] { ", maxlen + 1);
            for (int i = 0; s && i < n; i++) {
                fprintf(f, "\"%s\"%s", s[i] ? s[i] : "", i + 1 < n ? ", " : "");
                free(s[i]);
            }
            if (!v->array)
                fprintf(f, " }");
        }
        free(s);
        break;
    }
    case TEV_DATA_BYTE: {
        if (v->array)
            fputc('"', f);
        for (int i = 0; i < n; i++) {
            char c;
            if (pvm_upkbyte(&c, 1, 1) < 0)
                return false;
            fputc(c, f);
        }
        if (v->array)
            fputc('"', f);
        break;
    }
    case TEV_DATA_FLOAT:
    case TEV_DATA_CPLX:
        for (int i = 0; i < n * (v->dt == TEV_DATA_CPLX ? 2 : 1); i++) {
            float x;
            if (pvm_upkfloat(&x, 1, 1) < 0)
                return false;
            fprintf(f, "%s%f", i ? ", " : "", x);
        }
        break;
    case TEV_DATA_DOUBLE:
    case TEV_DATA_DCPLX:
        for (int i = 0; i < n * (v->dt == TEV_DATA_DCPLX ? 2 : 1); i++) {
            double x;
            if (pvm_upkdouble(&x, 1, 1) < 0)
                return false;
            fprintf(f, "%s%f", i ? ", " : "", x);
        }
        break;
    case TEV_DATA_SHORT:
    case TEV_DATA_USHORT:
        for (int i = 0; i < n; i++) {
            short x;
            if (pvm_upkshort(&x, 1, 1) < 0)
                return false;
            if (v->dt == TEV_DATA_SHORT)
                fprintf(f, "%s%d", i ? ", " : "", (int)x);
            else
                fprintf(f, "%s%u", i ? ", " : "", (unsigned)(unsigned short)x);
        }
        break;
    case TEV_DATA_NULL: break;
    default: /* the integers; a long travels as its low 4 bytes (libpvm's XDR) */
        for (int i = 0; i < n; i++) {
            int x;
            if (pvm_upkint(&x, 1, 1) < 0)
                return false;
            if (i == 0)
                *first = x;
            if (v->dt == TEV_DATA_INT)
                fprintf(f, "%s%d", i ? ", " : "", x);
            else
                fprintf(f, "%s%u", i ? ", " : "", (unsigned)x);
        }
        break;
    }
    if (v->array)
        fprintf(f, " }");
    return true;
}

/* An event's values, in d's order, as text; the task it is about (TID)
 * in *tid.  NULL: the message is short (or no memory). */
static char *put_values(const struct desc *d, int *tid)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    bool ok = true;
    for (int i = 0; ok && i < d->n; i++) {
        int first = 0;
        ok = put_value(f, &d->v[i], &first);
        if (d->v[i].did == TEV_DID_TID)
            *tid = first;
        if (i + 1 < d->n)
            fprintf(f, ", ");
    }
    fclose(f);
    if (!ok) {
        free(text);
        return NULL;
    }
    return text;
}

static void put_event(struct cjob *j, int src, struct desc *d, char *values, int tid)
{
    if (!values)
        return;
    put_record(j, src, d, values);
    free(values);
    if (d->eid == TEV_NEWTASK || d->eid == TEV_SPNTASK || d->eid == TEV_ENDTASK)
        task_event(j, d->eid, tid);
}

static int ee_of(int kind)
{
    return kind & TEV_EVENT_ENTRY ? EE_ENTRY : kind & TEV_EVENT_EXIT ? EE_EXIT : EE_NONE;
}

/* -5 kind name (did type [count] value)... -6: the description, then the record. */
static bool take_described(struct cjob *j, int src)
{
    int kind, did, dt;
    struct desc d = {.ee = EE_NONE};
    if (pvm_upkint(&kind, 1, 1) < 0 || pvm_upkstr(ct.str) < 0)
        return false;
    d.eid = kind & ~(TEV_EVENT_ENTRY | TEV_EVENT_EXIT);
    d.ee = ee_of(kind);
    d.name = strdup(ct.str);
    char *values = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&values, &len);
    bool ok = d.name && f && d.eid >= 0;
    int tid = 0;
    while (ok && pvm_upkint(&did, 1, 1) >= 0 && did != TEV_MARK_EVENT_DESC_END) {
        if (pvm_upkint(&dt, 1, 1) < 0 || d.n == VALUES_MAX) {
            ok = false;
            break;
        }
        struct value_desc *v = &d.v[d.n++];
        *v = (struct value_desc){did, dt & ~TEV_DATA_ARRAY, (dt & TEV_DATA_ARRAY) != 0};
        int first = 0;
        if (d.n > 1)
            fprintf(f, ", ");
        ok = put_value(f, v, &first);
        if (did == TEV_DID_TID)
            tid = first;
    }
    if (f)
        fclose(f);
    struct desc *kept = ok ? add_desc(&d) : NULL;
    struct source *s = kept && d.eid <= TEV_MAX ? source_of(src) : NULL;
    if (s)
        s->desc[d.eid][d.ee == EE_EXIT] = (short)(kept - ct.descs + 1);
    free((void *)d.name);
    if (kept)
        put_event(j, src, kept, values, tid);
    else
        free(values);
    return ok;
}

/* -7 kind values... -8: a record of what src described before. */
static bool take_record(struct cjob *j, int src)
{
    int kind, end, tid = 0;
    if (pvm_upkint(&kind, 1, 1) < 0)
        return false;
    int eid = kind & ~(TEV_EVENT_ENTRY | TEV_EVENT_EXIT);
    struct source *s = source_of(src);
    if (!s || eid < 0 || eid > TEV_MAX || !s->desc[eid][ee_of(kind) == EE_EXIT])
        return false; /* never described: the rest cannot be read */
    struct desc *d = &ct.descs[s->desc[eid][ee_of(kind) == EE_EXIT] - 1];
    char *values = put_values(d, &tid);
    if (!values || pvm_upkint(&end, 1, 1) < 0 || end != TEV_MARK_EVENT_RECORD_END) {
        free(values);
        return false;
    }
    put_event(j, src, d, values, tid);
    return true;
}

/* The data-id table (-3 (id name description)... -4): libpvmtrc keeps it
 * for the host; the names are the same as UPVM's, which are used. */
static bool skip_data_ids(void)
{
    int id;
    while (pvm_upkint(&id, 1, 1) >= 0) {
        if (id == TEV_MARK_DATA_ID_END)
            return true;
        if (pvm_upkstr(ct.str) < 0 || pvm_upkstr(ct.str) < 0)
            return false;
    }
    return false;
}

/* One trace message of job j from src: its events in turn.  A user-
 * defined event (-9) ends the reading: its values are not described. */
static void take_message(struct cjob *j, int src)
{
    int m;
    bool ok = true;
    while (ok && pvm_upkint(&m, 1, 1) >= 0) {
        switch (m) {
        case TEV_MARK_EVENT_BUFFER:
        case TEV_MARK_EVENT_BUFFER_END: break;
        case TEV_MARK_DATA_ID: ok = skip_data_ids(); break;
        case TEV_MARK_EVENT_DESC: ok = take_described(j, src); break;
        case TEV_MARK_EVENT_RECORD: ok = take_record(j, src); break;
        default: ok = false; break;
        }
    }
}

bool ctrace_poll(void)
{
    bool any = false;
    for (int i = 0; i < ct.njobs; i++) {
        struct cjob *j = &ct.jobs[i];
        int b;
        while (j->active && (b = pvm_nrecv(-1, TAG_BASE + j->id)) > 0) {
            int bytes, tag, src;
            if (pvm_bufinfo(b, &bytes, &tag, &src) < 0)
                break;
            int autoerr = pvm_setopt(PvmAutoErr,
                                     0); /* the end of each message is a failed unpack */
            take_message(j, src);
            (void)pvm_setopt(PvmAutoErr, autoerr);
            (void)pvm_freebuf(b);
            any = true;
        }
    }
    return any;
}

bool ctrace_busy(void)
{
    for (int i = 0; i < ct.njobs; i++)
        if (ct.jobs[i].active)
            return true;
    return false;
}
