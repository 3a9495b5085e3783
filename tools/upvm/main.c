/*
 * main.c - the upvm command's subcommands, `upvm help`, and the way every
 * subcommand says a usage error and ends (cmd.h).
 *
 * A subcommand is one row of commands[]: its name, its synopsis (every
 * option: what `upvm help` lists), its help text (`upvm help CMD`, `upvm
 * CMD --help`) and the function that runs it.  Exit statuses are the same
 * for all (EXIT_STATUSES below, docs/usage.md).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "cmd.h"
#include "util/comm.h"
#include "util/env.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const char help_help[] =
    "usage: upvm help [COMMAND]\n"
    "\n"
    "Without COMMAND: every command of upvm with its options.  With one: its\n"
    "options and what it does, as upvm COMMAND --help prints them.\n";

static const char version_help[] =
    "usage: upvm --version\n"
    "\n"
    "Print upvm's version and whether it can run jobs over several hosts.\n";

/* Every subcommand; `upvm help` lists them in this order. */
static const struct upvm_cmd commands[] = {
    {"run",
     "run [-n N | -np N] [--nodes K] [--hosts LIST | --hostfile FILE]\n"
     "           [--placement block|cyclic] [--balance POLICY] [--trace FILE] [-t] [--gdb]\n"
     "           [--] PROGRAM [ARGS...]",
     "start a job: N copies of PROGRAM (built with upvmcc)", run_help, cmd_run, true},
    {"jobs", "jobs", "list your running jobs of several nodes", jobs_help, cmd_jobs, false},
    {"tasks", "tasks [--job PID]", "list a job's tasks, node by node", tasks_help, cmd_tasks,
     false},
    {"migrate", "migrate [--job PID] [--lazy] TID NODE", "move a task to another node of its job",
     migrate_help, cmd_migrate, false},
    {"top", "top [--once] [--interval SECONDS] [--job PID]",
     "what a job's global scheduler sees, redrawn", top_help, cmd_top, false},
    {"vacate", "vacate [--job PID] NODE|HOST", "move every task off a node, and keep it empty",
     vacate_help, cmd_vacate, false},
    {"restore", "restore [--job PID] NODE|HOST", "let tasks go to a vacated node again",
     vacate_help, cmd_vacate, false},
    {"attach", "attach JOB [NODE]", "gdb on a node of a running job, its tasks' symbols loaded",
     attach_help, cmd_attach, false},
    {"trace",
     "trace convert|summary|dump FILE [--json-only] [--remove-raw | --keep-raw]\n"
     "           [--json] [--plot PNG]",
     "a traced job's raw files to OTF2 and JSON, a summary, or a dump", trace_help, cmd_trace,
     false},
    {"start", "start [-n NODES]", "start this user's persistent VM", start_help, cmd_start, true},
    {"halt", "halt", "halt the VM (every task in it ends)", halt_help, cmd_halt, false},
    {"console", "console [-c 'CMD; CMD; ...']", "PVM's console in the VM", console_help,
     cmd_console, true},
    {"help", "help [COMMAND]", "this list, or one command's options", help_help, cmd_help, false},
    {"--version", "--version", "upvm's version", version_help, cmd_version, false},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

#define EXIT_STATUSES                                                             \
    "Exit status: 0 when the command did what it was asked; 1 when it could\n"    \
    "not (no job answered, the job refused, a program could not start: the\n"     \
    "reason is printed); 2 for a usage error (an unknown command or option, a\n"  \
    "bad value: the line names it) and for a bad UPVM_* setting (docs/env.md).\n" \
    "upvm run: the job's status instead (the first non-zero status of its\n"      \
    "copies), 126 for a PROGRAM that is not executable, 127 for one not found;\n" \
    "upvm run --help has the full list.\n"

static const struct upvm_cmd *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* ------------------------------------------------------------ errors */

int cmd_error(const char *cmd, int status, const char *what)
{
    if (status == 2)
        fprintf(stderr, "upvm %s: %s (see upvm help %s)\n", cmd, what, cmd);
    else
        fprintf(stderr, "upvm %s: %s\n", cmd, what);
    return status;
}

int cmd_unknown_option(const char *cmd, const char *arg)
{
    fprintf(stderr, "upvm %s: unknown option '%s' (see upvm help %s)\n", cmd, arg, cmd);
    return 2;
}

int cmd_unexpected(const char *cmd, const char *arg)
{
    fprintf(stderr, "upvm %s: unexpected argument '%s' (see upvm help %s)\n", cmd, arg, cmd);
    return 2;
}

int cmd_option_wants(const char *cmd, const char *opt, const char *what)
{
    fprintf(stderr, "upvm %s: %s wants %s (see upvm help %s)\n", cmd, opt, what, cmd);
    return 2;
}

bool cmd_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

/* ------------------------------------------------------------ help */

static void print_commands(FILE *f)
{
    fprintf(f, "usage: upvm COMMAND [OPTIONS] [ARGS]\n\nCommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  upvm %s\n        %s\n", commands[i].synopsis, commands[i].summary);
    fprintf(f, "\n"
               "upvm help COMMAND (or upvm COMMAND --help): what COMMAND does, each\n"
               "option explained.  docs/usage.md, docs/console.md: the manual;\n"
               "docs/env.md: the UPVM_* environment variables.\n\n" EXIT_STATUSES);
}

static int cmd_help(int argc, char **argv)
{
    if (argc == 1) {
        print_commands(stdout);
        return 0;
    }
    if (argc > 2)
        return cmd_unexpected("help", argv[2]);
    const struct upvm_cmd *c = find_command(argv[1]);
    if (!c && cmd_is_help(argv[1])) /* upvm help --help */
        c = find_command("help");
    if (!c && argv[1][0] == '-')
        return cmd_unknown_option("help", argv[1]);
    if (!c) {
        fprintf(stderr, "upvm help: no command '%s' (upvm help lists them)\n", argv[1]);
        return 2;
    }
    fputs(c->help, stdout);
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    if (argc > 1)
        return cmd_is_help(argv[1]) ? (fputs(version_help, stdout), 0)
                                    : cmd_unexpected("--version", argv[1]);
    printf("upvm (UPVM) 0.1.0\n");
#ifdef UPVM_MPI_FLAVOR
    printf("MPI transport: yes (%s; jobs of several hosts through %s)\n", UPVM_MPI_FLAVOR,
           UPVM_MPIRUN_DEFAULT);
#else
    printf("MPI transport: no (jobs of one host only)\n");
#endif
    return 0;
}

/* ------------------------------------------------------------ main */

/* Commands that start nodes run with address randomisation off, so that
 * every node has the same layout: run again once without it.  UPVM_ASLR
 * is read after the personality: the second run does not read it (nor
 * say a bad value) again. */
static void reexec_without_aslr(char **argv)
{
    static const char *const keep[] = {"keep", NULL};
    int pers = personality(0xffffffff), k;
    if (pers != -1 && (pers & ADDR_NO_RANDOMIZE))
        util_comm_from_argv0(argv[0]); /* run again: "exe" in top otherwise */
    if (pers != -1 && !(pers & ADDR_NO_RANDOMIZE) &&
        env_choice("UPVM_ASLR", keep, -1, 0, &k) <= 0 &&
        personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1)
        execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_commands(stderr);
        return 2;
    }
    const char *name = cmd_is_help(argv[1]) ? "help" : argv[1];
    const struct upvm_cmd *c = find_command(name);
    if (!c) {
        fprintf(stderr, "upvm: unknown command '%s' (upvm help lists them)\n", argv[1]);
        return 2;
    }
    if (c->starts_nodes && !(argc > 2 && cmd_is_help(argv[2])))
        reexec_without_aslr(argv);
    return c->run(argc - 1, argv + 1);
}
