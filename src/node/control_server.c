/*
 * control_server.c - node 0's control socket server (control.h).
 *
 * Two threads share this file's state:
 *   - the server thread owns the sockets: it accepts, reads one request
 *     line per connection, answers malformed ones itself, queues the others
 *     for the scheduler thread (ctl.in), and writes the replies the scheduler
 *     thread queues back (ctl.out) before closing the connection;
 *   - the scheduler thread (node_ctl_serve, from job.c's poll; and the
 *     migration callbacks) turns requests into replies.
 * ctl.lock guards ctl.in, ctl.out and ctl.stopping only; nobody holds it across a
 * system call, so the scheduler thread never waits on a client.  Replies
 * are a few hundred bytes written once to a fresh socket, with
 * MSG_DONTWAIT: a client that does not read cannot stall the server either.
 *
 * Nor can clients that connect and say nothing, or half a request: every
 * socket is non-blocking and polled together, each connection reads into
 * its own buffer and has READ_TIMEOUT_MS for its line, and the listener is
 * always polled.  When all CONN_MAX connections are taken, a new one
 * closes the oldest that has not sent its request (it is told why), so
 * that a burst of idle clients delays the next `upvm tasks` by one poll
 * round, not by their timeouts; when all are waiting for replies, the new
 * one is refused with a line its client prints.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"
#include "node/control.h"
#include "node/board.h"
#include "node/kinds.h"
#include "node/job.h"

#define CONN_MAX        64       /* connections served at once (see the top) */
#define ACCEPT_MAX      16       /* accepted per poll round: the others get their turn */
#define READ_TIMEOUT_MS 5000     /* a client has this long to send its request */
#define FD_PAUSE_MS     100      /* out of descriptors: accept again after this */
#define STR_(x) #x
#define STR(x)  STR_(x)
#define PROBE_MS        100      /* how long a stale-socket probe may wait */
#define THREAD_STACK    (256 * 1024)

/* One request, from its line to its reply. */
struct ctl_req {
    struct ctl_req *next;
    int conn;                    /* ctl.conn index ... */
    unsigned gen;                /* ... and its generation: a closed one's reply is dropped */
    enum ctl_req_kind kind;
    int tid, node;               /* node -1: host names the nodes (vacate, restore) */
    bool lazy;                   /* a lazy migration */
    char host[CTL_HOST_MAX + 1];
    char reply[CTL_REPLY_MAX];   /* no newline */
    char *text;                  /* a reply of several lines (malloc'ed), or NULL */
};

/* A client connection (the server thread's). */
struct conn {
    int fd;                      /* -1: free */
    unsigned gen;
    bool waiting;                /* its request is with the scheduler thread */
    uint64_t deadline_ms;        /* for its request line */
    size_t len;
    char buf[CTL_REQUEST_MAX];
};

static struct {
    bool started;
    int lfd, efd;                /* the listening socket; the server's wake-up */
    pthread_t thread;
    pthread_mutex_t lock;
    struct ctl_req *in, **in_tail;    /* to the scheduler thread */
    struct ctl_req *out, **out_tail;  /* to the server thread */
    bool stopping;
    uint64_t accept_after_ms;    /* out of descriptors: not accepting till then */
    struct ctl_req *inflight;    /* migrations under way (scheduler thread) */
    struct conn conn[CONN_MAX];
    char program[64];            /* for ping */
    struct node_ctl_ops ops;     /* what requests call (src/run registers them) */
} ctl = {.lock = PTHREAD_MUTEX_INITIALIZER, .lfd = -1, .efd = -1};

atomic_int node_ctl_pending;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ the queues */

static void push(struct ctl_req ***tail, struct ctl_req *r)
{
    r->next = NULL;
    **tail = r;
    *tail = &r->next;
}

static struct ctl_req *take_all(struct ctl_req **head, struct ctl_req ***tail)
{
    struct ctl_req *r = *head;
    *head = NULL;
    *tail = head;
    return r;
}

static void free_all(struct ctl_req *r)
{
    while (r) {
        struct ctl_req *next = r->next;
        free(r->text);
        free(r);
        r = next;
    }
}

/* Server thread: a request for the scheduler thread. */
static void to_sched(struct ctl_req *r)
{
    pthread_mutex_lock(&ctl.lock);
    push(&ctl.in_tail, r);
    pthread_mutex_unlock(&ctl.lock);
    /* After the push: the scheduler clears the flag before it takes the
     * queue, so a request is never left behind a cleared flag. */
    atomic_store_explicit(&node_ctl_pending, 1, memory_order_release);
    net_wake(0);
}

static void wake_server(void)
{
    uint64_t one = 1;
    ssize_t n = write(ctl.efd, &one, sizeof one); /* non-blocking: never waits */
    (void)n;
}

/* Scheduler thread: r's reply is ready.  Once the server is stopping
 * nobody will write it. */
static void to_server(struct ctl_req *r)
{
    pthread_mutex_lock(&ctl.lock);
    bool stopping = ctl.stopping;
    if (!stopping)
        push(&ctl.out_tail, r);
    pthread_mutex_unlock(&ctl.lock);
    if (stopping) {
        free(r->text);
        free(r);
    } else {
        wake_server();
    }
}

/* ------------------------------------------------------------ replies (scheduler thread) */

/* 123.4 us / 12.3 ms / 1.2 s */
static const char *fmt_ns(uint64_t ns, char *buf, size_t len)
{
    if (ns < 10000000)
        snprintf(buf, len, "%.1f us", (double)ns / 1e3);
    else if (ns < 10000000000)
        snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.1f s", (double)ns / 1e9);
    return buf;
}

/* 512 B / 4.0 KiB / 1.0 MiB / 1.2 GiB */
static const char *fmt_bytes(uint64_t b, char *buf, size_t len)
{
    if (b < 1024)
        snprintf(buf, len, "%u B", (unsigned)b);
    else if (b < 1024 * 1024)
        snprintf(buf, len, "%.1f KiB", (double)b / 1024);
    else if (b < 1024ull * 1024 * 1024)
        snprintf(buf, len, "%.1f MiB", (double)b / (1024 * 1024));
    else
        snprintf(buf, len, "%.1f GiB", (double)b / (1024.0 * 1024 * 1024));
    return buf;
}

static void reply_error(struct ctl_req *r, const char *why)
{
    snprintf(r->reply, sizeof r->reply, "error: %s", why);
}

static void inflight_remove(struct ctl_req *r)
{
    for (struct ctl_req **p = &ctl.inflight; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            return;
        }
    }
}

static void migrate_done(void *ctx, const struct node_ctl_moved *m)
{
    struct ctl_req *r = ctx;
    inflight_remove(r);
    if (m->why) {
        reply_error(r, m->why);
    } else {
        char from[16] = "node?", total[32], obtr[32], bytes[32];
        if (m->from >= 0)
            snprintf(from, sizeof from, "node%d", m->from);
        snprintf(r->reply, sizeof r->reply, "ok t%x %s -> node%d in %s (obtrusiveness %s, %s)",
                 (unsigned)m->tid, from, m->to, fmt_ns(m->total_ns, total, sizeof total),
                 fmt_ns(m->obtrusive_ns, obtr, sizeof obtr),
                 fmt_bytes(m->bytes, bytes, sizeof bytes));
    }
    to_server(r);
}

/* "node0 node1 node3": the nodes up now. */
static void nodes_up(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int n = 0; n < node_job_slots() && off < len; n++)
        if (node_job_up(n))
            off += (size_t)snprintf(buf + off, len - off, "%snode%d", off ? " " : "", n);
}

static int count_up(void)
{
    int k = 0;
    for (int n = 0; n < node_job_slots(); n++)
        k += node_job_up(n);
    return k;
}

/* Start a migration; the reply comes from migrate_done, or now. */
static void serve_migrate(struct ctl_req *r)
{
    if (!node_job_up(r->node)) {
        char up[256];
        nodes_up(up, sizeof up);
        snprintf(r->reply, sizeof r->reply, "error: no node%d in this job (its nodes: %s)",
                 r->node, up);
        to_server(r);
        return;
    }
    r->next = ctl.inflight;
    ctl.inflight = r;
    /* r may be answered, and freed, before this returns 0: not touched then */
    int rc = ctl.ops.migrate ? ctl.ops.migrate(r->tid, r->node, r->lazy, migrate_done, r) : -ENOSYS;
    if (rc != 0) {
        char why[64];
        if (rc == -ESRCH) /* as upvm_migrate says it */
            snprintf(why, sizeof why, "no task t%x in this job", (unsigned)r->tid);
        else
            snprintf(why, sizeof why, "%s", strerror(-rc));
        inflight_remove(r);
        reply_error(r, why);
        to_server(r);
    }
}

/* The listing of boards (node n's in boards[n]; NULL: none) into r. */
static void list_boards(struct ctl_req *r, const void *const *boards)
{
    size_t len = 0;
    FILE *f = open_memstream(&r->text, &len);
    if (!f) {
        snprintf(r->reply, sizeof r->reply, "error: out of memory");
        return;
    }
    for (int n = 0; n < node_job_slots(); n++) {
        if (!node_job_up(n))
            continue;
        const void *board = boards[n];
        int ntasks = node_board_ntasks(board);
        char name[NODE_HOST_MAX + 16];
        fprintf(f, "node%d pid %d", n, node_board_pid(board));
        if (node_job_host(n)) /* a job of several hosts: where it runs */
            fprintf(f, " on %s", node_job_name(n, name, sizeof name));
        fprintf(f, ": %d task%s\n", ntasks > 0 ? ntasks : 0, ntasks == 1 ? "" : "s");
        (void)node_board_print(f, board, "");
    }
    if (fclose(f) != 0 || !r->text) {
        free(r->text);
        r->text = NULL;
        snprintf(r->reply, sizeof r->reply, "error: out of memory");
    }
}

/*
 * Every running node's tasks, read from the boards in the job's shared
 * segment (node/board.h): no node is asked, so the listing costs node 0 a
 * few µs and no other node anything.  A snapshot: a task that starts,
 * ends or moves at that instant may be missing, or listed on both nodes.
 *
 * A job of MPI ranks shares no segment: each node keeps its board in its
 * own memory, and node 0 asks every node for a copy (K_BOARD_ASK) and
 * lists them when all have come (K_BOARD); requests that come meanwhile
 * wait for that listing.
 */
static struct {
    struct ctl_req *waiting, **tail;
    int missing;
    bool asked[NODE_MAX];
    void *copy[NODE_MAX];
} gather;

static void gather_done(void)
{
    const void *boards[NODE_MAX] = {0};
    boards[0] = net_board(0) ? net_board(0) : node_board_own();
    for (int n = 1; n < node_job_slots(); n++)
        boards[n] = gather.copy[n];
    for (struct ctl_req *r = gather.waiting, *next; r; r = next) {
        next = r->next;
        list_boards(r, boards);
        to_server(r);
    }
    gather.waiting = NULL;
    for (int n = 0; n < NODE_MAX; n++) {
        free(gather.copy[n]);
        gather.copy[n] = NULL;
        gather.asked[n] = false;
    }
}

static void gather_count(int n)
{
    if (n > 0 && n < NODE_MAX && gather.asked[n]) {
        gather.asked[n] = false;
        if (--gather.missing == 0)
            gather_done();
    }
}

static void on_board(int src, const struct node_frame *f, const void *p, size_t len)
{
    if (src <= 0 || src >= NODE_MAX || !gather.asked[src])
        return;
    free(gather.copy[src]);
    gather.copy[src] = calloc(1, NET_BOARD_BYTES);
    if (gather.copy[src])
        memcpy(gather.copy[src], p, len < NET_BOARD_BYTES ? len : NET_BOARD_BYTES);
    gather_count(src);
}

static void on_board_ask(int src, const struct node_frame *f, const void *p, size_t len)
{
    struct node_frame ans = {K_BOARD, 0, 0, 0};
    node_post(src, &ans, node_board_own(), node_board_own() ? NET_BOARD_BYTES : 0,
                    NULL, 0);
}

static void serve_tasks(struct ctl_req *r)
{
    if (net_board(0)) { /* the shared segment has them all */
        const void *boards[NODE_MAX] = {0};
        for (int n = 0; n < node_job_slots(); n++)
            boards[n] = net_board(n);
        list_boards(r, boards);
        to_server(r);
        return;
    }
    r->next = NULL;
    bool running = gather.waiting != NULL;
    if (!running)
        gather.tail = &gather.waiting;
    *gather.tail = r;
    gather.tail = &r->next;
    if (running)
        return;
    for (int n = 1; n < node_job_slots() && n < NODE_MAX; n++) {
        struct node_frame ask = {K_BOARD_ASK, 0, 0, 0};
        if (node_job_up(n) && node_send(n, &ask, NULL, 0, NULL, 0) == 0) {
            gather.asked[n] = true;
            gather.missing++;
        }
    }
    if (gather.missing == 0)
        gather_done();
}

/* A node that died or left answers no more. */
static int gather_peer_gone(int n, int status, bool deleted)
{
    gather_count(n);
    return 0;
}

void node_ctl_register_frames(void)
{
    static const struct node_job_hooks hooks = {.peer_gone = gather_peer_gone};
    node_on_frame(K_BOARD_ASK, on_board_ask);
    node_on_frame(K_BOARD, on_board);
    (void)node_job_add_hooks(&hooks);
}

/* Why this job has no balancer to ask. */
static const char *no_balancer(void)
{
    return node_job_slots() <= 1 ? "a job of one node has no balancer"
                                 : "this job has no balancer";
}

/* `upvm top`: the balancer's table, as it writes it. */
static void serve_top(struct ctl_req *r)
{
    if (!ctl.ops.top) {
        reply_error(r, no_balancer());
    } else if (!(r->text = ctl.ops.top())) {
        reply_error(r, "out of memory");
    } else if (!r->text[0]) { /* an empty reply would read as a job that ended */
        free(r->text);
        r->text = NULL;
        reply_error(r, "the balancer has nothing to show");
    }
    to_server(r);
}

/* Append part to buf (len bytes), "; " between parts (cut at its room). */
static void join(char *buf, size_t len, const char *part)
{
    size_t off = strlen(buf);
    const char *pieces[2] = {off ? "; " : "", part};
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(pieces[i]);
        if (n > len - 1 - off)
            n = len - 1 - off;
        memcpy(buf + off, pieces[i], n);
        off += n;
    }
    buf[off] = '\0';
}

/* `upvm vacate` / `upvm restore`: the node, or every node on the host, as
 * the balancer answers for each, joined by "; "; failures first, so that
 * the reply starts with "error:" when one failed. */
static void serve_vacate(struct ctl_req *r)
{
    bool on = r->kind == CTL_REQ_VACATE;
    int nodes[NODE_MAX], k = 0;
    char up[256];
    for (int n = 0; n < node_job_slots() && n < NODE_MAX; n++)
        if (node_job_up(n) && (r->host[0] ? node_job_on_host(n, r->host) : n == r->node))
            nodes[k++] = n;
    if (k == 0) {
        nodes_up(up, sizeof up);
        if (r->host[0])
            snprintf(r->reply, sizeof r->reply, "error: no node of this job runs on host "
                     "%.64s (its nodes: %s)", r->host, up);
        else
            snprintf(r->reply, sizeof r->reply, "error: no node%d in this job (its nodes: %s)",
                     r->node, up);
    } else if (!ctl.ops.vacate) {
        reply_error(r, no_balancer());
    } else {
        char bad[CTL_REPLY_MAX] = "", good[CTL_REPLY_MAX] = "", part[CTL_REPLY_MAX];
        for (int i = 0; i < k; i++) {
            part[0] = '\0';
            int rc = ctl.ops.vacate(nodes[i], on, part, sizeof part);
            part[sizeof part - 1] = '\0';
            bool said = !strncmp(part, "error:", 6);
            if (rc < 0 && !said) {
                char why[CTL_REPLY_MAX - 64];
                snprintf(why, sizeof why, "%.400s", part[0] ? part : strerror(-rc));
                snprintf(part, sizeof part, "error: node%d: %s", nodes[i], why);
            } else if (!part[0]) {
                snprintf(part, sizeof part, "ok node%d %s", nodes[i], on ? "vacated" : "restored");
            }
            if (rc < 0 || said)
                join(bad, sizeof bad, part);
            else
                join(good, sizeof good, part);
        }
        snprintf(r->reply, sizeof r->reply, "%s", bad);
        join(r->reply, sizeof r->reply, good);
    }
    to_server(r);
}

void node_ctl_serve(void)
{
    atomic_store_explicit(&node_ctl_pending, 0, memory_order_relaxed);
    pthread_mutex_lock(&ctl.lock);
    struct ctl_req *r = take_all(&ctl.in, &ctl.in_tail);
    pthread_mutex_unlock(&ctl.lock);
    while (r) {
        struct ctl_req *next = r->next;
        if (r->kind == CTL_REQ_TASKS) {
            serve_tasks(r); /* hands r to the server when it is complete */
        } else if (r->kind == CTL_REQ_TOP) {
            serve_top(r);
        } else if (r->kind == CTL_REQ_VACATE || r->kind == CTL_REQ_RESTORE) {
            serve_vacate(r);
        } else if (r->kind == CTL_REQ_PING) {
            snprintf(r->reply, sizeof r->reply, "job %ld nodes %d program %s",
                     node_ctl_where.pid, count_up(), ctl.program);
            to_server(r);
        } else {
            serve_migrate(r);
        }
        r = next;
    }
}

/* ------------------------------------------------------------ connections (server thread) */

static void conn_close(struct conn *c)
{
    close(c->fd);
    c->fd = -1;
    c->gen++;
    c->waiting = false;
}

/* Write text and a newline, then close: one non-blocking send. */
static void conn_reply(struct conn *c, const char *text)
{
    char line[CTL_REPLY_MAX + 1];
    int n = snprintf(line, sizeof line, "%s\n", text);
    ssize_t w = send(c->fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)w; /* a client that left or does not read gets nothing */
    conn_close(c);
}

/* A reply of several lines (each ends with a newline), then close.  Not
 * waiting: a client that does not read gets what the socket buffer held. */
static void conn_reply_text(struct conn *c, const char *text)
{
    for (size_t off = 0, len = strlen(text); off < len;) {
        ssize_t w = send(c->fd, text + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    conn_close(c);
}

/* The words of a request line into r; NULL, or the error reply. */
static const char *parse_request(char *line, struct ctl_req *r, char *err, size_t len)
{
    struct ctl_request req = {.kind = CTL_REQ_PING};
    const char *why = ctl_parse_request(line, &req, err, len);
    r->kind = req.kind;
    r->tid = req.tid;
    r->node = req.node;
    r->lazy = req.lazy;
    if (!why && req.host) /* the line is the connection's buffer: copied */
        snprintf(r->host, sizeof r->host, "%s", req.host);
    return why;
}

/* A request line: answered here when malformed, else queued. */
static void conn_request(struct conn *c, char *line)
{
    char err[CTL_REPLY_MAX];
    struct ctl_req r = {.conn = (int)(c - ctl.conn), .gen = c->gen};
    const char *bad = parse_request(line, &r, err, sizeof err);
    struct ctl_req *q = bad ? NULL : malloc(sizeof *q);
    if (!q) {
        conn_reply(c, bad ? bad : "error: out of memory");
        return;
    }
    *q = r;
    c->waiting = true;
    to_sched(q);
}

static void conn_readable(struct conn *c)
{
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n < 0 || (n == 0 && c->len == 0)) {
        conn_close(c); /* gone without a word (a probe, sweep_stale) */
        return;
    }
    c->len += (size_t)n;
    c->buf[c->len] = '\0';
    char *nl = strchr(c->buf, '\n');
    if (nl) {
        *nl = '\0';
    } else if (n > 0) { /* no line yet */
        if (c->len == sizeof c->buf - 1)
            conn_reply(c, "error: request too long");
        return;
    }
    conn_request(c, c->buf); /* a line, or what came before the client stopped writing */
}

static void conn_event(struct conn *c, short revents)
{
    if (!c->waiting)
        conn_readable(c);
    else if (revents & (POLLHUP | POLLERR))
        conn_close(c); /* it left: its reply will be dropped */
}

/* Only the job's user (or root) may talk to it, whatever happened to the
 * directory's permissions since. */
static bool peer_allowed(int fd)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
           (cr.uid == geteuid() || cr.uid == 0);
}

/* A connection there is no room for: told so, closed. */
static void refuse(int fd, const char *line)
{
    ssize_t w = send(fd, line, strlen(line), MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)w;
    close(fd);
}

/* A free connection; else the one that has waited longest without sending
 * its request, closed to make room; else NULL (all wait for replies). */
static struct conn *conn_room(void)
{
    struct conn *oldest = NULL;
    for (int i = 0; i < CONN_MAX; i++) {
        struct conn *c = &ctl.conn[i];
        if (c->fd < 0)
            return c;
        if (!c->waiting && (!oldest || c->deadline_ms < oldest->deadline_ms))
            oldest = c;
    }
    if (oldest)
        conn_reply(oldest, "error: closed unanswered: " STR(CONN_MAX) " clients were connected "
                           "and this one had sent no request for the longest");
    return oldest;
}

/* Accept one waiting client: false when none is left (or no descriptor). */
static bool accept_one(void)
{
    int fd = accept4(ctl.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS)
            ctl.accept_after_ms = now_ms() + FD_PAUSE_MS; /* the backlog waits */
        return false;
    }
    if (!peer_allowed(fd)) {
        refuse(fd, "error: this job belongs to another user\n");
        return true;
    }
    struct conn *c = conn_room();
    if (!c) {
        refuse(fd, "error: busy: " STR(CONN_MAX) " requests are being served; try again\n");
        return true;
    }
    *c = (struct conn){.fd = fd, .gen = c->gen, .deadline_ms = now_ms() + READ_TIMEOUT_MS};
    conn_readable(c); /* a client's request is often there already */
    return true;
}

static void accept_some(void)
{
    for (int i = 0; i < ACCEPT_MAX && accept_one(); i++)
        ;
}

/* Write the replies the scheduler thread made. */
static void deliver_replies(void)
{
    pthread_mutex_lock(&ctl.lock);
    struct ctl_req *r = take_all(&ctl.out, &ctl.out_tail);
    pthread_mutex_unlock(&ctl.lock);
    while (r) {
        struct ctl_req *next = r->next;
        struct conn *c = &ctl.conn[r->conn];
        if (c->fd >= 0 && c->gen == r->gen && r->text)
            conn_reply_text(c, r->text);
        else if (c->fd >= 0 && c->gen == r->gen)
            conn_reply(c, r->reply);
        free(r->text);
        free(r);
        r = next;
    }
}

/* Connections that sent no request in time; the poll timeout till the
 * next such deadline. */
static int expire(uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (int i = 0; i < CONN_MAX; i++) {
        struct conn *c = &ctl.conn[i];
        if (c->fd < 0 || c->waiting)
            continue;
        if (c->deadline_ms <= now)
            conn_reply(c, "error: no request within 5 s");
        else if (c->deadline_ms < next)
            next = c->deadline_ms;
    }
    if (ctl.accept_after_ms > now && ctl.accept_after_ms < next)
        next = ctl.accept_after_ms;
    return next == UINT64_MAX ? -1 : (int)(next - now);
}

/* ------------------------------------------------------------ the server thread */

/* Remove the sockets of this directory that nobody listens on: left by
 * jobs whose launcher was killed (SIGKILL leaves it no time).  A live
 * job's socket answers (or, with a full backlog, makes us wait): kept. */
static void sweep_stale(void)
{
    DIR *d = opendir(node_ctl_where.dir);
    if (!d)
        return;
    struct dirent *e;
    char path[CTL_PATH_MAX];
    while ((e = readdir(d))) {
        long pid = ctl_sock_pid(e->d_name);
        if (pid < 0 || pid == node_ctl_where.pid ||
            !ctl_sock_path(path, sizeof path, node_ctl_where.dir, pid))
            continue;
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
            continue;
        int fd = ctl_connect(path, PROBE_MS);
        if (fd == -ECONNREFUSED)
            (void)unlink(path);
        else if (fd >= 0)
            close(fd);
    }
    closedir(d);
}

static bool stopping(void)
{
    pthread_mutex_lock(&ctl.lock);
    bool s = ctl.stopping;
    pthread_mutex_unlock(&ctl.lock);
    return s;
}

/* One round: wait for the wake-up, a client or a deadline, then serve. */
static bool serve_round(void)
{
    struct pollfd p[CONN_MAX + 2];
    int at[CONN_MAX + 2], n = 2;
    for (int i = 0; i < CONN_MAX; i++) {
        if (ctl.conn[i].fd < 0)
            continue;
        p[n] = (struct pollfd){ctl.conn[i].fd, ctl.conn[i].waiting ? 0 : POLLIN, 0};
        at[n++] = i;
    }
    uint64_t now = now_ms();
    int timeout = expire(now);
    /* always polled (a full house makes room, conn_room), unless out of
     * descriptors for a moment */
    bool accepting = ctl.accept_after_ms <= now;
    p[0] = (struct pollfd){ctl.efd, POLLIN, 0};
    p[1] = (struct pollfd){accepting ? ctl.lfd : -1, POLLIN, 0}; /* -1: not polled */
    if (poll(p, (nfds_t)n, timeout) < 0) {
        usleep(10000); /* ENOMEM (EINTR cannot come: signals blocked): again */
        return true;
    }
    for (int k = 2; k < n; k++)
        if (p[k].revents)
            conn_event(&ctl.conn[at[k]], p[k].revents);
    if (p[0].revents) {
        uint64_t v;
        ssize_t r = read(ctl.efd, &v, sizeof v);
        (void)r;
        if (stopping())
            return false;
        deliver_replies();
    }
    if (p[1].revents)
        accept_some();
    return true;
}

static void *server_main(void *arg)
{
    sweep_stale();
    while (serve_round())
        ;
    return NULL;
}

/* ------------------------------------------------------------ start, stop (scheduler) */

/* Bind the temporary name, then rename it into place once it listens, so
 * that a socket under the real name always answers while its job lives
 * (sweep_stale relies on that).  The listening socket, or -1 with why. */
static int bind_listen(const struct node_ctl_where *w, char *why, size_t len)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", w->tmp);
    for (int tries = 0;; tries++) {
        if (ctl_dir_ensure(w->dir, why, len) != 0)
            return -1;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            break;
        (void)unlink(w->tmp); /* left by an earlier job with our pid */
        if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && chmod(w->tmp, 0600) == 0 &&
            listen(fd, SOMAXCONN) == 0) /* a burst of clients is accepted, not refused */
            return fd;
        int err = errno;
        close(fd);
        (void)unlink(w->tmp);
        /* An ending job's launcher removed the empty directory meanwhile. */
        if (err != ENOENT || tries == 3) {
            errno = err;
            break;
        }
    }
    snprintf(why, len, "cannot create %s: %s", w->tmp, strerror(errno));
    return -1;
}

static int make_socket(char *why, size_t len)
{
    const struct node_ctl_where *w = &node_ctl_where;
    if (!w->path[0]) {
        snprintf(why, len, "no directory for it: $XDG_RUNTIME_DIR and /tmp give paths too "
                           "long for a socket");
        return -1;
    }
    int fd = bind_listen(w, why, len);
    if (fd < 0)
        return -1;
    /* A socket under our name is a dead job's (same pid), unless it answers:
     * a job with our pid in another pid namespace sharing the directory. */
    int other = ctl_connect(w->path, PROBE_MS);
    if (other >= 0 || other == -EAGAIN) {
        if (other >= 0)
            close(other);
        snprintf(why, len, "%s belongs to another running job", w->path);
    } else if (rename(w->tmp, w->path) == 0) {
        return fd;
    } else {
        snprintf(why, len, "cannot create %s: %s", w->path, strerror(errno));
    }
    close(fd);
    (void)unlink(w->tmp);
    return -1;
}

static int start_thread(void)
{
    pthread_attr_t attr;
    sigset_t all, old;
    if (pthread_attr_init(&attr) != 0)
        return -1;
    (void)pthread_attr_setstacksize(&attr, THREAD_STACK);
    /* Every signal stays with the scheduler thread, as before the server
     * existed: the thread starts with all of them blocked. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&ctl.thread, &attr, server_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    errno = rc;
    return rc == 0 ? 0 : -1;
}

void node_ctl_set_ops(const struct node_ctl_ops *ops, const char *program)
{
    ctl.ops = *ops;
    const char *base = strrchr(program, '/');
    snprintf(ctl.program, sizeof ctl.program, "%s", base ? base + 1 : program);
}

void node_ctl_start(void)
{
    if (ctl.started)
        return;
    char why[CTL_REPLY_MAX];
    ctl.lfd = make_socket(why, sizeof why);
    if (ctl.lfd < 0)
        goto fail;
    ctl.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    for (int i = 0; i < CONN_MAX; i++)
        ctl.conn[i].fd = -1;
    ctl.in_tail = &ctl.in;
    ctl.out_tail = &ctl.out;
    if (ctl.efd >= 0 && start_thread() == 0) {
        ctl.started = true;
        return;
    }
    snprintf(why, sizeof why, "cannot start its thread: %s", strerror(errno));
    if (ctl.efd >= 0)
        close(ctl.efd);
    close(ctl.lfd);
    (void)unlink(node_ctl_where.path);
    ctl.lfd = ctl.efd = -1;
fail:
    fprintf(stderr, "upvm: no control socket for this job (upvm migrate cannot reach it): "
                    "%s\n", why);
}

void node_ctl_stop(void)
{
    if (!ctl.started)
        return;
    ctl.started = false;
    pthread_mutex_lock(&ctl.lock);
    ctl.stopping = true;
    pthread_mutex_unlock(&ctl.lock);
    wake_server();
    pthread_join(ctl.thread, NULL);
    for (int i = 0; i < CONN_MAX; i++)
        if (ctl.conn[i].fd >= 0)
            conn_close(&ctl.conn[i]);
    free_all(take_all(&ctl.in, &ctl.in_tail));
    free_all(take_all(&ctl.out, &ctl.out_tail));
    /* ctl.inflight stay: their callbacks may still come, and free them. */
    close(ctl.lfd);
    close(ctl.efd);
    ctl.lfd = ctl.efd = -1;
    /* Gone from the directory at once: a client now finds no job rather
     * than one that does not answer.  The launcher removes it too. */
    struct stat st;
    if (lstat(node_ctl_where.path, &st) == 0 && S_ISSOCK(st.st_mode))
        (void)unlink(node_ctl_where.path);
}
