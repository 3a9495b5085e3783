/*
 * convert.c - trace_convert (convert.h), the dump, and UPVM_TRACE_JSON_MAX.
 */
#include "trace/convert.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/model.h"
#include "trace/reader.h"
#include "util/env.h"

uint64_t trace_json_max(void)
{
    static const struct env_num spec = {.min = 4096, .max = 1ull << 40,
                                        .dflt = 512ull << 20};
    uint64_t v;
    env_size("UPVM_TRACE_JSON_MAX", &spec, &v);
    return v;
}

/* ------------------------------------------------------------ dump */

/* A string for dump: quoted, or "?KEY" when undefined. */
static void dump_str(FILE *out, const struct trace_event *e)
{
    if (e->str) {
        fputs(" str=\"", out);
        for (const char *p = e->str; *p; p++)
            fputc((unsigned char)*p < 0x20 || *p == '"' ? '?' : *p, out);
        fputc('"', out);
    } else if (e->r.c) {
        fprintf(out, " str=?%#" PRIx64, e->r.c);
    }
}

static void dump_decoded(FILE *out, const struct trace_event *e)
{
    const struct trc_rec *r = &e->r;
    char a[24];
    trace_id_name(r->a, a, sizeof a);
    switch (r->kind) {
    case TRC_SEND:
    case TRC_RECV:
        fprintf(out, " %s=%s tag=%d ctx=%u bytes=%u", r->kind == TRC_SEND ? "dst" : "src", a,
                (int32_t)r->b, (uint32_t)(r->c >> 32), (uint32_t)r->c);
        break;
    case TRC_SWITCH:
        fprintf(out, " prev=%s prev_state=%u", a, r->flags);
        break;
    case TRC_WAKE:
        fprintf(out, " waker=%s", r->a ? a : "0");
        break;
    case TRC_MIGRATE:
        fprintf(out, " stage=%s other_node=%u bytes=%" PRIu64, trace_mig_stage_name(r->flags),
                r->a, r->c);
        break;
    case TRC_GROUP:
        fprintf(out, " op=%s%s", trace_group_op_name(r->flags & 0xff),
                r->flags & TRC_END ? " end" : "");
        break;
    case TRC_NODE:
        fprintf(out, " event=%s node=%u code=%u", trace_node_event_name(r->flags), r->a, r->b);
        break;
    case TRC_SPAWN:
        fprintf(out, " child=%s on_node=%u", a, r->b);
        break;
    case TRC_TASK_BEGIN:
        if ((int32_t)r->a <= 0) /* none: 0, or PVM's PvmNoParent */
            fprintf(out, " parent=%d node=%u", (int32_t)r->a, r->b);
        else
            fprintf(out, " parent=%s node=%u", a, r->b);
        break;
    case TRC_OFFSET:
        fprintf(out, " offset_ns=%" PRId64 " rtt_ns=%u %s", (int64_t)r->c, r->a,
                r->b ? "end" : "start");
        break;
    case TRC_CLOCK:
        fprintf(out, " tsc=%" PRIu64 " mono_ns=%" PRIu64, r->ts, r->c);
        break;
    case TRC_CHUNK:
        fprintf(out, " writer=%u seq=%u linux_tid=%u", r->id, r->a, r->b);
        break;
    default:
        break;
    }
}

void trace_write_dump(const struct trace *t, FILE *out)
{
    for (size_t i = 0; i < t->nev; i++) {
        const struct trace_event *e = &t->ev[i];
        char id[24];
        if (e->r.kind == TRC_CHUNK || !e->r.id)
            snprintf(id, sizeof id, "%u", e->r.id);
        else
            trace_id_name(e->r.id, id, sizeof id);
        fprintf(out, "%" PRId64 " node %d w%u %s id=%s flags=%#x a=%u b=%u c=%#" PRIx64,
                e->ns - t->first_ns, t->files[e->file].node, e->writer,
                trace_kind_name(e->r.kind), id, e->r.flags, e->r.a, e->r.b,
                e->r.c);
        dump_decoded(out, e);
        if (e->r.kind == TRC_STR || trace_kind_has_str(e->r.kind))
            dump_str(out, e);
        fputc('\n', out);
    }
}

/* ------------------------------------------------------------ convert */

bool trace_have_otf2(void)
{
#ifdef UPVM_HAVE_OTF2
    return true;
#else
    return false;
#endif
}

static int remove_raw(const struct trace *t)
{
    DIR *d = opendir(t->dir);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = 0;
    char path[PATH_MAX + 300];
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", t->dir, de->d_name);
            if (unlink(path))
                rc = -1;
        }
    closedir(d);
    if (rc || rmdir(t->dir)) {
        fprintf(stderr, "upvm trace: could not remove %s: %s\n", t->dir, strerror(errno));
        return -1;
    }
    return 0;
}

int trace_convert(const char *file, const struct trace_convert_opts *o)
{
    static const struct trace_convert_opts dflt;
    if (!o)
        o = &dflt;
    struct trace t;
    if (trace_read(file, &t, o->quiet)) {
        trace_free(&t);
        return 1;
    }
    struct trace_model m;
    trace_model_build(&t, &m);
    int rc = t.refused ? 1 : 0;
    char path[PATH_MAX + 16];
    if (!o->no_json) {
        snprintf(path, sizeof path, "%s.json", t.base);
        if (trace_write_json(&m, path, trace_json_max(), o->quiet))
            rc = 1;
    }
    if (!o->no_otf2 && trace_have_otf2()) {
        snprintf(path, sizeof path, "%s.otf2", t.base);
        if (trace_write_otf2(&m, path, o->quiet))
            rc = 1;
    } else if (!o->no_otf2 && !o->quiet) {
        printf("upvm trace: no OTF2 archive: this upvm was built without OTF2 "
               "(libopen-trace-format2-dev); JSON only\n");
    }
    if (!o->quiet)
        printf("upvm trace: %zu events of %d nodes, %zu messages (%" PRIu64 " sends not "
               "received), %zu migrations; clock violations: %" PRIu64
               " (largest %" PRId64 " ns); lost records: %" PRIu64 "\n",
               t.nev, t.nfiles - t.refused, m.nmsgs, m.unmatched_sends, m.nmigs, m.violations,
               m.max_violation_ns, t.lost);
    if (!rc && o->remove_raw && remove_raw(&t))
        rc = 1;
    trace_model_free(&m);
    trace_free(&t);
    return rc;
}
