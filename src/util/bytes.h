/*
 * bytes.h - a growing byte buffer to write records into, and a bounded
 * reader to take them out again: how a layer puts its state of a task into
 * one frame (a migration's state) and reads it back on the other side.
 *
 * Writing never fails midway: when memory runs out the writer sets `oom`
 * and ignores what follows, so a packer checks once at the end.  Reading
 * past the end sets `bad`, yields zeroes, and a reader checks once too.
 * Values are in the host's byte order: both ends of a move run the same
 * binary on the same architecture.
 */
#ifndef UPVM_UTIL_BYTES_H
#define UPVM_UTIL_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bytes_out {
    unsigned char *p; /* malloc'ed; the caller frees it */
    size_t len, cap;
    bool oom;
};

struct bytes_in {
    const unsigned char *p, *end;
    bool bad;
};

/* Append n bytes from p (p NULL: n bytes of room, filled in later). */
static inline void bytes_put(struct bytes_out *w, const void *p, size_t n)
{
    if (w->oom)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n)
            cap *= 2;
        unsigned char *q = realloc(w->p, cap);
        if (!q) {
            w->oom = true;
            return;
        }
        w->p = q;
        w->cap = cap;
    }
    if (n && p)
        memcpy(w->p + w->len, p, n);
    w->len += n;
}

static inline void bytes_put32(struct bytes_out *w, int32_t v) { bytes_put(w, &v, sizeof v); }
static inline void bytes_put64(struct bytes_out *w, uint64_t v) { bytes_put(w, &v, sizeof v); }

/* Take n bytes into p: false (and p zeroed, r->bad set) past the end. */
static inline bool bytes_get(struct bytes_in *r, void *p, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        memset(p, 0, n);
        return false;
    }
    memcpy(p, r->p, n);
    r->p += n;
    return true;
}

static inline int32_t bytes_get32(struct bytes_in *r)
{
    int32_t v;
    bytes_get(r, &v, sizeof v);
    return v;
}

static inline uint64_t bytes_get64(struct bytes_in *r)
{
    uint64_t v;
    bytes_get(r, &v, sizeof v);
    return v;
}

#endif /* UPVM_UTIL_BYTES_H */
