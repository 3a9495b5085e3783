/*
 * copy.h - util_copy: memcpy for message bodies, without the one case in
 * which glibc's memcpy is 15-20x slower than it should be.
 *
 * Above a few KiB glibc (2.36, x86_64) copies with `rep movsb`.  On the
 * AMD EPYC VMs we run on, `rep movsb` crawls when the destination lies 1
 * to 63 bytes after the source modulo 4 KiB (4K aliasing: every store
 * looks like it may alias a load in flight): 100 KB take ~50 µs instead
 * of ~2.5 µs (measured; distances 0, 64 and above, and negative ones are
 * fine).  Message copies hit it all the time, since every layer adds a
 * small header in front of the same bytes (a 16-byte frame header, the
 * 40-byte wire header, an 8-byte ring record).  For that case util_copy
 * uses a plain 16-byte vector loop that loads 64 bytes before it stores
 * them (~3.5 µs for 100 KB at any distance); every other copy is memcpy.
 *
 * The regions must not overlap (as for memcpy).
 */
#ifndef UPVM_UTIL_COPY_H
#define UPVM_UTIL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Below this, memcpy never uses `rep movsb`. */
#define UTIL_COPY_BULK 1024

typedef long long util_vec16 __attribute__((vector_size(16)));

static inline void util_copy_vec(unsigned char *d, const unsigned char *s, size_t n)
{
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        util_vec16 a, b, c, e;
        memcpy(&a, s, 16);
        memcpy(&b, s + 16, 16);
        memcpy(&c, s + 32, 16);
        memcpy(&e, s + 48, 16);
        memcpy(d, &a, 16);
        memcpy(d + 16, &b, 16);
        memcpy(d + 32, &c, 16);
        memcpy(d + 48, &e, 16);
    }
    memcpy(d, s, n);
}

static inline void util_copy(void *restrict dst, const void *restrict src, size_t n)
{
    /* distance - 1 < 63 <=> the destination is 1..63 bytes ahead */
    size_t ahead = ((uintptr_t)dst - (uintptr_t)src) % 4096;
    if (n >= UTIL_COPY_BULK && ahead - 1 < 63)
        util_copy_vec(dst, src, n);
    else
        memcpy(dst, src, n);
}

#endif /* UPVM_UTIL_COPY_H */
