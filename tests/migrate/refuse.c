/*
 * refuse.c - refused migrations give their error and their reason, and
 * change nothing (test-migrate.sh refuse).
 *
 *   refuse DIR       the master (node 0), DIR a directory for files
 *   refuse child     a process-mode task on node1 that does what the
 *                    master asks (open files, a socket, a helper, ...)
 *
 * Checked, each followed by a message exchange with the task and a look at
 * upvm_node_of (still where it was):
 *   - a thread-mode task (UPVM_TASK, spawned by name; and one started with
 *     upvm_task_spawn_func): PvmNotImpl, the reason says "thread"; also
 *     when it asks to move itself;
 *   - a task holding a FILE (fopen) or a file descriptor (open), asked by
 *     another task and by itself: PvmNotImpl, the reason names the file;
 *     the file stays usable; once closed, the task moves;
 *   - a task holding a socket: PvmNotImpl, the reason says "socket"; once
 *     closed, the task moves;
 *   - the same for a pipe, a socketpair, dup, dup2, fcntl(F_DUPFD),
 *     mkstemp, tmpfile, opendir, eventfd and epoll_create1 (the reason names
 *     the pipe, socket, file or directory where there is one);
 *   - a process-mode task whose globals a thread-mode helper of its own
 *     shares: refused, or moved with the globals still shared (the helper
 *     sees the task's writes); once the helper has ended, it moves;
 *   - a node that is no node (3 of 3, -1, 64, 1000): PvmBadParam;
 *   - a tid that is no tid (-5): PvmBadParam; a task that has exited, a
 *     well-formed tid nobody has: PvmNoTask, and upvm_node_of is -1;
 *   - to the node it is on: 0, nothing moves;
 *   - the job's first task (started from the shell; docs/migration.md:
 *     it does not move yet), moving itself or moved by another: PvmNotImpl;
 * and upvm_migrate_error() is a sentence naming the task after every
 * refusal (PvmNoTask, PvmNotImpl, PvmBadParam for a node), "" after every
 * success.
 */
#include <errno.h>
#include <fcntl.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <upvm.h>

#include "mtest.h"

enum {
    T_CMD = 1,
    T_REPLY,
    T_EXITED,
};

enum {
    C_PING = 1,
    C_FOPEN,
    C_FWRITE,
    C_FCLOSE,
    C_OPEN,
    C_CLOSE,
    C_SOCKET,
    C_SOCKCLOSE,
    C_SELFMOVE,
    C_HELPER,
    C_GLOBAL,
    C_MOVEOTHER,
    C_HOLD,
    C_RELEASE,
    C_EXIT,
};

/* Kernel objects a task can hold, other than the FILE, descriptor and
 * socket checked one by one: each must pin the task while it is open. */
enum { H_PIPE, H_SOCKETPAIR, H_DUP, H_DUP2, H_FCNTL_DUPFD, H_MKSTEMP, H_TMPFILE, H_OPENDIR,
       H_EVENTFD, H_EPOLL, NHOLD };
static const char *const hold_name[NHOLD] = {
    "pipe()", "socketpair()", "dup(1)", "dup2(1, 77)", "fcntl(1, F_DUPFD, 90)",
    "mkstemp()", "tmpfile()", "opendir()", "eventfd()", "epoll_create1()"};
/* what the reason should mention (NULL: no check beyond naming the task) */
static const char *const hold_why[NHOLD] = {
    "pipe", "socket", NULL, NULL, NULL, "held-temp", NULL, "held-dir", NULL, NULL};

static int g_shared; /* a global of this copy of the program */

struct reply {
    int rc, a, b;
    char text[512];
};

static void reply(int to, int rc, int a, int b, const char *text)
{
    int v[3] = {rc, a, b};
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, 3, 1);
    pvm_pkstr((char *)(text ? text : ""));
    pvm_send(to, T_REPLY);
}

/* Sends a command (int argument, optional string) and waits for the reply. */
static struct reply ask(int tid, int cmd, int arg, const char *str)
{
    struct reply r = {-999, 0, 0, ""};
    int v[2] = {cmd, arg};
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, 2, 1);
    pvm_pkstr((char *)(str ? str : ""));
    pvm_send(tid, T_CMD);
    int w[3];
    if (pvm_recv(tid, T_REPLY) > 0 && pvm_upkint(w, 3, 1) >= 0) {
        r.rc = w[0];
        r.a = w[1];
        r.b = w[2];
        pvm_upkstr(r.text);
    }
    return r;
}

/* ------------------------------------------------------------ servers */

/* What a thread-mode helper does (spawned by name or by function). */
static void helper_loop(void)
{
    int master = pvm_parent();
    for (;;) {
        int v[2] = {0, 0};
        char str[512] = "";
        if (pvm_recv(-1, T_CMD) <= 0)
            return;
        int bytes, tag, src;
        pvm_bufinfo(pvm_getrbuf(), &bytes, &tag, &src);
        pvm_upkint(v, 2, 1);
        pvm_upkstr(str);
        switch (v[0]) {
        case C_PING:
            reply(src, v[1] + 1, upvm_node_of(0), 0, NULL);
            break;
        case C_GLOBAL:
            reply(src, g_shared, upvm_node_of(0), 0, NULL);
            break;
        case C_SELFMOVE: {
            int rc = upvm_migrate(0, v[1]);
            reply(src, rc, upvm_node_of(0), 0, upvm_migrate_error());
            break;
        }
        case C_EXIT:
            reply(src, 0, 0, 0, NULL);
            return;
        default:
            reply(src, -1, 0, 0, "unknown command");
        }
        (void)master;
    }
}

static int helper_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    helper_loop();
    pvm_exit();
    return 0;
}
UPVM_TASK("helper", helper_main)

static void helper_fn(int ordinal, void *arg)
{
    (void)ordinal;
    (void)arg;
    helper_loop();
    pvm_exit();
}

static int child(void)
{
    mt_role = "child";
    FILE *f = NULL;
    int fd = -1, sock = -1;
    char path[512] = "";
    for (;;) {
        int v[2] = {0, 0};
        char str[512] = "";
        if (pvm_recv(-1, T_CMD) <= 0)
            return 1;
        int bytes, tag, src;
        pvm_bufinfo(pvm_getrbuf(), &bytes, &tag, &src);
        pvm_upkint(v, 2, 1);
        pvm_upkstr(str);
        switch (v[0]) {
        case C_PING:
            reply(src, v[1] + 1, upvm_node_of(0), 0, NULL);
            break;
        case C_FOPEN:
            snprintf(path, sizeof path, "%s", str);
            f = fopen(path, "w");
            if (f) {
                fputs("before\n", f);
                fflush(f);
            }
            reply(src, f ? 0 : -errno, 0, 0, NULL);
            break;
        case C_FWRITE: {
            int ok = f && fputs("after\n", f) >= 0 && fflush(f) == 0;
            reply(src, ok ? 0 : -1, 0, 0, NULL);
            break;
        }
        case C_FCLOSE: {
            int rc = f ? fclose(f) : -1;
            f = NULL;
            char buf[64] = "";
            FILE *r = fopen(path, "r");
            size_t n = r ? fread(buf, 1, sizeof buf - 1, r) : 0;
            buf[n] = '\0';
            if (r)
                fclose(r);
            reply(src, rc == 0 && strcmp(buf, "before\nafter\n") == 0 ? 0 : -1, 0, 0, buf);
            break;
        }
        case C_OPEN:
            fd = open(str, O_CREAT | O_WRONLY | O_TRUNC, 0600);
            reply(src, fd >= 0 && write(fd, "raw\n", 4) == 4 ? 0 : -1, 0, 0, NULL);
            break;
        case C_CLOSE: {
            int ok = fd >= 0 && write(fd, "more\n", 5) == 5 && close(fd) == 0;
            fd = -1;
            reply(src, ok ? 0 : -1, 0, 0, NULL);
            break;
        }
        case C_SOCKET:
            sock = socket(AF_UNIX, SOCK_DGRAM, 0);
            reply(src, sock >= 0 ? 0 : -errno, 0, 0, NULL);
            break;
        case C_SOCKCLOSE:
            reply(src, sock >= 0 && close(sock) == 0 ? 0 : -1, 0, 0, NULL);
            sock = -1;
            break;
        case C_SELFMOVE: {
            int rc = upvm_migrate(0, v[1]);
            reply(src, rc, upvm_node_of(0), 0, upvm_migrate_error());
            break;
        }
        case C_MOVEOTHER: {
            int rc = upvm_migrate(v[1], 2);
            reply(src, rc, upvm_node_of(v[1]), 0, upvm_migrate_error());
            break;
        }
        case C_HOLD: {
            static int hfd[2] = {-1, -1};
            static FILE *hfp;
            static DIR *hdp;
            static char tpath[600];
            int ok = 0;
            if (v[1] >= 0) { /* hold */
                switch (v[1]) {
                case H_PIPE: ok = pipe(hfd) == 0; break;
                case H_SOCKETPAIR: ok = socketpair(AF_UNIX, SOCK_STREAM, 0, hfd) == 0; break;
                case H_DUP: ok = (hfd[0] = dup(1)) >= 0; break;
                case H_DUP2: ok = (hfd[0] = dup2(1, 77)) == 77; break;
                case H_FCNTL_DUPFD: ok = (hfd[0] = fcntl(1, F_DUPFD, 90)) >= 90; break;
                case H_MKSTEMP:
                    snprintf(tpath, sizeof tpath, "%s/held-temp.XXXXXX", str);
                    ok = (hfd[0] = mkstemp(tpath)) >= 0;
                    break;
                case H_TMPFILE: ok = (hfp = tmpfile()) != NULL; break;
                case H_OPENDIR:
                    snprintf(tpath, sizeof tpath, "%s/held-dir", str);
                    mkdir(tpath, 0700);
                    ok = (hdp = opendir(tpath)) != NULL;
                    break;
                case H_EVENTFD: ok = (hfd[0] = eventfd(0, 0)) >= 0; break;
                case H_EPOLL: ok = (hfd[0] = epoll_create1(0)) >= 0; break;
                }
            } else if (v[1] == -2) { /* forget it (it moved with it: gone) */
                hfd[0] = hfd[1] = -1;
                hfp = NULL;
                hdp = NULL;
                ok = 1;
            } else { /* release what is held */
                ok = 1;
                for (int i = 0; i < 2; i++)
                    if (hfd[i] >= 0)
                        ok &= close(hfd[i]) == 0, hfd[i] = -1;
                if (hfp)
                    ok &= fclose(hfp) == 0, hfp = NULL;
                if (hdp)
                    ok &= closedir(hdp) == 0, hdp = NULL;
            }
            reply(src, ok ? 0 : -errno, 0, 0, NULL);
            break;
        }
        case C_HELPER: {
            int tid = -1;
            int n = pvm_spawn("helper", NULL, PvmTaskDefault, "", 1, &tid);
            reply(src, n == 1 ? tid : -1, 0, 0, NULL);
            break;
        }
        case C_GLOBAL:
            g_shared += v[1];
            reply(src, g_shared, upvm_node_of(0), 0, NULL);
            break;
        case C_EXIT:
            reply(src, 0, 0, 0, NULL);
            pvm_exit();
            return 0;
        default:
            reply(src, -1, 0, 0, "unknown command");
        }
    }
}

/* ------------------------------------------------------------ master */

static int pings;

/* The task answers, from the node it should be on. */
static void still_works(int tid, int node, const char *after)
{
    int v = 1000 + pings++;
    struct reply r = ask(tid, C_PING, v, NULL);
    if (r.rc != v + 1)
        MT_FAIL("after %s: t%x does not answer (%d)", after, tid, r.rc);
    else if (r.a != node)
        MT_FAIL("after %s: t%x answers from node %d, expected %d", after, tid, r.a, node);
    if (upvm_node_of(tid) != node)
        MT_FAIL("after %s: upvm_node_of(t%x) = %d, expected %d", after, tid, upvm_node_of(tid), node);
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

/* A refusal: rc, and a reason that names the task (its tid in hex) and
 * contains `why` (NULL: any). */
static void refused(const char *what, int rc, int want, const char *msg, int tid, const char *why)
{
    if (rc != want) {
        MT_FAIL("%s: returned %d, expected %d (message \"%s\")", what, rc, want, msg);
        return;
    }
    char hex[16];
    snprintf(hex, sizeof hex, "%x", tid);
    if (!msg || !msg[0])
        MT_FAIL("%s: returned %d, and upvm_migrate_error() is empty", what, rc);
    else if (tid > 0 && !contains_ci(msg, hex))
        MT_FAIL("%s: the reason does not name the task t%x: \"%s\"", what, tid, msg);
    else if (why && !contains_ci(msg, why))
        MT_FAIL("%s: the reason does not mention \"%s\": \"%s\"", what, why, msg);
    else
        printf("%s: %d, \"%s\"\n", what, rc, msg);
    fflush(stdout);
}

/* upvm_migrate from here, expecting a refusal. */
static void refuse(const char *what, int tid, int node, int want, const char *why)
{
    int rc = upvm_migrate(tid, node);
    refused(what, rc, want, upvm_migrate_error(), tid, why);
}

/* upvm_migrate from here, expecting a success; upvm_node_of must then
 * name the node at once.  True if it moved. */
static int move_ok(const char *what, int tid, int node)
{
    int rc = upvm_migrate(tid, node);
    if (rc != 0) {
        MT_FAIL("%s: upvm_migrate(t%x, %d): %d: %s", what, tid, node, rc, upvm_migrate_error());
        return 0;
    }
    if (upvm_migrate_error()[0])
        MT_FAIL("%s: upvm_migrate_error() after a success: \"%s\"", what, upvm_migrate_error());
    int now = upvm_node_of(tid);
    if (now != node)
        MT_FAIL("%s: upvm_migrate(t%x, %d) returned 0, then upvm_node_of(t%x) = %d", what, tid,
                node, tid, now);
    printf("%s: moved to node %d\n", what, node);
    fflush(stdout);
    return 1;
}

static void thread_mode(int tid, const char *how)
{
    char what[128];
    int node = upvm_node_of(tid);
    if (node != upvm_node_of(0))
        MT_FAIL("%s: the thread-mode task is on node %d, its spawner on %d", how, node, upvm_node_of(0));
    still_works(tid, node, "spawning it");
    snprintf(what, sizeof what, "%s: moved by the master", how);
    refuse(what, tid, (node + 1) % 3, PvmNotImpl, "thread");
    still_works(tid, node, what);
    snprintf(what, sizeof what, "%s: moving itself", how);
    struct reply r = ask(tid, C_SELFMOVE, (node + 2) % 3, NULL);
    refused(what, r.rc, PvmNotImpl, r.text, tid, "thread");
    still_works(tid, node, what);
    ask(tid, C_EXIT, 0, NULL);
}

static int master(const char *dir)
{
    mt_role = "master";
    int me = pvm_mytid();
    if (upvm_nodes() != 3) {
        printf("FAIL: upvm_nodes() = %d: run with UPVM_NODES=3\n", upvm_nodes());
        return 1;
    }
    MT_CHECK_EQ(upvm_node_of(0), 0);
    MT_CHECK_EQ(upvm_node_of(me), 0);

    /* thread mode */
    int h;
    if (pvm_spawn("helper", NULL, PvmTaskDefault, "", 1, &h) != 1)
        MT_FAIL("spawn helper");
    else
        thread_mode(h, "thread-mode task spawned by name (UPVM_TASK)");
    if (upvm_task_spawn_func(helper_fn, NULL, 1, &h) != 1)
        MT_FAIL("upvm_task_spawn_func");
    else
        thread_mode(h, "thread-mode task of upvm_task_spawn_func");

    /* a process-mode child on node1 */
    char *args[] = {"child", NULL};
    int c;
    if (pvm_spawn("refuse", args, PvmTaskHost, "node1", 1, &c) != 1) {
        printf("FAIL: spawn child on node1\n");
        return 1;
    }
    still_works(c, 1, "spawning it");

    /* to where it is: 0, nothing moves; also the master itself */
    move_ok("to the node it is on", c, 1);
    still_works(c, 1, "moving it to its own node");
    move_ok("the master to its own node", 0, 0);
    MT_CHECK_EQ(upvm_node_of(0), 0);
    /* the job's first task, started from the shell, moves like any task:
     * by itself, by its tid, and by another task (node 0 gets its exit
     * status wherever it ends) */
    move_ok("the job's first task, moving itself", 0, 1);
    move_ok("the job's first task, moving itself by its tid", me, 0);
    {
        struct reply rr = ask(c, C_MOVEOTHER, me, NULL); /* to node 2 */
        if (rr.rc != 0)
            MT_FAIL("the job's first task, moved by another task: %d: %s", rr.rc, rr.text);
        MT_CHECK_EQ(upvm_node_of(0), 2);
        still_works(c, 1, "moving the master");
        move_ok("the job's first task, home again", 0, 0);
    }

    /* nodes that are not */
    int bad_nodes[] = {3, -1, 64, 1000};
    for (int i = 0; i < 4; i++) {
        char what[64];
        snprintf(what, sizeof what, "to node %d", bad_nodes[i]);
        refuse(what, c, bad_nodes[i], PvmBadParam, NULL);
        still_works(c, 1, what);
    }
    /* a tid that is no tid */
    {
        int rc = upvm_migrate(-5, 2);
        if (rc != PvmBadParam)
            MT_FAIL("upvm_migrate(-5, 2): %d, expected PvmBadParam", rc);
        else if (!upvm_migrate_error()[0])
            MT_FAIL("upvm_migrate(-5, 2): upvm_migrate_error() is empty");
        else
            printf("tid -5: %d, \"%s\"\n", rc, upvm_migrate_error());
        MT_CHECK_EQ(upvm_node_of(-5), -1);
    }

    /* an open FILE: refused when asked by another task and by itself */
    char path[512];
    snprintf(path, sizeof path, "%s/held-file.txt", dir);
    struct reply r = ask(c, C_FOPEN, 0, path);
    MT_CHECK_EQ(r.rc, 0);
    refuse("holding a FILE, moved by the master", c, 2, PvmNotImpl, "held-file.txt");
    still_works(c, 1, "refusing it for a FILE");
    MT_CHECK_EQ(ask(c, C_FWRITE, 0, NULL).rc, 0);
    r = ask(c, C_SELFMOVE, 2, NULL);
    refused("holding a FILE, moving itself", r.rc, PvmNotImpl, r.text, c, "held-file.txt");
    still_works(c, 1, "refusing it to move itself");
    r = ask(c, C_FCLOSE, 0, NULL);
    if (r.rc != 0)
        MT_FAIL("the FILE after the refusals: \"%s\"", r.text);
    move_ok("the FILE closed", c, 2);
    still_works(c, 2, "moving it once its FILE was closed");

    /* an open file descriptor */
    snprintf(path, sizeof path, "%s/held-raw.bin", dir);
    MT_CHECK_EQ(ask(c, C_OPEN, 0, path).rc, 0);
    refuse("holding a file descriptor", c, 0, PvmNotImpl, "held-raw.bin");
    still_works(c, 2, "refusing it for a file descriptor");
    MT_CHECK_EQ(ask(c, C_CLOSE, 0, NULL).rc, 0);
    move_ok("the descriptor closed", c, 0);
    still_works(c, 0, "moving it once its descriptor was closed");

    /* a socket */
    MT_CHECK_EQ(ask(c, C_SOCKET, 0, NULL).rc, 0);
    refuse("holding a socket", c, 1, PvmNotImpl, "socket");
    still_works(c, 0, "refusing it for a socket");
    MT_CHECK_EQ(ask(c, C_SOCKCLOSE, 0, NULL).rc, 0);
    move_ok("the socket closed", c, 1);
    still_works(c, 1, "moving it once its socket was closed");

    /* the other kernel objects, each on its own */
    int cur = 1;
    for (int k = 0; k < NHOLD; k++) {
        char what[128];
        int other = (cur + 1 + k % 2) % 3;
        snprintf(what, sizeof what, "holding %s", hold_name[k]);
        r = ask(c, C_HOLD, k, dir);
        if (r.rc != 0) {
            MT_FAIL("%s in the child: %d", hold_name[k], r.rc);
            continue;
        }
        int rc = upvm_migrate(c, other);
        refused(what, rc, PvmNotImpl, upvm_migrate_error(), c, hold_why[k]);
        if (rc == 0) {
            /* it moved, and what it held is not there (a FILE or DIR of
             * libc's would be freed in another process's heap): forget it */
            ask(c, C_HOLD, -2, NULL);
            cur = other;
            continue;
        }
        still_works(c, cur, what);
        MT_CHECK_EQ(ask(c, C_HOLD, -1, NULL).rc, 0);
        snprintf(what, sizeof what, "%s closed", hold_name[k]);
        if (move_ok(what, c, other))
            cur = other;
        still_works(c, cur, what);
    }
    if (cur != 1) {
        move_ok("back to node 1", c, 1);
        still_works(c, 1, "moving it back to node 1");
    }

    /* tasks that are not */
    int e;
    char *eargs[] = {"exits", NULL};
    if (pvm_spawn("refuse", eargs, PvmTaskHost, "node2", 1, &e) == 1) {
        pvm_notify(PvmTaskExit, T_EXITED, 1, &e);
        pvm_recv(-1, T_EXITED);
        refuse("a task that has exited", e, 1, PvmNoTask, NULL);
        MT_CHECK_EQ(upvm_node_of(e), -1);
    } else {
        MT_FAIL("spawn a task that exits");
    }
    int nobody = (c & ~0x3ffff) | 0x3fff0;
    refuse("a tid nobody has", nobody, 2, PvmNoTask, NULL);
    MT_CHECK_EQ(upvm_node_of(nobody), -1);
    still_works(c, 1, "the refusals for other tids");

    /* last, as it may crash: */
    /* a thread-mode helper of the child shares the child's globals */
    r = ask(c, C_HELPER, 0, NULL);
    int hc = r.rc;
    if (hc <= 0) {
        MT_FAIL("the child could not spawn its helper");
    } else {
        still_works(hc, 1, "the child spawned a helper");
        refuse("the child's thread-mode helper", hc, 2, PvmNotImpl, "thread");
        int rc = upvm_migrate(c, 2);
        int cnode = rc == 0 ? 2 : 1;
        if (rc == 0)
            printf("the child, whose globals its helper shares: moved to node 2\n");
        else
            refused("the child, whose globals its helper shares", rc, PvmNotImpl,
                    upvm_migrate_error(), c, NULL);
        still_works(c, cnode, "moving a task with a thread-mode helper");
        still_works(hc, 1, "moving a task with a thread-mode helper");
        r = ask(c, C_GLOBAL, 5, NULL);
        struct reply rh = ask(hc, C_GLOBAL, 0, NULL);
        if (r.rc != 5 || rh.rc != 5)
            MT_FAIL("the global the child and its helper share: the child wrote %d, the helper "
                    "reads %d (upvm_migrate returned %d)",
                    r.rc, rh.rc, rc);
        ask(hc, C_EXIT, 0, NULL);
        for (int i = 0; i < 100 && upvm_node_of(hc) >= 0; i++)
            usleep(10000);
        move_ok("the child once its helper has ended", c, 0);
        still_works(c, 0, "moving it once its helper had ended");
        r = ask(c, C_GLOBAL, 1, NULL);
        MT_CHECK_EQ(r.rc, 6);
    }

    ask(c, C_EXIT, 0, NULL);
    printf("%s\n", mt_failures ? "FAILED" : "OK");
    pvm_exit();
    return mt_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    if (argc > 1 && strcmp(argv[1], "exits") == 0) {
        pvm_exit();
        return 0;
    }
    if (argc != 2) {
        printf("usage: refuse DIR\n");
        return 2;
    }
    return master(argv[1]);
}
