/*
 * pvmtest.h - helpers for the PVM layer's tests: stderr capture (to check
 * PvmAutoErr reports word for word) and the one-line shorthands used by
 * every test file.  Expectations cite docs/reference/pvm-probed-semantics.md
 * ("ref §N"), which records what genuine PVM 3.4.6 does.
 */
#ifndef UPVM_TESTS_PVMTEST_H
#define UPVM_TESTS_PVMTEST_H

#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <upvm.h>

#include "harness.h"

/* Everything written to stderr between capture_begin() and capture_end()
 * goes to a temporary file; capture_end returns it (static buffer). */
static int capture_saved_fd = -1;
static FILE *capture_file;

static inline void capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    CHECK(capture_file != NULL);
    capture_saved_fd = dup(2);
    CHECK(dup2(fileno(capture_file), 2) == 2);
}

static inline const char *capture_end(void)
{
    static char text[8192];
    fflush(stderr);
    CHECK(dup2(capture_saved_fd, 2) == 2);
    close(capture_saved_fd);
    rewind(capture_file);
    size_t n = fread(text, 1, sizeof text - 1, capture_file);
    text[n] = '\0';
    fclose(capture_file);
    return text;
}

/* The AutoErr line PVM prints for fn failing with text, for this task. */
static inline const char *autoerr_line(const char *fn, const char *text)
{
    static char line[256];
    snprintf(line, sizeof line, "libpvm [t%x]: %s(): %s\n", (unsigned)pvm_mytid(), fn, text);
    return line;
}

/* Send an empty (or one-int) message with tag to tid. */
static inline void send_int(int tid, int tag, int value)
{
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(&value, 1, 1), 0);
    CHECK_EQ(pvm_send(tid, tag), 0);
}

/* Receive a one-int message (tid, tag) and return the int. */
static inline int recv_int(int tid, int tag)
{
    int v = 0;
    CHECK(pvm_recv(tid, tag) > 0);
    CHECK_EQ(pvm_upkint(&v, 1, 1), 0);
    return v;
}

/* A thread-mode child that echoes every message back to its parent with
 * the same tag (one int), until tag 999. */
static inline void echo_child(int ordinal, void *arg)
{
    for (;;) {
        int v = recv_int(pvm_parent(), -1);
        int tag;
        CHECK_EQ(pvm_bufinfo(pvm_getrbuf(), NULL, &tag, NULL), 0);
        if (tag == 999)
            return;
        send_int(pvm_parent(), tag, v);
    }
}

#endif
