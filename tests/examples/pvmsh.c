/*
 * pvmsh - run a script of PVM programs inside one virtual machine.
 *
 * With real PVM, several programs started one after the other from a shell
 * meet in the same virtual machine (the pvmd outlives them): a mailbox
 * entry left by one is seen by the next.  A UPVM virtual machine lives as
 * long as one job, so the examples that are run as a sequence of shell
 * commands (mbox, task0/task1/task_end, lmbi/gmbi/rme, mhf_server and
 * mhf_tickle) are run by this small PVM program instead: it spawns each
 * command as a task of its own job and waits for it, as the shell would.
 * It uses nothing but the PVM 3 API, so it also runs under real PVM.
 *
 *   pvmsh SCRIPT
 *
 * SCRIPT has one command a line ('#' starts a comment line):
 *   echo TEXT              print TEXT
 *   run [-as NAME] PROG [ARGS...]
 *                          print "$ PROG ARGS", spawn PROG, wait until it
 *                          exits; -as NAME: ${NAME} in later arguments is
 *                          replaced by its tid in hex (no "t")
 *   bg [-as NAME] PROG [ARGS...]
 *                          same, without waiting ("$ PROG ARGS &")
 *   sleep SECONDS          wait (pvm_trecv with a time-out: other tasks run)
 *   wait                   wait until every bg task has exited
 * At the end pvmsh waits for the bg tasks still running.  Exit status 0,
 * or 1 if a command could not be spawned or the script is malformed.
 * Spawned tasks have pvmsh as parent; their output is caught with
 * pvm_catchout(stdout).
 */
#include <stdio.h> /* before pvm3.h: PVM's declares pvm_catchout only after stdio.h */
#include <pvm3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define TAG_EXIT  0x7e11 /* PvmTaskExit notifications */
#define TAG_SLEEP 0x7e12 /* never sent: sleep is a receive that times out */
#define MAXARGS   64
#define MAXLIVE   256
#define MAXNAMES  32

static int live[MAXLIVE];
static int nlive;
static struct {
    char name[32];
    int tid;
} names[MAXNAMES];
static int nnames;

/* Receive exit notifications until task `tid` (0: every bg task) is gone. */
static void wait_for(int tid)
{
    for (;;) {
        int gone = 1;
        for (int i = 0; i < nlive; i++)
            if (tid == 0 || live[i] == tid)
                gone = 0;
        if (gone)
            return;
        int dead = 0;
        if (pvm_recv(-1, TAG_EXIT) < 0 || pvm_upkint(&dead, 1, 1) < 0) {
            fprintf(stderr, "pvmsh: lost track of the tasks\n");
            exit(1);
        }
        for (int i = 0; i < nlive; i++)
            if (live[i] == dead) {
                live[i] = live[--nlive];
                break;
            }
    }
}

/* Copy s into out replacing ${NAME} by the named task's tid in hex. */
static int substitute(const char *s, char *out, size_t len)
{
    size_t o = 0;
    while (*s) {
        if (s[0] == '$' && s[1] == '{') {
            const char *end = strchr(s, '}');
            int found = 0;
            for (int i = 0; end && i < nnames; i++)
                if (strlen(names[i].name) == (size_t)(end - s - 2) &&
                    !strncmp(names[i].name, s + 2, (size_t)(end - s - 2))) {
                    int n = snprintf(out + o, len - o, "%x", (unsigned)names[i].tid);
                    if (n < 0 || (size_t)n >= len - o)
                        return -1;
                    o += (size_t)n;
                    s = end + 1;
                    found = 1;
                    break;
                }
            if (!found) {
                fprintf(stderr, "pvmsh: unknown name in '%s'\n", s);
                return -1;
            }
            continue;
        }
        if (o + 1 >= len)
            return -1;
        out[o++] = *s++;
    }
    out[o] = 0;
    return 0;
}

static int spawn_cmd(char **w, int nw, int background)
{
    static char argbuf[MAXARGS][512];
    char *args[MAXARGS + 1];
    const char *as = NULL;
    int first = 1;
    if (nw >= 3 && !strcmp(w[1], "-as")) {
        as = w[2];
        first = 3;
    }
    if (first >= nw) {
        fprintf(stderr, "pvmsh: %s without a program\n", w[0]);
        return -1;
    }
    printf("$");
    for (int i = first; i < nw; i++) {
        if (substitute(w[i], argbuf[i - first], sizeof argbuf[0]) < 0)
            return -1;
        args[i - first] = argbuf[i - first];
        printf(" %s", argbuf[i - first]);
    }
    args[nw - first] = NULL;
    printf("%s\n", background ? " &" : "");
    fflush(stdout);

    int tid = 0;
    int n = pvm_spawn(args[0], args + 1, PvmTaskDefault, "", 1, &tid);
    if (n != 1) {
        printf("pvmsh: cannot spawn %s (pvm_spawn returned %d, tid %d)\n", args[0], n, tid);
        fflush(stdout);
        return -1;
    }
    if (as && nnames < MAXNAMES) {
        snprintf(names[nnames].name, sizeof names[0].name, "%s", as);
        names[nnames++].tid = tid;
    }
    if (nlive == MAXLIVE) {
        fprintf(stderr, "pvmsh: too many tasks\n");
        return -1;
    }
    live[nlive++] = tid;
    pvm_notify(PvmTaskExit, TAG_EXIT, 1, &tid);
    if (!background)
        wait_for(tid);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pvmsh SCRIPT\n");
        return 1;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    if (pvm_mytid() < 0) {
        pvm_perror("pvmsh");
        return 1;
    }
    pvm_catchout(stdout);

    int status = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *w[MAXARGS + 4];
        int nw = 0;
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '#')
            continue;
        if (!strncmp(line, "echo ", 5) || !strcmp(line, "echo")) {
            printf("%s\n", line[4] ? line + 5 : "");
            fflush(stdout);
            continue;
        }
        for (char *t = strtok(line, " \t"); t && nw < MAXARGS + 3; t = strtok(NULL, " \t"))
            w[nw++] = t;
        if (nw == 0)
            continue;
        if (!strcmp(w[0], "run") || !strcmp(w[0], "bg")) {
            if (spawn_cmd(w, nw, w[0][0] == 'b') < 0)
                status = 1;
        } else if (!strcmp(w[0], "sleep") && nw == 2) {
            double s = atof(w[1]);
            struct timeval tv = {(long)s, (long)((s - (long)s) * 1e6)};
            pvm_trecv(-1, TAG_SLEEP, &tv);
        } else if (!strcmp(w[0], "wait") && nw == 1) {
            wait_for(0);
        } else {
            fprintf(stderr, "pvmsh: cannot understand '%s'\n", w[0]);
            status = 1;
        }
    }
    fclose(f);
    wait_for(0);
    fflush(stdout);
    pvm_exit();
    return status;
}
