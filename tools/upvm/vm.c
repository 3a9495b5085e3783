/*
 * vm.c - upvm start, upvm halt: this user's persistent VM
 * (docs/console.md; the mechanism: src/node/vm.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <upvm.h>

#include "cmd.h"
#include "node/control_path.h"

#define ASK_MS 5000
#define HALT_WAIT_MS 15000

int vm_sock_path(char *path, size_t len)
{
    char dir[CTL_PATH_MAX];
    if (ctl_dir_name(dir, sizeof dir) != 0)
        return 0;
    int n = snprintf(path, len, "%s/vm.sock", dir);
    return n > 0 && (size_t)n < len;
}

int vm_ensure(int nnodes, int quiet)
{
    char log[CTL_PATH_MAX + 16];
    int rc = upvm_vm_start(nnodes, log, sizeof log);
    if (rc < 0)
        return 1;
    char path[CTL_PATH_MAX], reply[256] = "";
    if (!quiet && vm_sock_path(path, sizeof path) &&
        ask(path, "ping\n", reply, sizeof reply, ASK_MS) == 0) {
        long pid = 0;
        int nodes = 0, joined = 0;
        if (sscanf(reply, "upvm-vm %ld %d %d", &pid, &nodes, &joined) != 3)
            return 0;
        if (rc == 1)
            printf("upvm: the VM is running already (pid %ld, %d nodes, %d programs "
                   "joined)\n", pid, nodes, joined);
        else
            printf("upvm: VM started (pid %ld, %d nodes; its log: %s)\n", pid, nodes, log);
    }
    return 0;
}

const char start_help[] =
    "usage: upvm start [-n NODES]\n"
    "\n"
    "Start this user's persistent VM (one per user on this host): NODES\n"
    "nodes (default: one per core) that run the tasks spawned into it until\n"
    "`upvm halt` or the console's `halt`.  While it is up, every program of\n"
    "this user (./master, upvm run) joins it as PVM programs join the\n"
    "pvmd.  Its output goes to its log (the path is printed).\n"
    "\n"
    "Options:\n"
    "  -n NODES    how many nodes (1 .. 32)\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0 when the VM runs (also when it already did), 1 when it\n"
    "could not start, 2 for a usage error.\n";

const char halt_help[] =
    "usage: upvm halt\n"
    "\n"
    "Halt this user's VM: every task in it ends, and every program joined\n"
    "to it.\n"
    "\n"
    "Exit status: 0 when the VM has ended, 1 when none was running or it did\n"
    "not end in time, 2 for a usage error.\n";

int cmd_start(int argc, char **argv)
{
    int nnodes = 0;
    for (int i = 1; i < argc; i++) {
        if (cmd_is_help(argv[i])) {
            fputs(start_help, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "-n")) {
            char *end = NULL;
            long v = i + 1 < argc ? strtol(argv[++i], &end, 10) : 0;
            if (!end || end == argv[i] || *end || v < 1 || v > 32)
                return cmd_option_wants("start", "-n", "a number of nodes from 1 to 32");
            nnodes = (int)v;
            continue;
        }
        if (argv[i][0] != '-')
            return cmd_error("start", 1, "a VM over several hosts (a hostfile) is not supported "
                                         "yet: run a job over several hosts with upvm run "
                                         "--hostfile FILE or mpirun (docs/hosts.md)");
        return cmd_unknown_option("start", argv[i]);
    }
    return vm_ensure(nnodes, 0);
}

static long ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cmd_halt(int argc, char **argv)
{
    if (argc > 1 && cmd_is_help(argv[1])) {
        fputs(halt_help, stdout);
        return 0;
    }
    if (argc > 1) /* it takes none */
        return argv[1][0] == '-' ? cmd_unknown_option("halt", argv[1])
                                 : cmd_unexpected("halt", argv[1]);
    char path[CTL_PATH_MAX], reply[256];
    if (!vm_sock_path(path, sizeof path))
        return cmd_error("halt", 1, "no directory for the VM's socket fits a socket path");
    int rc = ask(path, "halt 0\n", reply, sizeof reply, ASK_MS);
    if (rc == -ENOENT || rc == -ECONNREFUSED) {
        if (rc == -ECONNREFUSED)
            (void)unlink(path); /* a VM that was killed left it */
        fprintf(stderr, "upvm halt: no VM is running\n");
        return 1;
    }
    if (rc != 0 && rc != -ECONNRESET) {
        fprintf(stderr, "upvm halt: the VM did not answer (%s)\n", strerror(-rc));
        return 1;
    }
    /* gone when its socket is: the launcher removes it last */
    long end = ms_now() + HALT_WAIT_MS;
    while (ms_now() < end && access(path, F_OK) == 0)
        usleep(2000); /* polling for the VM's end, with a deadline */
    if (access(path, F_OK) == 0) {
        fprintf(stderr, "upvm halt: the VM has not ended within %d s\n", HALT_WAIT_MS / 1000);
        return 1;
    }
    printf("upvm: the VM was halted\n");
    return 0;
}
