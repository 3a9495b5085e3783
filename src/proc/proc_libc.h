/*
 * proc_libc.h - libc functions that allocate for their caller, made again
 * on the calling process-mode ULP's heap so that what they return moves
 * with it (libc_alloc.c; interpose.c puts them in a program's GOT).  Same
 * contracts as libc's; off a process-mode ULP they use libc's malloc.
 */
#ifndef UPVM_PROC_LIBC_H
#define UPVM_PROC_LIBC_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/compiler.h"

char *proc_strdup(const char *s) HIDDEN;
char *proc_strndup(const char *s, size_t n) HIDDEN;
int proc_asprintf(char **out, const char *fmt, ...) HIDDEN __attribute__((format(printf, 2, 3)));
int proc_vasprintf(char **out, const char *fmt, va_list ap) HIDDEN
    __attribute__((format(printf, 2, 0)));
int proc_asprintf_chk(char **out, int flag, const char *fmt, ...) HIDDEN
    __attribute__((format(printf, 3, 4)));
int proc_vasprintf_chk(char **out, int flag, const char *fmt, va_list ap) HIDDEN
    __attribute__((format(printf, 3, 0)));
ssize_t proc_getdelim(char **line, size_t *cap, int delim, FILE *f) HIDDEN;
ssize_t proc_getline(char **line, size_t *cap, FILE *f) HIDDEN;
char *proc_realpath(const char *path, char *resolved) HIDDEN;
/* A stable merge sort whose buffer is on the task's heap (glibc's is on
 * the node's when the array is large: a move in the comparator lost it). */
void proc_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) HIDDEN;
void proc_qsort_r(void *base, size_t n, size_t size,
                  int (*cmp)(const void *, const void *, void *), void *arg) HIDDEN;

#endif
