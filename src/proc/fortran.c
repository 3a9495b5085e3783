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
 * The command line: gfortran's main hands argc and argv to libgfortran
 * (_gfortran_set_args), which keeps one copy for the node, so that the
 * last task started would answer every task's GET_COMMAND_ARGUMENT.  The
 * intrinsics that read it (GET_COMMAND_ARGUMENT, GET_COMMAND,
 * COMMAND_ARGUMENT_COUNT, GETARG, IARGC) read the ULP's own argv instead.
 *
 * Run-time errors the program's code reports (bounds checks of -fcheck,
 * a failed ALLOCATE: _gfortran_runtime_error_at, _gfortran_os_error_at)
 * end the ULP with libgfortran's message and status 2 (1 for os_error).
 * Errors libgfortran finds itself (an I/O error without IOSTAT=) call its
 * own exit and end the node: docs/fortran.md.
 *
 * Fortran I/O units are libgfortran's, so the node's: every ULP's end
 * flushes them (proc_fortran_flush), as stdio is flushed, so that what a
 * task wrote goes out when it ends, not when the node does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc.h"

/* libgfortran's FLUSH: NULL flushes every unit.  Looked up in the node's
 * libraries (they are opened RTLD_GLOBAL) once a program that imports
 * from libgfortran was loaded (gfortran_seen): C programs' ends cost
 * nothing. */
typedef void gfortran_flush_fn(int32_t *unit);
static gfortran_flush_fn *gfortran_flush;
static bool gfortran_seen;

void proc_fortran_flush(void)
{
    if (!gfortran_seen)
        return;
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

/* ------------------------------------------------------------ errors */

static _Noreturn void f_runtime_error_at(const char *where, const char *message, ...)
{
    va_list ap;
    va_start(ap, message);
    fprintf(stderr, "%s\nFortran runtime error: ", where);
    vfprintf(stderr, message, ap);
    fputc('\n', stderr);
    va_end(ap);
    end_with(2);
}

static _Noreturn void f_runtime_error(const char *message, ...)
{
    va_list ap;
    va_start(ap, message);
    fputs("Fortran runtime error: ", stderr);
    vfprintf(stderr, message, ap);
    fputc('\n', stderr);
    va_end(ap);
    end_with(2);
}

static _Noreturn void f_os_error_at(const char *where, const char *message, ...)
{
    int e = errno;
    va_list ap;
    va_start(ap, message);
    fprintf(stderr, "%s\nOperating system error: %s\n", where, strerror(e));
    vfprintf(stderr, message, ap);
    fputc('\n', stderr);
    va_end(ap);
    end_with(1);
}

/* ------------------------------------------------------------ the command line */

/* libgfortran's status codes of GET_COMMAND(_ARGUMENT) */
#define GC_SUCCESS        0
#define GC_VALUE_TOO_SHORT (-1)
#define GC_FAILURE        42

/* The ULP's argc and argv (a ULP that is not one: none). */
static int my_argc(char ***argv)
{
    struct proc *p = proc_current();
    *argv = p ? p->argv : NULL;
    return p && p->argv ? p->argc : 0;
}

/* Still given to libgfortran: its own messages use the program's name. */
static void f_set_args(int argc, char **argv)
{
    void (*real)(int, char **) = (void (*)(int, char **))dlsym(RTLD_DEFAULT, "_gfortran_set_args");
    if (real)
        real(argc, argv);
}

static int32_t f_iargc(void)
{
    char **argv;
    int argc = my_argc(&argv);
    return argc > 0 ? argc - 1 : 0;
}

/* GETARG(pos, value): argument pos, blank-padded; all blanks outside. */
static void getarg(int64_t pos, char *val, size_t val_len)
{
    char **argv;
    int argc = my_argc(&argv);
    memset(val, ' ', val_len);
    if (pos >= 0 && pos < argc) {
        size_t n = strlen(argv[pos]);
        memcpy(val, argv[pos], n < val_len ? n : val_len);
    }
}

static void f_getarg_i4(int32_t *pos, char *val, size_t val_len) { getarg(*pos, val, val_len); }
static void f_getarg_i8(int64_t *pos, char *val, size_t val_len) { getarg(*pos, val, val_len); }

/* GET_COMMAND_ARGUMENT(number [, value, length, status]), as libgfortran. */
static void command_argument(int64_t number, char *value, int64_t *length, int *status,
                             size_t value_len)
{
    char **argv;
    int argc = my_argc(&argv);
    int stat = GC_SUCCESS;
    size_t arglen = 0;
    if (value) {
        if (value_len < 1)
            stat = GC_FAILURE;
        else
            memset(value, ' ', value_len);
    }
    if (number < 0 || number >= argc)
        stat = GC_FAILURE;
    else
        arglen = strlen(argv[number]);
    if (value && stat != GC_FAILURE) {
        if (arglen > value_len)
            stat = GC_VALUE_TOO_SHORT;
        memcpy(value, argv[number], arglen <= value_len ? arglen : value_len);
    }
    if (length)
        *length = (int64_t)arglen;
    *status = stat;
}

static void f_get_command_argument_i4(int32_t *number, char *value, int32_t *length,
                                      int32_t *status, size_t value_len)
{
    int64_t len;
    int stat;
    command_argument(*number, value, &len, &stat, value_len);
    if (length)
        *length = (int32_t)len;
    if (status)
        *status = stat;
}

static void f_get_command_argument_i8(int64_t *number, char *value, int64_t *length,
                                      int64_t *status, size_t value_len)
{
    int64_t len;
    int stat;
    command_argument(*number, value, &len, &stat, value_len);
    if (length)
        *length = len;
    if (status)
        *status = stat;
}

/* GET_COMMAND([command, length, status]): the arguments joined by blanks. */
static void command(char *cmd, int64_t *length, int *status, size_t cmd_len)
{
    char **argv;
    int argc = my_argc(&argv);
    int stat = GC_SUCCESS;
    size_t total = 0;
    if (cmd) {
        if (cmd_len < 1)
            stat = GC_FAILURE;
        else
            memset(cmd, ' ', cmd_len);
    }
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]);
        if (cmd && stat == GC_SUCCESS) {
            size_t room = total < cmd_len ? cmd_len - total : 0;
            if (n > room) {
                n = room;
                stat = GC_VALUE_TOO_SHORT;
            }
            memcpy(cmd + total, argv[i], n);
        }
        total += strlen(argv[i]) + (i + 1 < argc);
    }
    *length = (int64_t)total;
    *status = stat;
}

static void f_get_command_i4(char *cmd, int32_t *length, int32_t *status, size_t cmd_len)
{
    int64_t len;
    int stat;
    command(cmd, &len, &stat, cmd_len);
    if (length)
        *length = (int32_t)len;
    if (status)
        *status = stat;
}

static void f_get_command_i8(char *cmd, int64_t *length, int64_t *status, size_t cmd_len)
{
    int64_t len;
    int stat;
    command(cmd, &len, &stat, cmd_len);
    if (length)
        *length = len;
    if (status)
        *status = stat;
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
        {"_gfortran_get_command_argument_i4", (void *)f_get_command_argument_i4},
        {"_gfortran_get_command_argument_i8", (void *)f_get_command_argument_i8},
        {"_gfortran_get_command_i4", (void *)f_get_command_i4},
        {"_gfortran_get_command_i8", (void *)f_get_command_i8},
        {"_gfortran_getarg_i4", (void *)f_getarg_i4},
        {"_gfortran_getarg_i8", (void *)f_getarg_i8},
        {"_gfortran_iargc", (void *)f_iargc},
        {"_gfortran_os_error_at", (void *)f_os_error_at},
        {"_gfortran_runtime_error", (void *)f_runtime_error},
        {"_gfortran_runtime_error_at", (void *)f_runtime_error_at},
        {"_gfortran_set_args", (void *)f_set_args},
        {"_gfortran_stop_numeric", (void *)f_stop_numeric},
        {"_gfortran_stop_string", (void *)f_stop_string},
    };
    if (strncmp(name, "_gfortran_", 10) != 0)
        return NULL;
    gfortran_seen = true;
    for (size_t i = 0; i < ARRAY_SIZE(table); i++)
        if (strcmp(name, table[i].name) == 0)
            return table[i].fn;
    return NULL;
}
