/*
 * cmd.h - what the upvm command's files share.
 */
#ifndef UPVM_TOOLS_CMD_H
#define UPVM_TOOLS_CMD_H

#include <stddef.h>

/* "upvm CMD: what" on stderr (and the --help hint for status 2): status. */
int cmd_error(const char *cmd, int status, const char *what);

/* One request line to the socket at path, its whole reply into buf: 0, or
 * -errno (-ENOENT: no socket, -ECONNREFUSED: nobody there, -EAGAIN: no
 * answer within timeout_ms). */
int ask(const char *path, const char *req, char *buf, size_t len, int timeout_ms);

/* upvm start / halt (vm.c), upvm console (console.c). */
int cmd_start(int argc, char **argv);
int cmd_halt(int argc, char **argv);
int cmd_console(int argc, char **argv);

/* debug.c: upvm attach; upvm run --gdb (the job with node 0 under gdb:
 * the job's exit status). */
int cmd_attach(int argc, char **argv);
int debug_run(const char *path, int ninst, char **argv);

/* The VM's socket path; false when none fits. */
int vm_sock_path(char *path, size_t len);

/* Start the VM if none is up (quiet: say nothing when one was); 0 or 1 (said). */
int vm_ensure(int nnodes, int quiet);

#endif /* UPVM_TOOLS_CMD_H */
