/*
 * control_path.h - where a job's control socket lives, and the words of its
 * protocol: shared by the job (control.c), its launcher (launch.c) and the
 * `upvm` command (tools/upvm), which compiles control_path.c in.
 *
 * The socket of the job whose launcher has pid P is DIR/job-P.sock, where
 * DIR is $XDG_RUNTIME_DIR/upvm when that variable names a directory of ours
 * that we may write, else /tmp/upvm-<uid>.  DIR has mode 0700 and belongs to
 * the user; one that does not is refused, so that only the job's user can
 * reach (or impersonate) a job.  Protocol: docs/usage.md, "Migrating from
 * outside".
 *
 * Plain libc; no state.  Every function may run on any thread.
 */
#ifndef UPVM_NODE_CONTROL_PATH_H
#define UPVM_NODE_CONTROL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/compiler.h"

/* Room for a socket path (sizeof sockaddr_un.sun_path). */
#define CTL_PATH_MAX 108

/* The longest request line, newline included; one-line replies (ping,
 * migrate, vacate, restore, errors) are shorter than CTL_REPLY_MAX; `tasks`
 * answers with a line per node and lines of its tasks, and `top` with the
 * balancer's table, of any length, until the server closes. */
#define CTL_REQUEST_MAX 256
#define CTL_REPLY_MAX   512

/* The directory of this user's control sockets (not created, not checked).
 * 0, or -1 when no directory name fits a socket path. */
int ctl_dir_name(char *dir, size_t len) HIDDEN;

/* dir exists, is a directory (not a link), is ours and has no permission
 * for others: 0; -1 with why ("... is owned by uid 1000, not by you (uid
 * 0)"); -2 (why set too) when it does not exist. */
int ctl_dir_check(const char *dir, char *why, size_t len) HIDDEN;

/* Create dir (mode 0700) if need be, then ctl_dir_check it: 0 or -1. */
int ctl_dir_ensure(const char *dir, char *why, size_t len) HIDDEN;

/* DIR/job-<pid>.sock; false if it does not fit. */
bool ctl_sock_path(char *path, size_t len, const char *dir, long pid) HIDDEN;

/* The launcher pid of a socket's file name "job-<pid>.sock", or -1. */
long ctl_sock_pid(const char *name) HIDDEN;

/* Connect to the socket at path (blocking; a send or receive waits at most
 * timeout_ms).  The socket, or -errno: -ECONNREFUSED when nobody listens
 * (a job that ended without removing it), -ENOENT when there is none. */
int ctl_connect(const char *path, int timeout_ms) HIDDEN;

/* A tid as PVM users write it: t40002 (hex), 0x40002, or decimal.
 * 0 with *tid > 0, or -1. */
int ctl_parse_tid(const char *s, int *tid) HIDDEN;

/* One request line as a client sends it (without its newline; split in
 * place):
 *   ping | tasks | top | migrate <tid> <node> | vacate <target> | restore <target>
 * <node> as ctl_parse_node takes it; <target> as ctl_parse_target: a node,
 * or a host name (every node of the job on that host).  NULL when it is
 * well formed (req set: kind; for migrate tid and node; for vacate and
 * restore node, or node -1 and host, which points into line), else the
 * reply that says why, in err (len bytes) or a constant. */
enum ctl_req_kind {
    CTL_REQ_PING, CTL_REQ_MIGRATE, CTL_REQ_TASKS,
    CTL_REQ_TOP,      /* the balancer's table (several lines) */
    CTL_REQ_VACATE,   /* empty <target> of tasks, place none there */
    CTL_REQ_RESTORE,  /* undo vacate */
};
struct ctl_request {
    enum ctl_req_kind kind;
    int tid, node;
    bool lazy;                    /* migrate ... lazy: the task's memory follows it */
    const char *host;             /* NULL unless a host was named */
};
const char *ctl_parse_request(char *line, struct ctl_request *req, char *err,
                              size_t len) HIDDEN;

/* The longest host name a request may name (a DNS name's limit). */
#define CTL_HOST_MAX 253

/* A node: 2 or node2 (0 .. 63).  0 with *node set, or -1. */
int ctl_parse_node(const char *s, int *node) HIDDEN;

/* What vacate and restore name: a node (as ctl_parse_node takes it: 0
 * with *node set), or a host name (1: letters, digits, '.', '-', '_' and
 * ':' for an address, starting with a letter or digit, at most
 * CTL_HOST_MAX); -1 for neither (node64, node1x, "-x").  A word of digits,
 * or "node" and digits, is always a node. */
int ctl_parse_target(const char *s, int *node) HIDDEN;

#endif /* UPVM_NODE_CONTROL_PATH_H */
