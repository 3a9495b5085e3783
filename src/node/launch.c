/*
 * launch.c - node processes of one job (launch.h).
 *
 * The launcher is a plain process: it forks the nodes, then waits for
 * signals with the ones it acts on blocked (sigwaitinfo), so that a Ctrl-C
 * arriving at any moment, even before it starts waiting, is seen: SIGCHLD
 * means "reap"; SIGINT, SIGTERM, SIGHUP (a closed terminal, a dropped ssh)
 * and SIGQUIT mean "end the job"; in a job's launcher, SIGUSR1 "start the
 * nodes asked for" and NODE_SIG_HALT "a task called pvm_halt".  Ending =
 * SIGTERM to every node still alive, up to GRACE_MS for them to go, then
 * SIGKILL.  Then the processes the nodes left behind (node_end_strays).
 * SIGPIPE stays blocked in the launcher: a line it writes to a stderr
 * nobody reads any more fails instead of killing it before it has ended
 * the nodes and removed the job's files.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"
#include "node/board.h"
#include "node/control.h"
#include "node/launch.h"
#include "node/title.h"
#include "node/vm.h"
#include "util/output.h"

#define MAX_NODES 64
#define GRACE_MS 1000
#define STRAYS_MS 5000 /* the longest node_end_strays waits for them to die */

static long ms_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* A forked node: die with the launcher, take the caller's signal mask
 * back, join the transport as `node`, and say so in ps (title.h: the
 * launcher, the process the user started, keeps its name). */
static void join_job(net_shm_seg_t *seg, const net_config_t *cfg, int node, pid_t launcher,
                     const sigset_t *mask)
{
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the job */
    if (getppid() != launcher)
        _exit(128 + SIGKILL); /* the launcher died before prctl */
    sigprocmask(SIG_SETMASK, mask, NULL); /* the caller's, not the launcher's */
    (void)node_set_title(node, launcher); /* a kernel that refuses: comm only */
    if (net_init_shm(seg, node, cfg) != 0)
        _exit(127);
}

/* The child side of node_launch: join, run, leave. */
static _Noreturn void node_child(net_shm_seg_t *seg, const net_config_t *cfg, int node,
                                 int (*node_main)(int, void *), void *arg, pid_t launcher,
                                 const sigset_t *mask)
{
    join_job(seg, cfg, node, launcher, mask);
    int rc = node_main(node, arg);
    net_fini();
    fflush(NULL);
    _exit(rc & 0xff);
}

static int alive_index(const struct node_exit *ex, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (ex[i].pid == pid)
            return i;
    return -1;
}

static void record(struct node_exit *e, int status)
{
    e->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    e->status = e->signal ? 128 + e->signal : WEXITSTATUS(status);
    e->pid = -e->pid; /* reaped */
}

/* SIGTERM, then SIGKILL after the grace period, to every node alive. */
static void end_all(struct node_exit *ex, int n, int *left)
{
    for (int i = 0; i < n; i++)
        if (ex[i].pid > 0)
            kill(ex[i].pid, SIGTERM);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (*left > 0) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        int i = pid > 0 ? alive_index(ex, n, pid) : -1;
        if (i >= 0) {
            record(&ex[i], status);
            (*left)--;
            continue;
        }
        if (ms_since(&start) > GRACE_MS) {
            for (int k = 0; k < n; k++)
                if (ex[k].pid > 0)
                    kill(ex[k].pid, SIGKILL);
        }
        usleep(1000);
    }
}

/* ------------------------------------------------------------ strays */

void node_contain_strays(void)
{
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* The parent of process pid (from /proc/PID/stat), or -1. */
static pid_t parent_of(const char *pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID ...": COMM may hold anything, ')' included */
    char *end = strrchr(buf, ')');
    int ppid;
    return end && sscanf(end + 1, " %*c %d", &ppid) == 1 ? ppid : -1;
}

/* SIGKILL every child of this process: how many were found.  /proc is
 * read rather than kept track of: a stray comes back to a subreaper
 * without telling it. */
static int kill_children(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t self = getpid();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]) || parent_of(e->d_name) != self)
            continue;
        (void)kill((pid_t)atoi(e->d_name), SIGKILL);
        n++;
    }
    closedir(d);
    return n;
}

/* Reap what has ended; true while children remain. */
static bool reap_children(void)
{
    pid_t r;
    while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
        continue;
    return r == 0;
}

void node_end_strays(void)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int ended = 0;
    /* a killed stray's own children come back here in turn: again until
     * none is left */
    while (reap_children()) {
        ended += kill_children();
        if (ms_since(&start) > STRAYS_MS) {
            fprintf(stderr, "upvm: processes the job's nodes started do not end "
                            "(SIGKILL sent %d times); leaving them\n", ended);
            return;
        }
        usleep(1000);
    }
}

static int job_status(const struct node_exit *ex, int n)
{
    for (int i = 0; i < n; i++)
        if (ex[i].status != 0)
            return ex[i].status;
    return 0;
}

/* The signals that end a job when the launcher gets them, as its line
 * names them; NULL for the others. */
static const char *ending_signal(int sig)
{
    switch (sig) {
    case SIGINT:
        return "interrupted (SIGINT)";
    case SIGTERM:
        return "terminated (SIGTERM)";
    case SIGHUP:
        return "hangup (SIGHUP)";
    case SIGQUIT:
        return "quit (SIGQUIT)";
    default:
        return NULL;
    }
}

/* The launcher's start: the transport segment for nslots nodes, and the
 * signals it waits for (the ending ones, SIGCHLD, extra_sig and extra_sig2
 * if not 0) blocked, SIGPIPE too; the caller's mask saved in oldmask. */
static int launcher_setup(int nslots, int extra_sig, int extra_sig2, net_config_t *cfg,
                          net_shm_seg_t **seg, sigset_t *waitset, sigset_t *oldmask)
{
    if (net_config_from_env(cfg) != 0)
        return -EINVAL;
    int rc = net_shm_create(nslots, cfg, seg);
    if (rc != 0)
        return rc;
    static const int waited[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};
    sigemptyset(waitset);
    for (size_t i = 0; i < sizeof waited / sizeof waited[0]; i++)
        sigaddset(waitset, waited[i]);
    if (extra_sig)
        sigaddset(waitset, extra_sig);
    if (extra_sig2)
        sigaddset(waitset, extra_sig2);
    sigset_t blocked = *waitset;
    sigaddset(&blocked, SIGPIPE);
    sigprocmask(SIG_BLOCK, &blocked, oldmask);
    return 0;
}

/* Back to the caller's mask, less a SIGPIPE that a failed write of ours
 * left pending (it would kill the caller now). */
static void launcher_unblock(const sigset_t *oldmask)
{
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    const struct timespec now = {0, 0};
    while (sigtimedwait(&pipe, NULL, &now) == SIGPIPE)
        ;
    sigprocmask(SIG_SETMASK, oldmask, NULL);
}

int node_launch(int nnodes, int (*node_main)(int node, void *arg), void *arg,
                struct node_exit *out)
{
    if (nnodes < 1 || nnodes > MAX_NODES || !node_main)
        return -EINVAL;
    net_config_t cfg;
    net_shm_seg_t *seg;
    sigset_t waitset, oldmask;
    int rc = launcher_setup(nnodes, 0, 0, &cfg, &seg, &waitset, &oldmask);
    if (rc != 0)
        return rc;
    struct node_exit ex[MAX_NODES];
    memset(ex, 0, sizeof ex);
    pid_t self = getpid();
    fflush(NULL);
    int left = 0;
    for (int i = 0; i < nnodes; i++) {
        pid_t pid = fork();
        if (pid == 0)
            node_child(seg, &cfg, i, node_main, arg, self, &oldmask);
        if (pid < 0) {
            rc = -errno;
            end_all(ex, i, &left);
            break;
        }
        ex[i].pid = pid;
        left++;
    }
    while (rc == 0 && left > 0) {
        int status;
        pid_t pid;
        while (left > 0 && (pid = waitpid(-1, &status, WNOHANG)) > 0) {
            int i = alive_index(ex, nnodes, pid);
            if (i < 0)
                continue;
            record(&ex[i], status);
            left--;
            if (ex[i].signal && left > 0) {
                fprintf(stderr, "upvm: node %d (pid %d) died of signal %d (%s): ending the "
                                "job's other %d node(s)\n", i, -ex[i].pid, ex[i].signal,
                        strsignal(ex[i].signal), left);
                end_all(ex, nnodes, &left);
            }
        }
        if (left == 0)
            break;
        int sig = sigwaitinfo(&waitset, NULL);
        if (ending_signal(sig)) {
            fprintf(stderr, "upvm: %s: ending the job's %d node(s)\n", ending_signal(sig), left);
            end_all(ex, nnodes, &left);
        }
    }
    launcher_unblock(&oldmask);
    net_shm_destroy(seg);
    for (int i = 0; out && i < nnodes; i++) {
        out[i] = ex[i];
        out[i].pid = -ex[i].pid;
    }
    return rc != 0 ? rc : job_status(ex, nnodes);
}

/* ------------------------------------------------------------ a job's launcher */

/* Node 0 died of a signal: say so, with the tasks lost (its board). */
static void report_node0(net_shm_seg_t *seg, const struct node_exit *e, int left)
{
    const void *board = net_shm_board(seg, 0);
    fprintf(stderr, "upvm: node0 (pid %d), the node of the program's main, died of signal "
                    "%d (%s)\n", -e->pid, e->signal, strsignal(e->signal));
    int n = node_board_ntasks(board);
    if (n > 0) {
        fprintf(stderr, "upvm:   its %d task(s), lost:\n", n);
        node_board_print(stderr, board, "upvm:    ");
    }
    if (left > 0)
        fprintf(stderr, "upvm: ending the job's other %d node(s) (exit status %d)\n", left,
                e->status);
    else
        fprintf(stderr, "upvm: the job ends (exit status %d)\n", e->status);
}

/* Fork node `node` of the job; in the child, join the transport and return
 * 0 there (*is_child set); the parent gets the pid. */
static pid_t job_fork_node(net_shm_seg_t *seg, const net_config_t *cfg, int node,
                           pid_t launcher, const sigset_t *mask, bool *is_child)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    join_job(seg, cfg, node, launcher, mask);
    net_shm_drop_handle(seg);
    *is_child = true;
    return 0;
}

/* Start the slots a node asked for (net_request_start + SIGUSR1). */
static bool job_start_requested(net_shm_seg_t *seg, const net_config_t *cfg,
                                struct node_exit *ex, int *left, pid_t self,
                                const sigset_t *mask, int *child_node)
{
    for (int i = 0; i < net_shm_nslots(seg); i++) {
        if (net_shm_state(seg, i) != NET_PEER_STARTING)
            continue;
        bool child = false;
        pid_t pid = job_fork_node(seg, cfg, i, self, mask, &child);
        if (child) {
            *child_node = i;
            return true;
        }
        if (pid < 0) {
            net_shm_set_state(seg, i, NET_PEER_GONE, 127);
            continue;
        }
        ex[i].pid = pid;
        (*left)++;
        net_shm_set_state(seg, i, NET_PEER_UP, 0);
    }
    return false;
}

/* A job's launcher, once its nodes run. */
struct launcher {
    net_shm_seg_t *seg;
    net_config_t cfg;
    sigset_t waitset, oldmask;
    pid_t self;
    struct node_exit ex[MAX_NODES];
    int left;     /* nodes alive */
    int status;   /* the job's exit status so far */
    bool ending;  /* the launcher ends the job: no node's end is reported */
    bool quiet;   /* ended by SIGPIPE: the output's reader went away */
    bool vm;      /* a persistent VM (vm.h): programs join it from outside */
    int vm_nodes; /* its own nodes, slots 0 .. vm_nodes-1; the rest are for joiners */
    int sfd;      /* the VM's launcher waits for its signals on this signalfd */
};

/* The launcher ends the job itself, with this exit status. */
static void launcher_end_job(struct launcher *l, int status)
{
    l->ending = true;
    l->status = status;
    if (l->vm)
        node_vm_close(SIGTERM); /* the programs joined end with it */
    end_all(l->ex, MAX_NODES, &l->left);
}

/* Node i died of SIGPIPE: it wrote the job's output, and whoever read it
 * (`upvm run ... | head`) is gone.  Nothing failed: the job ends quietly,
 * as a program whose reader went away does, with the status SIGPIPE gives
 * one (141).  The node is not marked gone, so node 0 makes no report of a
 * lost node. */
static void launcher_reader_gone(struct launcher *l)
{
    l->quiet = true;
    launcher_end_job(l, 128 + SIGPIPE);
}

/* Node i has ended (its fate in l->ex[i]). */
static void launcher_node_ended(struct launcher *l, int i)
{
    struct node_exit *e = &l->ex[i];
    if (e->signal == SIGPIPE && !l->ending) {
        launcher_reader_gone(l);
        return;
    }
    if (i != 0) {
        net_shm_set_state(l->seg, i, NET_PEER_GONE, e->status);
        return;
    }
    if (!l->ending)
        l->status = e->status;
    if (e->signal && !l->ending)
        report_node0(l->seg, e, l->left);
    if (l->left > 0) /* node 0 ended the job: the others follow */
        end_all(l->ex, MAX_NODES, &l->left);
}

/* Reap every node that has ended. */
static void launcher_reap(struct launcher *l)
{
    int wstatus;
    pid_t pid;
    while (l->left > 0 && (pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
        int i = alive_index(l->ex, MAX_NODES, pid);
        if (i < 0)
            continue;
        record(&l->ex[i], wstatus);
        l->left--;
        launcher_node_ended(l, i);
    }
}

/* A signal the launcher waited for (not SIGCHLD, which launcher_reap
 * serves). */
static void launcher_signal(struct launcher *l, int sig, const siginfo_t *si)
{
    if (l->ending)
        return;
    const char *why = ending_signal(sig);
    if (why) {
        fprintf(stderr, "upvm: %s: ending the job's %d node(s)\n", why, l->left);
        launcher_end_job(l, 128 + sig);
        return;
    }
    /* pvm_halt (node_job_halt): queued by one of the nodes, with the tid
     * of the task that called it; a plain kill from elsewhere is not one */
    if (sig == NODE_SIG_HALT && si->si_code == SI_QUEUE &&
        alive_index(l->ex, MAX_NODES, si->si_pid) >= 0) {
        fprintf(stderr, "upvm: the job was halted by t%x (pvm_halt): ending its %d node(s)\n",
                (unsigned)si->si_value.sival_int, l->left);
        launcher_end_job(l, 128 + SIGTERM);
    }
}

/* Every node is gone: a failed write of the job's output is said once,
 * and makes the exit status non-zero (none is said after SIGPIPE: the
 * reader went away, nothing failed). */
static void launcher_check_output(struct launcher *l)
{
    for (int i = 0; i < net_shm_nslots(l->seg) && !l->quiet; i++) {
        int err = node_board_output_error(net_shm_board(l->seg, i));
        if (err) {
            out_report(err);
            if (l->status == 0)
                l->status = 1;
            return;
        }
    }
}

/* ------------------------------------------------------------ a persistent VM */

/* A program joins: the first absent slot past the VM's own nodes. */
static int vm_join(void *ctx, pid_t pid)
{
    struct launcher *l = ctx;
    (void)pid;
    for (int i = l->vm_nodes; i < net_shm_nslots(l->seg); i++) {
        if (net_shm_state(l->seg, i) != NET_PEER_ABSENT)
            continue;
        net_shm_set_state(l->seg, i, NET_PEER_UP, 0);
        return i;
    }
    return -ENOSPC;
}

static void vm_left(void *ctx, int slot, int status)
{
    struct launcher *l = ctx;
    net_shm_set_state(l->seg, slot, NET_PEER_GONE, status);
}

static void vm_halt(void *ctx, int tid, pid_t by)
{
    struct launcher *l = ctx;
    if (l->ending)
        return;
    if (tid > 0)
        fprintf(stderr, "upvm: the VM was halted by t%x (pvm_halt): ending its %d node(s)\n",
                (unsigned)tid, l->left);
    else
        fprintf(stderr, "upvm: the VM was halted (upvm halt, pid %d): ending its %d node(s)\n",
                (int)by, l->left);
    launcher_end_job(l, 0);
}

/* Slots whose programs have left and that every node has forgotten: used
 * again (net.h). */
static void vm_recycle(struct launcher *l)
{
    for (int i = l->vm_nodes; i < net_shm_nslots(l->seg); i++)
        if (net_shm_state(l->seg, i) == NET_PEER_GONE && net_shm_recycle_asked(l->seg, i))
            (void)net_shm_recycle(l->seg, i);
}

/* The VM's launcher waits for its signals and its socket together. */
static void vm_wait(struct launcher *l)
{
    static const struct node_vm_launcher ops = {NULL, vm_join, vm_left, vm_halt};
    struct node_vm_launcher o = ops;
    o.ctx = l;
    struct pollfd p[1 + NODE_VM_JOINED_MAX + 32];
    p[0] = (struct pollfd){l->sfd, POLLIN, 0};
    int n = 1 + node_vm_pollfds(p + 1, (int)(sizeof p / sizeof p[0]) - 1);
    if (poll(p, (nfds_t)n, -1) < 0)
        return;
    struct signalfd_siginfo ssi;
    while (p[0].revents && read(l->sfd, &ssi, sizeof ssi) == (ssize_t)sizeof ssi) {
        if (ssi.ssi_signo == SIGCHLD)
            continue; /* launcher_reap looks */
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_code = ssi.ssi_code;
        si.si_pid = (pid_t)ssi.ssi_pid;
        si.si_value.sival_int = ssi.ssi_int;
        launcher_signal(l, (int)ssi.ssi_signo, &si);
    }
    if (!l->ending)
        node_vm_serve(p + 1, n - 1, &o);
}

/* The VM's socket, before its nodes exist: -EEXIST when one is up. */
static int vm_open(struct launcher *l, int nnodes, int map_fd)
{
    char why[256];
    l->vm_nodes = nnodes;
    l->sfd = signalfd(-1, &l->waitset, SFD_CLOEXEC | SFD_NONBLOCK);
    if (l->sfd < 0)
        return -errno;
    int rc = node_vm_listen(l->self, nnodes, net_shm_fd(l->seg), map_fd, why,
                            sizeof why);
    if (rc != 0) {
        fprintf(stderr, "upvm: cannot start the VM: %s\n", why);
        close(l->sfd);
        l->sfd = -1;
    }
    return rc;
}

static void (*at_end)(int status);

void node_launcher_at_end(void (*fn)(int status))
{
    at_end = fn;
}

/* Fork the job's first nnodes nodes: 0 in the launcher, else (node + 1)
 * in node `node`, or -errno (none left running). */
static int launcher_fork_nodes(struct launcher *l, int nnodes)
{
    for (int i = 0; i < nnodes; i++) {
        bool child = false;
        pid_t pid = job_fork_node(l->seg, &l->cfg, i, l->self, &l->oldmask, &child);
        if (child)
            return i + 1;
        if (pid < 0) {
            int rc = -errno;
            end_all(l->ex, i, &l->left);
            return rc;
        }
        l->ex[i].pid = pid;
        l->left++;
    }
    return 0;
}

int node_job_fork(int nnodes, int capacity, int vm_map_fd)
{
    bool vm = vm_map_fd >= 0;
    if (nnodes < 1 || nnodes > capacity || capacity > MAX_NODES)
        return -EINVAL;
    static struct launcher l; /* (the launcher's only: the nodes return) */
    memset(&l, 0, sizeof l);
    int rc = launcher_setup(capacity, SIGUSR1, NODE_SIG_HALT, &l.cfg, &l.seg, &l.waitset,
                            &l.oldmask);
    if (rc != 0)
        return rc;
    node_contain_strays(); /* this process is the job's from here on */
    l.self = getpid();
    l.vm = vm;
    l.sfd = -1;
    if (vm && (rc = vm_open(&l, nnodes, vm_map_fd)) != 0) {
        launcher_unblock(&l.oldmask);
        net_shm_destroy(l.seg);
        return rc;
    }
    node_ctl_prepare(l.self); /* node 0 creates it; this process removes it */
    net_shm_keep_states(l.seg);
    for (int i = 0; i < nnodes; i++)
        net_shm_set_state(l.seg, i, NET_PEER_UP, 0);
    rc = launcher_fork_nodes(&l, nnodes);
    if (rc > 0) {
        if (l.vm) { /* the socket is the launcher's */
            close(l.sfd);
            node_vm_drop();
        }
        return rc - 1; /* a node */
    }
    if (rc < 0) {
        if (l.vm) {
            node_vm_close(0);
            node_vm_remove();
        }
        node_ctl_cleanup();
        launcher_unblock(&l.oldmask);
        net_shm_destroy(l.seg);
        return rc;
    }
    /* The launcher from here on: it never returns. */
    while (l.left > 0) {
        launcher_reap(&l);
        if (l.left == 0)
            break;
        int child_node = -1;
        if (!l.ending &&
            job_start_requested(l.seg, &l.cfg, l.ex, &l.left, l.self, &l.oldmask, &child_node))
            return child_node;
        if (l.vm) {
            if (!l.ending)
                vm_recycle(&l);
            vm_wait(&l);
            continue;
        }
        siginfo_t si;
        int sig = sigwaitinfo(&l.waitset, &si);
        if (sig > 0 && sig != SIGCHLD)
            launcher_signal(&l, sig, &si);
    }
    if (l.vm)
        node_vm_close(SIGTERM); /* node 0 ended: so does the VM */
    node_end_strays(); /* every node is gone: what they left goes too */
    node_ctl_cleanup(); /* every node is gone, node 0 however it ended */
    if (l.vm)
        node_vm_remove(); /* last: `upvm halt` waits for it to go */
    launcher_check_output(&l);
    net_shm_destroy(l.seg);
    if (at_end)
        at_end(l.status);
    fflush(NULL);
    _exit(l.status);
}
