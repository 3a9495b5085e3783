/*
 * start.c - starting a job from a process-mode program: the program run
 * from the shell (through upvmcc's start-up object) and `upvm run`.
 *
 * A program built with upvmcc carries a constructor that calls
 * upvm_program_start before anything else of the program runs.  The first
 * time (in the process the shell started) it turns that process into a
 * node: it re-executes itself once with address randomisation off (so that
 * libraries sit at the same addresses in every node: architecture decision 3),
 * then loads the program again, as the first process-mode ULP, into a slot,
 * runs the job and exits with that ULP's status: the copy of the program the
 * kernel loaded never reaches its main.  In the copies the loader makes, the
 * constructor finds the node running and returns at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "node/job.h"
#include "node/launch.h"
#include "proc/proc.h"
#include "pvm/pvm.h"
#include "pvm/remote.h"
#include "run/run.h"
#include "util/comm.h"
#include "util/env.h"
#include "util/output.h"

static bool node_started;

/* Run again with ASLR off, once (UPVM_ASLR=keep skips it). */
static void reexec_without_aslr(char **argv)
{
    /* the setting after the personality: the program run again (already
     * without ASLR) does not read it, nor say a bad value a second time */
    static const char *const keep[] = {"keep", NULL};
    int pers = personality(0xffffffff), k;
    if (pers != -1 && (pers & ADDR_NO_RANDOMIZE))
        util_comm_from_argv0(argv[0]); /* run again: "exe" in top otherwise */
    if (pers == -1 || (pers & ADDR_NO_RANDOMIZE) ||
        env_choice("UPVM_ASLR", keep, -1, 0, &k) > 0)
        return;
    if (personality((unsigned long)pers | ADDR_NO_RANDOMIZE) == -1)
        return;
    execv("/proc/self/exe", argv);
    /* could not: go on with randomisation (one node needs no fixed layout) */
    (void)personality((unsigned long)pers);
}

/*
 * Several copies: started the way PVM's console starts `spawn -N prog`: by
 * one pvm_spawn from a console task (the node's main ULP), so the copies
 * are siblings (pvm_siblings lists all N: SPMD programs build their ring
 * from it) and have a parent (SPMD programs such as gexample read their
 * input only when they have none).  Returns the first non-zero status.
 */
static int run_copies(const char *path, int ninst, char **argv)
{
    int *tids = calloc((size_t)ninst, sizeof *tids);
    if (!tids || pvm_mytid() < 0) {
        free(tids);
        return 1;
    }
    if (node_job_joined()) {
        /* in a VM the copies run on its nodes, whose output is the VM's
         * log: the user who ran them wants it here, as a self-contained
         * job has it (tagged only when asked: --tag-output) */
        (void)pvm_setopt(PvmShowTids, env_flag("UPVM_OUTPUT_TIDS"));
        (void)pvm_catchout(stdout);
    }
    int started = pvm_spawn_flagged((char *)path, argv + 1, PVM_SPAWN_REPORT_STATUS, "",
                                    ninst, tids);
    int status = started == ninst ? 0 : 1;
    for (int i = 0; i < ninst; i++) { /* wherever they run by then (they may move) */
        int st = tids[i] > 0 ? pvm_wait_status(tids[i]) : 0;
        if (st != 0 && status == 0)
            status = st;
    }
    (void)pvm_exit();
    free(tids);
    return status;
}

/*
 * One copy of the program as a task with no parent (PVM's task started
 * from the shell): a PVM task from birth, whose exit status comes back here
 * wherever it ends, so that node 0 waits for it by tid and not for its ULP:
 * it may move to another node like any task.  Its tid, or -1 (said why).
 */
static int start_first_task(const char *path, char **argv, char **envp)
{
    struct ulp *u;
    struct loader_error err = {0, ""};
    upvm_attr_t detached = {0, NULL, UPVM_DETACHED}; /* nobody joins it */
    int rc = proc_spawn(path, argv, envp, &detached, &u, &err);
    if (rc != 0) {
        fprintf(stderr, "upvm: cannot start %s: %s\n", path,
                err.msg[0] ? err.msg : strerror(-rc)); /* empty: a limit said before */
        return -1;
    }
    struct pvm_task *t = pvm_enroll(u);
    if (!t || pvm_report_status(node_job_self(), t) != 0) {
        fprintf(stderr, "upvm: cannot start %s: no memory for its task\n", path);
        core_ulp_kill(u, 0);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    t->name = pvm_intern(slash ? slash + 1 : path);
    return t->tid;
}

/* At the process's exit, after the PVM layer's own handler has run the
 * tasks still there to their end (handlers run last registered first): a
 * one-node job's node is the top of its job, and ends what got past the
 * refusals of fork (launch.h).  A job of several nodes has a launcher for
 * that, a job of MPI ranks its MPI launcher. */
static void end_strays_at_exit(void)
{
    if (!pvm_multi())
        node_end_strays();
}

/* A process-mode job never has children of its own: everything a node
 * forks is a stray (launch.h). */
static void contain_strays(void)
{
    node_contain_strays();
    (void)atexit(end_strays_at_exit);
}

/* The job has ended, with status: its output did not all get written?  A
 * job of several nodes leaves that to its launcher (node 0 notes it at
 * exit, node/job.c); a job of one says it here, once, and does not end
 * with 0, as coreutils do. */
static int output_status(int status)
{
    if (node_job_multi())
        return status;
    int err = out_check();
    if (!err)
        return status;
    out_report(err);
    return status ? status : 1;
}

/* How long node 0 waits for the debugger `upvm run --gdb` starts. */
#define DEBUGGER_WAIT_S 60

/* Whether a debugger is attached to this process (TracerPid). */
static bool traced(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long tracer = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
            break;
    if (f)
        fclose(f);
    return tracer != 0;
}

/*
 * upvm run --gdb (tools/upvm/debug.c) sets UPVM_GDB_WAIT=FD,PID: node 0
 * lets process PID and its children (the upvm command, whose child gdb
 * is) trace it, writes its pid to descriptor FD, and waits for the
 * debugger to attach before any task runs, so that breakpoints set then
 * are hit.  Nobody else sees the variable (tasks, what they start).
 */
static void wait_for_debugger(void)
{
    const char *v;
    int fd, tool;
    if (env_string("UPVM_GDB_WAIT", &v) <= 0)
        return;
    bool ok = sscanf(v, "%d,%d", &fd, &tool) == 2 && fd > 2;
    unsetenv("UPVM_GDB_WAIT");
    if (!ok) {
        fprintf(stderr, "upvm: UPVM_GDB_WAIT=%s: not set by upvm run --gdb (FD,PID); "
                        "not waiting for a debugger\n", v);
        return;
    }
    (void)prctl(PR_SET_PTRACER, (unsigned long)tool, 0, 0, 0); /* Yama: let it attach */
    char line[32];
    int n = snprintf(line, sizeof line, "%d\n", (int)getpid());
    bool told = write(fd, line, (size_t)n) == n;
    close(fd);
    if (!told)
        return;
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int waited = 0; !traced(); waited++) {
        if (waited == DEBUGGER_WAIT_S * 100) {
            fprintf(stderr, "upvm: node 0 waited %d s for the debugger, which did not "
                            "attach: the job goes on without it\n", DEBUGGER_WAIT_S);
            return;
        }
        nanosleep(&tick, NULL);
    }
}

/* Load the program's libraries (its DT_NEEDED, libstdc++ for a C++
 * program) here, before the nodes fork, so that every node has them at the
 * same addresses: a task moves only between nodes whose library layouts
 * match, and a library each node opened at its first spawn could land
 * elsewhere in each (what a node mapped before differs).  The image is
 * kept: it is the program every node runs.  An error is left for the
 * spawn to say. */
static void preload_libraries(const char *path)
{
    struct loader_error err = {0, ""};
    (void)loader_image_open(path, &err);
}

static int run_program(const char *path, int ninst, char **argv, char **envp)
{
    int rc = core_enter();
    if (rc != 0)
        return rc;
    node_started = true;
    contain_strays();
    /* The tasks' untagged output is the node's stdout: a line at a time, as
     * a terminal has it, so that a task that moves (and flushes what it
     * left here) does not send its lines out of order with its stderr. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A job of one node per core (UPVM_NODES / upvm run --nodes say
     * otherwise): the other nodes serve from here on and never return. */
    run_set_program(path);
    preload_libraries(path);
    (void)run_job_start(node_job_cores());
    wait_for_debugger();
    if (ninst > 1 && !envp)
        return run_copies(path, ninst, argv);
    int *tids = calloc((size_t)ninst, sizeof *tids);
    if (!tids)
        return -ENOMEM;
    int started = 0;
    for (int i = 0; i < ninst; i++) {
        int tid = start_first_task(path, argv, envp);
        if (tid < 0)
            break;
        tids[started++] = tid;
    }
    int status = started == ninst ? 0 : 1;
    for (int i = 0; i < started; i++) { /* wherever they run by then */
        int st = pvm_wait_status(tids[i]);
        if (st != 0 && status == 0)
            status = st;
    }
    free(tids);
    return status;
}

int upvm_run_program(const char *path, int ninst, char **argv, char **envp)
{
    out_keep_std_fds(); /* before this process opens anything */
    int status = run_program(path, ninst, argv, envp);
    return status < 0 ? status : output_status(status);
}

void upvm_program_start(int argc, char **argv, char **envp)
{
    if (node_started || core_on_sched_thread)
        return; /* a copy loaded into a ULP: the node is running */
    reexec_without_aslr(argv);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "upvm: cannot find this program's file (/proc/self/exe): %s\n",
                strerror(errno));
        exit(127);
    }
    self[n] = '\0';
    int status = upvm_run_program(self, 1, argv, envp);
    exit(status < 0 ? 1 : status); /* the tasks it spawned finish first (pvm) */
}
