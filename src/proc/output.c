/*
 * output.c - the standard output and error of process-mode ULPs: tagged
 * with their task ("[t40002] hello", PVM's output tagging, as the console
 * shows it), or carried to the task that catches them (pvm_catchout).
 *
 * Neither (the default): a ULP's stdout and stderr are the node's.
 * Tagged (UPVM_OUTPUT_TIDS=1, or `upvm run --tag-output`), or caught
 * (proc_output_catch before it runs): the ULP gets its own two FILE
 * streams (fopencookie).  Tagged, they collect a line at a time and write
 * it, prefixed, to the node's file descriptor 1 or 2 in one write; caught,
 * they hand what comes out of them to the router (pvm sends it to the
 * catcher, whose node cuts it into lines and tags it: pvm/catchout.c).
 * The program's `stdout` and `stderr` resolve to them (the loader binds
 * those names here), and printf, vprintf, puts, putchar and perror, which
 * inside libc use libc's own streams, are interposed to use them.  Output
 * written with write(1, ...) directly is neither tagged nor caught.
 *
 * A tagged line keeps the name it had last (a task that called pvm_exit
 * still writes as t40002), and no newline is added that the program did
 * not write: a last line without one is written as it is, and only when
 * another tagged line follows it on the same descriptor does that line
 * begin with a newline (so that its tag starts a line).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem/mem.h"
#include "proc/proc.h"
#include "util/env.h"
#include "util/output.h"

/* One stream of a ULP's: the ULP, its proc, its unfinished line. */
struct tagged {
    struct ulp *owner;
    struct proc *p;
    int fd;
    bool cont;      /* the line written last was cut (too long): no tag */
    size_t len;
    char line[4096];
};

/* Descriptors 1 and 2: the last tagged line written there had no newline
 * (its task ended without one), so the next one starts with it. */
static bool dangling[3];

static const struct proc_output_router *router;

void proc_output_set_router(const struct proc_output_router *r)
{
    router = r;
}

void proc_output_catch(struct proc *p, const int key[2])
{
    if (!router)
        return;
    p->catch_key[0] = key[0];
    p->catch_key[1] = key[1];
    p->caught = true;
}

static bool tagging(void)
{
    static int on = -1;
    if (on < 0)
        on = env_flag("UPVM_OUTPUT_TIDS");
    return on;
}

static proc_output_namer_fn namer;

void proc_output_set_namer(proc_output_namer_fn fn)
{
    namer = fn;
}

/* The name the namer gives u now, kept in p ("" when it knows none). */
static void keep_name(struct proc *p, const struct ulp *u)
{
    char name[sizeof p->tag_name];
    if (namer && namer(u, name, sizeof name) > 0)
        memcpy(p->tag_name, name, sizeof name);
}

void proc_output_keep_name(struct ulp *u)
{
    struct proc *p = u->ext[ULP_EXT_PROC];
    if (p)
        keep_name(p, u);
}

/* "[t40002] " for a PVM task (the namer says, or said last: after
 * pvm_exit), "[ULP 7] " otherwise. */
static int tag_of(struct tagged *s, char *buf, size_t len)
{
    keep_name(s->p, s->owner);
    if (s->p->tag_name[0])
        return snprintf(buf, len, "[%s] ", s->p->tag_name);
    return snprintf(buf, len, "[ULP %d] ", s->owner->id);
}

/* Write the line data[0..n) tagged; cut: it goes on in the next one. */
static void emit(struct tagged *s, const char *data, size_t n, bool cut)
{
    char out[sizeof s->line + 64];
    int tag = 0;
    if (dangling[s->fd] && !s->cont)
        out[tag++] = '\n';
    if (!s->cont)
        tag += tag_of(s, out + tag, 64 - 1);
    s->cont = cut;
    memcpy(out + tag, data, n);
    size_t total = (size_t)tag + n;
    dangling[s->fd] = n > 0 && data[n - 1] != '\n';
    for (size_t done = 0; done < total;) {
        ssize_t w = write(s->fd, out + done, total - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) { /* the line is lost: said when the job ends (output.h) */
            out_failed(w < 0 ? errno : EIO);
            return;
        }
        done += (size_t)w;
    }
}

static ssize_t tagged_write(void *cookie, const char *buf, size_t n)
{
    struct tagged *s = cookie;
    if (s->p->caught) { /* the catcher's node cuts and tags it */
        router->write(s->p->catch_key, buf, n);
        return (ssize_t)n;
    }
    for (size_t i = 0; i < n; i++) {
        s->line[s->len++] = buf[i];
        if (buf[i] == '\n' || s->len == sizeof s->line) {
            emit(s, s->line, s->len, buf[i] != '\n');
            s->len = 0;
        }
    }
    return (ssize_t)n;
}

static int tagged_close(void *cookie)
{
    struct tagged *s = cookie;
    if (s->len) /* a last line without its newline: as it is */
        emit(s, s->line, s->len, false);
    free(s);
    return 0;
}

static FILE *tagged_open(struct proc *p, struct ulp *u, int fd, void **cookie)
{
    struct tagged *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    *cookie = s;
    s->owner = u;
    s->p = p;
    s->fd = fd;
    cookie_io_functions_t io = {.write = tagged_write, .close = tagged_close};
    FILE *f = fopencookie(s, "w", io);
    if (!f) {
        free(s);
        return NULL;
    }
    setvbuf(f, NULL, fd == 2 ? _IONBF : _IOLBF, 0);
    return f;
}

/* The unfinished line p brought from another node goes back in front. */
static void take_held(struct proc *p, int i, FILE *f)
{
    if (!p->held_line[i])
        return;
    fflush(f);
    struct tagged *s = p->tagged[i];
    memcpy(s->line, p->held_line[i], p->held_len[i]);
    s->len = p->held_len[i];
    mem_heap_free(p->heap, p->held_line[i]);
    p->held_line[i] = NULL;
    p->held_len[i] = 0;
}

void proc_output_open(struct proc *p, struct ulp *u)
{
    p->out = stdout;
    p->err = stderr;
    p->tagged[0] = p->tagged[1] = NULL;
    if (!tagging() && !p->caught)
        return;
    FILE *o = tagged_open(p, u, 1, &p->tagged[0]), *e = tagged_open(p, u, 2, &p->tagged[1]);
    if (o && e) {
        fflush(stdout);
        p->out = o;
        p->err = e;
        take_held(p, 0, o);
        take_held(p, 1, e);
        return;
    }
    if (o)
        fclose(o);
    if (e)
        fclose(e);
}

static void close_streams(struct proc *p);

/* Keep stream i's unfinished line in p's heap (it travels with p). */
static void hold_line(struct proc *p, int i, FILE *f)
{
    struct tagged *s = p->tagged[i];
    fflush(f); /* the FILE's buffer into the line */
    if (!s || s->len == 0)
        return;
    char *keep = mem_heap_malloc(p->heap, s->len);
    if (!keep)
        return; /* written out, cut, by the close */
    memcpy(keep, s->line, s->len);
    p->held_line[i] = keep;
    p->held_len[i] = s->len;
    s->len = 0;
}

void proc_output_suspend(struct proc *p)
{
    /* untagged, its output is in the node's streams: out before it goes,
     * so that what it writes on the other node comes after */
    fflush(stdout);
    fflush(stderr);
    if (p->out != stdout)
        hold_line(p, 0, p->out);
    if (p->err != stderr)
        hold_line(p, 1, p->err);
    close_streams(p);
}

void proc_output_close(struct proc *p)
{
    close_streams(p);
    if (p->caught) { /* what it wrote is out (the close flushed it) */
        p->caught = false;
        router->end(p->catch_key);
    }
}

int proc_output_which(const struct proc *p, const FILE *f)
{
    return f && f == p->out ? 1 : f && f == p->err ? 2 : 0;
}

FILE *proc_output_stream(const struct proc *p, int which)
{
    return which == 1 ? p->out : which == 2 ? p->err : NULL;
}

static void close_streams(struct proc *p)
{
    if (p->out && p->out != stdout)
        fclose(p->out);
    if (p->err && p->err != stderr)
        fclose(p->err);
    p->out = stdout;
    p->err = stderr;
    p->tagged[0] = p->tagged[1] = NULL;
}

/* ------------------------------------------------------------ interposed */

static FILE *out_of(void)
{
    struct proc *p = proc_current();
    return p ? p->out : stdout;
}

static int ip_vprintf(const char *fmt, va_list ap)
{
    return vfprintf(out_of(), fmt, ap);
}

static int ip_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(out_of(), fmt, ap);
    va_end(ap);
    return n;
}

/* The same, as _FORTIFY_SOURCE builds call them. */
static int ip_printf_chk(int flag, const char *fmt, ...)
{
    (void)flag;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(out_of(), fmt, ap);
    va_end(ap);
    return n;
}

static int ip_vprintf_chk(int flag, const char *fmt, va_list ap)
{
    (void)flag;
    return vfprintf(out_of(), fmt, ap);
}

static int ip_puts(const char *s)
{
    FILE *f = out_of();
    return fputs(s, f) < 0 || fputc('\n', f) < 0 ? EOF : 1;
}

static int ip_putchar(int c)
{
    return fputc(c, out_of());
}

static void ip_perror(const char *s)
{
    struct proc *p = proc_current();
    int e = errno;
    FILE *f = p ? p->err : stderr;
    if (s && *s)
        fprintf(f, "%s: %s\n", s, strerror(e));
    else
        fprintf(f, "%s\n", strerror(e));
}

void *proc_output_resolve(const char *name, struct proc *p)
{
    if (!strcmp(name, "stdout"))
        return &p->out;
    if (!strcmp(name, "stderr"))
        return &p->err;
    /* bound whether or not tagged: whether the ULP is caught is known only
     * when it starts (these use its streams, the node's when neither) */
    if (!strcmp(name, "printf"))
        return (void *)ip_printf;
    if (!strcmp(name, "vprintf"))
        return (void *)ip_vprintf;
    if (!strcmp(name, "puts"))
        return (void *)ip_puts;
    if (!strcmp(name, "putchar"))
        return (void *)ip_putchar;
    if (!strcmp(name, "perror"))
        return (void *)ip_perror;
    if (!strcmp(name, "__printf_chk"))
        return (void *)ip_printf_chk;
    if (!strcmp(name, "__vprintf_chk"))
        return (void *)ip_vprintf_chk;
    return NULL;
}
