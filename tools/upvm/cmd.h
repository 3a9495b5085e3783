/*
 * cmd.h - what the upvm command's files share.
 */
#ifndef UPVM_TOOLS_CMD_H
#define UPVM_TOOLS_CMD_H

#include <stdbool.h>
#include <stddef.h>

/* A subcommand (main.c's table): `upvm NAME ...` calls run(argc, argv)
 * with argv[0] = NAME; it returns the exit status. */
struct upvm_cmd {
    const char *name;
    const char *synopsis; /* every option, for `upvm help` */
    const char *summary;  /* one line */
    const char *help;     /* `upvm help NAME`, `upvm NAME --help` */
    int (*run)(int argc, char **argv);
    bool starts_nodes; /* runs with address randomisation off */
};

/*
 * Usage errors, said one way by every subcommand: one line on stderr,
 * "upvm CMD: ... (see upvm help CMD)", and exit status 2.
 *   cmd_error          "upvm CMD: what" (the hint only when status is 2):
 *                      status
 *   cmd_unknown_option "upvm CMD: unknown option '--foo' (see ...)": 2
 *   cmd_unexpected     "upvm CMD: unexpected argument 'x' (see ...)": 2
 *   cmd_option_wants  "upvm CMD: --job wants the pid of a running job
 *                      (see ...)": 2 (an option without its value, or a
 *                      value it does not take)
 */
int cmd_error(const char *cmd, int status, const char *what);
int cmd_unknown_option(const char *cmd, const char *arg);
int cmd_unexpected(const char *cmd, const char *arg);
int cmd_option_wants(const char *cmd, const char *opt, const char *what);

/* -h or --help. */
bool cmd_is_help(const char *arg);

/* One request line to the socket at path, its whole reply into buf: 0, or
 * -errno (-ENOENT: no socket, -ECONNREFUSED: nobody there, -EAGAIN: no
 * answer within timeout_ms). */
int ask(const char *path, const char *req, char *buf, size_t len, int timeout_ms);

/* The subcommands and their help texts: upvm.c (run, jobs, tasks,
 * migrate, top, vacate/restore), vm.c (start, halt), console.c. */
int cmd_run(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_vacate(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_halt(int argc, char **argv);
int cmd_console(int argc, char **argv);
extern const char run_help[], jobs_help[], tasks_help[], migrate_help[], top_help[], vacate_help[],
    start_help[], halt_help[], console_help[];

/* trace.c: upvm trace convert|summary|dump (src/trace/convert.h). */
int cmd_trace(int argc, char **argv);
extern const char trace_help[];

/* debug.c: upvm attach; upvm run --gdb (the job with node 0 under gdb:
 * the job's exit status). */
int cmd_attach(int argc, char **argv);
extern const char attach_help[];
int debug_run(const char *path, int ninst, char **argv);

/* The VM's socket path; false when none fits. */
int vm_sock_path(char *path, size_t len);

/* Start the VM if none is up (quiet: say nothing when one was); 0 or 1 (said). */
int vm_ensure(int nnodes, int quiet);

#endif /* UPVM_TOOLS_CMD_H */
