/*
 * rawfile.h - the UPVM trace's raw files, as every node writes them and as
 * `upvm trace` (convert, summary) reads them.  The records are
 * util/trace.h's; this is the file around them.
 *
 * A job traced to FILE writes FILE.raw/node-N.utr, one per node (a node is
 * a process).  The file is a 4 KiB header followed by chunks of 64 KiB;
 * the file's size is fixed at start (UPVM_TRACE_BUF) and it is mapped
 * shared, so a record is in the page cache once stored: a node killed by
 * SIGKILL leaves every record it wrote.  Every thread that records owns a
 * chunk at a time (2048 records), taken with one atomic add on
 * `next_chunk`; its first record is TRC_CHUNK (writer, sequence), the
 * rest follow in time order, and its unwritten tail has kind 0.  When the
 * file is full, records are counted in `lost`, not written.
 *
 * Time: records carry TSC ticks (clock == TRC_CLOCK_TSC; the TSC is
 * constant, nonstop and the same on every core of the host) or
 * CLOCK_MONOTONIC ns.  TRC_CLOCK records (and the header's `start` and
 * `end` pairs) map ticks to CLOCK_MONOTONIC ns, piecewise linearly; all
 * nodes of a host share CLOCK_MONOTONIC, and TRC_OFFSET records (written by
 * the first node of each host of a job of several hosts) give the offset
 * to node 0's CLOCK_MONOTONIC.
 */
#ifndef UPVM_TRACE_RAWFILE_H
#define UPVM_TRACE_RAWFILE_H

#include <stdint.h>

#include "util/trace.h"

#define TRC_MAGIC       "UPVMTRC1" /* 8 bytes, no NUL */
#define TRC_VERSION     1
#define TRC_HEADER_SIZE 4096u
#define TRC_CHUNK_SIZE  65536u
#define TRC_CHUNK_RECS  (TRC_CHUNK_SIZE / sizeof(struct trc_rec))

enum trc_clock_kind {
    TRC_CLOCK_KIND_TSC = 1,       /* ts: TSC ticks */
    TRC_CLOCK_KIND_MONOTONIC = 2, /* ts: CLOCK_MONOTONIC ns */
};

enum trc_file_state {
    TRC_FILE_OPEN = 1,    /* still written, or the node was killed */
    TRC_FILE_CLOSED = 2,  /* the node ended and closed it (exit_code) */
    TRC_FILE_CRASHED = 3, /* the node's crash handler closed it (signal) */
};

/* A calibration pair: the same moment in three clocks. */
struct trc_calib {
    uint64_t tsc;     /* 0 when the file's clock is monotonic */
    uint64_t mono_ns; /* CLOCK_MONOTONIC */
    uint64_t real_ns; /* CLOCK_REALTIME (the archive's wall-clock start) */
};

struct trc_file_header {
    char magic[8];            /* TRC_MAGIC */
    uint32_t version;         /* TRC_VERSION */
    uint32_t header_size;     /* TRC_HEADER_SIZE: chunk 0 starts here */
    uint32_t chunk_size;      /* TRC_CHUNK_SIZE */
    uint32_t clock;           /* enum trc_clock_kind */
    int32_t node;             /* this node's number in the job */
    int32_t pid;              /* its process */
    int32_t nodes;            /* nodes of the job when it started */
    uint32_t state;           /* enum trc_file_state */
    int32_t exit_code;        /* TRC_FILE_CLOSED: the node's exit status */
    int32_t signal;           /* TRC_FILE_CRASHED: the signal */
    uint64_t file_size;       /* bytes, header included */
    _Atomic uint64_t next_chunk; /* chunks handed out; may pass the count
                                  * that fits (then records are lost) */
    _Atomic uint64_t lost;    /* records not written: the file was full */
    struct trc_calib start;   /* taken when the file was made */
    struct trc_calib end;     /* taken when it was closed (else zero) */
    char host[64];            /* the host's short name */
    char program[256];        /* the node's program (its argv[0]) */
    char reserved[TRC_HEADER_SIZE - 8 - 4 * 10 - 8 * 3 - 2 * 24 - 64 - 256];
};
_Static_assert(sizeof(struct trc_file_header) == TRC_HEADER_SIZE, "4 KiB header");

/* The chunk k of a file mapped at base. */
static inline struct trc_rec *trc_chunk_at(void *base, uint64_t k)
{
    return (struct trc_rec *)((char *)base + TRC_HEADER_SIZE + k * TRC_CHUNK_SIZE);
}

/* How many chunks a file of size bytes holds. */
static inline uint64_t trc_chunks_in(uint64_t size)
{
    return size > TRC_HEADER_SIZE ? (size - TRC_HEADER_SIZE) / TRC_CHUNK_SIZE : 0;
}

#endif /* UPVM_TRACE_RAWFILE_H */
