/*
 * dbgprog.c - a process-mode PVM program for the debugger tests
 * (test-debug.sh), built with upvmcc -g -O0.  Started as N copies
 * (upvm run -n N): the first sibling is the leader, the others its
 * followers.
 *
 * A follower sends the leader one message and then waits for an answer
 * that never comes (suspended in pvm_recv: `upvm bt TID` shows it).
 * The leader counts the messages in tally() (where the tests' breakpoint
 * stops: a local `seen` to print), writes "ready" to the file argv[1]
 * when all came, then ticks forever (tick(), polled with pvm_trecv) until
 * the job is ended: a debugger can attach to it at any time.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int tally(int from, int seen);
void tick(int n);

int tally(int from, int seen)
{
    int total = seen + 1; /* BREAK-TALLY */
    printf("leader: message %d from t%x\n", total, from);
    return total;
}

void tick(int n)
{
    volatile int beat = n; /* BREAK-TICK */
    (void)beat;
}

/* "ready PID": the pid of the node the leader runs on (for upvm attach) */
static void say_ready(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "ready %d\n", (int)getpid()) < 0 || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static int lead(int nfollowers, const char *ready_file)
{
    int seen = 0;
    while (seen < nfollowers) {
        int from;
        if (pvm_recv(-1, 1) < 0 || pvm_bufinfo(pvm_getrbuf(), NULL, NULL, &from) < 0)
            return 1;
        seen = tally(from, seen);
    }
    say_ready(ready_file);
    struct timeval tv = {0, 10000};
    for (int n = 0;; n++) {
        (void)pvm_trecv(-1, 2, &tv);
        tick(n);
    }
}

static int follow(int leader)
{
    int me = pvm_mytid();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    if (pvm_send(leader, 1) < 0)
        return 1;
    return pvm_recv(leader, 2) < 0; /* never answered: waits here */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dbgprog READY-FILE (run as upvm run -n N dbgprog FILE)\n");
        return 2;
    }
    int *sibs, n = pvm_siblings(&sibs);
    if (n < 2) {
        fprintf(stderr, "dbgprog: wants at least 2 copies (upvm run -n 3)\n");
        return 2;
    }
    int me = pvm_mytid();
    return me == sibs[0] ? lead(n - 1, argv[1]) : follow(sibs[0]);
}
