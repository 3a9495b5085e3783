/*
 * console.c - upvm console: PVM's console, in this user's VM
 * (docs/console.md).
 *
 * Like PVM's, the console is a PVM task like any other: it joins the VM
 * (starting one when none is up) at its first PVM call, and every command
 * is made of PVM calls (pvm_config, pvm_tasks, pvm_spawn, pvm_kill, ...),
 * printed in the shapes of PVM 3.4.6's console.  `quit` leaves the VM up;
 * `halt` ends it.  Commands come from -c (separated by ';' or newlines),
 * else from the terminal (a pvm> prompt) or a pipe (each echoed after the
 * prompt, as PVM's console does).  While it waits for a line it lets the
 * VM's frames in (output of `spawn ->`), so it polls its input between
 * short sleeps of its ULP.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pvm3.h>
#include <upvm.h>

#include "cmd.h"
#include "console_trace.h"
#include "node/control_path.h"

#define ARGS_MAX 64
#define JOBS_MAX 256
#define ALIASES_MAX 64
#define INPUT_POLL_NS (20u * 1000000u) /* between looks at the input */

extern char **environ;

struct job {
    int id, ntids;
    int *tids;
    bool caught; /* spawned with -> */
    bool traced; /* spawned with -@: its output and events are the trace's */
    int ended;   /* caught: tasks whose output has ended (EOF) */
};

static struct {
    int mytid;
    bool done, halted;
    struct job jobs[JOBS_MAX];
    int njobs, next_job;
    struct alias {
        char *name, *cmd;
    } alias[ALIASES_MAX];
    int naliases;
    struct job *spawning; /* the job whose pvm_spawn runs: its tids are not known yet */
} con;

/* ------------------------------------------------------------ helpers */

/* "usage: " and the command's syntax (its entry in commands[]): 0. */
static int usage(const char *name);

static int parse_tid(const char *s)
{
    int tid;
    return ctl_parse_tid(s, &tid) == 0 ? tid : -1;
}

static int split(char *line, char **av)
{
    int ac = 0;
    for (char *p = strtok(line, " \t\r\n"); p && ac < ARGS_MAX - 1; p = strtok(NULL, " \t\r\n"))
        av[ac++] = p;
    av[ac] = NULL;
    return ac;
}

static const char *host_name(int host, struct pvmhostinfo *hi, int nhost)
{
    for (int i = 0; i < nhost; i++)
        if (hi[i].hi_tid == host)
            return hi[i].hi_name;
    return NULL;
}

/* "2/f" as PVM's console writes a task's flags. */
static const char *task_flags(int f, char *buf, size_t len)
{
    static const char *const names[] = {NULL, "f", "c", "a", "o", "s", NULL, NULL, "R", "H", "T"};
    int off = snprintf(buf, len, "%x/", (unsigned)f);
    for (int i = (int)(sizeof names / sizeof names[0]) - 1; i >= 0; i--)
        if ((f & (1 << i)) && names[i] && (size_t)off < len)
            off += snprintf(buf + off, len - (size_t)off, "%s,", names[i]);
    buf[off - 1] = '\0'; /* the last ',' or the '/' */
    return buf;
}

/* ------------------------------------------------------------ commands */

static int c_conf(int ac, char **av)
{
    int nhost, narch;
    struct pvmhostinfo *hi;
    if (pvm_config(&nhost, &narch, &hi) < 0)
        return 0;
    printf("%d host%s, %d data format%s\n", nhost, nhost == 1 ? "" : "s", narch,
           narch == 1 ? "" : "s");
    printf("                    HOST     DTID     ARCH   SPEED       DSIG\n");
    for (int i = 0; i < nhost; i++)
        printf("%24s %8x %8s %7d 0x%08x\n", hi[i].hi_name, (unsigned)hi[i].hi_tid, hi[i].hi_arch,
               hi[i].hi_speed, (unsigned)hi[i].hi_dsig);
    return 0;
}

static int c_ps(int ac, char **av)
{
    int nhost, narch;
    struct pvmhostinfo *hi;
    (void)pvm_config(&nhost, &narch, &hi);
    int where = pvm_tidtohost(con.mytid);
    bool all_x = false, lflg = false;
    for (int i = 1; i < ac; i++) {
        for (const char *p = av[i]; *p; p++) {
            if (*p == '-')
                continue;
            if (*p == 'a')
                where = 0;
            else if (*p == 'l')
                lflg = true;
            else if (*p == 'x')
                all_x = true;
            else if (*p == 'n' || *p == 'h') {
                const char *arg = p + 1;
                if (*p == 'h')
                    where = parse_tid(arg);
                else {
                    int k = 0;
                    while (k < nhost && strcmp(hi[k].hi_name, arg) != 0)
                        k++;
                    if (k == nhost)
                        printf("unknown host %s\n", arg);
                    else
                        where = hi[k].hi_tid;
                }
                break;
            } else
                printf("unknown flag -%c\n", *p);
        }
    }
    int ntask;
    struct pvmtaskinfo *ti;
    if (pvm_tasks(where, &ntask, &ti) < 0)
        return 0;
    printf(lflg ? "                    HOST      TID     PTID    PID   FLAG 0x COMMAND\n"
                : "                    HOST      TID   FLAG 0x COMMAND\n");
    for (int i = 0; i < ntask; i++) {
        if (!all_x && (ti[i].ti_tid == con.mytid || ti[i].ti_tid == 0))
            continue;
        const char *h = host_name(ti[i].ti_host, hi, nhost);
        if (h)
            printf("%24s", h);
        else
            printf("%24x", (unsigned)ti[i].ti_host);
        if (ti[i].ti_tid == con.mytid)
            printf("   (cons)");
        else
            printf(" %8x", (unsigned)ti[i].ti_tid);
        if (lflg) {
            if (ti[i].ti_ptid == con.mytid)
                printf("   (cons)");
            else if (ti[i].ti_ptid > 0)
                printf(" %8x", (unsigned)ti[i].ti_ptid);
            else
                printf("        -");
            printf(" %6d", ti[i].ti_pid);
        }
        char fl[64];
        printf(" %9s", task_flags(ti[i].ti_flag, fl, sizeof fl));
        const char *waits = upvm_tasks_waits(i);
        printf(" %-12s", ti[i].ti_a_out && ti[i].ti_a_out[0] ? ti[i].ti_a_out : "-");
        if (waits && *waits) /* UPVM: what it waits for */
            printf(" (%s)", waits);
        printf("\n");
    }
    return 0;
}

static int c_id(int ac, char **av)
{
    printf("t%x\n", (unsigned)con.mytid);
    return 0;
}

static int c_version(int ac, char **av)
{
    printf("%s\n", pvm_version());
    return 0;
}

static int c_echo(int ac, char **av)
{
    for (int i = 1; i < ac; i++)
        printf("%s%s", av[i], i + 1 < ac ? " " : "");
    printf("\n");
    return 0;
}

static int c_mstat(int ac, char **av)
{
    for (int i = 1; i < ac; i++) {
        int st = pvm_mstat(av[i]);
        printf("%24s  %s\n", av[i],
               st == PvmOk ? "ok" : st == PvmNoHost ? "No such host" : st == PvmHostFail
                                                                        ? "Host fail"
                                                                        : "Unknown");
    }
    return 0;
}

static int c_pstat(int ac, char **av)
{
    for (int i = 1; i < ac; i++) {
        int tid = parse_tid(av[i]);
        if (tid < 0) {
            printf("%s: bad tid\n", av[i]);
            continue;
        }
        int st = pvm_pstat(tid);
        printf("t%8x  %s\n", (unsigned)tid,
               st == PvmOk ? "run" : st == PvmNoTask ? "No such task" : "Unknown");
    }
    return 0;
}

static int c_kill(int ac, char **av)
{
    for (int i = 1; i < ac; i++) {
        if (!strcmp(av[i], "-c")) /* kill the console's children: PVM's -c */
            continue;
        int tid = parse_tid(av[i]);
        if (tid < 0)
            printf("%s: bad tid\n", av[i]);
        else if (tid == con.mytid)
            printf("t%x: that is the console itself (quit)\n", (unsigned)tid);
        else if (pvm_kill(tid) < 0)
            printf("t%x: %s\n", (unsigned)tid, "no such task");
    }
    return 0;
}

static int c_sig(int ac, char **av)
{
    int sig = atoi(av[1]);
    for (int i = 2; i < ac; i++) {
        int tid = parse_tid(av[i]);
        if (tid < 0)
            printf("%s: bad tid\n", av[i]);
        else if (pvm_sendsig(tid, sig) < 0)
            printf("t%x: no such task\n", (unsigned)tid);
    }
    return 0;
}

/* ------------------------------------------------------------ caught output */

/* What the tasks of `spawn ->` write comes here as pvm_catchout frames it
 * ("[t80001] line", "[t80001] EOF"); PVM's console writes it with the
 * job's number: "[1:t80001] line", and "[1] finished" once every task of
 * the job has ended its output. */
static struct job *job_of(int tid)
{
    for (int i = 0; i < con.njobs; i++)
        for (int k = 0; k < con.jobs[i].ntids; k++)
            if (con.jobs[i].tids[k] == tid)
                return &con.jobs[i];
    return con.spawning; /* a task of the spawn under way (its tids come with its end) */
}

static void caught_line(const char *line)
{
    unsigned tid;
    int off = 0;
    struct job *j = sscanf(line, "[t%x]%n", &tid, &off) == 1 && off ? job_of((int)tid) : NULL;
    if (!j) { /* a grandchild's, or not framed: as it came */
        fputs(line, stdout);
        return;
    }
    const char *rest = line + off + (line[off] == ' ');
    if (j->traced) { /* the trace's output events, as PVM's console's libpvmtrc writes them */
        char text[4096];
        snprintf(text, sizeof text, "%.*s", (int)strcspn(rest, "\n"), rest);
        (void)ctrace_output(j->id, (int)tid, text);
        return;
    }
    if (!strcmp(rest, "BEGIN\n"))
        return;
    printf("[%d:t%x] %s", j->id, tid, rest);
    if (!strcmp(rest, "EOF\n") && ++j->ended == j->ntids)
        printf("[%d] finished\n", j->id);
}

static ssize_t caught_write(void *cookie, const char *buf, size_t n)
{
    static char line[4096];
    static size_t len;
    (void)cookie;
    for (size_t i = 0; i < n; i++) {
        if (len < sizeof line - 2)
            line[len++] = buf[i];
        if (buf[i] == '\n' || len == sizeof line - 2) {
            if (line[len - 1] != '\n')
                line[len++] = '\n';
            line[len] = '\0';
            caught_line(line);
            len = 0;
        }
    }
    fflush(stdout);
    return (ssize_t)n;
}

static FILE *caught_output(void)
{
    static FILE *f;
    if (!f) {
        f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = caught_write});
        if (f)
            setvbuf(f, NULL, _IOLBF, 0);
    }
    return f ? f : stdout;
}

static struct job *new_job(int n, bool caught)
{
    if (con.njobs == JOBS_MAX)
        return NULL;
    struct job *j = &con.jobs[con.njobs++];
    *j = (struct job){.id = ++con.next_job, .tids = calloc((size_t)n, sizeof(int)),
                      .caught = caught};
    return j->tids ? j : NULL;
}

static int c_spawn(int ac, char **av)
{
    int count = 1, flag = PvmTaskDefault, i = 1;
    char *where = NULL;
    bool caught = false, traced = false;
    const char *trace_file = NULL;
    for (; i < ac && av[i][0] == '-'; i++) {
        const char *o = av[i] + 1;
        if (!strcmp(o, ">"))
            caught = true;
        else if (*o == '@') { /* -@: trace the job to the terminal; -@file: to file */
            traced = true;
            trace_file = o[1] ? o + 1 : NULL;
        }
        else if (*o >= '0' && *o <= '9')
            count = atoi(o);
        else if (*o == '?')
            flag |= PvmTaskDebug;
        else if (*o) {
            where = (char *)o; /* a host (or an architecture) */
            flag |= PvmTaskHost;
        }
    }
    if (i >= ac)
        return usage("spawn");
    if (count < 1)
        count = 1;
    FILE *tf = NULL;
    if (trace_file && !(tf = fopen(trace_file, "w"))) {
        printf("%s: %s\n", trace_file, strerror(errno));
        return 0;
    }
    struct job *j = new_job(count, caught && !traced);
    if (!j) {
        printf("too many jobs\n");
        if (tf)
            fclose(tf);
        return 0;
    }
    j->traced = traced;
    printf("[%d]\n", j->id);
    if (traced && !ctrace_spawning(j->id, tf)) {
        if (tf)
            fclose(tf);
        return 0;
    }
    caught = caught || traced; /* the trace has their output (libpvmtrc's output events) */
    /* PvmOutputTid says whether these tasks are caught; the catch itself
     * stays on for the jobs caught before (pvm_catchout(NULL) would drop
     * what they still write, as PVM does) */
    if (caught)
        (void)pvm_catchout(caught_output());
    (void)pvm_setopt(PvmOutputTid, caught ? pvm_mytid() : 0);
    j->ntids = count;
    con.spawning = caught ? j : NULL;
    int n = pvm_spawn(av[i], &av[i + 1], flag, where, count, j->tids);
    con.spawning = NULL;
    (void)pvm_setopt(PvmOutputTid, 0);
    if (traced)
        ctrace_spawned(n);
    if (n < 0) {
        printf("%s\n", n == PvmNoFile ? "No such file" : "spawn failed");
        return 0;
    }
    printf("%d successful\n", n);
    for (int k = 0; k < count; k++) {
        if (j->tids[k] < 0)
            printf("%s\n", j->tids[k] == PvmNoFile ? "No such file"
                           : j->tids[k] == PvmNoHost ? "No such host"
                                                     : "Can't start task");
        else
            printf("t%x\n", (unsigned)j->tids[k]);
    }
    return 0;
}

static bool job_running(const struct job *j)
{
    for (int k = 0; k < j->ntids; k++)
        if (j->tids[k] > 0 && pvm_pstat(j->tids[k]) == PvmOk)
            return true;
    return false;
}

static int c_jobs(int ac, char **av)
{
    for (int i = 0; i < con.njobs; i++) {
        struct job *j = &con.jobs[i];
        if (!job_running(j))
            continue;
        printf("%2d:", j->id);
        for (int k = 0; k < j->ntids; k++)
            if (j->tids[k] > 0 && pvm_pstat(j->tids[k]) == PvmOk)
                printf(" t%x", (unsigned)j->tids[k]);
        printf("\n");
    }
    return 0;
}

static int c_hosts(int ac, char **av, bool add)
{
    int n = ac - 1, *info = calloc((size_t)n, sizeof *info);
    if (!info)
        return 0;
    int ok = add ? pvm_addhosts(&av[1], n, info) : pvm_delhosts(&av[1], n, info);
    printf("%d successful\n", ok < 0 ? 0 : ok);
    printf(add ? "                    HOST     DTID\n" : "                    HOST  STATUS\n");
    for (int i = 0; i < n; i++) {
        if (info[i] > 0)
            printf(add ? "%24s %8x\n" : "%24s  deleted\n", av[i + 1], (unsigned)info[i]);
        else
            printf("%24s  %s\n", av[i + 1],
                   info[i] == PvmDupHost   ? "Duplicate host"
                   : info[i] == PvmNoHost  ? "No such host"
                   : info[i] == PvmCantStart ? "Can't start pvmd"
                                           : "failed");
    }
    free(info);
    return 0;
}

static int c_add(int ac, char **av) { return c_hosts(ac, av, true); }
static int c_delete(int ac, char **av) { return c_hosts(ac, av, false); }

static int c_names(int ac, char **av)
{
    int n;
    struct pvmmboxinfo *mi;
    if (pvm_getmboxinfo(ac > 1 ? av[1] : "*", &n, &mi) < 0)
        return 0;
    for (int i = 0; i < n; i++) {
        printf("<%s>:\n", mi[i].mi_name);
        for (int k = 0; k < mi[i].mi_nentries; k++)
            printf("\tindex=%d owner=0x%x/%d flags=0x%x\n", mi[i].mi_indices[k],
                   (unsigned)mi[i].mi_owners[k], mi[i].mi_owners[k], (unsigned)mi[i].mi_flags[k]);
        printf("\n");
    }
    return 0;
}

static int c_put(int ac, char **av)
{
    int value = atoi(av[2]);
    (void)pvm_initsend(PvmDataDefault);
    (void)pvm_pkint(&value, 1, 1);
    int rc = pvm_putinfo(av[1], pvm_getsbuf(), PvmMboxDefault);
    if (rc < 0)
        printf("%s\n", pvm_errlist[-rc]);
    return 0;
}

static int c_reset(int ac, char **av)
{
    int ntask;
    struct pvmtaskinfo *ti;
    if (pvm_tasks(0, &ntask, &ti) < 0)
        return 0;
    int *tids = calloc((size_t)ntask + 1, sizeof *tids), n = 0;
    for (int i = 0; tids && i < ntask; i++)
        if (ti[i].ti_tid != con.mytid)
            tids[n++] = ti[i].ti_tid;
    for (int i = 0; i < n; i++)
        (void)pvm_kill(tids[i]);
    free(tids);
    int nm;
    struct pvmmboxinfo *mi;
    if (pvm_getmboxinfo("*", &nm, &mi) >= 0) /* what the killed tasks left */
        for (int i = 0; i < nm; i++)
            for (int k = 0; k < mi[i].mi_nentries; k++)
                (void)pvm_delinfo(mi[i].mi_name, mi[i].mi_indices[k], PvmMboxDefault);
    return 0;
}

static int c_setenv(int ac, char **av)
{
    if (ac == 1) {
        for (char **e = environ; *e; e++)
            printf("%s\n", *e);
        return 0;
    }
    for (int i = 1; i < ac; i++) {
        char *eq = strchr(av[i], '=');
        if (!eq) {
            printf("usage: setenv NAME=VALUE\n");
            continue;
        }
        *eq = '\0';
        (void)setenv(av[i], eq + 1, 1);
    }
    return 0;
}

static int c_alias(int ac, char **av)
{
    if (ac == 1) {
        for (int i = 0; i < con.naliases; i++)
            printf("%s\t%s\n", con.alias[i].name, con.alias[i].cmd);
        return 0;
    }
    if (ac == 2) {
        for (int i = 0; i < con.naliases; i++)
            if (!strcmp(con.alias[i].name, av[1]))
                printf("%s\t%s\n", con.alias[i].name, con.alias[i].cmd);
        return 0;
    }
    char cmd[512] = "";
    for (int i = 2; i < ac; i++) {
        strncat(cmd, av[i], sizeof cmd - strlen(cmd) - 2);
        if (i + 1 < ac)
            strcat(cmd, " ");
    }
    for (int i = 0; i < con.naliases; i++) {
        if (!strcmp(con.alias[i].name, av[1])) {
            free(con.alias[i].cmd);
            con.alias[i].cmd = strdup(cmd);
            return 0;
        }
    }
    if (con.naliases == ALIASES_MAX) {
        printf("too many aliases\n");
        return 0;
    }
    con.alias[con.naliases++] = (struct alias){strdup(av[1]), strdup(cmd)};
    return 0;
}

static int c_unalias(int ac, char **av)
{
    for (int i = 1; i < ac; i++)
        for (int k = 0; k < con.naliases; k++)
            if (!strcmp(con.alias[k].name, av[i])) {
                free(con.alias[k].name);
                free(con.alias[k].cmd);
                con.alias[k] = con.alias[--con.naliases];
                break;
            }
    return 0;
}

static int c_quit(int ac, char **av)
{
    con.done = true;
    return 0;
}

static void halted(int sig)
{
    (void)sig;
    fflush(stdout);
    _exit(0); /* the VM ends this process with it: that is what halt asked */
}

/* As `upvm halt` does: the VM ends, this console with it (its SIGTERM is
 * the end asked for, not a failure). */
static int c_halt(int ac, char **av)
{
    char path[CTL_PATH_MAX], reply[256], req[64];
    fflush(NULL);
    signal(SIGTERM, halted);
    signal(SIGIO, SIG_IGN); /* the VM's end closes our connection too */
    snprintf(req, sizeof req, "halt %d\n", con.mytid);
    if (!vm_sock_path(path, sizeof path) || ask(path, req, reply, sizeof reply, 5000) < 0) {
        printf("halt: the VM did not answer\n");
        return 0;
    }
    con.halted = con.done = true;
    for (int i = 0; i < 1000 && access(path, F_OK) == 0; i++)
        usleep(10000); /* until the VM's SIGTERM comes, 10 s at most */
    fflush(stdout);
    _exit(0); /* nothing of this console's VM is left to leave */
}

/* UPVM's own: the VM's nodes and their tasks (as `upvm tasks` shows them). */
static int c_tasks(int ac, char **av)
{
    char vm[CTL_PATH_MAX], dir[CTL_PATH_MAX], job[CTL_PATH_MAX], reply[65536];
    long pid;
    int nodes, joined;
    if (!vm_sock_path(vm, sizeof vm) || ask(vm, "ping\n", reply, sizeof reply, 5000) != 0 ||
        sscanf(reply, "upvm-vm %ld %d %d", &pid, &nodes, &joined) != 3 ||
        ctl_dir_name(dir, sizeof dir) != 0 || !ctl_sock_path(job, sizeof job, dir, pid) ||
        ask(job, "tasks\n", reply, sizeof reply, 5000) != 0) {
        printf("tasks: the VM did not answer\n");
        return 0;
    }
    fputs(reply, stdout);
    return 0;
}

static int c_migrate(int ac, char **av)
{
    int tid, node;
    if (ac != 3 || ctl_parse_tid(av[1], &tid) != 0 || ctl_parse_node(av[2], &node) != 0)
        return usage("migrate"); /* (a node: 1 or node1) */
    int rc = upvm_migrate(tid, node);
    if (rc < 0)
        printf("t%x: %s\n", (unsigned)tid, upvm_migrate_error());
    else
        printf("t%x: now on node%d\n", (unsigned)tid, node);
    return 0;
}

static int c_trace(int ac, char **av)
{
    return ctrace_command(ac, av);
}

static int c_help(int ac, char **av);

static const struct command {
    const char *name, *what, *syntax;
    int (*fn)(int, char **);
    int min_args; /* fewer: its syntax is said instead */
} commands[] = {
    {"add", "Add hosts to virtual machine", "add hostname ...", c_add, 1},
    {"alias", "Define/list command aliases", "alias [ name command args ... ]", c_alias, 0},
    {"conf", "List virtual machine configuration", "conf", c_conf, 0},
    {"delete", "Delete hosts from virtual machine", "delete hostname ...", c_delete, 1},
    {"echo", "Echo arguments", "echo [ arg ... ]", c_echo, 0},
    {"halt", "Stop the VM (every task ends)", "halt", c_halt, 0},
    {"help", "Print helpful information about a command", "help [ command ]", c_help, 0},
    {"id", "Print console task id", "id", c_id, 0},
    {"jobs", "Display list of running jobs", "jobs", c_jobs, 0},
    {"kill", "Terminate tasks", "kill tid ...", c_kill, 1},
    {"migrate", "Move a task to another node (UPVM)", "migrate tid node", c_migrate, 2},
    {"mstat", "Show status of hosts", "mstat hostname ...", c_mstat, 1},
    {"names", "List message mailbox names", "names [ pattern ]", c_names, 0},
    {"ps", "List tasks", "ps [ -a -l -x -nhost -htid ]", c_ps, 0},
    {"pstat", "Show status of tasks", "pstat tid ...", c_pstat, 1},
    {"put", "Add entry to message mailbox", "put name value", c_put, 2},
    {"quit", "Exit console (the VM stays up)", "quit", c_quit, 0},
    {"reset", "Kill all tasks, delete leftover mboxes", "reset", c_reset, 0},
    {"setenv", "Display or set environment variables", "setenv [ name=value ... ]", c_setenv, 0},
    {"sig", "Send signal to task", "sig signum tid ...", c_sig, 2},
    {"spawn", "Spawn task", "spawn [ -count ] [ -host ] [ -> ] [ -@[file] ] file [ arg ... ]", c_spawn, 1},
    {"tasks", "List the VM's nodes and their tasks (UPVM)", "tasks", c_tasks, 0},
    {"trace", "Set/display trace event mask",
     "trace [ [+|-] name ... | [+|-] * | xpvm | buf [ nbytes ] | opt [ full | time | count ] ]",
     c_trace, 0},
    {"unalias", "Undefine command alias", "unalias name ...", c_unalias, 1},
    {"version", "Show libpvm version", "version", c_version, 0},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int usage(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            printf("usage: %s\n", commands[i].syntax);
    return 0;
}

static int c_help(int ac, char **av)
{
    if (ac > 1) {
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (!strcmp(commands[i].name, av[1])) {
                printf("%-11s %s\nSyntax:  %s\n", commands[i].name, commands[i].what,
                       commands[i].syntax);
                return 0;
            }
        printf("%s: no such command\n", av[1]);
        return 0;
    }
    printf("help        Print helpful information about a command\n"
           "Syntax:  help [ command ]\nCommands are:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        printf("  %-11s %s\n", commands[i].name, commands[i].what);
    return 0;
}

/* ------------------------------------------------------------ the loop */

static void run_line(char *line, int depth)
{
    char copy[1024], *av[ARGS_MAX];
    snprintf(copy, sizeof copy, "%s", line);
    int ac = split(copy, av);
    if (ac == 0)
        return;
    for (int i = 0; depth < 8 && i < con.naliases; i++) {
        if (strcmp(con.alias[i].name, av[0]) != 0)
            continue;
        char expanded[1024];
        int off = snprintf(expanded, sizeof expanded, "%s", con.alias[i].cmd);
        for (int k = 1; k < ac && off > 0 && (size_t)off < sizeof expanded; k++)
            off += snprintf(expanded + off, sizeof expanded - (size_t)off, " %s", av[k]);
        run_line(expanded, depth + 1);
        return;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, av[0])) {
            if (ac - 1 < commands[i].min_args)
                (void)usage(av[0]);
            else
                (void)commands[i].fn(ac, av);
            (void)ctrace_poll();
            fflush(stdout);
            return;
        }
    printf("%s: not found\n", av[0]);
    fflush(stdout);
}

/* Wait for input while the node serves its frames (caught output). */
static bool input_ready(void)
{
    for (;;) {
        struct pollfd p = {0, POLLIN, 0};
        if (poll(&p, 1, 0) > 0)
            return true;
        (void)ctrace_poll(); /* spawn -@ jobs' events */
        fflush(stdout);
        (void)upvm_sleep_ns(INPUT_POLL_NS);
    }
}

static void interactive(void)
{
    bool tty = isatty(0);
    char line[1024];
    while (!con.done) {
        printf("pvm> ");
        fflush(stdout);
        if (!input_ready() || !fgets(line, sizeof line, stdin)) {
            if (tty)
                printf("\n");
            break;
        }
        if (!tty)
            fputs(line, stdout); /* the command, after the prompt, as PVM's console does */
        run_line(line, 0);
    }
}

/* -c: each command in turn; then, before quitting, wait for the jobs whose
 * output comes here (spawn ->) to end, so that none of it is lost. */
static void commands_from(char *text)
{
    for (char *save, *cmd = strtok_r(text, ";\n", &save); cmd && !con.done;
         cmd = strtok_r(NULL, ";\n", &save))
        run_line(cmd, 0);
    for (int i = 0; i < con.njobs; i++)
        while (con.jobs[i].caught && job_running(&con.jobs[i]))
            (void)upvm_sleep_ns(INPUT_POLL_NS);
    while (ctrace_busy()) /* spawn -@: until each job's endtasks came */
        if (!ctrace_poll())
            (void)upvm_sleep_ns(INPUT_POLL_NS);
}

const char console_help[] =
    "usage: upvm console [-c 'CMD; CMD; ...']\n"
    "\n"
    "PVM's console in this user's VM (started if none is up).  Commands from\n"
    "-c, else from the terminal or a pipe; `help` lists them.  `quit` leaves\n"
    "the VM up, `halt` ends it.  docs/console.md has the details.\n"
    "\n"
    "Options:\n"
    "  -c CMDS     run these console commands (separated by ';') and leave\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0, 1 when the VM could not be started or joined, 2 for a\n"
    "usage error.\n";

int cmd_console(int argc, char **argv)
{
    char *script = NULL;
    for (int i = 1; i < argc; i++) {
        if (cmd_is_help(argv[i])) {
            fputs(console_help, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "-c")) {
            if (i + 1 >= argc)
                return cmd_option_wants("console", "-c", "console commands, as one argument");
            script = argv[++i];
            continue;
        }
        if (argv[i][0] != '-')
            return cmd_error("console", 1, "a VM over several hosts (a hostfile) is not "
                                           "supported yet: run a job over several hosts with "
                                           "upvm run --hostfile FILE or mpirun (docs/hosts.md)");
        return cmd_unknown_option("console", argv[i]);
    }
    if (vm_ensure(0, script != NULL) != 0)
        return 1;
    con.mytid = pvm_mytid();
    if (con.mytid < 0) {
        fprintf(stderr, "upvm console: cannot join the VM\n");
        return 1;
    }
    ctrace_init(con.mytid);
    if (script)
        commands_from(script);
    else
        interactive();
    if (!con.halted && !script && isatty(0))
        printf("upvm: the VM is still running\n");
    fflush(stdout);
    if (!script) /* quit does not wait for the jobs still running (-c did) */
        (void)pvm_catchout(NULL);
    (void)pvm_exit();
    return 0;
}
