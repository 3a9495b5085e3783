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
 *   - a request to node1 (pvm_pstat) waits, and after a while (100 ms
 *     here, UPVM_TEST_RPC_SLOW_MS; 10 s in earnest) says so on stderr;
 * then a releaser task writes a byte into the FIFO: the blocker returns
 * and exits, and the notification must come.  Prints OK; a failed check
 * exits 1 with a line.
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

/* Whether the file at path holds the slow-answer line (rpc.c). */
static int has_line(const char *path)
{
    char buf[4096] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, "node 1 has not answered a request") != NULL;
}

/* On node 0: once the slow-answer line is in main's stderr file (20 s at
 * most), a byte into the FIFO lets the blocker go. */
static int releaser(int argc, char **argv)
{
    char path[256] = "", errpath[300];
    check(pvm_recv(-1, TAG_PATH) > 0 && pvm_upkstr(path) == 0, "the releaser's paths");
    snprintf(errpath, sizeof errpath, "%s.err", path);
    for (int i = 0; i < 2000 && !has_line(errpath); i++)
        (void)upvm_sleep_ns(10 * 1000 * 1000);
    int fd = open(path, O_WRONLY | O_NONBLOCK);
    check(fd >= 0 && write(fd, "x", 1) == 1, "release the blocker");
    close(fd);
    return 0;
}
UPVM_TASK("releaser", releaser)

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

static const char *fifo_path; /* main's, removed at its exit */

static void remove_files(void)
{
    char errpath[300];
    if (!fifo_path)
        return;
    snprintf(errpath, sizeof errpath, "%s.err", fifo_path);
    unlink(errpath);
    unlink(fifo_path);
}

int main(void)
{
    setenv("UPVM_TEST_RPC_SLOW_MS", "100", 1); /* before the first request */
    static char path[256];
    /* in the working directory (the build tree): other tests watch /tmp */
    snprintf(path, sizeof path, "upvm-blocked-%d.fifo", (int)getpid());
    check(mkfifo(path, 0600) == 0, "mkfifo");
    fifo_path = path;
    atexit(remove_files); /* also when a check fails */
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

    /* A request to node1 now waits: after UPVM_TEST_RPC_SLOW_MS (100 ms
     * here, set at the start: 10 s in earnest) it is said on stderr, which
     * goes to a file meanwhile; a releaser task on this node lets the
     * blocker go once the line is there (or after 20 s: then this fails). */
    char errpath[300];
    snprintf(errpath, sizeof errpath, "%s.err", path);
    int saved = dup(2), cap = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
    check(saved >= 0 && cap >= 0 && dup2(cap, 2) == 2, "stderr to a file");
    int releaser;
    check(pvm_spawn("releaser", NULL, PvmTaskHost, "node0", 1, &releaser) == 1,
          "spawn the releaser");
    check(pvm_initsend(PvmDataDefault) > 0 && pvm_pkstr(path) == 0 &&
          pvm_send(releaser, TAG_PATH) == 0, "send the releaser the paths");
    (void)pvm_pstat(tid); /* waits for node1, and says so */
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    check(has_line(errpath), "a request unanswered for long is said on stderr");
    close(cap);
    unlink(errpath);
    unlink(path);
    struct timeval long_wait = {20, 0};
    check(pvm_trecv(-1, TAG_EXIT, &long_wait) > 0, "the blocker's PvmTaskExit");
    printf("OK\n");
    return 0;
}
