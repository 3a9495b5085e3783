/*
 * reader.h - reading a traced job's raw files (rawfile.h) back: the
 * `upvm` tool's side of tracing (convert, summary, dump).  Not in libupvm.
 *
 * trace_read() opens FILE.raw/ (FILE given with or without ".raw", or the
 * directory itself), maps each node-N.utr, checks its header, walks its
 * chunks (each writer's in sequence order, each up to its first record of
 * kind 0), resolves string keys (per file) and puts every record on one
 * time line: node 0's CLOCK_MONOTONIC, in ns (design notes §14.6):
 *   - TSC ticks -> the file's CLOCK_MONOTONIC by a piecewise-linear fit
 *     over the header's start/end pairs and its TRC_CLOCK records; a file
 *     with fewer than two pairs borrows the pairs of a file of the same host
 *     (one TSC, one CLOCK_MONOTONIC per host), else the slope of the file
 *     of the nearest node number (said on stderr);
 *   - plus its host's offset to node 0 (TRC_OFFSET records of the host's
 *     first node, interpolated between its start and end samples; 0 on
 *     node 0's host).
 * The result is one array of events sorted by time, records of one writer
 * kept in their order.
 *
 * Untrusted input: a file that is not a trace, has another version, or is
 * shorter than its header says is refused with one line on stderr naming
 * it and what is wrong; the other files are still read.
 */
#ifndef UPVM_TRACE_READER_H
#define UPVM_TRACE_READER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "trace/rawfile.h"

/* One record on the common time line. */
struct trace_event {
    int64_t ns;       /* node 0's CLOCK_MONOTONIC */
    uint64_t order;   /* read order: breaks ties, keeps a writer's order */
    struct trc_rec r; /* as stored (TRC_STR: r.c is the key) */
    const char *str;  /* r.c resolved where it is a string key (NULL: not
                       * one, or no TRC_STR defines it); TRC_STR: its text */
    int file;         /* index in trace.files */
    uint32_t writer;  /* the TRC_CHUNK writer of the chunk it was in */
};

/* One string definition of a file (TRC_STR and its TRC_TEXT pieces). */
struct trace_strdef {
    uint64_t key;
    int64_t ns;
    char *text;
};

/* A calibration pair as the fit uses it. */
struct trace_clkpair {
    uint64_t tick;
    int64_t ns;
};

/* One node's file. */
struct trace_file {
    char path[PATH_MAX];
    bool ok;               /* read (else refused: said on stderr) */
    struct trc_file_header h; /* a copy of its header */
    int node;
    uint64_t records;      /* records read (TRC_TEXT pieces included) */
    uint64_t bad_records;  /* unknown kinds, broken strings, chunks refused */
    struct trace_clkpair *pairs; /* sorted by tick */
    size_t npairs;
    int64_t slope_ns, slope_ticks; /* borrowed slope (npairs < 2), else 0 */
    int64_t off_ns[2], off_at[2]; /* host offset samples (local ns) */
    int noff;              /* 0, 1 or 2 samples */
    int offset_from;       /* file index whose OFFSET records apply, -1: none */
    struct trace_strdef *strs; /* sorted by (key, ns) */
    size_t nstrs;
    uint64_t events;       /* events of this file in trace.ev */
    int64_t first_ns, last_ns;
};

struct trace {
    char base[PATH_MAX];   /* FILE: outputs are FILE.json, FILE.otf2 */
    char dir[PATH_MAX];    /* FILE.raw */
    struct trace_file *files; /* by node number */
    int nfiles;
    int refused;           /* files not read (said) */
    struct trace_event *ev; /* sorted by (ns, order) */
    size_t nev;
    int64_t first_ns, last_ns; /* of ev (0, 0 when empty) */
    uint64_t realtime_at_first; /* CLOCK_REALTIME ns at first_ns (0: unknown) */
    uint64_t lost;         /* summed over the files */
};

/*
 * trace_read - read FILE's raw files into *t (zeroed first).  Returns 0
 * when at least one file was read (t->refused says how many were not),
 * -1 when none could be (said on stderr; t is still freeable).
 * Notes (a file left open, a crash, lost records, a borrowed clock) are
 * printed on stderr as "upvm trace: ..." lines unless quiet.
 */
/* calloc and realloc for the reading side: on failure "upvm trace: out of
 * memory" and exit status 1 (a converter has nothing to fall back on). */
void *trace_xcalloc(size_t n, size_t size);
void *trace_xrealloc(void *p, size_t size);

int trace_read(const char *file, struct trace *t, bool quiet);
void trace_free(struct trace *t);

/* FILE without a trailing "/" and ".raw" into base, FILE.raw into dir. */
void trace_paths(const char *file, char *base, size_t blen, char *dir, size_t dlen);

/* "SEND", "API_ENTER", ...; "kind?" for an unknown one. */
const char *trace_kind_name(unsigned kind);
/* Whether r.c of a record of this kind is a string key. */
bool trace_kind_has_str(unsigned kind);
/* Names of enum trc_group_op, trc_migrate_stage, trc_node_event values. */
const char *trace_group_op_name(unsigned op);
const char *trace_mig_stage_name(unsigned stage);
const char *trace_node_event_name(unsigned ev);

/* qsort, also of nothing (qsort's array may not be NULL even when empty). */
static inline void sort_any(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

/* A task's trace id: "t40003", or "ulp 5" for ULP_TRC_NOTASK | 5. */
void trace_id_name(uint32_t id, char *buf, size_t len);

#endif /* UPVM_TRACE_READER_H */
