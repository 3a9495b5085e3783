/*
 * ctl-raw.c - raw access to a job's control socket, for test-upvm-ctl.sh
 * (what `upvm` itself never sends).
 *
 *   ctl-raw send PATH TEXT    connect, send TEXT as it is and nothing more
 *                             (shutdown SHUT_WR), print the reply (all of
 *                             it, until the job closes)
 *   ctl-raw silent PATH MS    connect, send nothing for MS milliseconds,
 *                             then print what the job said meanwhile
 *   ctl-raw mute PATH TEXT    send TEXT, never read, close after 200 ms
 *   ctl-raw stale PATH        bind a socket at PATH and exit without
 *                             removing it: what a killed job leaves
 *   ctl-raw hold PATH N TEXT MS
 *                             open N connections at once (a connect the
 *                             job's backlog cannot take is not waited
 *                             for), send TEXT on each (nothing if empty:
 *                             idle clients; no newline: stalled ones),
 *                             print "held K" (K: those connected), keep
 *                             them open MS milliseconds, then print
 *                             "closed by the job C, the first told: LINE"
 *                             (C: those the job closed meanwhile)
 *
 * Exit status: 0, or 1 when PATH cannot be reached (the reason printed).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int die(const char *what, const char *path)
{
    fprintf(stderr, "ctl-raw: %s %s: %s\n", what, path, strerror(errno));
    return 1;
}

static int open_at(const char *path, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    snprintf(a->sun_path, sizeof a->sun_path, "%s", path);
    return socket(AF_UNIX, SOCK_STREAM, 0);
}

/* Print what comes until EOF, or until ms pass with nothing (ms >= 0). */
static void print_reply(int fd, int ms)
{
    char buf[1024];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (ms >= 0 && poll(&p, 1, ms) <= 0)
            return;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            return;
        fwrite(buf, 1, (size_t)n, stdout);
    }
}

/* Connected without waiting (-1: the backlog is full, or no job). */
static int connect_now(const struct sockaddr_un *a)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)a, sizeof *a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A connection the job closed (EOF or an error), and what it said first
 * into said (if empty). */
static bool closed_by_job(int fd, char *said, size_t len)
{
    char buf[512];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return true;
        if (n < 0)
            return false;
        buf[n] = '\0';
        if (!said[0])
            snprintf(said, len, "%s", buf);
    }
}

static int hold(const struct sockaddr_un *a, int n, const char *text, int ms)
{
    int *fds = calloc((size_t)n, sizeof *fds), k = 0;
    if (!fds)
        return 1;
    for (int i = 0; i < n; i++) {
        int fd = connect_now(a);
        if (fd < 0)
            continue;
        if (*text && write(fd, text, strlen(text)) < 0) {
            close(fd);
            continue;
        }
        fds[k++] = fd;
    }
    printf("held %d\n", k);
    fflush(stdout);
    if (ms > 0)
        (void)poll(NULL, 0, ms); /* the test's window: what it measures happens meanwhile */
    int gone = 0;
    char said[512] = "";
    for (int i = 0; i < k; i++) {
        gone += closed_by_job(fds[i], said, sizeof said);
        close(fds[i]);
    }
    printf("closed by the job %d, the first told: %s", gone, said[0] ? said : "-\n");
    free(fds);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ctl-raw send|silent|mute|stale|hold PATH [N] [TEXT|MS] [MS]\n");
        return 2;
    }
    struct sockaddr_un a;
    int fd = open_at(argv[2], &a);
    if (fd < 0)
        return die("socket for", argv[2]);
    if (!strcmp(argv[1], "stale"))
        return bind(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : die("bind", argv[2]);
    if (!strcmp(argv[1], "hold") && argc == 6) {
        close(fd);
        return hold(&a, atoi(argv[3]), argv[4], atoi(argv[5]));
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        return die("connect to", argv[2]);
    const char *text = argc > 3 ? argv[3] : "";
    if (!strcmp(argv[1], "silent")) {
        print_reply(fd, atoi(text));
    } else if (write(fd, text, strlen(text)) < 0) {
        return die("write to", argv[2]);
    } else if (!strcmp(argv[1], "mute")) {
        usleep(200000);
    } else {
        (void)shutdown(fd, SHUT_WR);
        print_reply(fd, -1);
    }
    close(fd);
    return 0;
}
