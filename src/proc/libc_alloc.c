/*
 * libc_alloc.c - libc functions that allocate memory for their caller,
 * made again on the ULP's own heap (interpose.c's table points a
 * process-mode program at them).
 *
 * Why: a process-mode program's malloc is its heap (inside its slot: it
 * moves with it), but libc's own calls to malloc (inside strdup, asprintf,
 * getline, realpath, qsort) go to the node's heap, which does not move:
 * after a migration such a string would dangle.  These few are the common
 * ones; the rest are listed in docs/migration.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem/mem.h"
#include "proc/proc.h"
#include "proc/proc_libc.h"

static void *task_malloc(size_t n)
{
    struct proc *p = proc_current();
    return p ? mem_heap_malloc(p->heap, n) : malloc(n);
}

static void *task_realloc(void *ptr, size_t n)
{
    struct proc *p = proc_current();
    return p ? mem_heap_realloc(p->heap, ptr, n) : realloc(ptr, n);
}

static void task_free(void *ptr)
{
    struct proc *p = proc_current();
    if (p)
        mem_heap_free(p->heap, ptr);
    else
        free(ptr);
}

/* ------------------------------------------------------------ strings */

/* A copy of the first len bytes of s, terminated, on the task's heap. */
static char *copy_string(const char *s, size_t len)
{
    char *d = task_malloc(len + 1);
    if (!d) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *proc_strndup(const char *s, size_t n)
{
    return copy_string(s, strnlen(s, n));
}

char *proc_strdup(const char *s)
{
    return copy_string(s, strlen(s));
}

int proc_vasprintf(char **out, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n >= 0 ? task_malloc((size_t)n + 1) : NULL;
    if (s)
        (void)vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!s) {
        if (n >= 0)
            errno = ENOMEM;
        return -1;
    }
    *out = s;
    return n;
}

int proc_asprintf(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = proc_vasprintf(out, fmt, ap);
    va_end(ap);
    return n;
}

/* _FORTIFY_SOURCE's names for them (the flag asks for checks of %n) */
int proc_vasprintf_chk(char **out, int flag, const char *fmt, va_list ap)
{
    (void)flag;
    return proc_vasprintf(out, fmt, ap);
}

int proc_asprintf_chk(char **out, int flag, const char *fmt, ...)
{
    (void)flag;
    va_list ap;
    va_start(ap, fmt);
    int n = proc_vasprintf(out, fmt, ap);
    va_end(ap);
    return n;
}

/* ------------------------------------------------------------ lines */

/* POSIX getdelim: *line grows on the task's heap (it may be the task's
 * own malloc'ed buffer, as POSIX allows). */
ssize_t proc_getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    if (!line || !cap || !f) {
        errno = EINVAL;
        return -1;
    }
    size_t len = 0;
    int c = 0;
    flockfile(f);
    while ((c = getc_unlocked(f)) != EOF) {
        if (len + 2 > *cap || !*line) {
            size_t want = *cap < 120 ? 120 : *cap * 2;
            char *p = task_realloc(*line, want);
            if (!p) {
                funlockfile(f);
                errno = ENOMEM;
                return -1;
            }
            *line = p;
            *cap = want;
        }
        (*line)[len++] = (char)c;
        if (c == delim)
            break;
    }
    funlockfile(f);
    if (len == 0)
        return -1; /* end of file or an error: the stream says which */
    (*line)[len] = '\0';
    return (ssize_t)len;
}

ssize_t proc_getline(char **line, size_t *cap, FILE *f)
{
    return proc_getdelim(line, cap, '\n', f);
}

char *proc_realpath(const char *path, char *resolved)
{
    if (resolved)
        return realpath(path, resolved);
    char buf[PATH_MAX];
    return realpath(path, buf) ? proc_strdup(buf) : NULL;
}

/* ------------------------------------------------------------ qsort */

/*
 * glibc's qsort sorts in a malloc'ed buffer when the array is large; a
 * move inside the comparator then leaves that buffer behind.  This is a
 * merge sort, as glibc's (equal elements keep their order), with its
 * buffer on the task's heap; without memory, an in-place insertion sort.
 */
struct sort {
    size_t size;
    int (*cmp)(const void *, const void *, void *);
    void *arg;
};

static void merge(const struct sort *s, char *a, size_t n, char *tmp)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    char *b = a + h * s->size;
    merge(s, a, h, tmp);
    merge(s, b, n - h, tmp);
    char *i = a, *j = b, *end = a + n * s->size, *o = tmp;
    while (i < b && j < end) {
        char **from = s->cmp(j, i, s->arg) < 0 ? &j : &i;
        memcpy(o, *from, s->size);
        *from += s->size;
        o += s->size;
    }
    memcpy(o, i, (size_t)(b - i)); /* j's rest is in place already */
    memcpy(a, tmp, (size_t)(o - tmp) + (size_t)(b - i));
}

static void insertion(const struct sort *s, char *a, size_t n, char *one)
{
    for (size_t k = 1; k < n; k++) {
        char *x = a + k * s->size;
        memcpy(one, x, s->size);
        char *y = x;
        while (y > a && s->cmp(y - s->size, one, s->arg) > 0) {
            memcpy(y, y - s->size, s->size);
            y -= s->size;
        }
        memcpy(y, one, s->size);
    }
}

void proc_qsort_r(void *base, size_t n, size_t size,
                  int (*cmp)(const void *, const void *, void *), void *arg)
{
    if (n < 2 || size == 0)
        return;
    struct sort s = {size, cmp, arg};
    char *tmp = n <= SIZE_MAX / size ? task_malloc(n * size) : NULL;
    if (tmp) {
        merge(&s, base, n, tmp);
        task_free(tmp);
        return;
    }
    char one[256];
    char *x = size <= sizeof one ? one : task_malloc(size);
    if (!x)
        abort(); /* not even one element's room: qsort cannot fail */
    insertion(&s, base, n, x);
    if (x != one)
        task_free(x);
}

struct plain_cmp {
    int (*fn)(const void *, const void *);
};

static int call_plain(const void *a, const void *b, void *arg)
{
    return ((const struct plain_cmp *)arg)->fn(a, b);
}

void proc_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    struct plain_cmp c = {cmp};
    proc_qsort_r(base, n, size, call_plain, &c);
}
