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
 *
 * Exit status: 0, or 1 when PATH cannot be reached (the reason printed).
 */
#include <errno.h>
#include <poll.h>
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

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ctl-raw send|silent|mute|stale PATH [TEXT|MS]\n");
        return 2;
    }
    struct sockaddr_un a;
    int fd = open_at(argv[2], &a);
    if (fd < 0)
        return die("socket for", argv[2]);
    if (!strcmp(argv[1], "stale"))
        return bind(fd, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : die("bind", argv[2]);
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
