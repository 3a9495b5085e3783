/*
 * vm.c - the persistent VM's socket: the launcher's side (joins, ends,
 * halt) and a program's (vm.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "node/vm.h"
#include "util/env.h"

#define LINE_MAX_VM 128
#define ASK_TIMEOUT_MS 5000
#define PENDING_MAX 16
#define NODE_VM_SLOTS_MAX 64 /* node/job.h NODE_MAX */ /* connections that have not said what they want yet */

/* ------------------------------------------------------------ the launcher's side */

/* A connection: pending (no request yet), or a joined program's. */
struct vm_conn {
    int fd;          /* -1: free */
    int slot;        /* joined: its node slot; -1: pending */
    pid_t pid;       /* the peer's process (SO_PEERCRED, at accept) */
    int status;      /* what its bye said; NODE_VM_VANISHED until then */
    size_t len;
    char buf[LINE_MAX_VM];
};

static struct {
    int lfd;
    int seg_fd, map_fd;
    long pid;
    int vm_nodes;
    char path[CTL_PATH_MAX];
    struct vm_conn conn[NODE_VM_JOINED_MAX + PENDING_MAX];
    unsigned gen[NODE_VM_SLOTS_MAX]; /* programs each slot has held */
    bool halt;       /* asked for: done once the connections are served */
    int halt_tid;
    pid_t halt_by;
} vm = {.lfd = -1};

#define NCONN ((int)(sizeof vm.conn / sizeof vm.conn[0]))

bool node_vm_path(char *path, size_t len)
{
    char dir[CTL_PATH_MAX];
    if (ctl_dir_name(dir, sizeof dir) != 0)
        return false;
    int n = snprintf(path, len, "%s/vm.sock", dir);
    return n > 0 && (size_t)n < len;
}

int node_vm_listen(long pid, int vm_nodes, int seg_fd, int map_fd, char *why, size_t len)
{
    char dir[CTL_PATH_MAX];
    if (ctl_dir_name(dir, sizeof dir) != 0 || !node_vm_path(vm.path, sizeof vm.path)) {
        snprintf(why, len, "no directory for the VM's socket fits a socket's path");
        return -ENAMETOOLONG;
    }
    if (ctl_dir_ensure(dir, why, len) != 0)
        return -EACCES;
    char reply[LINE_MAX_VM];
    if (node_vm_ask("ping", reply, sizeof reply) == 0) {
        snprintf(why, len, "a VM is running already (%s)", reply);
        return -EEXIST;
    }
    (void)unlink(vm.path); /* a dead VM's: nobody answers there */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", vm.path);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0) {
        int e = errno;
        snprintf(why, len, "cannot listen on %s: %s", vm.path, strerror(e));
        close(fd);
        return -e;
    }
    vm.lfd = fd;
    vm.pid = pid;
    vm.vm_nodes = vm_nodes;
    vm.seg_fd = seg_fd;
    vm.map_fd = map_fd;
    for (int i = 0; i < NCONN; i++)
        vm.conn[i] = (struct vm_conn){.fd = -1, .slot = -1};
    return 0;
}

int node_vm_pollfds(struct pollfd *p, int max)
{
    int n = 0;
    if (vm.lfd < 0 || max < 1)
        return 0;
    p[n++] = (struct pollfd){vm.lfd, POLLIN, 0};
    for (int i = 0; i < NCONN && n < max; i++)
        if (vm.conn[i].fd >= 0)
            p[n++] = (struct pollfd){vm.conn[i].fd, POLLIN, 0};
    return n;
}

static int joined_count(void)
{
    int n = 0;
    for (int i = 0; i < NCONN; i++)
        n += vm.conn[i].fd >= 0 && vm.conn[i].slot >= 0;
    return n;
}

static void conn_close(struct vm_conn *c, const struct node_vm_launcher *l)
{
    if (c->slot >= 0)
        l->left(l->ctx, c->slot, c->status);
    close(c->fd);
    *c = (struct vm_conn){.fd = -1, .slot = -1};
}

static void reply(int fd, const char *line)
{
    (void)!send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* "ok ..." with the segment's and the bitmap's descriptors. */
static int reply_fds(int fd, const char *line)
{
    int fds[2] = {vm.seg_fd, vm.map_fd};
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct iovec iov = {(void *)line, strlen(line)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(c), fds, sizeof fds);
    return sendmsg(fd, &m, MSG_NOSIGNAL) == (ssize_t)iov.iov_len ? 0 : -errno;
}

static void do_join(struct vm_conn *c, const struct node_vm_launcher *l)
{
    char line[LINE_MAX_VM];
    if (joined_count() >= NODE_VM_JOINED_MAX) {
        snprintf(line, sizeof line, "error the VM has %d programs joined, its most\n",
                 NODE_VM_JOINED_MAX);
        reply(c->fd, line);
        return;
    }
    int slot = l->join(l->ctx, c->pid);
    if (slot < 0) {
        snprintf(line, sizeof line, "error no free node slot in the VM (%s)\n", strerror(-slot));
        reply(c->fd, line);
        return;
    }
    c->slot = slot;
    c->status = NODE_VM_VANISHED;
    unsigned gen = slot < NODE_VM_SLOTS_MAX ? vm.gen[slot]++ : 0;
    snprintf(line, sizeof line, "ok %d %d %ld %u\n", slot, vm.vm_nodes, vm.pid, gen);
    if (reply_fds(c->fd, line) != 0)
        c->status = 1; /* it could not be told: it never ran here */
}

/* halt: done once the connections are served (it closes them all) */
static void halt_asked(int tid, pid_t by)
{
    vm.halt = true;
    vm.halt_tid = tid;
    vm.halt_by = by;
}

/* One request line from connection c (NUL-terminated, no newline).
 * False when the connection is done with. */
static bool request(struct vm_conn *c, char *line, const struct node_vm_launcher *l)
{
    int v;
    if (c->slot >= 0) { /* a joined program's */
        if (sscanf(line, "bye %d", &v) == 1)
            c->status = v & 0xff;
        else if (sscanf(line, "halt %i", &v) == 1)
            halt_asked(v, c->pid);
        return true;
    }
    if (strncmp(line, "join", 4) == 0) {
        do_join(c, l);
        return c->slot >= 0;
    }
    if (strcmp(line, "ping") == 0) {
        char out[LINE_MAX_VM];
        snprintf(out, sizeof out, "upvm-vm %ld %d %d\n", vm.pid, vm.vm_nodes, joined_count());
        reply(c->fd, out);
        return false;
    }
    if (sscanf(line, "halt %i", &v) == 1) {
        reply(c->fd, "ok\n");
        halt_asked(v, c->pid);
        return false;
    }
    reply(c->fd, "error unknown request (join, bye, halt, ping)\n");
    return false;
}

/* Read what connection c has; false when it is done with. */
static bool conn_read(struct vm_conn *c, const struct node_vm_launcher *l)
{
    ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
        return false;
    if (r < 0)
        return true;
    c->len += (size_t)r;
    char *nl;
    while ((nl = memchr(c->buf, '\n', c->len))) {
        *nl = '\0';
        bool keep = request(c, c->buf, l);
        size_t used = (size_t)(nl + 1 - c->buf);
        memmove(c->buf, nl + 1, c->len - used);
        c->len -= used;
        if (!keep)
            return false;
    }
    return c->len < sizeof c->buf - 1; /* a line too long: done with */
}

static void accept_all(void)
{
    for (;;) {
        int fd = accept4(vm.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        /* the directory is the user's alone (0700); the peer is checked
         * all the same, once, for every request that follows */
        struct ucred cred;
        socklen_t cl = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cred.uid != getuid()) {
            reply(fd, "error not the VM's user\n");
            close(fd);
            continue;
        }
        int i = 0;
        while (i < NCONN && vm.conn[i].fd >= 0)
            i++;
        if (i == NCONN) {
            reply(fd, "error the VM has too many connections\n");
            close(fd);
            continue;
        }
        vm.conn[i] = (struct vm_conn){.fd = fd, .slot = -1, .pid = cred.pid};
    }
}

void node_vm_serve(const struct pollfd *p, int n, const struct node_vm_launcher *l)
{
    for (int k = 0; k < n; k++) {
        if (!p[k].revents)
            continue;
        if (p[k].fd == vm.lfd) {
            accept_all();
            continue;
        }
        for (int i = 0; i < NCONN; i++)
            if (vm.conn[i].fd == p[k].fd && !conn_read(&vm.conn[i], l))
                conn_close(&vm.conn[i], l);
    }
    if (vm.halt) { /* last: it closes every connection */
        vm.halt = false;
        l->halt(l->ctx, vm.halt_tid, vm.halt_by);
    }
}

void node_vm_drop(void)
{
    if (vm.lfd >= 0)
        close(vm.lfd);
    vm.lfd = -1;
    for (int i = 0; i < NCONN; i++) {
        if (vm.conn[i].fd >= 0)
            close(vm.conn[i].fd);
        vm.conn[i] = (struct vm_conn){.fd = -1, .slot = -1};
    }
}

void node_vm_remove(void)
{
    if (vm.path[0])
        (void)unlink(vm.path);
    vm.path[0] = '\0';
}

void node_vm_close(int sig)
{
    if (vm.lfd >= 0) {
        close(vm.lfd);
        vm.lfd = -1;
    }
    for (int i = 0; i < NCONN; i++) {
        struct vm_conn *c = &vm.conn[i];
        if (c->fd < 0)
            continue;
        if (c->slot >= 0 && c->pid > 0 && sig)
            (void)kill(c->pid, sig);
        close(c->fd);
        *c = (struct vm_conn){.fd = -1, .slot = -1};
    }
}

/* ------------------------------------------------------------ a program's side */

bool node_vm_up(void)
{
    static const char *const modes[] = {"auto", "off", NULL};
    int mode = 0;
    (void)env_choice("UPVM_VM", modes, 0, 0, &mode);
    char path[CTL_PATH_MAX];
    struct stat st;
    return mode == 0 && node_vm_path(path, sizeof path) && stat(path, &st) == 0 &&
           S_ISSOCK(st.st_mode);
}

static int vm_connect(void)
{
    char path[CTL_PATH_MAX], dir[CTL_PATH_MAX], why[256];
    if (ctl_dir_name(dir, sizeof dir) != 0 || !node_vm_path(path, sizeof path))
        return -ENOENT;
    if (ctl_dir_check(dir, why, sizeof why) != 0)
        return -ENOENT; /* not ours: nothing of ours can be there */
    return ctl_connect(path, ASK_TIMEOUT_MS);
}

/* The reply's first line (and up to two descriptors) from fd. */
static int read_reply(int fd, char *line, size_t len, int *fds, int nfds)
{
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    size_t got = 0;
    while (got + 1 < len) {
        struct iovec iov = {line + got, len - 1 - got};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                           .msg_controllen = sizeof u.buf};
        ssize_t r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            int got_fds[2] = {-1, -1};
            memcpy(got_fds, CMSG_DATA(c), (size_t)(k < 2 ? k : 2) * sizeof(int));
            for (int i = 0; i < k && i < 2; i++) {
                if (fds && i < nfds)
                    fds[i] = got_fds[i];
                else
                    close(got_fds[i]);
            }
        }
        got += (size_t)r;
        if (memchr(line, '\n', got))
            break;
    }
    line[got] = '\0';
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = '\0';
    return got ? 0 : -EPROTO;
}

int node_vm_ask(const char *request, char *reply_line, size_t len)
{
    int fd = vm_connect();
    if (fd < 0)
        return fd;
    char line[LINE_MAX_VM];
    snprintf(line, sizeof line, "%s\n", request);
    int rc = send(fd, line, strlen(line), MSG_NOSIGNAL) < 0 ? -errno : 0;
    if (rc == 0)
        rc = read_reply(fd, reply_line, len, NULL, 0);
    close(fd);
    return rc;
}

int node_vm_join(struct node_vm_joined *j, char *why, size_t len)
{
    int fd = vm_connect();
    if (fd < 0) {
        snprintf(why, len, "cannot reach the VM: %s", strerror(-fd));
        return fd;
    }
    char line[LINE_MAX_VM];
    snprintf(line, sizeof line, "join %ld\n", (long)getpid());
    int fds[2] = {-1, -1};
    int rc = send(fd, line, strlen(line), MSG_NOSIGNAL) < 0 ? -errno : 0;
    if (rc == 0)
        rc = read_reply(fd, line, sizeof line, fds, 2);
    if (rc == 0 && (sscanf(line, "ok %d %d %ld %u", &j->slot, &j->vm_nodes, &j->launcher,
                           &j->gen) != 4 ||
                    fds[0] < 0 || fds[1] < 0)) {
        snprintf(why, len, "the VM refused: %s",
                 strncmp(line, "error ", 6) == 0 ? line + 6 : line);
        rc = -ECONNREFUSED;
    } else if (rc != 0) {
        snprintf(why, len, "the VM did not answer: %s", strerror(-rc));
    }
    if (rc != 0) {
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        close(fd);
        return rc;
    }
    /* the kept connection waits for no reply any more */
    struct timeval none = {0, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    j->seg_fd = fds[0];
    j->map_fd = fds[1];
    j->conn = fd;
    return 0;
}

int node_vm_say(int conn, const char *line)
{
    return send(conn, line, strlen(line), MSG_NOSIGNAL) < 0 ? -errno : 0;
}
