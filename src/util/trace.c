/*
 * trace.c - the trace's state every layer reads (trace.h).  The trace
 * layer (src/trace) fills it in before any ULP runs; until then tracing is
 * off and nothing here is called.
 */
#include "util/trace.h"

#include <stddef.h>

bool trc_on;
bool trc_clock_tsc = true;
__thread struct trc_rec *trc_cur;
__thread struct trc_rec *trc_end;

static struct trc_rec *no_refill(void)
{
    return NULL;
}

static uint64_t no_strings(const char *s, bool copy)
{
    (void)copy;
    return (uint64_t)(uintptr_t)s;
}

struct trc_rec *(*trc_refill_fn)(void) = no_refill;
uint64_t (*trc_str_fn)(const char *s, bool copy) = no_strings;
