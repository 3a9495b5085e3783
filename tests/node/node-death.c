/*
 * node-death.c - a thread-mode PVM job of three nodes (UPVM_NODES=3) for
 * test-node-death.sh, which kills its nodes, its launcher, or lets it end.
 *
 *   node-death MODE [MARK]
 *
 * Every mode but "deadlock" starts the same job: main (node 0) spawns two
 * "sleeper" tasks on node1 and one on node2.  Each sleeper reports its node
 * process's pid, then naps in 5 ms steps (so no node is ever idle, and no
 * deadlock is ever found) until main tells it to finish.  main prints
 *
 *   node N pid P          the process that is node N (for the driver's kill)
 *   task T on node N      every task spawned
 *   READY                 set up: the driver may kill now
 *
 * then, by MODE:
 *   watch     pvm_notify PvmTaskExit on node1's tasks and PvmHostDelete on
 *             node1; wait (at most 20 s) for the three notifications, print
 *             "NOTIFY <what> <tid or host> AT <realtime ms>" for each, then
 *             show that the job goes on: a round trip with node2's sleeper
 *             and a fresh task spawned on node2; print OK; exit 0.
 *   wait      nobody watches: main just waits for a message that never
 *             comes (the driver kills a node or the launcher).
 *   orphans   nobody watches, and main returns 0 at once (printing
 *             "MAIN RETURNS" first): the sleepers
 *             nap on (the job goes on) until the driver kills a node.
 *   normal    every sleeper finishes; exit 0.
 *   fail      the same, then main returns 3: the job's exit status is 3.
 *   crash     one more task on node1, "crasher", dereferences a bad
 *             pointer once READY is printed: node1 dies of SIGSEGV with
 *             nobody watching.
 *   deadlock  two "blocker" tasks (node1, node2) and main all wait for
 *             messages nobody sends.
 *   print     no sleepers: a "printer" task on node1 and one on node2,
 *             and main, each write 20 lines to stdout ("tTID line I"),
 *             yielding between lines; then the printers tell main they are
 *             done; exit 0.
 *   chatter   the same, forever (until a write fails: SIGPIPE when the
 *             reader of a pipe went away).
 *   halt      the sleepers, and a "halter" task on node2 (tc0002) that
 *             calls pvm_halt once READY is printed: the whole job ends.
 *
 * MARK is not read: it is a unique word in every node's command line, so
 * the driver can find the job's processes (pgrep -f).
 *
 * Built with upvmcc -DNODE_DEATH_PROCESS_MODE, the same job runs in process
 * mode (upvm run --nodes 3 node-death-proc MODE MARK): the tasks are copies
 * of the program, spawned by file name, started as "PROGRAM sleeper" etc.
 */
#include <pvm3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#define TAG_PID 1     /* sleeper -> main: its pid */
#define TAG_FINISH 2  /* main -> sleeper */
#define TAG_DONE 3    /* sleeper -> main */
#define TAG_GO 4      /* main -> crasher, halter */
#define TAG_EXIT 50   /* PvmTaskExit notifications */
#define TAG_HOST 51   /* PvmHostDelete notifications */
#define TAG_NEVER 99

static void fail(const char *what)
{
    fprintf(stderr, "node-death: %s\n", what);
    fflush(NULL);
    exit(2);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void send_int(int tid, int tag, int v)
{
    if (pvm_initsend(PvmDataDefault) < 0 || pvm_pkint(&v, 1, 1) < 0 || pvm_send(tid, tag) < 0)
        fail("pvm_send failed");
}

static int recv_int(int tid, int tag, int *src)
{
    int v = 0, bytes, rtag;
    struct timeval tmout = {20, 0}; /* a hang fails, not blocks */
    int b = pvm_trecv(tid, tag, &tmout);
    if (b <= 0)
        fail("no message within 20 s");
    if (pvm_upkint(&v, 1, 1) < 0)
        fail("pvm_upkint failed");
    if (src)
        (void)pvm_bufinfo(b, &bytes, &rtag, src);
    return v;
}

#ifdef NODE_DEATH_PROCESS_MODE
#undef UPVM_TASK
#define UPVM_TASK(name, fn) /* process mode: tasks are copies of the program */
#endif

static int sleeper(int argc, char **argv)
{
    send_int(pvm_parent(), TAG_PID, (int)getpid());
    while (pvm_nrecv(pvm_parent(), TAG_FINISH) == 0)
        (void)upvm_sleep_ns(5 * 1000 * 1000);
    send_int(pvm_parent(), TAG_DONE, pvm_mytid());
    return 0;
}
UPVM_TASK("sleeper", sleeper)

static int crasher(int argc, char **argv)
{
    (void)recv_int(pvm_parent(), TAG_GO, NULL);
    volatile int *p = (int *)16; /* not NULL: UBSan would stop it first */
    __asm__("" : "+r"(p));
    return *p;
}
UPVM_TASK("crasher", crasher)

/* Write n lines (n < 0: forever), yielding between them. */
static void print_lines(long n)
{
    for (long i = 0; n < 0 || i < n; i++) {
        printf("t%x line %ld\n", (unsigned)pvm_mytid(), i);
        upvm_yield();
    }
}

static int printer(int argc, char **argv)
{
    print_lines(strtol(argv[argc - 1], NULL, 10)); /* the last argument: N */
    send_int(pvm_parent(), TAG_DONE, pvm_mytid());
    return 0;
}
UPVM_TASK("printer", printer)

static int halter(int argc, char **argv)
{
    (void)recv_int(pvm_parent(), TAG_GO, NULL);
    (void)pvm_halt(); /* ends every task of every node, this one too */
    fail("pvm_halt returned");
    return 1;
}
UPVM_TASK("halter", halter)

static int blocker(int argc, char **argv)
{
    (void)pvm_recv(-1, TAG_NEVER);
    return 0;
}
UPVM_TASK("blocker", blocker)

static const char *program; /* process mode: this program's file name */

/* Spawn one task called name on node<node> (node < 0: where PVM puts
 * it), with one argument arg (or none); print where it went. */
static int spawn_arg(const char *name, int node, const char *arg)
{
    char where[16];
    snprintf(where, sizeof where, "node%d", node);
    int tid, flag = node < 0 ? PvmTaskDefault : PvmTaskHost;
    char *args[] = {(char *)name, (char *)arg, NULL};
    int n = program ? pvm_spawn((char *)program, args, flag, where, 1, &tid)
                    : pvm_spawn((char *)name, args + 1, flag, where, 1, &tid);
    if (n != 1)
        fail("pvm_spawn failed");
    printf("task t%x on node %d\n", (unsigned)tid, node);
    return tid;
}

static int spawn_on(const char *name, int node)
{
    return spawn_arg(name, node, NULL);
}

/* Modes print, chatter: main and a printer on node1 and node2 (in a job
 * of one node: on it) write count lines each. */
static int print_mode(const char *count)
{
    bool three = pvm_mstat("node2") == PvmOk; /* (one host: its nodes by UPVM's names) */
    int t1 = spawn_arg("printer", three ? 1 : -1, count);
    int t2 = spawn_arg("printer", three ? 2 : -1, count);
    print_lines(strtol(count, NULL, 10));
    (void)recv_int(t1, TAG_DONE, NULL);
    (void)recv_int(t2, TAG_DONE, NULL);
    pvm_exit();
    return 0;
}

/* The job of every mode but deadlock: sleepers s[0], s[1] on node1, s[2]
 * on node2; the node pids printed. */
static void start_sleepers(int s[3])
{
    s[0] = spawn_on("sleeper", 1);
    s[1] = spawn_on("sleeper", 1);
    s[2] = spawn_on("sleeper", 2);
    int pid[3] = {(int)getpid(), 0, 0};
    for (int i = 0; i < 3; i++) {
        int src;
        int p = recv_int(-1, TAG_PID, &src);
        pid[src == s[2] ? 2 : 1] = p;
    }
    for (int n = 0; n < 3; n++)
        printf("node %d pid %d\n", n, pid[n]);
}

static void finish(int tid)
{
    send_int(tid, TAG_FINISH, 0);
    if (recv_int(tid, TAG_DONE, NULL) != tid)
        fail("a sleeper answered for another");
}

static void ready(void)
{
    printf("READY\n");
    fflush(stdout);
}

/* Wait for node1's death as told by the notifications asked for.  The
 * host (this machine, all three nodes) is watched too: it stays, so no
 * PvmHostDelete may come (the driver checks). */
static int watch(const int s[3])
{
    int host1 = pvm_tidtohost(s[0]);
    if (pvm_notify(PvmTaskExit, TAG_EXIT, 2, (int *)s) < 0 ||
        pvm_notify(PvmHostDelete, TAG_HOST, 1, &host1) < 0)
        fail("pvm_notify failed");
    ready();
    int exits = 0, hosts = 0;
    while (exits < 2) {
        int src, bytes, tag;
        struct timeval tmout = {20, 0};
        int b = pvm_trecv(-1, -1, &tmout);
        if (b <= 0)
            fail("no notification within 20 s");
        int who = 0;
        (void)pvm_bufinfo(b, &bytes, &tag, &src);
        (void)pvm_upkint(&who, 1, 1);
        long long at = now_ms();
        if (tag == TAG_EXIT && (who == s[0] || who == s[1]))
            exits++;
        else if (tag == TAG_HOST && who == host1)
            hosts++;
        else
            fail("an unexpected message");
        printf("NOTIFY %s t%x AT %lld\n", tag == TAG_EXIT ? "PvmTaskExit" : "PvmHostDelete",
               (unsigned)who, at);
        fflush(stdout);
    }
    /* The job goes on: node2 still answers, and takes new tasks. */
    finish(s[2]);
    int t = spawn_on("sleeper", 2);
    (void)recv_int(t, TAG_PID, NULL);
    finish(t);
    int nhost;
    if (pvm_config(&nhost, NULL, NULL) < 0 || nhost != 1)
        fail("pvm_config does not show the one host");
    if (pvm_mstat("node1") != PvmNoHost || pvm_mstat("node2") != PvmOk)
        fail("pvm_mstat does not show node1 gone and node2 there");
    (void)hosts;
    printf("OK\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "normal";
    setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef NODE_DEATH_PROCESS_MODE
    const char *slash = strrchr(argv[0], '/');
    program = slash ? slash + 1 : argv[0];
    if (strcmp(mode, "sleeper") == 0)
        return sleeper(argc, argv);
    if (strcmp(mode, "crasher") == 0)
        return crasher(argc, argv);
    if (strcmp(mode, "blocker") == 0)
        return blocker(argc, argv);
    if (strcmp(mode, "printer") == 0)
        return printer(argc, argv);
    if (strcmp(mode, "halter") == 0)
        return halter(argc, argv);
#endif
    if (pvm_mytid() < 0)
        fail("pvm_mytid failed");
    if (strcmp(mode, "deadlock") == 0) {
        spawn_on("blocker", 1);
        spawn_on("blocker", 2);
        ready();
        (void)pvm_recv(-1, TAG_NEVER);
        fail("pvm_recv returned in a deadlock");
    }
    if (strcmp(mode, "print") == 0 || strcmp(mode, "chatter") == 0)
        return print_mode(strcmp(mode, "print") == 0 ? "20" : "-1");
    int s[3];
    start_sleepers(s);
    if (strcmp(mode, "halt") == 0) {
        int h = spawn_on("halter", 2);
        ready();
        send_int(h, TAG_GO, 0);
        (void)pvm_recv(-1, TAG_NEVER);
        fail("pvm_recv returned");
    }
    if (strcmp(mode, "watch") == 0)
        return watch(s);
    if (strcmp(mode, "crash") == 0) {
        int c = spawn_on("crasher", 1);
        ready();
        send_int(c, TAG_GO, 0);
        (void)pvm_recv(-1, TAG_NEVER);
        fail("pvm_recv returned");
    }
    if (strcmp(mode, "orphans") == 0) {
        ready();
        printf("MAIN RETURNS\n"); /* the driver waits for this line */
        fflush(stdout);
        return 0;
    }
    if (strcmp(mode, "wait") == 0) {
        ready();
        (void)pvm_recv(-1, TAG_NEVER);
        fail("pvm_recv returned");
    }
    for (int i = 0; i < 3; i++)
        finish(s[i]);
    ready();
    pvm_exit();
    return strcmp(mode, "fail") == 0 ? 3 : 0;
}
