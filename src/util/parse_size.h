/*
 * parse_size.h - "1G", "256M", "65536", "64MiB": a byte count with an
 * optional binary suffix (K, M, G, T; "i" and "B" accepted), as every
 * UPVM_* size setting is written.  False for anything else or for a value
 * above max.
 */
#ifndef UPVM_UTIL_PARSE_SIZE_H
#define UPVM_UTIL_PARSE_SIZE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static inline bool util_parse_size(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || v > max >> shift)
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

#endif
