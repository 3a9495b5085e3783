/*
 * upvm - the UPVM command.
 *
 *   upvm run [-n N] [-t] [--] PROGRAM [ARGS...]
 *   upvm migrate [--job PID] TID NODE
 *   upvm jobs
 *   upvm tasks [--job PID]
 *   upvm top [--once] [--interval SECONDS] [--job PID]
 *   upvm vacate|restore [--job PID] NODE|HOST
 * (main.c lists them all, with every option: upvm help.)
 *
 * `upvm run` starts a job: N copies (default 1) of PROGRAM, a program built
 * with upvmcc, as process-mode ULPs of one node (this process), each with
 * its own globals, heap, stack and the same ARGS; the copies are PVM tasks
 * started "from the shell" (no parent), as `pvm_spawn` from a console would
 * start an SPMD program.  The job ends when every ULP has ended; the exit
 * status is the first non-zero status of the copies (0 when all
 * succeeded).
 *
 * `upvm migrate`, `jobs`, `tasks`, `top`, `vacate` and `restore` talk to
 * running jobs of several nodes through their control sockets (src/node/control_path.h): one request
 * line, the job's reply lines.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#include "cmd.h"
#include "hosts.h"
#include "trace/convert.h"
#include "node/control_path.h"
#include "util/env.h"

const char run_help[] =
    "usage: upvm run [-n N | -np N] [--nodes K] [--hosts LIST | --hostfile FILE]\n"
    "                [--placement block|cyclic] [--balance POLICY] [--trace FILE] [-t]\n"
    "                [--] PROGRAM [ARGS...]\n"
    "\n"
    "Start N copies (default 1) of PROGRAM as process-mode ULPs of one node.\n"
    "PROGRAM must be built with upvmcc (upvmcc -o prog prog.c).  Each copy\n"
    "runs main(argc, argv) with argv = PROGRAM ARGS..., its own globals, heap\n"
    "and stack.  One copy is a PVM task started from the shell\n"
    "(pvm_parent() == PvmNoParent).  N > 1 copies are started as PVM's\n"
    "console starts `spawn -N PROGRAM`: by one pvm_spawn from a console task\n"
    "(t40001, their parent), so pvm_siblings() lists all N in order.\n"
    "\n"
    "PROGRAM is looked up like pvm_spawn does: as given when it contains a\n"
    "'/', else in the current directory, then each directory of $PVM_PATH, or\n"
    "when it is not set PVM's default, $HOME/pvm3/bin/$PVM_ARCH and\n"
    "$PVM_ROOT/bin/$PVM_ARCH.\n"
    "\n"
    "Options:\n"
    "  -n N, -np N number of copies (1 .. 1000000; -np as mpirun writes it)\n"
    "  --nodes K   run the job on K node processes (1 .. 32, or \"cores\";\n"
    "              default: one per CPU the job may use (affinity, cgroup\n"
    "              quota); UPVM_NODES does the same).\n"
    "              Node 0 runs PROGRAM; pvm_spawn spreads tasks over the nodes\n"
    "  --placement block|cyclic\n"
    "              where pvm_spawn puts tasks that name no host: cyclic (the\n"
    "              default) deals them out one per node in turn, starting\n"
    "              with the next node; block splits the spawner and its new\n"
    "              tasks into K contiguous equal runs (UPVM_PLACEMENT)\n"
    "  --balance none|greedy|refine|comm|passive\n"
    "              the global scheduler's policy (UPVM_BALANCE; default comm:\n"
    "              spread the load, keep tasks that talk much together;\n"
    "              docs/balancing.md)\n"
    "  --hosts NAME[:K],...\n"
    "  --hostfile FILE\n"
    "              run the job on these hosts: one MPI job started by mpirun\n"
    "              (the command is printed), K nodes on a host (default: one\n"
    "              per CPU), node 0 (which runs PROGRAM) on the first host;\n"
    "              --nodes K then counts the nodes of all hosts.  FILE: PVM's\n"
    "              hostfile syntax (\"name [opts]\", \"&name\" for a host that\n"
    "              joins at pvm_addhosts) or Open MPI's (\"name slots=K\").\n"
    "              Every host needs the same PROGRAM and upvm at the same paths\n"
    "              (docs/hosts.md); UPVM_MPIRUN names another mpirun (with\n"
    "              options: \"mpirun --mca btl tcp,self\")\n"
    "  --trace FILE\n"
    "              record what every task does (runs, waits, messages, groups,\n"
    "              spawns, migrations, the balancer's moves) and write, when the\n"
    "              job ends, FILE.json (ui.perfetto.dev) and FILE.otf2/ (Vampir,\n"
    "              otf2-print); upvm trace summary FILE says where the time went\n"
    "              (docs/tracing.md; UPVM_TRACE_FILE=FILE does the same for a\n"
    "              program started from the shell)\n"
    "  --gdb       run node 0 under gdb in this terminal: it waits for gdb\n"
    "              before its tasks start (docs/debugging.md; UPVM_GDB names\n"
    "              the debugger and its options)\n"
    "  -t, --tag-output\n"
    "              prefix every line a task writes to stdout or stderr with\n"
    "              its tid, \"[t40002] ...\" (UPVM_OUTPUT_TIDS=1 does the same)\n"
    "  --          the end of the options: PROGRAM follows\n"
    "  -h, --help  this text\n"
    "\n"
    "Environment (see docs/env.md): UPVM_SLOT_SIZE, UPVM_SLOTS,\n"
    "UPVM_WINDOW_BASE (the address window), UPVM_STACK_SIZE (every ULP's\n"
    "stack; unset, a task's is the stack limit, ulimit -s), UPVM_DELIVERY\n"
    "(share|copy), UPVM_ASLR=keep (do not re-execute with address\n"
    "randomisation off).  A bad value of any of them: one line naming it,\n"
    "and exit status 2 before PROGRAM starts.\n"
    "\n"
    "Exit status: the first non-zero exit status of the copies, 0 if all\n"
    "succeeded, 1 if a copy could not be started (the reason is printed)\n"
    "or if the job's output could not all be written (a full disk, a closed\n"
    "stdout: said once), 2 for a usage error; 128 + the signal when SIGINT,\n"
    "SIGTERM, SIGHUP or SIGQUIT ended the job (every node ends with it), 141\n"
    "when the reader of its output went away (| head), 143 after pvm_halt;\n"
    "126 when PROGRAM is not executable, 127 when it is not found\n"
    "(docs/usage.md has the full list).\n";

static int usage_error(const char *what)
{
    return cmd_error("run", 2, what);
}

/* dir with $VAR / ${VAR} replaced (unset: nothing; $PVM_ARCH: LINUX64),
 * as pvm_spawn's search does (src/proc/proc.c). */
static void expand_dir(const char *d, char *out, size_t len)
{
    size_t o = 0;
    while (*d && o + 1 < len) {
        bool brace = d[0] == '$' && d[1] == '{';
        size_t n = d[0] == '$' ? strspn(d + 1 + brace, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "abcdefghijklmnopqrstuvwxyz0123456789_") : 0;
        if (!n || (brace && d[2 + n] != '}')) {
            out[o++] = *d++;
            continue;
        }
        char var[256];
        snprintf(var, sizeof var, "%.*s", (int)n, d + 1 + brace);
        const char *v = getenv(var);
        if ((!v || !*v) && strcmp(var, "PVM_ARCH") == 0)
            v = "LINUX64";
        o += (size_t)snprintf(out + o, len - o, "%s", v ? v : "");
        if (o >= len)
            o = len - 1;
        d += 1 + brace + n + brace;
    }
    out[o] = '\0';
}

/* PROGRAM as pvm_spawn would find it: as given with a '/', else in ., then
 * $PVM_PATH, or PVM's default path when it is not set. */
static int find_program(const char *name, char *out, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(out, len, "%s", name);
        return access(out, F_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PVM_PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, ".:%s",
             path && *path ? path : "$HOME/pvm3/bin/$PVM_ARCH:$PVM_ROOT/bin/$PVM_ARCH");
    for (char *d = strtok(dirs, ":"); d; d = strtok(NULL, ":")) {
        char dir[PATH_MAX];
        expand_dir(d, dir, sizeof dir);
        if (!*dir)
            continue;
        int n = snprintf(out, len, "%s/%s", dir, name);
        if (n > 0 && (size_t)n < len && access(out, F_OK) == 0)
            return 0;
    }
    return -1;
}

/* upvm run --trace FILE: every node records into FILE.raw/ (made here,
 * emptied of an earlier run's files); the job's launcher converts when it
 * ends, with this command (UPVM_TRACE_TOOL).  0, or 1 when FILE.raw
 * cannot be made (said). */
static int trace_setup(const char *file, char *abs, size_t len)
{
    char raw[PATH_MAX + 8], self[PATH_MAX];
    if (file[0] == '/')
        snprintf(abs, len, "%s", file);
    else if (!getcwd(self, sizeof self) || snprintf(abs, len, "%s/%s", self, file) >= (int)len)
        return cmd_error("run", 1, "--trace: the file's path is too long");
    snprintf(raw, sizeof raw, "%s.raw", abs);
    if (mkdir(raw, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "upvm run: --trace %s: cannot make %s: %s\n", file, raw,
                strerror(errno));
        return 1;
    }
    DIR *d = opendir(raw);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, "node-", 5))
            (void)unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        setenv("UPVM_TRACE_TOOL", self, 1);
    }
    setenv("UPVM_TRACE_FILE", abs, 1);
    return 0;
}

/* A job of MPI ranks has ended: convert its trace here, with this
 * command's own converter (trace/convert.h), its lines on stderr beside
 * the job's: stdout is the job's output. */
static void trace_convert_after(const char *file)
{
    fflush(stdout);
    int saved = dup(1);
    if (saved < 0 || dup2(2, 1) < 0)
        return;
    (void)trace_convert(file, NULL);
    fflush(stdout);
    (void)dup2(saved, 1);
    close(saved);
}

/* `upvm run --hosts/--hostfile ...`: the same upvm run in every rank of
 * an mpirun over those hosts (hosts.h).  argv[first..] is PROGRAM ARGS;
 * kept: the options every rank gets. */
static int run_on_hosts(struct upvm_hosts *hosts, int nranks, char **kept, int nkept,
                        char **program_and_args)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "upvm run: cannot find the upvm command's own file: %s\n",
                strerror(errno));
        return 1;
    }
    self[len] = '\0';
    int n = 0;
    while (program_and_args[n])
        n++;
    char **argv = calloc((size_t)(n + nkept + 4), sizeof *argv); /* upvm run ... -- ... NULL */
    if (!argv)
        return 1;
    int k = 0;
    argv[k++] = self;
    argv[k++] = "run";
    for (int i = 0; i < nkept; i++)
        argv[k++] = kept[i];
    argv[k++] = "--";
    for (int i = 0; i < n; i++)
        argv[k++] = program_and_args[i];
    int status = hosts_launch(hosts, nranks, argv);
    free(argv);
    hosts_free(hosts);
    return status;
}

/* The value of the option at argv[*i] (it takes one): the next word, *i
 * moved to it; NULL when there is none (said, with what it wants). */
static const char *option_value(int argc, char **argv, int *i, const char *wants)
{
    if (*i + 1 >= argc) {
        cmd_option_wants("run", argv[*i], wants);
        return NULL;
    }
    return argv[++*i];
}

int cmd_run(int argc, char **argv)
{
    long n = 1;
    int i = 1, nranks = 0, nkept = 0;
    struct upvm_hosts hosts = {0};
    bool gdb = false, trace = false;
    char trace_file[PATH_MAX];
    char err[512];
    char *kept[16];
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *opt = argv[i], *v;
        if (nkept > 12)
            return usage_error("too many options");
        if (!strcmp(opt, "--")) {
            i++;
            break;
        }
        if (cmd_is_help(opt)) {
            fputs(run_help, stdout);
            return 0;
        }
        if (!strcmp(opt, "-t") || !strcmp(opt, "--tag-output")) {
            setenv("UPVM_OUTPUT_TIDS", "1", 1);
            kept[nkept++] = argv[i];
            continue;
        }
        if (!strcmp(opt, "--trace")) {
            if (!(v = option_value(argc, argv, &i, "a file name")))
                return 2;
            if (trace_setup(v, trace_file, sizeof trace_file) != 0)
                return 1;
            trace = true;
            continue;
        }
        if (!strcmp(opt, "--gdb")) { /* node 0 under gdb (debug.c) */
            gdb = true;
            continue;
        }
        if (!strcmp(opt, "--hosts") || !strcmp(opt, "--hostfile")) {
            bool file = !strcmp(opt, "--hostfile");
            if (!(v = option_value(argc, argv, &i, file ? "a hostfile" : "a list of hosts")))
                return 2;
            if (hosts.n)
                return usage_error("--hosts and --hostfile: one of them, once");
            int rc = file ? hosts_parse_file(v, &hosts, err, sizeof err)
                          : hosts_parse_list(v, &hosts, err, sizeof err);
            if (rc != 0)
                return usage_error(err);
            continue;
        }
        if (!strcmp(opt, "--nodes")) {
            static const char wants[] = "a number of nodes from 1 to 32, or cores";
            if (!(v = option_value(argc, argv, &i, wants)))
                return 2;
            char *end;
            long k = strtol(v, &end, 10);
            if (strcmp(v, "cores") != 0 && (*end || k < 1 || k > 32))
                return cmd_option_wants("run", opt, wants);
            setenv("UPVM_NODES", v, 1);
            nranks = strcmp(v, "cores") ? (int)k : 0; /* with hosts: mpirun's -n */
            continue;
        }
        if (!strcmp(opt, "--placement")) {
            static const char wants[] = "block or cyclic";
            if (!(v = option_value(argc, argv, &i, wants)))
                return 2;
            if (strcmp(v, "block") != 0 && strcmp(v, "cyclic") != 0)
                return cmd_option_wants("run", opt, wants);
            setenv("UPVM_PLACEMENT", v, 1);
            kept[nkept++] = argv[i - 1];
            kept[nkept++] = argv[i];
            continue;
        }
        if (!strcmp(opt, "--balance")) {
            static const char wants[] = "none, greedy, refine, comm or passive";
            static const char *const policies[] = {"none", "greedy", "refine", "comm", "passive"};
            if (!(v = option_value(argc, argv, &i, wants)))
                return 2;
            bool known = false;
            for (size_t k = 0; k < sizeof policies / sizeof policies[0]; k++)
                known |= !strcmp(v, policies[k]);
            if (!known)
                return cmd_option_wants("run", opt, wants);
            setenv("UPVM_BALANCE", v, 1);
            kept[nkept++] = argv[i - 1];
            kept[nkept++] = argv[i];
            continue;
        }
        if (!strcmp(opt, "-n") || !strcmp(opt, "-np")) { /* -np: mpirun's habit */
            static const char wants[] = "a number of copies from 1 to 1000000";
            if (!(v = option_value(argc, argv, &i, wants)))
                return 2;
            char *end;
            n = strtol(v, &end, 10);
            if (*end || end == v || n < 1 || n > 1000000)
                return cmd_option_wants("run", opt, wants);
            kept[nkept++] = "-n"; /* the ranks' upvm run gets the one spelling */
            kept[nkept++] = argv[i];
            continue;
        }
        return cmd_unknown_option("run", opt);
    }
    if (i >= argc)
        return usage_error("no PROGRAM given");
    if (hosts.n && gdb)
        return usage_error("--gdb runs node 0 here under gdb: not with --hosts or --hostfile "
                           "(upvm attach a node on its host instead)");
    if (hosts.n) {
        /* the ranks read UPVM_NODES as their own setting: under mpirun
         * each rank is one node, so it goes to mpirun as -n instead */
        unsetenv("UPVM_NODES");
        int status = run_on_hosts(&hosts, nranks, kept, nkept, argv + i);
        if (trace) /* the ranks convert nothing: there is no launcher of ours */
            trace_convert_after(trace_file);
        return status;
    }
    char path[PATH_MAX];
    if (find_program(argv[i], path, sizeof path) != 0) {
        /* as a shell says it, with its status: 127, not found */
        fprintf(stderr, "upvm run: %s: no such program (searched ., then $PVM_PATH or, "
                        "unset, $HOME/pvm3/bin/$PVM_ARCH:$PVM_ROOT/bin/$PVM_ARCH)\n", argv[i]);
        return 127;
    }
    if (access(path, X_OK) != 0) {
        /* as a shell says it, with its status: 126, found but not runnable */
        fprintf(stderr, "upvm run: %s: not executable (%s): make it executable "
                        "(chmod +x) or give the program built with upvmcc\n",
                argv[i], strerror(errno));
        return 126;
    }
    if (gdb)
        return debug_run(path, (int)n, argv + i);
    /* NULL environment: the node's (and the console form for N > 1) */
    return upvm_run_program(path, (int)n, argv + i, NULL);
}

/* ------------------------------------------------------------ migrate, jobs */

const char migrate_help[] =
    "usage: upvm migrate [--job PID] [--lazy] TID NODE\n"
    "\n"
    "Move task TID of a running job to node NODE of that job, and print how it\n"
    "went, as the job answers:\n"
    "  ok t80001 node1 -> node0 in 123.4 us (obtrusiveness 56.7 us, 1.0 MiB)\n"
    "or error: WHY.  TID as PVM writes it: t80001, 0x80001 or decimal; NODE\n"
    "as pvm_config names it, node0, or its number, 0.  Only process-mode\n"
    "tasks move (programs built with upvmcc); upvm tasks lists a job's tasks.\n"
    "\n"
    "The job is reached through its control socket, which only its user can\n"
    "use: $XDG_RUNTIME_DIR/upvm/job-PID.sock, or /tmp/upvm-UID/job-PID.sock\n"
    "without XDG_RUNTIME_DIR; PID is the job's first process (the one started\n"
    "from the shell).  Only jobs of several nodes have one.\n"
    "\n"
    "Options:\n"
    "  --job PID   the job (upvm jobs lists them); needed only when several\n"
    "              run\n"
    "  --lazy      move only the task's registers and current stack page: it\n"
    "              runs on NODE at once, the rest of its memory follows (pulled\n"
    "              when touched, pushed in the background)\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0 when the task moved, 1 when the job refused or the move\n"
    "failed (or no job answered), 2 for a usage error.\n";

const char jobs_help[] =
    "usage: upvm jobs\n"
    "\n"
    "List your running UPVM jobs of several nodes: the job's pid (the process\n"
    "started from the shell), its node count and its program.  Each job is\n"
    "asked through its control socket (see upvm migrate --help); a job busy\n"
    "for more than 2 s is listed as not answering.\n"
    "\n"
    "Exit status: 0, or 1 when the sockets' directory is unusable.\n";

#define PING_MS     2000   /* a job's node 0 answers a ping within this */
#define MIGRATE_MS  60000  /* ... and a migration within this */
#define VACATE_MS   10000  /* ... and vacate or restore within this */
#define MAX_JOBS    256

struct job {
    long pid;
    int nodes;            /* -1: did not answer */
    char program[64];
    char why[160];        /* when it did not: "busy", or what it said */
};

/* The sockets' directory: 0, 1 when there is none yet (no job ever ran),
 * -1 when it cannot be used (said). */
static int jobs_dir(const char *cmd, char *dir, size_t len)
{
    char why[512];
    if (ctl_dir_name(dir, len) != 0) {
        cmd_error(cmd, 1, "no directory for control sockets: paths too long");
        return -1;
    }
    int rc = ctl_dir_check(dir, why, sizeof why);
    if (rc == -1)
        cmd_error(cmd, 1, why);
    return rc == -2 ? 1 : rc;
}

/* Send one request line to the socket at path; the reply (all its lines)
 * into buf.  0, or -errno: -ENOENT (no such socket), -ECONNREFUSED (its
 * job is gone), -EAGAIN (no answer within timeout_ms). */
int ask(const char *path, const char *req, char *buf, size_t len, int timeout_ms)
{
    int fd = ctl_connect(path, timeout_ms);
    if (fd < 0)
        return fd;
    size_t got = 0;
    int rc = send(fd, req, strlen(req), MSG_NOSIGNAL) < 0 ? -errno : 0;
    while (rc == 0 && got < len - 1) {
        ssize_t n = recv(fd, buf + got, len - 1 - got, 0);
        if (n == 0)
            break;
        if (n < 0)
            rc = errno == EWOULDBLOCK ? -EAGAIN : -errno;
        else
            got += (size_t)n;
    }
    buf[got] = '\0';
    close(fd);
    return rc == 0 && got == 0 ? -ECONNRESET : rc; /* closed without a word: stopping */
}

/* The job whose socket is DIR/job-<pid>.sock, asked who it is: 0, or
 * -errno from ask (-EAGAIN: it exists but does not answer now). */
static int ping_job(const char *dir, long pid, struct job *j)
{
    char path[CTL_PATH_MAX], reply[512];
    if (!ctl_sock_path(path, sizeof path, dir, pid))
        return -ENAMETOOLONG;
    *j = (struct job){.pid = pid, .nodes = -1, .program = "?", .why = "busy"};
    int rc = ask(path, "ping\n", reply, sizeof reply, PING_MS);
    if (rc == -EAGAIN)
        return rc;
    if (rc == 0 && !strncmp(reply, "error: ", 7)) { /* it is there, and said why not now */
        reply[strcspn(reply, "\n")] = '\0';
        snprintf(j->why, sizeof j->why, "%.150s", reply + 7);
        return -EAGAIN;
    }
    long p;
    int off = 0;
    if (rc == 0 && sscanf(reply, "job %ld nodes %d program %n", &p, &j->nodes, &off) == 2 &&
        off > 0) {
        reply[strcspn(reply, "\n")] = '\0';
        snprintf(j->program, sizeof j->program, "%s", reply + off);
        return 0;
    }
    return rc ? rc : -EPROTO;
}

static int by_pid(const void *a, const void *b)
{
    long x = ((const struct job *)a)->pid, y = ((const struct job *)b)->pid;
    return (x > y) - (x < y);
}

/* The running jobs (answering or not; sockets left by ended jobs are
 * skipped, and kept), by pid.  Their number. */
static int list_jobs(const char *dir, struct job *jobs, int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        long pid = ctl_sock_pid(e->d_name);
        int rc = pid > 0 ? ping_job(dir, pid, &jobs[n]) : -ENOENT;
        if (rc == 0 || rc == -EAGAIN)
            n++;
    }
    closedir(d);
    qsort(jobs, (size_t)n, sizeof *jobs, by_pid);
    return n;
}

static void print_jobs(FILE *f, const struct job *jobs, int n)
{
    fprintf(f, "%8s %6s  %s\n", "PID", "NODES", "PROGRAM");
    for (int i = 0; i < n; i++) {
        if (jobs[i].nodes < 0)
            fprintf(f, "%8ld %6s  (not answering: %s)\n", jobs[i].pid, "?", jobs[i].why);
        else
            fprintf(f, "%8ld %6d  %s\n", jobs[i].pid, jobs[i].nodes, jobs[i].program);
    }
}

int cmd_jobs(int argc, char **argv)
{
    if (argc > 1 && cmd_is_help(argv[1])) {
        fputs(jobs_help, stdout);
        return 0;
    }
    if (argc > 1) /* it takes none */
        return argv[1][0] == '-' ? cmd_unknown_option("jobs", argv[1])
                                 : cmd_unexpected("jobs", argv[1]);
    char dir[CTL_PATH_MAX];
    int rc = jobs_dir("jobs", dir, sizeof dir);
    if (rc < 0)
        return 1;
    static struct job jobs[MAX_JOBS];
    int n = rc == 0 ? list_jobs(dir, jobs, MAX_JOBS) : 0;
    if (n == 0)
        printf("no running UPVM job of yours (none in %s)\n", dir);
    else
        print_jobs(stdout, jobs, n);
    return 0;
}

/* The job to talk to: --job's, or the only one running.  Its pid, or the
 * exit status (negated) when there is none to choose. */
static long pick_job(const char *cmd, const char *dir, int have_dir, long want)
{
    static struct job jobs[MAX_JOBS];
    if (want > 0)
        return want;
    int n = have_dir == 0 ? list_jobs(dir, jobs, MAX_JOBS) : 0;
    if (n == 1)
        return jobs[0].pid;
    if (n == 0) {
        fprintf(stderr, "upvm %s: no running UPVM job of yours (none in %s); only "
                        "jobs of several nodes can be reached\n", cmd, dir);
        return -1;
    }
    fprintf(stderr, "upvm %s: %d jobs are running; say which with --job PID:\n", cmd, n);
    print_jobs(stderr, jobs, n);
    return -2;
}

/* Why a job could not be asked, as a line. */
static int unreachable(const char *cmd, long pid, const char *path, int rc)
{
    if (rc == -ENOENT)
        fprintf(stderr, "upvm %s: no job with pid %ld (no %s); upvm jobs lists the "
                        "running ones\n", cmd, pid, path);
    else if (rc == -ECONNREFUSED || rc == -ECONNRESET)
        fprintf(stderr, "upvm %s: job %ld has ended\n", cmd, pid);
    else if (rc == -EAGAIN)
        fprintf(stderr, "upvm %s: job %ld did not answer in time\n", cmd, pid);
    else
        fprintf(stderr, "upvm %s: cannot reach job %ld through %s: %s\n", cmd, pid, path,
                strerror(-rc));
    return 1;
}

/* "--job PID" at argv[*i]: true with *job set (and *i past it). */
static bool job_option(int argc, char **argv, int *i, long *job)
{
    if (strcmp(argv[*i], "--job") != 0 || *i + 1 >= argc)
        return false;
    char *end;
    long v = strtol(argv[*i + 1], &end, 10);
    if (*end || v <= 0 || v >= 1L << 30)
        return false;
    *job = v;
    (*i)++;
    return true;
}

/* argv[*i] of a command whose only option is --job PID (tasks, top,
 * vacate): 0 with *job set, or the usage error's status (said). */
static int job_or_unknown(const char *cmd, int argc, char **argv, int *i, long *job)
{
    if (job_option(argc, argv, i, job))
        return 0;
    if (!strcmp(argv[*i], "--job"))
        return cmd_option_wants(cmd, "--job", "the pid of a running job");
    return argv[*i][0] == '-' ? cmd_unknown_option(cmd, argv[*i]) : cmd_unexpected(cmd, argv[*i]);
}

/* Options and operands: 0, or a usage error's status (said). */
static int migrate_args(int argc, char **argv, long *job, int *tid, int *node, bool *lazy,
                        bool *help)
{
    const char *ops[2];
    int nops = 0;
    for (int i = 1; i < argc; i++) {
        if (cmd_is_help(argv[i])) {
            *help = true;
            return 0;
        }
        if (!strcmp(argv[i], "--job")) {
            if (!job_option(argc, argv, &i, job))
                return cmd_option_wants("migrate", "--job", "the pid of a running job");
        } else if (!strcmp(argv[i], "--lazy")) {
            *lazy = true;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cmd_unknown_option("migrate", argv[i]);
        } else if (nops < 2) {
            ops[nops++] = argv[i];
        } else {
            return cmd_unexpected("migrate", argv[i]); /* TID and NODE only */
        }
    }
    if (nops < 2)
        return cmd_error("migrate", 2, "wants a TID and a NODE");
    if (ctl_parse_tid(ops[0], tid) != 0)
        return cmd_error("migrate", 2, "bad TID: write it as t80001, 0x80001 or in decimal");
    if (ctl_parse_node(ops[1], node) != 0)
        return cmd_error("migrate", 2, "bad NODE: node0 .. node63, or its number");
    return 0;
}

int cmd_migrate(int argc, char **argv)
{
    long want = 0;
    int tid, node;
    bool help = false, lazy = false;
    int rc = migrate_args(argc, argv, &want, &tid, &node, &lazy, &help);
    if (help)
        fputs(migrate_help, stdout);
    if (rc != 0 || help)
        return rc;
    char dir[CTL_PATH_MAX], path[CTL_PATH_MAX], req[64], reply[4096];
    int have = jobs_dir("migrate", dir, sizeof dir);
    if (have < 0)
        return 1;
    long pid = pick_job("migrate", dir, have, want);
    if (pid < 0)
        return (int)-pid;
    if (!ctl_sock_path(path, sizeof path, dir, pid))
        return cmd_error("migrate", 1, "socket path too long");
    snprintf(req, sizeof req, "migrate t%x %d%s\n", (unsigned)tid, node, lazy ? " lazy" : "");
    rc = ask(path, req, reply, sizeof reply, MIGRATE_MS);
    if (rc != 0)
        return unreachable("migrate", pid, path, rc);
    bool ok = strncmp(reply, "ok ", 3) == 0;
    fputs(reply, ok ? stdout : stderr);
    return ok ? 0 : 1;
}

const char tasks_help[] =
    "usage: upvm tasks [--job PID]\n"
    "\n"
    "List the tasks of a running job, node by node, as the nodes last wrote\n"
    "them down (a snapshot: a task that starts, ends or moves at that instant\n"
    "may be missing or listed twice):\n"
    "  node0 pid 4711: 2 tasks\n"
    "   t40001/master t40002/worker\n"
    "  node1 pid 4712: 1 task\n"
    "   t80001/worker\n"
    "Then move one with upvm migrate TID NODE.\n"
    "\n"
    "Options:\n"
    "  --job PID   the job (upvm jobs lists them); needed only when several\n"
    "              run\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0, 1 when no job answered, 2 for a usage error.\n";

int cmd_tasks(int argc, char **argv)
{
    long want = 0;
    for (int i = 1; i < argc; i++) {
        if (cmd_is_help(argv[i])) {
            fputs(tasks_help, stdout);
            return 0;
        }
        int rc = job_or_unknown("tasks", argc, argv, &i, &want);
        if (rc != 0)
            return rc;
    }
    char dir[CTL_PATH_MAX], path[CTL_PATH_MAX];
    static char reply[1 << 18];
    int have = jobs_dir("tasks", dir, sizeof dir);
    if (have < 0)
        return 1;
    long pid = pick_job("tasks", dir, have, want);
    if (pid < 0)
        return (int)-pid;
    if (!ctl_sock_path(path, sizeof path, dir, pid))
        return cmd_error("tasks", 1, "socket path too long");
    int rc = ask(path, "tasks\n", reply, sizeof reply, PING_MS);
    if (rc != 0)
        return unreachable("tasks", pid, path, rc);
    bool ok = strncmp(reply, "error: ", 7) != 0;
    fputs(reply, ok ? stdout : stderr);
    return ok ? 0 : 1;
}

/* The socket of the job a command talks to (--job's, or the only one):
 * its pid, or the exit status (negated) when there is none (said). */
static long reach_job(const char *cmd, long want, char *path, size_t len)
{
    char dir[CTL_PATH_MAX];
    int have = jobs_dir(cmd, dir, sizeof dir);
    if (have < 0)
        return -1;
    long pid = pick_job(cmd, dir, have, want);
    if (pid < 0)
        return pid;
    if (!ctl_sock_path(path, len, dir, pid))
        return -cmd_error(cmd, 1, "socket path too long");
    return pid;
}

/* ------------------------------------------------------------ top */

const char top_help[] =
    "usage: upvm top [--once] [--interval SECONDS] [--job PID]\n"
    "\n"
    "Show what the global scheduler of a running job sees, redrawn in place\n"
    "every SECONDS (default 1) as top does: a line per node (its ULPs, CPU\n"
    "share, load, idle time, messages and bytes sent per second, tasks\n"
    "moved in and out, state), then the balancer's last decisions\n"
    "(docs/balancing.md).\n"
    "q or Ctrl-C quits, and so does the job's end.\n"
    "\n"
    "Options:\n"
    "  --once         print the table once and exit (what upvm top does when\n"
    "                 its output is not a terminal)\n"
    "  --interval S   seconds between two tables (0.1 .. 3600, default 1)\n"
    "  --job PID      the job (upvm jobs lists them); needed only when several\n"
    "                 run\n"
    "  -h, --help     this text\n"
    "\n"
    "Exit status: 0, also when the job ended after a table was shown; 1 when\n"
    "no job answered or the job has no balancer (a job of one node);\n"
    "2 for a usage error.\n";

static volatile sig_atomic_t top_signal;
static struct termios top_tty;     /* the terminal's settings before ours */
static bool top_keys;              /* stdin is a terminal we set to read keys */

static void top_on_signal(int sig)
{
    top_signal = sig;
}

/* Keys without Enter, not echoed; Ctrl-C still makes SIGINT. */
static void tty_keys(void)
{
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &top_tty) != 0)
        return;
    struct termios t = top_tty;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    top_keys = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
}

static void tty_restore(void)
{
    if (top_keys)
        (void)tcsetattr(STDIN_FILENO, TCSANOW, &top_tty);
    top_keys = false;
}

/* Wait ms, or until a key: 'q' to quit, 0 for any other key or the
 * time, -1 for a signal. */
static int top_wait(long ms)
{
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (ms % 1000) * 1000000;
    if (end.tv_nsec >= 1000000000) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000;
    }
    for (;;) {
        if (top_signal)
            return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = (end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;
        if (left <= 0)
            return 0;
        struct pollfd p = {top_keys ? STDIN_FILENO : -1, POLLIN, 0};
        int n = poll(&p, 1, (int)left);
        if (n <= 0 || !p.revents)
            continue; /* the time, or a signal (checked above) */
        char c;
        ssize_t got = read(STDIN_FILENO, &c, 1);
        if (got <= 0) { /* no keys to read any more: the time only */
            tty_restore();
            continue;
        }
        return c == 'q' || c == 'Q' ? 'q' : 0;
    }
}

/* Ask for tables until q, a signal or the job's end: the exit status. */
static int top_loop(long pid, const char *path, bool live, long interval_ms)
{
    static char reply[1 << 18];
    bool shown = false;
    for (;;) {
        int rc = ask(path, "top\n", reply, sizeof reply, PING_MS);
        if (top_signal)
            return 0;
        if (rc != 0 && shown && (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ECONNRESET)) {
            printf("upvm top: the job ended\n");
            return 0;
        }
        if (rc == -EAGAIN && shown) {
            printf("upvm top: job %ld did not answer within %d s; asking again\n", pid,
                   PING_MS / 1000);
        } else if (rc != 0) {
            return unreachable("top", pid, path, rc);
        } else if (!strncmp(reply, "error: ", 7)) {
            fputs(reply, stderr);
            return 1;
        } else {
            if (live)
                fputs("\033[H\033[2J", stdout); /* home, clear the screen */
            fputs(reply, stdout);
            shown = true;
        }
        if (fflush(stdout) != 0 || ferror(stdout))
            return 1;
        if (!live)
            return 0;
        int key = top_wait(interval_ms);
        if (key != 0)
            return 0; /* q, or a signal */
    }
}

int cmd_top(int argc, char **argv)
{
    long want = 0;
    bool once = false;
    double interval = 1;
    for (int i = 1; i < argc; i++) {
        if (cmd_is_help(argv[i])) {
            fputs(top_help, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--once")) {
            once = true;
            continue;
        }
        if (!strcmp(argv[i], "--interval")) {
            char *end = NULL;
            interval = i + 1 < argc ? strtod(argv[++i], &end) : 0;
            if (!end || end == argv[i] || *end || !(interval >= 0.1 && interval <= 3600))
                return cmd_option_wants("top", "--interval", "seconds from 0.1 to 3600");
            continue;
        }
        int rc = job_or_unknown("top", argc, argv, &i, &want);
        if (rc != 0)
            return rc;
    }
    char path[CTL_PATH_MAX];
    long pid = reach_job("top", want, path, sizeof path);
    if (pid < 0)
        return (int)-pid;
    bool live = !once && isatty(STDOUT_FILENO);
    if (live) {
        /* no SA_RESTART: a wait or a request under way ends at once */
        struct sigaction sa = {.sa_handler = top_on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        tty_keys();
    }
    int status = top_loop(pid, path, live, (long)(interval * 1000 + 0.5));
    tty_restore();
    if (top_signal && top_signal != SIGINT)
        return 128 + top_signal;
    return status;
}

/* ------------------------------------------------------------ vacate, restore */

const char vacate_help[] =
    "usage: upvm vacate [--job PID] NODE|HOST\n"
    "       upvm restore [--job PID] NODE|HOST\n"
    "\n"
    "vacate tells a running job's balancer to move every task off node NODE\n"
    "(node2, or 2), or off every node of the job that runs on host HOST, and\n"
    "to place no task there; restore lets tasks go there again.  The tasks\n"
    "move in the balancer's next rounds (upvm top shows them go).  Prints\n"
    "the job's answer, for a host the answers of its nodes joined by \"; \":\n"
    "  ok node1 vacated: 12 tasks to move\n"
    "or error: WHY (no such node, a job of one node, ...).  docs/balancing.md\n"
    "says what the balancer does.\n"
    "\n"
    "Options:\n"
    "  --job PID   the job (upvm jobs lists them); needed only when several\n"
    "              run\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0 when the job agreed, 1 when it refused (or no job\n"
    "answered), 2 for a usage error.\n";

/* upvm vacate / upvm restore (argv[0] says which). */
int cmd_vacate(int argc, char **argv)
{
    const char *cmd = argv[0], *target = NULL;
    long want = 0;
    for (int i = 1; i < argc; i++) {
        if (cmd_is_help(argv[i])) {
            fputs(vacate_help, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            int rc = job_or_unknown(cmd, argc, argv, &i, &want);
            if (rc != 0)
                return rc;
            continue;
        }
        if (target)
            return cmd_unexpected(cmd, argv[i]); /* one NODE or HOST */
        target = argv[i];
    }
    int node;
    if (!target)
        return cmd_error(cmd, 2, "wants a NODE or a HOST");
    if (ctl_parse_target(target, &node) < 0)
        return cmd_error(cmd, 2, "bad NODE or HOST: node0 .. node63, its number, or a host "
                                 "name");
    char path[CTL_PATH_MAX], req[CTL_REQUEST_MAX], reply[4096];
    long pid = reach_job(cmd, want, path, sizeof path);
    if (pid < 0)
        return (int)-pid;
    snprintf(req, sizeof req, "%s %s\n", cmd, target);
    int rc = ask(path, req, reply, sizeof reply, VACATE_MS);
    if (rc != 0)
        return unreachable(cmd, pid, path, rc);
    bool ok = strncmp(reply, "error", 5) != 0;
    size_t len = strlen(reply);
    fprintf(ok ? stdout : stderr, "%s%s", reply, len && reply[len - 1] == '\n' ? "" : "\n");
    return ok ? 0 : 1;
}
