/*
 * input.c - the standard input of process-mode ULPs.
 *
 * A ULP reading stdin must not stall its node: libc's stdin would read
 * descriptor 0 on the scheduler thread, and every other ULP would wait for
 * the terminal.  A program that uses stdin gets a FILE of its own
 * (fopencookie on descriptor 0, made when the loader binds `stdin` or at
 * the first scanf/getchar), whose reads run with the ULP coupled to a
 * kernel context when they would wait (proc_read): the other ULPs run
 * meanwhile.  scanf, vscanf and getchar, which inside libc read libc's own
 * stdin, are interposed to read it (as output.c does for printf and
 * stdout).
 *
 * Descriptor 0 is the node's: ULPs that read it each have their own buffer,
 * and what one ULP's stream has read ahead the others do not see.  The
 * stream is this node's libc object: a ULP that moves leaves it (what it
 * had read ahead is lost) and gets a new one on the other node.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blt/blt.h"
#include "proc/proc.h"

static ssize_t in_read(void *cookie, char *buf, size_t n)
{
    (void)cookie;
    ssize_t r;
    do
        r = proc_read(0, buf, n); /* coupled when it would wait */
    while (r < 0 && errno == EINTR);
    return r;
}

/* p's stdin stream, made the first time (libc's stdin if it cannot be). */
static FILE *in_of(struct proc *p)
{
    if (!p)
        return stdin;
    if (!p->in) {
        cookie_io_functions_t io = {.read = in_read};
        p->in = fopencookie(NULL, "r", io);
        p->in_used = p->in != NULL;
        if (!p->in) /* no memory: libc's (it blocks the node, but reads) */
            p->in = stdin;
    }
    return p->in;
}

void proc_input_close(struct proc *p)
{
    if (p->in && p->in != stdin)
        fclose(p->in);
    p->in = NULL;
}

void proc_input_suspend(struct proc *p)
{
    proc_input_close(p); /* in_used stays: proc_input_open makes a new one */
}

void proc_input_open(struct proc *p)
{
    if (p->in_used)
        (void)in_of(p);
}

/* ------------------------------------------------------------ interposed */

static int ip_getchar(void)
{
    return fgetc(in_of(proc_current()));
}

static int ip_vscanf(const char *fmt, va_list ap)
{
    return vfscanf(in_of(proc_current()), fmt, ap);
}

static int ip_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfscanf(in_of(proc_current()), fmt, ap);
    va_end(ap);
    return n;
}

/* The ISO C99 versions (what a program built without _GNU_SOURCE calls:
 * %a is a float there, not an allocation). */
extern int __isoc99_vfscanf(FILE *f, const char *fmt, va_list ap);

static int ip_isoc99_vscanf(const char *fmt, va_list ap)
{
    return __isoc99_vfscanf(in_of(proc_current()), fmt, ap);
}

static int ip_isoc99_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = __isoc99_vfscanf(in_of(proc_current()), fmt, ap);
    va_end(ap);
    return n;
}

void *proc_input_resolve(const char *name, struct proc *p)
{
    if (!strcmp(name, "stdin")) { /* bound at load: made now */
        (void)in_of(p);
        return &p->in;
    }
    if (!strcmp(name, "getchar"))
        return (void *)ip_getchar;
    if (!strcmp(name, "scanf"))
        return (void *)ip_scanf;
    if (!strcmp(name, "vscanf"))
        return (void *)ip_vscanf;
    if (!strcmp(name, "__isoc99_scanf"))
        return (void *)ip_isoc99_scanf;
    if (!strcmp(name, "__isoc99_vscanf"))
        return (void *)ip_isoc99_vscanf;
    return NULL;
}
