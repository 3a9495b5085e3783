/*
 * vm.c - starting the persistent VM (upvm_vm_start) and joining it (run.h;
 * node/vm.h has the mechanism).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "node/control.h"
#include "node/job.h"
#include "node/vm.h"
#include "pvm/pvm.h"
#include "pvm/remote.h"
#include "run/run.h"

#define START_WAIT_MS 20000 /* the longest `upvm start` waits for the VM to answer */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The daemon: a new session, its output to the log, in $HOME (where PVM's
 * pvmd runs the tasks it starts), then the VM's nodes; node processes
 * serve until the VM is halted. */
static _Noreturn void be_the_vm(int nnodes, const char *log)
{
    (void)setsid();
    int in = open("/dev/null", O_RDONLY);
    int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
        _exit(126);
    close(in);
    close(out);
    const char *home = getenv("HOME");
    if (!home || chdir(home) != 0)
        (void)!chdir("/");
    setvbuf(stdout, NULL, _IOLBF, 0);
    time_t t = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&t));
    fprintf(stderr, "upvm: VM starting at %s: pid %d, %d node(s)\n", when, (int)getpid(),
            nnodes);
    pvm_remote_configure();
    run_set_program("upvm-vm");
    int node = run_vm_nodes(nnodes);
    if (node < 0)
        _exit(1);
    node_job_serve(); /* every node of the VM, node 0 too */
}

int upvm_vm_start(int nnodes, char *log, size_t loglen)
{
    char reply[128];
    if (node_vm_ask("ping", reply, sizeof reply) == 0)
        return 1;
    char path[CTL_PATH_MAX], dir[CTL_PATH_MAX], why[256];
    if (ctl_dir_name(dir, sizeof dir) != 0 || !node_vm_path(path, sizeof path)) {
        fprintf(stderr, "upvm: no directory for the VM's socket fits a socket path\n");
        return -ENAMETOOLONG;
    }
    if (ctl_dir_ensure(dir, why, sizeof why) != 0) {
        fprintf(stderr, "upvm: %s\n", why);
        return -EACCES;
    }
    snprintf(log, loglen, "%s/vm.log", dir);
    if (nnodes < 1)
        nnodes = node_job_cores();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0)
        be_the_vm(nnodes, log);
    uint64_t end = now_ms() + START_WAIT_MS;
    while (now_ms() < end) {
        if (node_vm_ask("ping", reply, sizeof reply) == 0)
            return 0;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "upvm: the VM did not start (see %s)\n", log);
            return -ECHILD;
        }
        usleep(2000); /* polling for the socket to answer, with a deadline */
    }
    fprintf(stderr, "upvm: the VM did not answer within %d s (see %s)\n", START_WAIT_MS / 1000,
            log);
    return -ETIMEDOUT;
}

/* pvm_start_pvmd (pvm.h): this user's VM, its nodes one per core. */
static int start_for_pvm(void)
{
    char log[CTL_PATH_MAX + 16];
    return upvm_vm_start(0, log, sizeof log);
}

__attribute__((constructor)) static void register_vm_starter(void)
{
    pvm_set_vm_starter(start_for_pvm);
}
