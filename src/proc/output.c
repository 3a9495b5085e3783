/*
 * output.c - the standard output and error of process-mode ULPs, optionally
 * with every line tagged by its task: "[t40002] hello" (PVM's output
 * tagging, as pvm_catchout and the console show it).
 *
 * Off (the default): a ULP's stdout and stderr are the node's.  On
 * (UPVM_OUTPUT_TIDS=1, or `upvm run --tag-output`): every process-mode ULP
 * gets its own two FILE streams (fopencookie) that collect a line at a time
 * and write it, prefixed, to the node's file descriptor 1 or 2 in one
 * write.  The program's `stdout` and `stderr` resolve to them (the loader
 * binds those names here), and printf, vprintf, puts, putchar and perror,
 * which inside libc use libc's own streams, are interposed to use them.
 * Output written with write(1, ...) directly is not tagged.
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

/* One tagged stream: the ULP it belongs to and its unfinished line. */
struct tagged {
    struct ulp *owner;
    int fd;
    size_t len;
    char line[4096];
};

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

/* "[t40002] " for a PVM task (the namer says), "[ULP 7] " otherwise. */
static int tag_of(const struct ulp *u, char *buf, size_t len)
{
    char name[32];
    if (namer && namer(u, name, sizeof name) > 0)
        return snprintf(buf, len, "[%s] ", name);
    return snprintf(buf, len, "[ULP %d] ", u->id);
}

static void emit(struct tagged *s, const char *data, size_t n)
{
    char out[sizeof s->line + 64];
    int tag = tag_of(s->owner, out, 64);
    memcpy(out + tag, data, n);
    size_t total = (size_t)tag + n;
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
    for (size_t i = 0; i < n; i++) {
        s->line[s->len++] = buf[i];
        if (buf[i] == '\n' || s->len == sizeof s->line - 1) {
            emit(s, s->line, s->len);
            s->len = 0;
        }
    }
    return (ssize_t)n;
}

static int tagged_close(void *cookie)
{
    struct tagged *s = cookie;
    if (s->len) { /* a last line without its newline */
        s->line[s->len++] = '\n';
        emit(s, s->line, s->len);
    }
    free(s);
    return 0;
}

static FILE *tagged_open(struct ulp *u, int fd, void **cookie)
{
    struct tagged *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    *cookie = s;
    s->owner = u;
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
    if (!tagging())
        return;
    FILE *o = tagged_open(u, 1, &p->tagged[0]), *e = tagged_open(u, 2, &p->tagged[1]);
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
    proc_output_close(p);
}

void proc_output_close(struct proc *p)
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
    if (!tagging())
        return NULL; /* the node's streams: libc's own functions will do */
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
    return NULL;
}
