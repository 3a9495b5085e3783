/*
 * shell.c - commands run from process-mode ULPs (src/proc/shell.c) and a
 * ULP reading stdin (src/proc/input.c), run by test-proc.sh:
 *
 *   shell basic       system() statuses and output, popen "r"/"w"/"re"
 *                     with exact bytes and pclose statuses, pclose of a
 *                     FILE not from popen, posix_spawn + waitpid, the
 *                     ULP's own environment in its commands; "OK"
 *   shell pvm N       a master spawns N slaves; each runs commands through
 *                     system() and popen() and sends what they printed
 *                     back (pvm_pkstr); the master checks every byte; "OK"
 *   shell overlap DIR a slave's system() runs a command that waits for
 *                     DIR/go; the master, on the same node, sees the
 *                     command start (DIR/in) and counts its own turns, then
 *                     makes DIR/go: a stalled node never gets there; "OK"
 *   shell stdin DIR   a master reads its stdin with fgets/getchar/scanf
 *                     while a slave computes and then makes DIR/computed
 *                     (the script writes stdin only after that); prints
 *                     what it read
 */
#include <errno.h>
#include <fcntl.h>
#include <pvm3.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

extern char **environ;

static int bad;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        bad = 1;
    }
}

/* Everything a popen "r" stream gives, up to cap - 1 bytes. */
static size_t read_all(FILE *f, char *buf, size_t cap)
{
    size_t n = 0, k;
    while (n + 1 < cap && (k = fread(buf + n, 1, cap - 1 - n, f)) > 0)
        n += k;
    buf[n] = '\0';
    return n;
}

static void basic_system(void)
{
    check(system(NULL) != 0, "system(NULL) says there is a shell");
    int st = system("exit 0");
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "system exit 0");
    st = system("exit 3");
    check(WIFEXITED(st) && WEXITSTATUS(st) == 3, "system exit 3");
    st = system("kill -9 $$");
    check(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "system killed by SIGKILL");
    st = system("upvm-no-such-command-xyz 2>/dev/null");
    check(WIFEXITED(st) && WEXITSTATUS(st) == 127, "system: command not found is 127");
    fflush(stdout); /* the command writes to the same descriptor */
    st = system("echo from-system");
    check(st == 0, "system echo");
}

static void basic_popen(void)
{
    char buf[256];
    FILE *f = popen("printf 'one\\ntwo\\n'; printf 'x\\0y'; exit 4", "r");
    check(f != NULL, "popen r");
    size_t n = f ? read_all(f, buf, sizeof buf) : 0;
    check(n == 11 && memcmp(buf, "one\ntwo\nx\0y", 11) == 0, "popen r: exact bytes");
    int st = f ? pclose(f) : -1;
    check(WIFEXITED(st) && WEXITSTATUS(st) == 4, "pclose status of exit 4");

    f = popen("cat", "re");
    check(f != NULL, "popen re");
    if (f) {
        char line[64];
        check(fgets(line, sizeof line, f) == NULL && feof(f), "popen re: cat of no input is EOF");
        check(pclose(f) == 0, "pclose re");
    }

    /* "w": what we write is the command's input; it checks every byte */
    f = popen("test \"$(od -An -tx1 | tr -d ' \\n')\" = 68690a00ff", "w");
    check(f != NULL, "popen w");
    if (f) {
        fwrite("hi\n\0\xff", 1, 5, f);
        st = pclose(f);
        check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "popen w: exact bytes reached the command");
    }
    f = popen("exit 9", "we");
    check(f != NULL && WEXITSTATUS(pclose(f)) == 9, "pclose we status 9");

    FILE *plain = fopen("/dev/null", "r");
    errno = 0;
    check(plain && pclose(plain) == -1 && errno == ECHILD, "pclose of a FILE not from popen");
    if (plain)
        fclose(plain);
    errno = 0;
    check(popen("true", "x") == NULL && errno == EINVAL, "popen bad mode is EINVAL");
}

static void basic_env_spawn(void)
{
    char buf[64];
    setenv("UPVM_SHELL_TEST", "ulp-own", 1);
    FILE *f = popen("printf %s \"$UPVM_SHELL_TEST\"", "r");
    read_all(f, buf, sizeof buf);
    check(strcmp(buf, "ulp-own") == 0, "the command sees the ULP's environment");
    pclose(f);

    pid_t pid;
    char *argv[] = {"sh", "-c", "exit 6", NULL};
    int rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
    int st = 0;
    check(rc == 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 6,
          "posix_spawn + waitpid");
    char *argv2[] = {"true", NULL};
    rc = posix_spawnp(&pid, "true", NULL, NULL, argv2, environ);
    check(rc == 0 && waitpid(pid, &st, 0) == pid && st == 0, "posix_spawnp true");
    check(posix_spawn(&pid, "/nonexistent/x", NULL, NULL, argv2, environ) == ENOENT,
          "posix_spawn of no file is ENOENT");
}

/* ------------------------------------------------------------ pvm */

static int slave(int i)
{
    char cmd[128], out[512], msg[1024];
    snprintf(cmd, sizeof cmd, "echo slave-%d; echo \"$((%d * 7))\"; exit %d", i, i, i);
    FILE *f = popen(cmd, "r");
    size_t n = f ? read_all(f, out, sizeof out) : 0;
    int st = f ? pclose(f) : -1;
    snprintf(cmd, sizeof cmd, "exit %d", 10 + i);
    int st2 = system(cmd);
    snprintf(msg, sizeof msg, "%.*s|%d|%d", (int)n, out, WEXITSTATUS(st), WEXITSTATUS(st2));
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(msg);
    pvm_send(pvm_parent(), 1);
    pvm_exit();
    return 0;
}

static int pvm_master(const char *prog, int n)
{
    int tids[32];
    if (n > 32 || pvm_spawn((char *)prog, (char *[]){"slave", NULL}, PvmTaskDefault, "", n, tids) != n)
        return 2;
    for (int k = 0; k < n; k++) {
        char got[1024], want[128];
        pvm_recv(tids[k], 1);
        pvm_upkstr(got);
        snprintf(want, sizeof want, "slave-%d\n%d\n|%d|%d", k, k * 7, k, 10 + k);
        check(strcmp(got, want) == 0, "a slave's command output");
        if (strcmp(got, want) != 0)
            fprintf(stderr, "slave %d sent '%s', expected '%s'\n", k, got, want);
    }
    return 0;
}

/* ------------------------------------------------------------ overlap */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int exists(const char *dir, const char *name)
{
    char path[512];
    struct stat s;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &s) == 0;
}

/* Wait, as a ULP that lets the others run, for dir/name; turns taken. */
static long wait_file(const char *dir, const char *name, double limit)
{
    long turns = 0;
    for (double end = now_s() + limit; !exists(dir, name); turns++) {
        if (now_s() > end)
            return -1;
        upvm_yield();
    }
    return turns;
}

static int blocker(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "touch '%s/in'; i=0; while [ ! -e '%s/go' ] && [ $i -lt 1000 ]; do "
             "sleep 0.01; i=$((i+1)); done; [ -e '%s/go' ]", dir, dir, dir);
    int st = system(cmd);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&st, 1, 1);
    pvm_send(pvm_parent(), 2);
    pvm_exit();
    return 0;
}

static int overlap_master(const char *prog, const char *dir)
{
    int tid;
    if (pvm_spawn((char *)prog, (char *[]){"blocker", (char *)dir, NULL}, PvmTaskDefault, "", 1,
                  &tid) != 1)
        return 2;
    long turns = wait_file(dir, "in", 20);
    check(turns >= 0, "the node ran the master while the slave's command ran");
    char path[512];
    snprintf(path, sizeof path, "%s/go", dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    check(fd >= 0, "make go");
    close(fd);
    int st = -1;
    pvm_recv(tid, 2);
    pvm_upkint(&st, 1, 1);
    check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the command saw go (the master ran during it)");
    return 0;
}

/* ------------------------------------------------------------ stdin */

static int computer(const char *dir)
{
    unsigned long x = 1;
    for (int i = 0; i < 1000000; i++)
        x = x * 6364136223846793005UL + 1442695040888963407UL;
    char path[512];
    snprintf(path, sizeof path, "%s/computed", dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    close(fd);
    int v = (int)(x >> 40) | 1; /* XDR packs 32 bits */
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    pvm_send(pvm_parent(), 3);
    pvm_exit();
    return 0;
}

static int stdin_master(const char *prog, const char *dir)
{
    int tid;
    if (pvm_spawn((char *)prog, (char *[]){"computer", (char *)dir, NULL}, PvmTaskDefault, "", 1,
                  &tid) != 1)
        return 2;
    char line[64];
    /* the script writes our input only once the computer made its file:
     * a read that stalled the node would wait for ever */
    while (fgets(line, sizeof line, stdin))
        printf("line: %s", line);
    int x = 0;
    pvm_recv(tid, 3);
    pvm_upkint(&x, 1, 1);
    check(x != 0, "the computer's result");
    check(feof(stdin), "stdin at EOF");
    return 0;
}

/* a second reader: getchar and scanf on the same stream */
static int stdin_scan(void)
{
    int a = 0, b = 0, c = getchar();
    int n = scanf("%d %d", &a, &b);
    printf("getchar %c scanf %d: %d %d\n", c, n, a, b);
    return 0;
}

int main(int argc, char **argv)
{
    pvm_mytid();
    const char *mode = argc > 1 ? argv[1] : "";
    int rc = 2;
    if (!strcmp(mode, "basic")) {
        basic_system();
        basic_popen();
        basic_env_spawn();
        rc = 0;
    } else if (!strcmp(mode, "slave")) {
        int *sibs, n = pvm_siblings(&sibs), i = 0;
        while (i < n && sibs[i] != pvm_mytid())
            i++;
        return slave(i);
    } else if (!strcmp(mode, "pvm") && argc > 2) {
        rc = pvm_master(argv[0], atoi(argv[2]));
    } else if (!strcmp(mode, "blocker") && argc > 2) {
        return blocker(argv[2]);
    } else if (!strcmp(mode, "overlap") && argc > 2) {
        rc = overlap_master(argv[0], argv[2]);
    } else if (!strcmp(mode, "computer") && argc > 2) {
        return computer(argv[2]);
    } else if (!strcmp(mode, "stdin") && argc > 2) {
        rc = stdin_master(argv[0], argv[2]);
    } else if (!strcmp(mode, "scan")) {
        rc = stdin_scan();
    }
    if (rc == 0)
        puts(bad ? "WRONG" : "OK");
    pvm_exit();
    return rc ? rc : bad;
}
