/*
 * memtest.h - helpers shared by the mem layer's tests: a small window set
 * up from the environment, the process's mappings and resident size.
 */
#ifndef UPVM_TESTS_MEMTEST_H
#define UPVM_TESTS_MEMTEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "mem/mem.h"

/* A window of n slots of slot_size bytes at the default base. */
static inline const struct mem_window *memtest_window(const char *slot_size,
                                                      const char *nslots)
{
    setenv("UPVM_SLOT_SIZE", slot_size, 1);
    setenv("UPVM_SLOTS", nslots, 1);
    CHECK_EQ(mem_window_init(), 0);
    return mem_window();
}

/* Resident bytes of this process (/proc/self/statm). */
static inline size_t memtest_rss(void)
{
    unsigned long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    CHECK(f);
    CHECK(fscanf(f, "%lu %lu", &size, &resident) == 2);
    fclose(f);
    return resident * (size_t)sysconf(_SC_PAGESIZE);
}

struct memtest_map {
    uintptr_t lo, hi;
    char perms[5];
};

/* The mappings that overlap [lo, hi), at most max of them; returns how
 * many there are. */
static inline int memtest_maps(uintptr_t lo, uintptr_t hi, struct memtest_map *out,
                               int max)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        struct memtest_map m;
        if (sscanf(line, "%lx-%lx %4s", &m.lo, &m.hi, m.perms) != 3)
            continue;
        if (m.hi <= lo || m.lo >= hi)
            continue;
        if (n < max)
            out[n] = m;
        n++;
    }
    fclose(f);
    return n;
}

/* A small deterministic generator (xorshift64*). */
static inline uint64_t memtest_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

#endif
