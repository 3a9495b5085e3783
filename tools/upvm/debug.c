/*
 * debug.c - the upvm command and gdb: `upvm run --gdb` and `upvm attach`.
 *
 *   upvm run --gdb [OPTIONS] PROGRAM [ARGS...]
 *       The job runs as without --gdb, and node 0 (the node of the
 *       program's first task) waits for gdb before any task runs; gdb
 *       attaches to it in this terminal, with UPVM's gdb script loaded.
 *       Set breakpoints (pending: the program is loaded when its tasks
 *       start), then `continue`.  When gdb exits, a job still running is
 *       ended (SIGTERM).  The job runs in a process group of its own, so
 *       that Ctrl-C reaches gdb (which stops node 0) and not the job.
 *   upvm attach JOB [NODE]
 *       gdb attached to node NODE of a running job, with the script.
 *
 * The script is libupvm's gdb auto-load script (tools/gdb/upvm.py,
 * installed as <libupvm's file name>-gdb.py under $datadir/gdb/auto-load,
 * or next to the library in the build tree): gdb is told to trust and
 * search those places, and loads it when it sees libupvm.  UPVM_GDB names
 * the debugger and its options (default "gdb").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#include "cmd.h"
#include "node/control_path.h"
#include "util/env.h"

/* Where the install puts the script (tools/gdb): the configured place, and
 * the same relative to the library (an install moved with --prefix). */
#ifndef UPVM_GDB_AUTOLOAD_DIR
#define UPVM_GDB_AUTOLOAD_DIR "/usr/local/share/gdb/auto-load"
#endif
#ifndef UPVM_GDB_AUTOLOAD_REL
#define UPVM_GDB_AUTOLOAD_REL "../share/gdb/auto-load"
#endif

#define GDB_ARGS_MAX 64
#define NODE_PID_WAIT_S 60 /* the job's node 0 says its pid within this */

struct gdb_cmd {
    char *argv[GDB_ARGS_MAX];
    int argc;
    char words[1024]; /* UPVM_GDB, split */
    char opts[6][PATH_MAX + 64];
    char pid[24]; /* -p's argument */
};

static void add(struct gdb_cmd *g, char *arg)
{
    if (g->argc < GDB_ARGS_MAX - 1)
        g->argv[g->argc++] = arg;
    g->argv[g->argc] = NULL;
}

/* The directory of libupvm's file as loaded (symlinks resolved), into dir. */
static bool libupvm_dir(char *dir, size_t len)
{
    Dl_info info;
    char real[PATH_MAX];
    if (!dladdr((void *)upvm_run_program, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, real))
        return false;
    char *slash = strrchr(real, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(dir, len, "%s", real);
    return true;
}

/* gdb options that trust and search the auto-load directory dir/rel. */
static void trust_scripts_dir(struct gdb_cmd *g, int *k, const char *dir, const char *rel)
{
    const char *cmds[] = {"add-auto-load-safe-path", "add-auto-load-scripts-directory"};
    for (int i = 0; i < 2; i++) {
        snprintf(g->opts[*k], sizeof g->opts[*k], "%s %s%s%s", cmds[i], dir, *rel ? "/" : "",
                 rel);
        add(g, "-iex");
        add(g, g->opts[(*k)++]);
    }
}

/* gdb and its options: UPVM_GDB's words, then what makes it load UPVM's
 * script (trust the library's directory, for the build tree's script next
 * to it, and the installed auto-load directory). */
static void gdb_command(struct gdb_cmd *g)
{
    const char *env;
    snprintf(g->words, sizeof g->words, "%s", env_string("UPVM_GDB", &env) > 0 ? env : "gdb");
    g->argc = 0;
    for (char *w = strtok(g->words, " \t"); w; w = strtok(NULL, " \t"))
        add(g, w);
    char libdir[PATH_MAX];
    int k = 0;
    if (libupvm_dir(libdir, sizeof libdir)) {
        snprintf(g->opts[k], sizeof g->opts[k], "add-auto-load-safe-path %s", libdir);
        add(g, "-iex");
        add(g, g->opts[k++]);
        trust_scripts_dir(g, &k, libdir, UPVM_GDB_AUTOLOAD_REL);
    }
    trust_scripts_dir(g, &k, UPVM_GDB_AUTOLOAD_DIR, "");
}

/* gdb_command, attached to process pid. */
static void gdb_command_for(struct gdb_cmd *g, pid_t pid)
{
    gdb_command(g);
    snprintf(g->pid, sizeof g->pid, "%d", (int)pid);
    add(g, "-p");
    add(g, g->pid);
}

/* Say why gdb may not be allowed to attach, when it will not be. */
static void ptrace_hint(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;
    if (f && fscanf(f, "%d", &scope) != 1)
        scope = 0;
    if (f)
        fclose(f);
    if (scope >= 1 && geteuid() != 0)
        fprintf(stderr,
                "upvm: note: kernel.yama.ptrace_scope is %d: gdb may attach only to "
                "its own children (run as root, or sysctl "
                "kernel.yama.ptrace_scope=0)\n",
                scope);
}

/* ------------------------------------------------------------ upvm run --gdb */

/* Node 0's pid, as it writes it to fd when it is ready to wait for gdb;
 * -1 when the job ended (the pipe closed) or said nothing in time. */
static pid_t read_node_pid(int fd)
{
    char buf[32];
    size_t got = 0;
    time_t end = time(NULL) + NODE_PID_WAIT_S;
    while (got < sizeof buf - 1 && time(NULL) < end && !memchr(buf, '\n', got)) {
        ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    long pid = strtol(buf, NULL, 10);
    return pid > 0 ? (pid_t)pid : -1;
}

static int status_of(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The job in a child process, in a process group of its own, node 0
 * told (UPVM_GDB_WAIT) to give its pid on fd and wait for a debugger. */
static pid_t start_job(const char *path, int ninst, char **argv, int fd[2])
{
    char wait[64];
    snprintf(wait, sizeof wait, "%d,%d", fd[1], (int)getpid());
    pid_t job = fork();
    if (job != 0)
        return job;
    close(fd[0]);
    setpgid(0, 0);
    setenv("UPVM_GDB_WAIT", wait, 1);
    int status = upvm_run_program(path, ninst, argv, NULL);
    fflush(NULL);
    _exit(status < 0 ? 1 : status);
}

/* gdb attached to pid, in the foreground; its exit status. */
static int run_gdb(pid_t pid)
{
    struct gdb_cmd g;
    gdb_command_for(&g, pid);
    add(&g, "-ex");
    add(&g, "echo upvm: node 0 waits for you before its tasks start: set breakpoints "
            "(file.c:LINE, a function), then continue\\n");
    pid_t child = fork();
    if (child == 0) {
        execvp(g.argv[0], g.argv);
        fprintf(stderr,
                "upvm run --gdb: cannot run %s: %s (install gdb, or name it in "
                "UPVM_GDB)\n",
                g.argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return child > 0 ? status_of(status) : 127;
}

int debug_run(const char *path, int ninst, char **argv)
{
    int fd[2];
    if (pipe(fd) != 0)
        return cmd_error("run", 1, "--gdb: no pipe to hear from the job");
    fflush(NULL);
    pid_t job = start_job(path, ninst, argv, fd);
    close(fd[1]);
    if (job < 0)
        return cmd_error("run", 1, "--gdb: cannot fork the job");
    pid_t node0 = read_node_pid(fd[0]);
    close(fd[0]);
    int status;
    if (node0 < 0) {
        fprintf(stderr, "upvm run --gdb: the job ended before node 0 could wait for gdb\n");
        kill(-job, SIGTERM);
        return waitpid(job, &status, 0) == job ? status_of(status) : 1;
    }
    /* Ctrl-C and Ctrl-\ are gdb's: this process only waits */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    ptrace_hint();
    (void)run_gdb(node0);
    /* the job's status when it ended under gdb, else it is ended now */
    if (waitpid(job, &status, WNOHANG) == job)
        return status_of(status);
    kill(-job, SIGTERM);
    return waitpid(job, &status, 0) == job ? status_of(status) : 1;
}

/* ------------------------------------------------------------ upvm attach */

const char attach_help[] =
    "usage: upvm attach JOB [NODE]\n"
    "\n"
    "Run gdb attached to node NODE (node0, or 0; the default) of the running\n"
    "job JOB (its pid, as upvm jobs lists it), with UPVM's\n"
    "gdb script loaded: bt, breakpoints (file.c:LINE, functions) and info\n"
    "locals work in the job's process-mode tasks; upvm ulps lists the node's\n"
    "tasks, upvm bt TID shows one of them (docs/debugging.md).  Quitting gdb\n"
    "detaches it: the job goes on.\n"
    "\n"
    "The node is found through the job's control socket; a job of one node\n"
    "has none: JOB is then its process, and NODE 0.\n"
    "\n"
    "Environment: UPVM_GDB, the debugger and its options (default gdb).\n"
    "\n"
    "Exit status: gdb's; 1 when the job or node is not found, 2 for a usage\n"
    "error.\n";

/* The pid of node `node` in a `tasks` reply ("node1 pid 4712: 1 task"). */
static pid_t node_pid_in(const char *reply, int node)
{
    for (const char *l = reply; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        int n, pid;
        if (sscanf(l, "node%d pid %d", &n, &pid) == 2 && n == node)
            return pid;
    }
    return -1;
}

/* A process that runs UPVM: libupvm is among its mappings. */
static bool runs_upvm(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "/libupvm.so") != NULL;
    if (f)
        fclose(f);
    return found;
}

/* The pid of the node: from the job's control socket, or for a job of
 * one node (no socket) the job's own process.  -1 when not found (said). */
static pid_t find_node(long job, int node)
{
    char dir[CTL_PATH_MAX], path[CTL_PATH_MAX];
    static char reply[1 << 18];
    if (ctl_dir_name(dir, sizeof dir) == 0 && ctl_sock_path(path, sizeof path, dir, job) &&
        ask(path, "tasks\n", reply, sizeof reply, 2000) == 0) {
        pid_t pid = node_pid_in(reply, node);
        if (pid < 0)
            fprintf(stderr,
                    "upvm attach: job %ld has no node%d (upvm tasks --job %ld lists "
                    "its nodes)\n",
                    job, node, job);
        return pid;
    }
    if (node == 0 && runs_upvm((pid_t)job))
        return (pid_t)job; /* a job of one node */
    fprintf(stderr,
            "upvm attach: no UPVM job with pid %ld (upvm jobs lists the jobs of "
            "several nodes; a job of one node is its process)\n",
            job);
    return -1;
}

int cmd_attach(int argc, char **argv)
{
    const char *ops[2];
    int nops = 0;
    for (int i = 1; i < argc; i++) {
        if (cmd_is_help(argv[i])) {
            fputs(attach_help, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return cmd_unknown_option("attach", argv[i]);
        if (nops == 2)
            return cmd_unexpected("attach", argv[i]);
        ops[nops++] = argv[i];
    }
    if (nops == 0)
        return cmd_error("attach", 2, "wants a JOB (its pid: upvm jobs lists them) and a NODE");
    char *end;
    long job = strtol(ops[0], &end, 10);
    if (*end || job <= 0 || job >= 1L << 30)
        return cmd_error("attach", 2, "bad JOB: the pid of a running job (upvm jobs)");
    int node = 0;
    if (nops == 2 && ctl_parse_node(ops[1], &node) != 0)
        return cmd_error("attach", 2, "bad NODE: node0 .. node63, or its number");
    pid_t pid = find_node(job, node);
    if (pid < 0)
        return 1;
    struct gdb_cmd g;
    gdb_command_for(&g, pid);
    ptrace_hint();
    fflush(NULL);
    execvp(g.argv[0], g.argv);
    fprintf(stderr, "upvm attach: cannot run %s: %s (install gdb, or name it in UPVM_GDB)\n",
            g.argv[0], strerror(errno));
    return 127;
}
