/*
 * convert.h - `upvm trace convert|summary|dump` as functions, for the upvm
 * tool (tools/upvm/trace.c) and for `upvm run --trace`, which converts the
 * job's trace once its nodes have ended.  Built into the tool only (the
 * object library upvm_trace_read): libupvm never links OTF2.
 *
 * FILE is what the job was traced to: its raw files are FILE.raw/
 * (FILE may be given as FILE, FILE.raw or FILE.raw/); the outputs are
 * FILE.json and FILE.otf2/traces.otf2.
 */
#ifndef UPVM_TRACE_CONVERT_H
#define UPVM_TRACE_CONVERT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct trace;
struct trace_model;

struct trace_convert_opts {
    bool no_json;    /* do not write FILE.json */
    bool no_otf2;    /* do not write FILE.otf2/ (never written without OTF2) */
    bool remove_raw; /* remove FILE.raw/ after a conversion without error */
    bool quiet;      /* print errors only */
};

/*
 * trace_convert - read FILE's raw files and write FILE.json and
 * FILE.otf2/ (o NULL: both, raw files kept).  Prints on stdout one line
 * per output written ("upvm trace: wrote FILE.json (N events, B bytes)"),
 * one with the events, messages, clock violations (RECV earlier than its
 * SEND: count, largest gap) and lost records; on stderr the notes of the
 * reader (a node that did not close its trace, a crash, lost records) and
 * every error.  Returns 0 when every raw file was read and every output
 * written; 1 when something was not (a file refused, an output not
 * written: said), the rest still converted; without any readable raw file,
 * 1 and nothing written.
 */
int trace_convert(const char *file, const struct trace_convert_opts *o);

/* Whether this build writes OTF2. */
bool trace_have_otf2(void);

/* The parts, on a model already built (model.h).  Each returns 0, or -1
 * after saying why on stderr. */
/* JSON of at most max_bytes (cut at a time with a note past it). */
int trace_write_json(const struct trace_model *m, const char *path, uint64_t max_bytes,
                     bool quiet);
/* An OTF2 archive dir/traces.otf2 (dir made, its old archive replaced). */
int trace_write_otf2(const struct trace_model *m, const char *dir, bool quiet);
/* The summary's tables (json: one JSON object) on out. */
int trace_write_summary(const struct trace_model *m, FILE *out, bool json);
/* Every record, one line each. */
void trace_write_dump(const struct trace *t, FILE *out);

/* UPVM_TRACE_JSON_MAX (default 512 MiB). */
uint64_t trace_json_max(void);

#endif /* UPVM_TRACE_CONVERT_H */
