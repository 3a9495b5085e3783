/*
 * trace_impl.h - the trace layer's state and helpers shared by its files
 * (trace.c: the file and its records; clock.c: the hosts' offsets).
 */
#ifndef UPVM_TRACE_IMPL_H
#define UPVM_TRACE_IMPL_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "trace/rawfile.h"
#include "util/compiler.h"

struct trace_state {
    bool wanted;       /* UPVM_TRACE_FILE is set (and usable) */
    bool launcher;     /* this process started the job: it converts */
    bool tsc;          /* records carry TSC ticks */
    bool ended;        /* this node's file is closed */
    int node, nodes;
    uint64_t buf_bytes; /* UPVM_TRACE_BUF */
    struct trc_file_header *hdr; /* the mapping, NULL before trace_node_start */
    uint64_t size;
    _Atomic uint64_t nchunks; /* chunks the file holds */
    int fd;
    _Atomic int writers;
    char file[PATH_MAX];   /* FILE, absolute */
    char rawdir[PATH_MAX]; /* FILE.raw */
};
extern struct trace_state trace HIDDEN;

/* Three clocks at one moment (the tightest of five tries); *uncertainty:
 * the TSC ticks the monotonic read took. */
void trace_calibrate(struct trc_calib *c, uint64_t *uncertainty) HIDDEN;
/* Store a whole record (kind last) into this thread's chunk. */
void trace_put_raw(const struct trc_rec *r) HIDDEN;
/* Close this node's file: code, and sig when a crash ends it. */
void trace_node_end(int code, int sig) HIDDEN;

#endif /* UPVM_TRACE_IMPL_H */
