/*
 * otf2.c - the trace as an OTF2 archive (placeholder while written).
 */
#include <stdio.h>

#include "trace/convert.h"
#include "trace/model.h"

int trace_write_otf2(const struct trace_model *m, const char *dir, bool quiet)
{
    (void)m;
    (void)quiet;
    fprintf(stderr, "upvm trace: %s: this upvm was built without OTF2\n", dir);
    return -1;
}
