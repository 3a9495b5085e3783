/*
 * catchout.c - where the output of tasks goes (pvm_catchout, tagged
 * output), run by test-proc.sh (scenarios catchout, tag-tail), which
 * compares its output with what genuine PVM 3.4.6 printed for the same
 * steps (tests/pvm-reference/p13_catchout_exit.c, p17_catchout_lines.c).
 *
 *   catchout                  the master: one section per case, each run by
 *                             a catcher task it spawns and waits for
 *   catchout -catcher CASE    pvm_catchout(stdout) (or a file, or 0), spawn a
 *                             writer, pvm_exit (which waits for its EOF)
 *   catchout -writer MODE     print in one of the shapes below
 *   catchout -tagtail         tagged output: lines after pvm_exit, last
 *                             lines without a newline (upvm run --tag-output)
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *self;

static int spawn1(char *a1, char *a2)
{
    int t = 0;
    char *argv[] = {a1, a2, NULL};
    if (pvm_spawn(self, argv, 0, NULL, 1, &t) != 1) {
        fprintf(stderr, "spawn %s %s failed: %d\n", a1, a2 ? a2 : "", t);
        exit(1);
    }
    return t;
}

static void wait_exit(int tid)
{
    pvm_notify(PvmTaskExit, 77, 1, &tid);
    pvm_recv(-1, 77);
}

static int writer(const char *mode)
{
    pvm_mytid();
    if (!strcmp(mode, "print")) { /* p13's child */
        printf("stdout line 1 from child\n");
        printf("stdout line 2 from child\n");
        printf("partial line without newline");
        fflush(stdout);
        fprintf(stderr, "stderr line from child\n");
    } else if (!strcmp(mode, "last")) {
        printf("one\n");
        printf("last without newline");
        fflush(stdout);
    } else if (!strcmp(mode, "err")) {
        fprintf(stderr, "only stderr\n");
    } else if (!strcmp(mode, "slow")) { /* still runs when the catcher exits */
        usleep(500 * 1000);
        printf("slow line\n");
    } else if (!strcmp(mode, "sleeper")) { /* killed before it prints */
        sleep(5);
        printf("never\n");
    } else if (!strcmp(mode, "empty")) {
        printf("a\n\nb\n");
        fflush(stdout);
    } else if (!strcmp(mode, "after")) {
        printf("before exit\n");
        fflush(stdout);
        pvm_exit();
        printf("after exit\n");
        printf("after exit, no newline");
        fflush(stdout);
        return 0;
    } else if (!strcmp(mode, "grand")) {
        printf("child before spawning grandchild\n");
        fflush(stdout);
        wait_exit(spawn1("-writer", "print"));
    }
    pvm_exit();
    return 0;
}

static int catcher(const char *what)
{
    int parent = pvm_parent();
    FILE *f = NULL;
    if (!strcmp(what, "file")) {
        f = tmpfile();
        pvm_catchout(f);
        spawn1("-writer", "last");
    } else if (!strcmp(what, "notids")) {
        pvm_catchout(stdout);
        pvm_setopt(PvmShowTids, 0); /* the lines alone, no BEGIN/EOF */
        spawn1("-writer", "print");
    } else if (!strcmp(what, "killed")) { /* its EOF comes all the same */
        pvm_catchout(stdout);
        pvm_kill(spawn1("-writer", "sleeper"));
    } else if (!strcmp(what, "drop")) { /* PVM drops what comes after catchout(0) */
        pvm_catchout(stdout);
        int t = spawn1("-writer", "slow");
        pvm_catchout(0);
        wait_exit(t);
        usleep(100 * 1000); /* its EOF, after its exit: dropped too */
    } else if (!strcmp(what, "stop")) {
        pvm_catchout(stdout);
        pvm_catchout(0); /* stops: the child's output goes where it always went */
        wait_exit(spawn1("-writer", "empty"));
    } else {
        pvm_catchout(stdout);
        spawn1("-writer", (char *)what);
    }
    pvm_exit(); /* waits for the caught output's EOF */
    if (f) {
        char buf[4096];
        fflush(f);
        rewind(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        printf("-----\n%s-----\n", buf);
        fflush(stdout);
        fclose(f);
    }
    pvm_initsend(PvmDataDefault); /* enrolled again: tells the master */
    pvm_send(parent, 1);
    pvm_exit();
    return 0;
}

static int tagtail(void)
{
    printf("master line\n");
    fflush(stdout);
    wait_exit(spawn1("-tagchild", NULL));
    pvm_exit();
    printf("after exit\n");
    printf("no newline at end");
    return 0;
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc > 2 && !strcmp(argv[1], "-writer"))
        return writer(argv[2]);
    if (argc > 2 && !strcmp(argv[1], "-catcher"))
        return catcher(argv[2]);
    if (argc > 1 && !strcmp(argv[1], "-tagtail"))
        return tagtail();
    if (argc > 1 && !strcmp(argv[1], "-tagchild")) {
        pvm_mytid();
        printf("child partial");
        pvm_exit();
        return 0;
    }
    static char *cases[] = {"print", "last", "err", "empty", "after", "grand", "file", "notids",
                           "slow", "killed", "drop", "stop"};
    pvm_mytid();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        printf("## %s\n", cases[i]);
        fflush(stdout);
        spawn1("-catcher", cases[i]);
        pvm_recv(-1, 1);
    }
    printf("## end\n");
    fflush(stdout);
    pvm_exit();
    return 0;
}
