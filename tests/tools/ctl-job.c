/*
 * ctl-job.c - a process-mode PVM job that waits, for test-upvm-ctl.sh,
 * which reaches it from outside with `upvm jobs` and `upvm migrate`.
 * Built with upvmcc, run on two nodes:
 *
 *   ctl-job STOPFILE [MARK]
 *
 * main (node 0) spawns one copy of the program as a "worker" on node1,
 * which blocks in pvm_recv until main tells it to finish.  main prints
 *
 *   master tMASTER
 *   worker tWORKER
 *   node0 pid PID         (the process that is node 0)
 *   READY
 *
 * then waits, in 20 ms timed receives (so that the job is never all
 * blocked, which would be reported as a deadlock), until the file STOPFILE
 * exists; then it tells the worker to finish, wherever the worker runs by
 * then (a test may have migrated it), prints "worker answered" when it
 * has, and exits 0.  MARK is not read: a unique word in the command line
 * of each node, to find the job's processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <pvm3.h>

enum { TAG_FINISH = 1, TAG_DONE };

static void fail(const char *what)
{
    fprintf(stderr, "ctl-job: %s\n", what);
    exit(1);
}

static int worker(void)
{
    int parent = pvm_parent();
    if (pvm_recv(parent, TAG_FINISH) < 0)
        fail("the worker's pvm_recv failed");
    int me = pvm_mytid();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    if (pvm_send(parent, TAG_DONE) < 0)
        fail("the worker's pvm_send failed");
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "worker"))
        return worker();
    if (argc < 2)
        fail("usage: ctl-job STOPFILE [MARK]");
    const char *slash = strrchr(argv[0], '/');
    char *args[] = {"worker", NULL};
    int me = pvm_mytid(), tid;
    if (me < 0 || pvm_spawn((char *)(slash ? slash + 1 : argv[0]), args, PvmTaskHost,
                            "node1", 1, &tid) != 1)
        fail("cannot start the worker on node1");
    printf("master t%x\nworker t%x\nnode0 pid %d\nREADY\n", (unsigned)me, (unsigned)tid,
           (int)getpid());
    while (access(argv[1], F_OK) != 0) {
        struct timeval tv = {0, 20000};
        (void)pvm_trecv(-1, 99, &tv); /* nothing comes: a 20 ms nap */
    }
    pvm_initsend(PvmDataDefault);
    if (pvm_send(tid, TAG_FINISH) < 0 || pvm_recv(tid, TAG_DONE) < 0)
        fail("the worker did not answer");
    printf("worker answered\n");
    pvm_exit();
    return 0;
}
