/*
 * blocking.c - process-mode system calls that block, run by test-blocking.sh
 * on one node (UPVM_NODES=1: the tasks share the node's descriptors).
 *
 *   ./blocking pipe    a task blocked in read() on a pipe while 100 tasks
 *                      compute and pass messages around a ring: they all
 *                      finish first; then the pipe is written and the
 *                      reader gets exactly the bytes
 *   ./blocking calls   each interposed call that may block, with its exact
 *                      results and errors, and the node still running
 *                      others while it waits
 *   ./blocking kill    a task blocked in read() is killed (pvm_kill): its
 *                      call is interrupted, it ends, the job goes on
 *   ./blocking migrate (two nodes) a task in a coupled poll() is listed as
 *                      such by pvm_tasks/upvm_tasks_waits; a migration
 *                      asked for meanwhile waits, and it moves once the
 *                      call has returned
 * Each check prints "ok NAME" or "FAIL NAME: ..."; the last line is "OK"
 * or "WRONG".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pvm3.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

static int failures;

#define EXPECT(name, cond, ...)                                                               \
    do {                                                                                     \
        if (cond) {                                                                          \
            printf("ok %s\n", name);                                                         \
        } else {                                                                             \
            failures++;                                                                      \
            printf("FAIL %s: ", name);                                                       \
            printf(__VA_ARGS__);                                                             \
            printf("\n");                                                                    \
        }                                                                                    \
        fflush(stdout);                                                                      \
    } while (0)

static char *self;

static int spawn(const char *role, const char *arg)
{
    int tid;
    char *argv[] = {(char *)role, (char *)arg, NULL};
    if (pvm_spawn(self, argv, PvmTaskDefault, "", 1, &tid) != 1) {
        fprintf(stderr, "cannot spawn %s\n", role);
        exit(2);
    }
    return tid;
}

static void send_int(int tid, int tag, int v)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    pvm_send(tid, tag);
}

static int recv_int(int tid, int tag)
{
    int v = -1;
    pvm_recv(tid, tag);
    pvm_upkint(&v, 1, 1);
    return v;
}

/* ------------------------------------------------------------ tasks */

enum { TAG_DONE = 1, TAG_RING, TAG_GOT, TAG_GO, TAG_READY };

/* Compute and pass a token around a ring of n tasks, 20 times. */
static void compute_task(int n)
{
    int *sibs, ns = pvm_siblings(&sibs), me = -1;
    (void)ns;
    int parent = pvm_parent();
    int ring[128];
    pvm_recv(parent, TAG_GO);
    pvm_upkint(ring, n, 1);
    for (int i = 0; i < n; i++)
        if (ring[i] == pvm_mytid())
            me = i;
    volatile double x = me;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 50000; i++)
            x = x * 1.0000001 + 1;
        if (!(me == 0 && round == 0))
            recv_int(ring[(me + n - 1) % n], TAG_RING);
        send_int(ring[(me + 1) % n], TAG_RING, round);
    }
    if (me == 0)
        recv_int(ring[n - 1], TAG_RING);
    send_int(parent, TAG_DONE, me);
}

/* Read the pipe (its descriptor is the node's) and send what came. */
static void reader_task(int fd)
{
    char buf[64];
    send_int(pvm_parent(), TAG_READY, 0);
    ssize_t n = read(fd, buf, sizeof buf);
    pvm_initsend(PvmDataDefault);
    int len = (int)n;
    pvm_pkint(&len, 1, 1);
    if (n > 0)
        pvm_pkbyte(buf, (int)n, 1);
    pvm_send(pvm_parent(), TAG_GOT);
}

/* ------------------------------------------------------------ pipe */

/* A new pipe p and a reader task on its read end, about to read() it
 * (its READY came); the reader's tid, or -1 (no pipe). */
static int start_reader(int p[2])
{
    if (pipe(p) != 0)
        return -1;
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", p[0]);
    int reader = spawn("reader", fdarg);
    recv_int(reader, TAG_READY);
    return reader;
}

static int pipe_case(void)
{
    enum { N = 100 };
    int p[2];
    int reader = start_reader(p);
    if (reader < 0)
        return 2;
    int ring[N];
    char narg[16];
    snprintf(narg, sizeof narg, "%d", N);
    for (int i = 0; i < N; i++)
        ring[i] = spawn("compute", narg);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(ring, N, 1);
    pvm_mcast(ring, N, TAG_GO);
    for (int i = 0; i < N; i++)
        recv_int(-1, TAG_DONE);
    EXPECT("others-finish-while-reader-waits", pvm_probe(reader, TAG_GOT) == 0,
           "the reader returned before the pipe was written");
    static const char msg[] = "exactly these 29 bytes, no more";
    if (write(p[1], msg, sizeof msg) != (ssize_t)sizeof msg)
        return 2;
    pvm_recv(reader, TAG_GOT);
    int len = -1;
    char got[64] = "";
    pvm_upkint(&len, 1, 1);
    if (len > 0)
        pvm_upkbyte(got, len, 1);
    EXPECT("reader-gets-the-bytes", len == (int)sizeof msg && !memcmp(got, msg, sizeof msg),
           "got %d bytes '%.*s'", len, len > 0 ? len : 0, got);
    close(p[0]);
    close(p[1]);
    return 0;
}

/* ------------------------------------------------------------ calls */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pipe_calls(void)
{
    int p[2];
    char buf[100];
    if (pipe(p) != 0)
        exit(2);
    EXPECT("write-pipe", write(p[1], "0123456789", 10) == 10, "write");
    ssize_t n = read(p[0], buf, sizeof buf);
    EXPECT("read-partial", n == 10 && !memcmp(buf, "0123456789", 10), "read gave %zd", n);
    struct iovec v[2] = {{buf, 3}, {buf + 3, 3}};
    EXPECT("writev-pipe", writev(p[1], v, 2) == 6, "writev");
    EXPECT("readv-pipe", readv(p[0], v, 2) == 6, "readv");
    struct pollfd pf = {p[0], POLLIN, 0};
    double t0 = now_s();
    int r = poll(&pf, 1, 100);
    EXPECT("poll-timeout", r == 0 && now_s() - t0 >= 0.09, "poll gave %d after %.3f s", r,
           now_s() - t0);
    if (write(p[1], "x", 1) != 1)
        exit(2);
    r = poll(&pf, 1, 1000);
    EXPECT("poll-ready", r == 1 && (pf.revents & POLLIN), "poll gave %d revents %x", r,
           pf.revents);
    (void)read(p[0], buf, 1);
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(p[0], &rs);
    struct timeval tv = {0, 100000};
    r = select(p[0] + 1, &rs, NULL, NULL, &tv);
    EXPECT("select-timeout", r == 0 && !FD_ISSET(p[0], &rs), "select gave %d", r);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = p[0]}, out;
    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
    r = epoll_wait(ep, &out, 1, 100);
    EXPECT("epoll-timeout", r == 0, "epoll_wait gave %d", r);
    close(ep);
    close(p[1]);
    n = read(p[0], buf, sizeof buf);
    EXPECT("read-eof", n == 0, "read after the writer closed gave %zd", n);
    close(p[0]);
    errno = 0;
    n = read(p[0], buf, 1);
    EXPECT("read-ebadf", n == -1 && errno == EBADF, "read of a closed fd: %zd errno %d", n, errno);
}

static void socket_calls(void)
{
    int s[2];
    char buf[64];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0)
        exit(2);
    struct timeval tv = {0, 100000};
    setsockopt(s[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    errno = 0;
    double t0 = now_s();
    ssize_t n = recv(s[0], buf, sizeof buf, 0);
    EXPECT("recv-timeout", n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
                               now_s() - t0 >= 0.09,
           "recv gave %zd errno %d after %.3f s", n, errno, now_s() - t0);
    EXPECT("send", send(s[1], "hello", 5, 0) == 5, "send");
    n = recv(s[0], buf, sizeof buf, 0);
    EXPECT("recv-data", n == 5 && !memcmp(buf, "hello", 5), "recv gave %zd", n);
    /* a large send finishes whole while a reader task drains it */
    close(s[1]);
    n = recv(s[0], buf, sizeof buf, 0);
    EXPECT("recv-closed-peer", n == 0, "recv after the peer closed gave %zd", n);
    errno = 0;
    n = send(s[0], "x", 1, MSG_NOSIGNAL);
    EXPECT("send-epipe", n == -1 && errno == EPIPE, "send to a closed peer: %zd errno %d", n,
           errno);
    close(s[0]);
}

static void misc_calls(void)
{
    errno = 0;
    pid_t w = waitpid(-1, NULL, 0);
    EXPECT("waitpid-echild", w == -1 && errno == ECHILD, "waitpid gave %d errno %d", (int)w,
           errno);
    char path[] = "/tmp/upvm-blt-XXXXXX";
    int fd = mkstemp(path);
    EXPECT("fsync", fd >= 0 && write(fd, "abc", 3) == 3 && fsync(fd) == 0 && fdatasync(fd) == 0,
           "fsync");
    int fd2 = open(path, O_RDWR);
    EXPECT("flock-ex", flock(fd, LOCK_EX) == 0, "flock");
    errno = 0;
    int r = flock(fd2, LOCK_EX | LOCK_NB);
    EXPECT("flock-nb-busy", r == -1 && errno == EWOULDBLOCK, "flock gave %d errno %d", r, errno);
    flock(fd, LOCK_UN);
    EXPECT("flock-after-unlock", flock(fd2, LOCK_EX) == 0, "flock");
    flock(fd2, LOCK_UN);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    EXPECT("ofd-setlkw", fcntl(fd, F_OFD_SETLKW, &fl) == 0, "F_OFD_SETLKW");
    fl.l_type = F_UNLCK;
    fcntl(fd, F_OFD_SETLK, &fl);
    close(fd);
    close(fd2);
    unlink(path);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    struct timespec ts = {0, 100000000};
    errno = 0;
    r = sigtimedwait(&set, NULL, &ts);
    EXPECT("sigtimedwait-timeout", r == -1 && errno == EAGAIN, "sigtimedwait gave %d errno %d", r,
           errno);
    struct addrinfo *ai = NULL, hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    r = getaddrinfo("localhost", "80", &hints, &ai);
    EXPECT("getaddrinfo", r == 0 && ai, "getaddrinfo gave %d", r);
    if (ai)
        freeaddrinfo(ai);
    int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    struct {
        long type;
        char text[8];
    } m = {1, "sysv"}, got = {0, ""};
    EXPECT("msgsnd", q >= 0 && msgsnd(q, &m, sizeof m.text, 0) == 0, "msgsnd");
    ssize_t n = msgrcv(q, &got, sizeof got.text, 0, 0);
    EXPECT("msgrcv", n == (ssize_t)sizeof got.text && !strcmp(got.text, "sysv"), "msgrcv %zd", n);
    errno = 0;
    n = msgrcv(q, &got, sizeof got.text, 0, IPC_NOWAIT);
    EXPECT("msgrcv-nowait-empty", n == -1 && errno == ENOMSG, "msgrcv %zd errno %d", n, errno);
    msgctl(q, IPC_RMID, NULL);
}

/* The master waits in poll() for 300 ms while the ping task answers: the
 * node ran the others meanwhile (ping round trips counted in between
 * would need the master; instead the pinger counts alone). */
static void pinger_task(void)
{
    int parent = pvm_parent();
    int count = 0;
    double end = now_s() + 0.25;
    while (now_s() < end) {
        count++;
        upvm_yield();
    }
    send_int(parent, TAG_DONE, count);
}

static void node_runs_while_waiting(void)
{
    int t = spawn("pinger", "");
    struct pollfd none = {-1, 0, 0};
    (void)poll(&none, 1, 300); /* coupled: the pinger runs meanwhile */
    int count = recv_int(t, TAG_DONE);
    EXPECT("others-run-during-poll", count > 100, "the other task ran %d times", count);
}

static int calls_case(void)
{
    pipe_calls();
    socket_calls();
    misc_calls();
    node_runs_while_waiting();
    return 0;
}

/* ------------------------------------------------------------ migrate */

static void sleeper_task(void)
{
    send_int(pvm_parent(), TAG_READY, upvm_node_of(0));
    struct pollfd none = {-1, 0, 0};
    int r = poll(&none, 1, 400); /* coupled for 400 ms */
    recv_int(pvm_parent(), TAG_GO);
    send_int(pvm_parent(), TAG_DONE, r == 0 ? upvm_node_of(0) : -100 - r);
}

/* What pvm_tasks says t waits for ("" when it runs), or NULL. */
static const char *waits_of(int t)
{
    int n;
    struct pvmtaskinfo *ti;
    if (pvm_tasks(0, &n, &ti) < 0)
        return NULL;
    for (int i = 0; i < n; i++)
        if (ti[i].ti_tid == t)
            return upvm_tasks_waits(i);
    return NULL;
}

static int migrate_case(void)
{
    if (upvm_nodes() < 2)
        return 2;
    int t = spawn("sleeper", "");
    int from = recv_int(t, TAG_READY), to = from == 0 ? 1 : 0;
    const char *w = "";
    double deadline = now_s() + 10;
    while ((w = waits_of(t)) && !strstr(w, "kernel context") && now_s() < deadline)
        upvm_yield();
    EXPECT("listed-as-coupled", w && strstr(w, "poll() on a kernel context"), "waits: '%s'",
           w ? w : "(no such task)");
    int rc = upvm_migrate(t, to);
    EXPECT("migrate-after-decouple", rc == 0, "upvm_migrate gave %d: %s", rc,
           upvm_migrate_error());
    send_int(t, TAG_GO, 0);
    int node = recv_int(t, TAG_DONE);
    EXPECT("moved", node == to, "the task ran on node %d after its poll (from %d, to %d)", node,
           from, to);
    return 0;
}

/* ------------------------------------------------------------ kill */

static int kill_case(void)
{
    int p[2];
    int reader = start_reader(p);
    if (reader < 0)
        return 2;
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", p[0]);
    pvm_notify(PvmTaskExit, 99, 1, &reader);
    /* it is in read() (coupled) by now or soon: kill it either way */
    EXPECT("kill", pvm_kill(reader) == 0, "pvm_kill");
    int gone = -1;
    pvm_recv(-1, 99);
    pvm_upkint(&gone, 1, 1);
    EXPECT("killed-reader-exits", gone == reader, "exit notify for t%x", (unsigned)gone);
    EXPECT("no-bytes-read", pvm_probe(reader, TAG_GOT) == 0, "the reader sent what it read");
    /* the kernel context is free again: another reader works */
    int again = spawn("reader", fdarg);
    recv_int(again, TAG_READY);
    if (write(p[1], "z", 1) != 1)
        return 2;
    pvm_recv(again, TAG_GOT);
    int len = -1;
    pvm_upkint(&len, 1, 1);
    EXPECT("next-reader-reads", len == 1, "got %d", len);
    return 0;
}

int main(int argc, char **argv)
{
    self = argv[0];
    pvm_mytid();
    if (argc > 1 && !strcmp(argv[1], "compute")) {
        compute_task(atoi(argv[2]));
    } else if (argc > 1 && !strcmp(argv[1], "reader")) {
        reader_task(atoi(argv[2]));
    } else if (argc > 1 && !strcmp(argv[1], "sleeper")) {
        sleeper_task();
    } else if (argc > 1 && !strcmp(argv[1], "pinger")) {
        pinger_task();
    } else {
        const char *mode = argc > 1 ? argv[1] : "calls";
        int rc = !strcmp(mode, "pipe")      ? pipe_case()
                 : !strcmp(mode, "kill")    ? kill_case()
                 : !strcmp(mode, "migrate") ? migrate_case()
                                            : calls_case();
        puts(rc == 0 && failures == 0 ? "OK" : "WRONG");
        pvm_exit();
        return rc ? rc : failures != 0;
    }
    pvm_exit();
    return 0;
}
