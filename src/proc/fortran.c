/*
 * fortran.c - what a gfortran program of a process-mode ULP gets instead
 * of the Fortran run-time's process-wide calls (libgfortran, a library of
 * the node that all its ULPs share).
 *
 * libgfortran ends the process for STOP, ERROR STOP, the EXIT and ABORT
 * intrinsics: its own call of exit() is not the program's, so it would
 * end the node, every ULP of it.  The program's calls of these entry
 * points are bound here instead: the same message libgfortran writes
 * (STOP 3, ERROR STOP 'text'), then the ULP ends as by exit(), with the
 * status libgfortran gives the process.  The entry points are gfortran's
 * ABI (GCC 8 and later: lengths are size_t, "quiet" is STOP ..., QUIET=).
 *
 * Fortran I/O units are libgfortran's, so the node's: every ULP's end
 * flushes them (proc_fortran_flush), as stdio is flushed, so that what a
 * task wrote goes out when it ends, not when the node does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc.h"

/* libgfortran's FLUSH: NULL flushes every unit.  Looked up in the node's
 * libraries (they are opened RTLD_GLOBAL) until a program brings it. */
typedef void gfortran_flush_fn(int32_t *unit);
static gfortran_flush_fn *gfortran_flush;

void proc_fortran_flush(void)
{
    if (!gfortran_flush)
        gfortran_flush = (gfortran_flush_fn *)dlsym(RTLD_DEFAULT, "_gfortran_flush_i4");
    if (gfortran_flush)
        gfortran_flush(NULL);
}

/* The ULP ends with status (or the process, off a ULP: as libgfortran). */
static _Noreturn void end_with(int status)
{
    struct proc *p = proc_current();
    if (!p) {
        proc_fortran_flush();
        exit(status);
    }
    proc_exit(p, status, false);
}

/* STOP [code]: "STOP 3" on stderr unless QUIET; the status is the code. */
static _Noreturn void f_stop_numeric(int code, bool quiet)
{
    if (!quiet)
        fprintf(stderr, "STOP %d\n", code);
    end_with(code);
}

/* STOP 'text' (and a plain STOP: string NULL): status 0. */
static _Noreturn void f_stop_string(const char *string, size_t len, bool quiet)
{
    if (!quiet && string)
        fprintf(stderr, "STOP %.*s\n", (int)len, string);
    end_with(0);
}

static _Noreturn void f_error_stop_numeric(int code, bool quiet)
{
    if (!quiet)
        fprintf(stderr, "ERROR STOP %d\n", code);
    end_with(code);
}

/* ERROR STOP ['text']: status 1. */
static _Noreturn void f_error_stop_string(const char *string, size_t len, bool quiet)
{
    if (!quiet)
        fprintf(stderr, "ERROR STOP %.*s\n", string ? (int)len : 0, string ? string : "");
    end_with(1);
}

/* CALL EXIT([status]) (GNU extension) */
static _Noreturn void f_exit_i4(int32_t *status)
{
    end_with(status ? (int)*status : 0);
}

static _Noreturn void f_exit_i8(int64_t *status)
{
    end_with(status ? (int)*status : 0);
}

/* CALL ABORT() (GNU extension): as abort() in a ULP. */
static _Noreturn void f_abort(void)
{
    struct proc *p = proc_current();
    if (!p)
        abort();
    proc_refuse("ABORT (Fortran)", "the ULP ends with status 134; the node goes on");
    proc_exit(p, 128 + SIGABRT, true);
}

void *proc_fortran_resolve(const char *name)
{
    static const struct {
        const char *name;
        void *fn;
    } table[] = {
        {"_gfortran_abort", (void *)f_abort},
        {"_gfortran_error_stop_numeric", (void *)f_error_stop_numeric},
        {"_gfortran_error_stop_string", (void *)f_error_stop_string},
        {"_gfortran_exit_i4", (void *)f_exit_i4},
        {"_gfortran_exit_i8", (void *)f_exit_i8},
        {"_gfortran_stop_numeric", (void *)f_stop_numeric},
        {"_gfortran_stop_string", (void *)f_stop_string},
    };
    if (strncmp(name, "_gfortran_", 10) != 0)
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(table); i++)
        if (strcmp(name, table[i].name) == 0)
            return table[i].fn;
    return NULL;
}
