/*
 * control_path.c - control socket paths and protocol words (control_path.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "node/control_path.h"

/* The longest socket name in a directory: "/job-<pid>.sock" or the
 * temporary ".job-<pid>.new" (control.c), pids up to 4194304. */
#define NAME_ROOM 24

_Static_assert(CTL_PATH_MAX <= sizeof(((struct sockaddr_un *)0)->sun_path),
               "a control socket path fits sun_path");

/* $XDG_RUNTIME_DIR, if it is an absolute path to a directory we may write
 * into; else NULL. */
static const char *xdg_runtime_dir(void)
{
    const char *x = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (!x || x[0] != '/' || stat(x, &st) != 0 || !S_ISDIR(st.st_mode) ||
        access(x, W_OK | X_OK) != 0)
        return NULL;
    return x;
}

int ctl_dir_name(char *dir, size_t len)
{
    const char *x = xdg_runtime_dir();
    size_t room = len < CTL_PATH_MAX - NAME_ROOM ? len : CTL_PATH_MAX - NAME_ROOM;
    /* A runtime directory too deep for a socket path is passed over. */
    if (x && (size_t)snprintf(dir, room, "%s/upvm", x) < room)
        return 0;
    if ((size_t)snprintf(dir, room, "/tmp/upvm-%u", (unsigned)geteuid()) < room)
        return 0;
    return -1;
}

int ctl_dir_check(const char *dir, char *why, size_t len)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(why, len, "%s: %s", dir, strerror(errno));
        return errno == ENOENT ? -2 : -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, len, "%s is not a directory", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(why, len, "%s is owned by uid %u, not by you (uid %u): remove it, or set "
                           "XDG_RUNTIME_DIR", dir, (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(why, len, "%s has mode %04o; it must be 0700 (chmod 700 %s)", dir,
                 (unsigned)(st.st_mode & 07777), dir);
        return -1;
    }
    return 0;
}

int ctl_dir_ensure(const char *dir, char *why, size_t len)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(why, len, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    return ctl_dir_check(dir, why, len) == 0 ? 0 : -1;
}

bool ctl_sock_path(char *path, size_t len, const char *dir, long pid)
{
    size_t room = len < CTL_PATH_MAX ? len : CTL_PATH_MAX;
    return (size_t)snprintf(path, room, "%s/job-%ld.sock", dir, pid) < room;
}

long ctl_sock_pid(const char *name)
{
    if (strncmp(name, "job-", 4) != 0 || name[4] < '1' || name[4] > '9')
        return -1;
    char *end;
    long pid = strtol(name + 4, &end, 10);
    return strcmp(end, ".sock") == 0 && pid > 0 && pid < 1L << 30 ? pid : -1;
}

/* A connect that blocks waits for room in the listener's backlog: bound by
 * SO_SNDTIMEO, which AF_UNIX applies to connect as well. */
static void set_timeouts(int fd, int timeout_ms)
{
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

int ctl_connect(const char *path, int timeout_ms)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return -ENAMETOOLONG;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    set_timeouts(fd, timeout_ms);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    return fd;
}

int ctl_parse_tid(const char *s, int *tid)
{
    int base = 10;
    if (s[0] == 't') {
        s++;
        base = 16;
    } else if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        base = 16;
    }
    unsigned char c = (unsigned char)s[0];
    if (!(base == 16 ? isxdigit(c) : isdigit(c)))
        return -1; /* no sign, no blank: strtol would take them */
    char *end;
    errno = 0;
    long v = strtol(s, &end, base);
    if (*end || errno || v <= 0 || v > 0x7fffffff)
        return -1;
    *tid = (int)v;
    return 0;
}

int ctl_parse_node(const char *s, int *node)
{
    if (strncmp(s, "node", 4) == 0)
        s += 4;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 63)
        return -1;
    *node = (int)v;
    return 0;
}

int ctl_parse_target(const char *s, int *node)
{
    const char *d = strncmp(s, "node", 4) == 0 ? s + 4 : s;
    if (*d && strspn(d, "0123456789") == strlen(d)) /* a node's word */
        return ctl_parse_node(s, node);
    size_t n = strlen(s);
    if (n == 0 || n > CTL_HOST_MAX || !isalnum((unsigned char)s[0]))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(".-_:", s[i]))
            return -1;
    return 1;
}

/* (the server's, control_server.c; a function of its own for fuzz/fuzz_ctl.c) */
const char *ctl_parse_request(char *line, struct ctl_request *req, char *err, size_t len)
{
    char *save, *w[4];
    int n = 0;
    for (char *t = strtok_r(line, " \t\r", &save); t && n < 4;
         t = strtok_r(NULL, " \t\r", &save))
        w[n++] = t;
    req->host = NULL;
    static const struct {
        const char *word;
        enum ctl_req_kind kind;
    } bare[] = {{"ping", CTL_REQ_PING}, {"tasks", CTL_REQ_TASKS}, {"top", CTL_REQ_TOP}};
    for (size_t i = 0; n && i < sizeof bare / sizeof bare[0]; i++) {
        if (strcmp(w[0], bare[i].word) != 0)
            continue;
        req->kind = bare[i].kind;
        if (n == 1)
            return NULL;
        snprintf(err, len, "error: %s takes no arguments", bare[i].word);
        return err;
    }
    bool vacate = n && !strcmp(w[0], "vacate");
    if (vacate || (n && !strcmp(w[0], "restore"))) {
        req->kind = vacate ? CTL_REQ_VACATE : CTL_REQ_RESTORE;
        if (n != 2) {
            snprintf(err, len, "error: %s wants <node> or <host>", w[0]);
            return err;
        }
        int rc = ctl_parse_target(w[1], &req->node);
        if (rc < 0) {
            snprintf(err, len, "error: bad node '%.40s' (a number, node1 ..., or a host name)",
                     w[1]);
            return err;
        }
        if (rc == 1) {
            req->node = -1;
            req->host = w[1];
        }
        return NULL;
    }
    if (!n || strcmp(w[0], "migrate") != 0) {
        snprintf(err, len, "error: unknown request '%.40s' (ping, tasks, top, migrate <tid> "
                           "<node>, vacate <node>, restore <node>)", n ? w[0] : "");
        return err;
    }
    req->kind = CTL_REQ_MIGRATE;
    if (n == 4 && !strcmp(w[3], "lazy")) {
        req->lazy = true;
        n = 3;
    }
    if (n != 3)
        return "error: migrate wants <tid> <node> [lazy]";
    if (ctl_parse_tid(w[1], &req->tid) != 0)
        snprintf(err, len, "error: bad tid '%.40s' (t40002, 0x40002 or decimal)", w[1]);
    else if (ctl_parse_node(w[2], &req->node) != 0)
        snprintf(err, len, "error: bad node '%.40s' (a number, or node1 ...)", w[2]);
    else
        return NULL;
    return err;
}
