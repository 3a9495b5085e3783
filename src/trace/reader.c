/*
 * reader.c - a traced job's raw files on one time line (reader.h).
 */
#include "trace/reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_NODES 65536 /* node numbers above are refused as corrupt */

/* ------------------------------------------------------------ names */

static const char *const kind_names[TRC_KIND_MAX] = {
    [TRC_NONE] = "NONE",         [TRC_CHUNK] = "CHUNK",         [TRC_STR] = "STR",
    [TRC_TEXT] = "TEXT",         [TRC_CLOCK] = "CLOCK",         [TRC_OFFSET] = "OFFSET",
    [TRC_SWITCH] = "SWITCH",     [TRC_BLOCK] = "BLOCK",         [TRC_WAKE] = "WAKE",
    [TRC_COUPLE] = "COUPLE",     [TRC_DECOUPLE] = "DECOUPLE",   [TRC_API_ENTER] = "API_ENTER",
    [TRC_API_LEAVE] = "API_LEAVE", [TRC_SEND] = "SEND",         [TRC_RECV] = "RECV",
    [TRC_SPAWN] = "SPAWN",       [TRC_TASK_BEGIN] = "TASK_BEGIN", [TRC_TASK_END] = "TASK_END",
    [TRC_GROUP] = "GROUP",       [TRC_MIGRATE] = "MIGRATE",     [TRC_BALANCE] = "BALANCE",
    [TRC_LOAD] = "LOAD",         [TRC_NODE] = "NODE",
};

const char *trace_kind_name(unsigned kind)
{
    return kind < TRC_KIND_MAX && kind_names[kind] ? kind_names[kind] : "kind?";
}

bool trace_kind_has_str(unsigned kind)
{
    switch (kind) {
    case TRC_BLOCK: case TRC_COUPLE: case TRC_API_ENTER: case TRC_SPAWN:
    case TRC_TASK_BEGIN: case TRC_GROUP: case TRC_BALANCE:
        return true;
    default:
        return false;
    }
}

const char *trace_group_op_name(unsigned op)
{
    static const char *const n[] = {"?", "JOIN", "LEAVE", "BARRIER", "BCAST",
                                    "REDUCE", "GATHER", "SCATTER"};
    return op < ARRAY_SIZE(n) ? n[op] : "?";
}

const char *trace_mig_stage_name(unsigned stage)
{
    static const char *const n[] = {"?", "REQUEST", "PREPARE_ASKED", "SLOT_READY",
                                    "PREPARED", "FROZEN", "STATE_SENT", "DATA_SENT",
                                    "ARRIVED", "RESTARTED", "ANSWERED", "FAILED"};
    return stage < ARRAY_SIZE(n) ? n[stage] : "?";
}

const char *trace_node_event_name(unsigned ev)
{
    static const char *const n[] = {"?", "UP", "GONE", "ENDING"};
    return ev < ARRAY_SIZE(n) ? n[ev] : "?";
}

void trace_id_name(uint32_t id, char *buf, size_t len)
{
    if (id & ULP_TRC_NOTASK)
        snprintf(buf, len, "ulp %u", id & ~ULP_TRC_NOTASK);
    else
        snprintf(buf, len, "t%x", id);
}

/* ------------------------------------------------------------ paths */

void trace_paths(const char *file, char *base, size_t blen, char *dir, size_t dlen)
{
    size_t n = strlen(file);
    while (n > 1 && file[n - 1] == '/')
        n--;
    if (n > 4 && !memcmp(file + n - 4, ".raw", 4))
        n -= 4;
    snprintf(base, blen, "%.*s", (int)n, file);
    snprintf(dir, dlen, "%.*s.raw", (int)n, file);
}

/* ------------------------------------------------------------ growing arrays */

static _Noreturn void out_of_memory(void)
{
    fprintf(stderr, "upvm trace: out of memory\n");
    exit(1);
}

void *trace_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        out_of_memory();
    return p;
}

void *trace_xrealloc(void *p, size_t size)
{
    p = realloc(p, size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = trace_xrealloc(p, c * size);
    *cap = c;
    return q;
}

static void say(bool quiet, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(bool quiet, const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("upvm trace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ------------------------------------------------------------ one file */

/* The reading state of one file while its chunks are walked. */
struct file_read {
    struct trace *t;
    int fi;
    const struct trc_rec *base; /* the mapping, as records */
    size_t cap_ev, cap_str, cap_pairs;
    uint64_t unknown_kinds, broken_strings, refused_chunks;
};

struct chunk_ref {
    uint32_t writer, seq;
    uint64_t k;
};

static int cmp_chunk(const void *a, const void *b)
{
    const struct chunk_ref *x = a, *y = b;
    if (x->writer != y->writer)
        return x->writer < y->writer ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* The header's problem, or NULL when it can be read. */
static const char *header_problem(const struct trc_file_header *h, uint64_t size, char *buf,
                                  size_t len)
{
    if (size < sizeof *h)
        return snprintf(buf, len, "truncated: %ju bytes, shorter than the %u-byte header",
                        (uintmax_t)size, TRC_HEADER_SIZE), buf;
    if (memcmp(h->magic, TRC_MAGIC, 8))
        return "not a UPVM trace file (bad magic)";
    if (h->version != TRC_VERSION)
        return snprintf(buf, len, "version %u, this upvm reads version %u", h->version,
                        TRC_VERSION), buf;
    if (h->header_size != TRC_HEADER_SIZE || h->chunk_size != TRC_CHUNK_SIZE)
        return snprintf(buf, len, "header size %u and chunk size %u (expected %u and %u)",
                        h->header_size, h->chunk_size, TRC_HEADER_SIZE, TRC_CHUNK_SIZE), buf;
    if (h->clock != TRC_CLOCK_KIND_TSC && h->clock != TRC_CLOCK_KIND_MONOTONIC)
        return snprintf(buf, len, "unknown clock kind %u", h->clock), buf;
    if (h->node < 0 || h->node >= MAX_NODES)
        return snprintf(buf, len, "bad node number %d", h->node), buf;
    if (h->file_size < size)
        return NULL; /* longer than said: read what the header covers */
    if (h->file_size > size)
        return snprintf(buf, len, "truncated: %ju bytes of the %ju its header says",
                        (uintmax_t)size, (uintmax_t)h->file_size), buf;
    return NULL;
}

static void add_event(struct file_read *fr, const struct trc_rec *r, uint32_t writer,
                      const char *text)
{
    struct trace *t = fr->t;
    t->ev = grow(t->ev, &fr->cap_ev, t->nev + 1, sizeof *t->ev);
    struct trace_event *e = &t->ev[t->nev++];
    *e = (struct trace_event){.ns = (int64_t)r->ts, .order = t->nev, .r = *r, .str = text,
                              .file = fr->fi, .writer = writer};
}

static void add_pair(struct file_read *fr, uint64_t tick, uint64_t ns)
{
    struct trace_file *f = &fr->t->files[fr->fi];
    f->pairs = grow(f->pairs, &fr->cap_pairs, f->npairs + 1, sizeof *f->pairs);
    f->pairs[f->npairs++] = (struct trace_clkpair){tick, (int64_t)ns};
}

/* The text of TRC_STR s from the npieces TRC_TEXT records that followed it
 * in its writer's stream, or NULL when they do not make its string (too
 * few pieces, pieces of another key or out of order). */
static char *read_string(const struct trc_rec *s, const struct trc_rec *const *pieces,
                         uint32_t npieces)
{
    uint32_t len = s->a;
    if ((uint64_t)s->b * 24 < len || s->b != npieces)
        return NULL;
    char *text = malloc((size_t)len + 1);
    if (!text)
        return NULL;
    for (uint32_t p = 0; p < npieces; p++) {
        struct trc_text x;
        memcpy(&x, pieces[p], sizeof x);
        if (x.kind != TRC_TEXT || x.flags != (p & 0xffff) || x.id != (uint32_t)s->c) {
            free(text);
            return NULL;
        }
        uint32_t off = p * 24, n = len - off < 24 ? len - off : 24;
        if (off < len)
            memcpy(text + off, x.text, n);
    }
    text[len] = 0;
    return text;
}

/* The records of one writer's chunks, in order, as one stream. */
struct stream {
    const struct trc_rec *base;
    const struct chunk_ref *ch;
    size_t nch, c;
    uint32_t i; /* next record in chunk ch[c] */
};

static const struct trc_rec *next_rec(struct stream *s)
{
    while (s->c < s->nch) {
        const struct trc_rec *chunk =
            (const struct trc_rec *)((const char *)s->base + TRC_HEADER_SIZE +
                                     s->ch[s->c].k * TRC_CHUNK_SIZE);
        if (s->i < TRC_CHUNK_RECS && chunk[s->i].kind != TRC_NONE)
            return &chunk[s->i++];
        s->c++;
        s->i = 1; /* after the TRC_CHUNK */
    }
    return NULL;
}

static void add_string(struct file_read *fr, const struct trc_rec *r, char *text)
{
    struct trace_file *f = &fr->t->files[fr->fi];
    f->strs = grow(f->strs, &fr->cap_str, f->nstrs + 1, sizeof *f->strs);
    f->strs[f->nstrs++] = (struct trace_strdef){r->c, (int64_t)r->ts, text};
}

/* One writer's records: strings gathered, events added. */
static void read_writer(struct file_read *fr, const struct chunk_ref *ch, size_t nch)
{
    struct stream s = {fr->base, ch, nch, 0, 1};
    struct trace_file *f = &fr->t->files[fr->fi];
    const struct trc_rec *r;
    add_event(fr, &((const struct trc_rec *)((const char *)fr->base + TRC_HEADER_SIZE +
                                             ch[0].k * TRC_CHUNK_SIZE))[0],
              ch[0].writer, NULL);
    f->records++;
    size_t chunk_now = 0;
    while ((r = next_rec(&s))) {
        f->records++;
        if (s.c != chunk_now) { /* the writer's next chunk: its TRC_CHUNK too */
            chunk_now = s.c;
            add_event(fr, r - s.i + 1, ch[0].writer, NULL);
        }
        if (r->kind >= TRC_KIND_MAX || !kind_names[r->kind]) {
            fr->unknown_kinds++;
            continue;
        }
        if (r->kind == TRC_CHUNK) /* a TRC_CHUNK inside a chunk: not ours */
            continue;
        if (r->kind == TRC_TEXT) { /* a piece without its TRC_STR */
            fr->broken_strings++;
            continue;
        }
        if (r->kind == TRC_STR) {
            const struct trc_rec *pieces[128];
            uint32_t n = 0;
            struct stream save = s;
            while (n < r->b && n < ARRAY_SIZE(pieces)) {
                const struct trc_rec *p = next_rec(&s);
                if (!p || p->kind != TRC_TEXT)
                    break;
                pieces[n++] = p;
            }
            char *text = read_string(r, pieces, n);
            if (!text) {
                fr->broken_strings++;
                s = save; /* what follows is read as records */
                continue;
            }
            f->records += n;
            add_string(fr, r, text);
            add_event(fr, r, ch[0].writer, text);
            continue;
        }
        if (r->kind == TRC_CLOCK)
            add_pair(fr, r->ts, r->c);
        add_event(fr, r, ch[0].writer, NULL);
    }
}

/* Walk the chunks of a mapped file: writers in order, each one's chunks by
 * sequence. */
static void read_chunks(struct file_read *fr, uint64_t nchunks)
{
    struct chunk_ref *ch = trace_xcalloc(nchunks, sizeof *ch);
    size_t n = 0;
    for (uint64_t k = 0; k < nchunks; k++) {
        const struct trc_rec *first =
            (const struct trc_rec *)((const char *)fr->base + TRC_HEADER_SIZE +
                                     k * TRC_CHUNK_SIZE);
        if (first->kind == TRC_NONE) /* handed out, never written */
            continue;
        if (first->kind != TRC_CHUNK) {
            fr->refused_chunks++;
            continue;
        }
        ch[n++] = (struct chunk_ref){first->id, first->a, k};
    }
    sort_any(ch, n, sizeof *ch, cmp_chunk);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && ch[j].writer == ch[i].writer; j++)
            ;
        read_writer(fr, ch + i, j - i);
    }
    free(ch);
}

static void say_file_state(const struct trace_file *f, bool quiet)
{
    const struct trc_file_header *h = &f->h;
    if (h->state == TRC_FILE_OPEN)
        say(quiet, "node %d did not close its trace: read up to its last record (%s)",
            f->node, f->path);
    else if (h->state == TRC_FILE_CRASHED)
        say(quiet, "node %d crashed (signal %d): its trace ends there", f->node, h->signal);
    else if (h->state != TRC_FILE_CLOSED)
        say(quiet, "%s: unknown state %u in the header: read as if open", f->path, h->state);
    if (h->lost)
        say(quiet, "node %d lost %ju records: its file was full (raise UPVM_TRACE_BUF)",
            f->node, (uintmax_t)h->lost);
}

/* Read one file into t->files[fi] and t->ev; false when refused (said). */
static bool read_file(struct trace *t, int fi, bool quiet)
{
    struct trace_file *f = &t->files[fi];
    char why[200];
    const char *problem = NULL;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        fprintf(stderr, "upvm trace: %s: %s\n", f->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    uint64_t size = (uint64_t)st.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) {
        problem = size ? strerror(errno) : "empty file";
    } else {
        problem = header_problem(map, size, why, sizeof why);
    }
    if (problem) {
        fprintf(stderr, "upvm trace: %s: %s; not read\n", f->path, problem);
        if (map != MAP_FAILED)
            munmap(map, size);
        return false;
    }
    memcpy(&f->h, map, sizeof f->h);
    f->node = f->h.node;
    f->h.host[sizeof f->h.host - 1] = 0;
    f->h.program[sizeof f->h.program - 1] = 0;
    uint64_t nchunks = trc_chunks_in(f->h.file_size);
    uint64_t handed = atomic_load(&((struct trc_file_header *)map)->next_chunk);
    struct file_read fr = {.t = t, .fi = fi, .base = map};
    if (f->h.clock == TRC_CLOCK_KIND_TSC && f->h.start.mono_ns)
        add_pair(&fr, f->h.start.tsc, f->h.start.mono_ns);
    if (f->h.clock == TRC_CLOCK_KIND_TSC && f->h.end.mono_ns)
        add_pair(&fr, f->h.end.tsc, f->h.end.mono_ns);
    read_chunks(&fr, handed < nchunks ? handed : nchunks);
    munmap(map, size);
    f->bad_records = fr.unknown_kinds + fr.broken_strings + fr.refused_chunks;
    if (fr.unknown_kinds)
        say(quiet, "%s: %ju records of unknown kinds skipped", f->path,
            (uintmax_t)fr.unknown_kinds);
    if (fr.broken_strings)
        say(quiet, "%s: %ju broken string definitions skipped", f->path,
            (uintmax_t)fr.broken_strings);
    if (fr.refused_chunks)
        say(quiet, "%s: %ju chunks that do not start with a CHUNK record skipped", f->path,
            (uintmax_t)fr.refused_chunks);
    say_file_state(f, quiet);
    t->lost += f->h.lost;
    return true;
}

/* ------------------------------------------------------------ the files */

static int cmp_node_path(const void *a, const void *b)
{
    const struct trace_file *x = a, *y = b;
    return (x->node > y->node) - (x->node < y->node);
}

/* The node-N.utr of dir into t->files (sorted by N). */
static int list_files(struct trace *t)
{
    DIR *d = opendir(t->dir);
    if (!d) {
        fprintf(stderr, "upvm trace: %s: %s\n", t->dir, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int n, end = 0;
        if (sscanf(de->d_name, "node-%d.utr%n", &n, &end) != 1 || de->d_name[end] || n < 0)
            continue;
        t->files = grow(t->files, &cap, (size_t)t->nfiles + 1, sizeof *t->files);
        struct trace_file *f = &t->files[t->nfiles];
        memset(f, 0, sizeof *f);
        f->node = n;
        f->offset_from = -1;
        if (snprintf(f->path, sizeof f->path, "%s/%s", t->dir, de->d_name) >=
            (int)sizeof f->path)
            continue; /* a path too long to open */
        t->nfiles++;
    }
    closedir(d);
    if (!t->nfiles) {
        fprintf(stderr, "upvm trace: %s: no node-N.utr files in it\n", t->dir);
        return -1;
    }
    sort_any(t->files, (size_t)t->nfiles, sizeof *t->files, cmp_node_path);
    return 0;
}

/* ------------------------------------------------------------ clocks */

static int cmp_pair(const void *a, const void *b)
{
    const struct trace_clkpair *x = a, *y = b;
    return (x->tick > y->tick) - (x->tick < y->tick);
}

/* Sort and drop pairs whose tick repeats or whose ns goes back. */
static void tidy_pairs(struct trace_file *f)
{
    sort_any(f->pairs, f->npairs, sizeof *f->pairs, cmp_pair);
    size_t n = 0;
    for (size_t i = 0; i < f->npairs; i++)
        if (!n || (f->pairs[i].tick > f->pairs[n - 1].tick &&
                   f->pairs[i].ns >= f->pairs[n - 1].ns))
            f->pairs[n++] = f->pairs[i];
    f->npairs = n;
}

/* Times are kept within +-2^62 ns (146 years), so that a corrupt record
 * cannot overflow the sums and differences made of them. */
#define NS_LIMIT ((int64_t)1 << 62)

static int64_t clamp_ns(__int128 v)
{
    return v > NS_LIMIT ? NS_LIMIT : v < -NS_LIMIT ? -NS_LIMIT : (int64_t)v;
}

/* base + ticks * num / den, exactly (rounded toward zero), clamped. */
static int64_t scale_from(int64_t base, int64_t ticks, int64_t num, int64_t den)
{
    return clamp_ns((__int128)base + (den ? (__int128)ticks * num / den : (__int128)ticks));
}

/* A tick count to the file's CLOCK_MONOTONIC ns. */
static int64_t tick_to_ns(const struct trace_file *f, uint64_t tick)
{
    if (f->h.clock == TRC_CLOCK_KIND_MONOTONIC)
        return clamp_ns(tick);
    if (f->npairs >= 2) {
        size_t lo = 0, hi = f->npairs - 1; /* the segment [lo, lo + 1] */
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (f->pairs[mid].tick <= tick)
                lo = mid;
            else
                hi = mid;
        }
        const struct trace_clkpair *p = &f->pairs[lo], *q = &f->pairs[lo + 1];
        return scale_from(p->ns, (int64_t)(tick - p->tick), q->ns - p->ns,
                          (int64_t)(q->tick - p->tick));
    }
    if (f->npairs == 1)
        return scale_from(f->pairs[0].ns, (int64_t)(tick - f->pairs[0].tick), f->slope_ns,
                          f->slope_ticks);
    return scale_from(0, (int64_t)tick, f->slope_ns, f->slope_ticks);
}

static bool same_host(const struct trace_file *a, const struct trace_file *b)
{
    return !strcmp(a->h.host, b->h.host);
}

/* A file with fewer than two pairs: those of a file of its host, else the
 * slope of the nearest node's file. */
static void borrow_clock(struct trace *t, int fi, bool quiet)
{
    struct trace_file *f = &t->files[fi];
    int best = -1;
    for (int j = 0; j < t->nfiles; j++) {
        const struct trace_file *g = &t->files[j];
        if (j == fi || !g->ok || g->h.clock != TRC_CLOCK_KIND_TSC || g->npairs < 2 ||
            g->slope_ticks)
            continue;
        if (same_host(f, g)) {
            best = j;
            break;
        }
        if (best < 0 || abs(g->node - f->node) < abs(t->files[best].node - f->node))
            best = j;
    }
    if (best < 0) {
        say(quiet, "node %d: fewer than two clock pairs and no other file to borrow a "
                   "clock from: its times are TSC ticks read as ns",
            f->node);
        f->slope_ns = f->slope_ticks = 1;
        return;
    }
    const struct trace_file *g = &t->files[best];
    if (same_host(f, g)) { /* one TSC per host: its pairs are ours too */
        size_t cap = f->npairs;
        struct file_read fr = {.t = t, .fi = fi, .cap_pairs = cap};
        for (size_t i = 0; i < g->npairs; i++)
            add_pair(&fr, g->pairs[i].tick, (uint64_t)g->pairs[i].ns);
        tidy_pairs(f);
        return;
    }
    say(quiet, "node %d: fewer than two clock pairs and no file of host %s has more: "
               "assumed the TSC rate of node %d",
        f->node, f->h.host, g->node);
    f->slope_ns = g->pairs[g->npairs - 1].ns - g->pairs[0].ns;
    f->slope_ticks = (int64_t)(g->pairs[g->npairs - 1].tick - g->pairs[0].tick);
}

/* A host's offset at local time ns, from its OFFSET samples. */
static int64_t offset_at(const struct trace_file *o, int64_t ns)
{
    if (o->noff == 0)
        return 0;
    if (o->noff == 1 || ns <= o->off_at[0] || o->off_at[1] <= o->off_at[0])
        return o->off_ns[0];
    if (ns >= o->off_at[1])
        return o->off_ns[1];
    return scale_from(o->off_ns[0], ns - o->off_at[0], o->off_ns[1] - o->off_ns[0],
                      o->off_at[1] - o->off_at[0]);
}

/* Each file's OFFSET samples (b = 0 start, 1 end; the latest of each), and
 * which file's apply to which: the file of its host that has samples. */
static void find_offsets(struct trace *t, bool quiet)
{
    for (size_t i = 0; i < t->nev; i++) {
        const struct trace_event *e = &t->ev[i];
        if (e->r.kind != TRC_OFFSET)
            continue;
        struct trace_file *f = &t->files[e->file];
        int k = e->r.b ? 1 : 0;
        f->off_ns[k] = clamp_ns((int64_t)e->r.c);
        f->off_at[k] = e->ns;
        if (k == 1 && f->noff == 0) { /* an end without a start */
            f->off_ns[0] = f->off_ns[1];
            f->off_at[0] = f->off_at[1];
        }
        f->noff = k == 0 ? (f->noff > 1 ? 2 : 1) : 2;
    }
    const struct trace_file *node0 = t->nfiles && t->files[0].ok ? &t->files[0] : NULL;
    for (int i = 0; i < t->nfiles; i++) {
        struct trace_file *f = &t->files[i];
        if (!f->ok || (node0 && same_host(f, node0)))
            continue;
        for (int j = 0; j < t->nfiles && f->offset_from < 0; j++)
            if (t->files[j].ok && t->files[j].noff && same_host(f, &t->files[j]))
                f->offset_from = j;
        if (f->offset_from < 0)
            say(quiet, "node %d (host %s): no offset to node 0's clock was recorded: "
                       "assumed 0", f->node, f->h.host);
    }
}

/* ------------------------------------------------------------ strings */

static int cmp_str(const void *a, const void *b)
{
    const struct trace_strdef *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->ns > y->ns) - (x->ns < y->ns);
}

/* The text of key in file f at time ns: the latest definition before it,
 * else the first one after. */
static const char *resolve(const struct trace_file *f, uint64_t key, int64_t ns)
{
    size_t lo = 0, hi = f->nstrs; /* first def with key >= key */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->strs[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == f->nstrs || f->strs[lo].key != key)
        return NULL;
    size_t best = lo;
    for (size_t i = lo + 1; i < f->nstrs && f->strs[i].key == key && f->strs[i].ns <= ns; i++)
        best = i;
    return f->strs[best].text;
}

/* ------------------------------------------------------------ the time line */

static int cmp_event(const void *a, const void *b)
{
    const struct trace_event *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* Raw ts -> local ns for every event (string definitions too), then the
 * host offsets, then the strings resolved. */
static void place_events(struct trace *t, bool quiet)
{
    for (int i = 0; i < t->nfiles; i++) {
        struct trace_file *f = &t->files[i];
        if (f->ok && f->h.clock == TRC_CLOCK_KIND_TSC)
            tidy_pairs(f);
    }
    for (int i = 0; i < t->nfiles; i++) {
        struct trace_file *f = &t->files[i];
        if (f->ok && f->h.clock == TRC_CLOCK_KIND_TSC && f->npairs < 2)
            borrow_clock(t, i, quiet);
    }
    for (size_t i = 0; i < t->nev; i++)
        t->ev[i].ns = tick_to_ns(&t->files[t->ev[i].file], t->ev[i].r.ts);
    /* A chunk's or a string's record written without a time (ts 0) takes
     * the time of the writer's next record (else its previous one): one
     * such record must not stretch the trace back to tick 0.  t->ev is
     * still in read order: each writer's records in a row. */
    for (size_t i = t->nev; i-- > 0;) {
        struct trace_event *e = &t->ev[i];
        if (e->r.ts || (e->r.kind != TRC_CHUNK && e->r.kind != TRC_STR))
            continue;
        const struct trace_event *n = i + 1 < t->nev ? &t->ev[i + 1] : NULL;
        const struct trace_event *p = i ? &t->ev[i - 1] : NULL;
        if (n && n->file == e->file && n->writer == e->writer)
            e->ns = n->ns;
        else if (p && p->file == e->file && p->writer == e->writer)
            e->ns = tick_to_ns(&t->files[p->file], p->r.ts);
    }
    for (int i = 0; i < t->nfiles; i++)
        for (size_t s = 0; s < t->files[i].nstrs; s++)
            t->files[i].strs[s].ns = tick_to_ns(&t->files[i], (uint64_t)t->files[i].strs[s].ns);
    find_offsets(t, quiet);
    for (size_t i = 0; i < t->nev; i++) {
        struct trace_event *e = &t->ev[i];
        const struct trace_file *f = &t->files[e->file];
        if (trace_kind_has_str(e->r.kind) && e->r.c)
            e->str = resolve(f, e->r.c, e->ns);
        if (f->offset_from >= 0)
            e->ns = clamp_ns((__int128)e->ns + offset_at(&t->files[f->offset_from], e->ns));
    }
}

static void note_extent(struct trace *t)
{
    for (int i = 0; i < t->nfiles; i++)
        t->files[i].first_ns = INT64_MAX, t->files[i].last_ns = INT64_MIN;
    for (size_t i = 0; i < t->nev; i++) {
        struct trace_file *f = &t->files[t->ev[i].file];
        f->events++;
        if (t->ev[i].ns < f->first_ns)
            f->first_ns = t->ev[i].ns;
        if (t->ev[i].ns > f->last_ns)
            f->last_ns = t->ev[i].ns;
    }
    if (t->nev) {
        t->first_ns = t->ev[0].ns;
        t->last_ns = t->ev[t->nev - 1].ns;
    }
    /* node 0's (realtime, monotonic) pair, else the first file's */
    for (int i = 0; i < t->nfiles && !t->realtime_at_first; i++) {
        const struct trace_file *f = &t->files[i];
        if (f->ok && f->h.start.real_ns) { /* node 0's when it was read */
            int64_t mono = f->h.clock == TRC_CLOCK_KIND_TSC ? tick_to_ns(f, f->h.start.tsc)
                                                            : (int64_t)f->h.start.mono_ns;
            if (f->offset_from >= 0)
                mono = clamp_ns((__int128)mono + offset_at(&t->files[f->offset_from], mono));
            t->realtime_at_first = f->h.start.real_ns + (uint64_t)(t->first_ns - mono);
        }
    }
}

int trace_read(const char *file, struct trace *t, bool quiet)
{
    memset(t, 0, sizeof *t);
    trace_paths(file, t->base, sizeof t->base, t->dir, sizeof t->dir);
    if (list_files(t))
        return -1;
    int read = 0;
    for (int i = 0; i < t->nfiles; i++) {
        t->files[i].ok = read_file(t, i, quiet);
        for (int j = 0; j < i && t->files[i].ok; j++)
            if (t->files[j].ok && t->files[j].node == t->files[i].node) {
                fprintf(stderr, "upvm trace: %s: node %d again (also %s); not read\n",
                        t->files[i].path, t->files[i].node, t->files[j].path);
                t->files[i].ok = false; /* its events: dropped below */
            }
        if (t->files[i].ok)
            read++;
        else
            t->refused++;
    }
    size_t n = 0; /* drop events of files refused after reading */
    for (size_t i = 0; i < t->nev; i++)
        if (t->files[t->ev[i].file].ok)
            t->ev[n++] = t->ev[i];
    t->nev = n;
    for (int i = 0; i < t->nfiles; i++) {
        sort_any(t->files[i].strs, t->files[i].nstrs, sizeof *t->files[i].strs, cmp_str);
    }
    place_events(t, quiet);
    sort_any(t->ev, t->nev, sizeof *t->ev, cmp_event);
    note_extent(t);
    return read ? 0 : -1;
}

void trace_free(struct trace *t)
{
    for (int i = 0; i < t->nfiles; i++) {
        for (size_t s = 0; s < t->files[i].nstrs; s++)
            free(t->files[i].strs[s].text);
        free(t->files[i].strs);
        free(t->files[i].pairs);
    }
    free(t->files);
    free(t->ev);
    memset(t, 0, sizeof *t);
}
