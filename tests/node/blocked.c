/*
 * blocked.c - a node whose task blocks in a system call stalls that node
 * only: another node's task can still ask to be told of that task's exit
 * (pvm_notify), and its own timeouts fire (UPVM_NODES=2, thread mode).
 *
 * main (node 0) makes a FIFO and spawns a "blocker" on node1, which opens
 * it and blocks node1 in read(2) (a plain system call: nothing in UPVM
 * runs on node1 until it returns).  main waits until node1's process is in
 * that read (/proc/PID/syscall), then
 *   - pvm_notify(PvmTaskExit) on the blocker must return (it used to wait
 *     for node1's answer, for ever);
 *   - pvm_trecv of that notification with a 200 ms timeout must time out;
 * then writes a byte into the FIFO: the blocker returns and exits, and the
 * notification must come.  Prints OK; a failed check exits 1 with a line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <upvm.h>

#define TAG_EXIT 60
#define TAG_PATH 61

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "blocked: FAILED: %s\n", what);
        fflush(NULL);
        exit(1);
    }
}

static int blocker(int argc, char **argv)
{
    char path[256] = "";
    check(pvm_recv(-1, TAG_PATH) > 0 && pvm_upkstr(path) == 0, "the FIFO's path");
    /* read and write: the open does not wait for a writer, and the read
     * never sees end-of-file (this end is a writer too) */
    int fd = open(path, O_RDWR);
    check(fd >= 0, "open the FIFO");
    char c;
    (void)read(fd, &c, 1); /* blocks node1 until main writes */
    close(fd);
    return 0;
}
UPVM_TASK("blocker", blocker)

/* Whether process pid is in read(2) now (the first field of
 * /proc/PID/syscall is the number of the call it is blocked in). */
static int in_read(int pid)
{
    char name[64], buf[64] = "";
    snprintf(name, sizeof name, "/proc/%d/syscall", pid);
    FILE *f = fopen(name, "r");
    if (!f)
        return 0;
    int ok = fgets(buf, sizeof buf, f) && strncmp(buf, "0 ", 2) == 0;
    fclose(f);
    return ok;
}

static void wait_in_read(int pid)
{
    for (int i = 0; i < 2000; i++) { /* 20 s at most */
        if (in_read(pid))
            return;
        (void)upvm_sleep_ns(10 * 1000 * 1000); /* (node 0 goes on meanwhile) */
    }
    check(0, "node1 never blocked in read(2)");
}

int main(void)
{
    char path[256];
    /* in the working directory (the build tree): other tests watch /tmp */
    snprintf(path, sizeof path, "upvm-blocked-%d.fifo", (int)getpid());
    check(mkfifo(path, 0600) == 0, "mkfifo");
    int tid, n;
    struct pvmtaskinfo *ti;
    check(pvm_spawn("blocker", NULL, PvmTaskHost, "node1", 1, &tid) == 1, "spawn on node1");
    int rc = pvm_tasks(tid, &n, &ti); /* (node1 answers: its task waits for the path) */
    if (rc != 0 || n != 1)
        fprintf(stderr, "blocked: pvm_tasks: %d, %d task(s)\n", rc, n);
    check(rc == 0 && n == 1, "pvm_tasks of the blocker");
    int pid = ti[0].ti_pid;
    check(pvm_initsend(PvmDataDefault) > 0 && pvm_pkstr(path) == 0 && pvm_send(tid, TAG_PATH) == 0,
          "send the FIFO's path");
    wait_in_read(pid);

    check(pvm_notify(PvmTaskExit, TAG_EXIT, 1, &tid) == 0, "pvm_notify returns");
    struct timeval short_wait = {0, 200 * 1000};
    check(pvm_trecv(-1, TAG_EXIT, &short_wait) == 0, "pvm_trecv times out");

    int fd = open(path, O_WRONLY | O_NONBLOCK);
    check(fd >= 0 && write(fd, "x", 1) == 1, "release the blocker");
    close(fd);
    unlink(path);
    struct timeval long_wait = {20, 0};
    check(pvm_trecv(-1, TAG_EXIT, &long_wait) > 0, "the blocker's PvmTaskExit");
    printf("OK\n");
    return 0;
}
